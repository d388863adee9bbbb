/*
 * json.c - a structural JSON scanner (RFC 8259 grammar) over one chunk of
 * a completion stream: validation and top-level member lookup.
 */
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 64

struct scan {
  const char *p, *end;
};

static void ws(struct scan *s)
{
  while(s->p < s->end && (*s->p == ' ' || *s->p == '\t' ||
                          *s->p == '\n' || *s->p == '\r'))
    s->p++;
}

static int hexd(char c)
{
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

static int string(struct scan *s)
{
  if(s->p >= s->end || *s->p != '"')
    return -1;
  s->p++;
  while(s->p < s->end) {
    unsigned char c = (unsigned char)*s->p++;
    if(c == '"')
      return 0;
    if(c < 0x20)
      return -1;
    if(c == '\\') {
      if(s->p >= s->end)
        return -1;
      c = (unsigned char)*s->p++;
      if(c == 'u') {
        if(s->end - s->p < 4 || !hexd(s->p[0]) || !hexd(s->p[1]) ||
           !hexd(s->p[2]) || !hexd(s->p[3]))
          return -1;
        s->p += 4;
      }
      else if(!strchr("\"\\/bfnrt", c))
        return -1;
    }
  }
  return -1;
}

static int digits(struct scan *s)
{
  const char *a = s->p;
  while(s->p < s->end && *s->p >= '0' && *s->p <= '9')
    s->p++;
  return s->p > a ? 0 : -1;
}

static int number(struct scan *s)
{
  if(s->p < s->end && *s->p == '-')
    s->p++;
  if(s->p < s->end && *s->p == '0')
    s->p++;
  else if(digits(s))
    return -1;
  if(s->p < s->end && *s->p == '.') {
    s->p++;
    if(digits(s))
      return -1;
  }
  if(s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
    s->p++;
    if(s->p < s->end && (*s->p == '+' || *s->p == '-'))
      s->p++;
    if(digits(s))
      return -1;
  }
  return 0;
}

static int literal(struct scan *s, const char *w)
{
  size_t n = strlen(w);
  if((size_t)(s->end - s->p) < n || memcmp(s->p, w, n))
    return -1;
  s->p += n;
  return 0;
}

static int value(struct scan *s, int depth);

static int items(struct scan *s, int depth, char close, int members)
{
  s->p++;
  ws(s);
  if(s->p < s->end && *s->p == close) {
    s->p++;
    return 0;
  }
  for(;;) {
    ws(s);
    if(members) {
      if(string(s))
        return -1;
      ws(s);
      if(s->p >= s->end || *s->p != ':')
        return -1;
      s->p++;
    }
    if(value(s, depth + 1))
      return -1;
    ws(s);
    if(s->p >= s->end)
      return -1;
    if(*s->p == close) {
      s->p++;
      return 0;
    }
    if(*s->p != ',')
      return -1;
    s->p++;
  }
}

static int value(struct scan *s, int depth)
{
  if(depth > JSON_MAX_DEPTH)
    return -1;
  ws(s);
  if(s->p >= s->end)
    return -1;
  switch(*s->p) {
  case '{':
    return items(s, depth, '}', 1);
  case '[':
    return items(s, depth, ']', 0);
  case '"':
    return string(s);
  case 't':
    return literal(s, "true");
  case 'f':
    return literal(s, "false");
  case 'n':
    return literal(s, "null");
  default:
    return number(s);
  }
}

int llm_json_valid(const char *str, size_t n)
{
  struct scan s = { str, str + n };
  if(value(&s, 0))
    return -1;
  ws(&s);
  return s.p == s.end ? 0 : -1;
}

int llm_json_member(const char *str, size_t n, const char *key,
                    const char **v, size_t *vn)
{
  struct scan s = { str, str + n };
  size_t kl = strlen(key);

  ws(&s);
  if(s.p >= s.end || *s.p != '{')
    return -1;
  s.p++;
  for(;;) {
    const char *k, *a;
    ws(&s);
    if(s.p >= s.end || *s.p == '}')
      return -1;
    k = s.p + 1;
    if(string(&s))
      return -1;
    ws(&s);
    if(s.p >= s.end || *s.p != ':')
      return -1;
    s.p++;
    ws(&s);
    a = s.p;
    if(value(&s, 1))
      return -1;
    if((size_t)(s.p - a) && (size_t)(s.p - k) > kl &&
       !memcmp(k, key, kl) && k[kl] == '"' && k + kl + 1 <= a) {
      const char *q = k + kl + 1;
      while(q < a && (*q == ' ' || *q == '\t' || *q == '\n' ||
                      *q == '\r' || *q == ':'))
        q++;
      if(q == a) {
        *v = a;
        *vn = (size_t)(s.p - a);
        return 0;
      }
    }
    ws(&s);
    if(s.p < s.end && *s.p == ',')
      s.p++;
  }
}

int llm_json_nonempty_array(const char *v, size_t vn)
{
  size_t i = 1;
  if(!vn || v[0] != '[')
    return 0;
  while(i < vn && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' ||
                   v[i] == '\r'))
    i++;
  return i < vn && v[i] != ']';
}

long long llm_json_uint(const char *v, size_t vn)
{
  long long x = 0;
  if(!vn)
    return -1;
  for(size_t i = 0; i < vn; i++) {
    if(v[i] < '0' || v[i] > '9')
      return -1;
    if(x > (1ll << 53))
      return -1;
    x = x * 10 + (v[i] - '0');
  }
  return x;
}
