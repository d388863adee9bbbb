/*
 * report.c - sheet names and colours for the workbook writer (no Lua).
 */
#include <math.h>
#include <string.h>

#include "report.h"
#include "strata.h"

/*
 * Length in bytes of the valid UTF-8 sequence at s (at most n bytes left),
 * or 0 when the bytes there are not valid UTF-8 (overlong forms and
 * surrogates included).
 */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
  size_t len;
  uint32_t cp;

  if(s[0] < 0x80)
    return 1;
  if(s[0] >= 0xc2 && s[0] <= 0xdf) {
    len = 2;
    cp = s[0] & 0x1f;
  }
  else if(s[0] >= 0xe0 && s[0] <= 0xef) {
    len = 3;
    cp = s[0] & 0x0f;
  }
  else if(s[0] >= 0xf0 && s[0] <= 0xf4) {
    len = 4;
    cp = s[0] & 0x07;
  }
  else
    return 0;
  if(len > n)
    return 0;
  for(size_t i = 1; i < len; i++) {
    if((s[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (s[i] & 0x3f);
  }
  if((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
     cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return len;
}

size_t report_sheet_name(const char *in, char *out, size_t outlen)
{
  const unsigned char *s = (const unsigned char *)(in ? in : "");
  size_t n = strlen((const char *)s);
  size_t o = 0;
  size_t chars = 0;

  if(!outlen)
    return 0;
  /* Leading apostrophes and spaces: Excel refuses or trims them. */
  while(n && (*s == '\'' || *s == ' ')) {
    s++;
    n--;
  }
  while(n && chars < REPORT_SHEET_NAME_MAX) {
    size_t len = utf8_seq(s, n);
    int bad = !len || *s < 0x20 || *s == 0x7f || strchr("[]:*?/\\", *s);
    if(bad)
      len = len ? len : 1;
    if(o + (bad ? 1 : len) + 1 > outlen)
      break;
    if(bad)
      out[o++] = '_';
    else {
      memcpy(out + o, s, len);
      o += len;
    }
    s += len;
    n -= len;
    chars++;
  }
  while(o && (out[o - 1] == '\'' || out[o - 1] == ' '))
    o--;
  if(!o) {
    size_t k = strlen("Sheet");
    if(k + 1 > outlen)
      k = outlen - 1;
    memcpy(out, "Sheet", k);
    o = k;
  }
  out[o] = '\0';
  return o;
}

int report_parse_color(const char *s, uint32_t *rgb)
{
  uint32_t v = 0;

  if(!s)
    return -1;
  if(*s == '#')
    s++;
  for(int i = 0; i < 6; i++) {
    int h = strata_hexval(s[i]);
    if(h < 0)
      return -1;
    v = (v << 4) | (uint32_t)h;
  }
  if(s[6])
    return -1;
  *rgb = v;
  return 0;
}

int report_utf8_valid(const char *s, size_t n)
{
  const unsigned char *p = (const unsigned char *)s;

  while(n) {
    size_t len = utf8_seq(p, n);
    if(!len)
      return 0;
    p += len;
    n -= len;
  }
  return 1;
}

size_t report_text_chars(const char *s, size_t n)
{
  size_t chars = 0;

  if(!report_utf8_valid(s, n))
    return n;
  /* valid: one character per byte that does not continue a sequence */
  for(size_t i = 0; i < n; i++)
    chars += ((unsigned char)s[i] & 0xc0) != 0x80;
  return chars;
}

size_t report_text_width(const char *s, size_t n)
{
  const char *nl = memchr(s, '\n', n);
  size_t w = 0;

  if(!nl)
    return report_text_chars(s, n);
  /* each line counted alone, as (s .. "\n"):gmatch("([^\n]*)\n") splits */
  for(;;) {
    size_t len = nl ? (size_t)(nl - s) : n;
    size_t c = report_text_chars(s, len);
    if(c > w)
      w = c;
    if(!nl)
      return w;
    n -= len + 1;
    s = nl + 1;
    nl = memchr(s, '\n', n);
  }
}

/* digits of a (>= 0, finite) and the rest of the width */
static int64_t width_of(double a, int negative, int whole)
{
  int64_t digits = a < 10 ? 1 : (int64_t)floor(log10(a)) + 1;
  return digits + (digits - 1) / 3 + negative + (whole ? 0 : 4) + 1;
}

int64_t report_number_width(double v)
{
  if(!isfinite(v))
    return 0;
  return width_of(fabs(v), v < 0, v == floor(v));
}

int64_t report_integer_width(int64_t v)
{
  /* math.abs wraps the smallest integer to itself, as Lua does */
  int64_t a = v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
  if(a < 10)
    return 1 + (v < 0) + 1;
  return width_of((double)a, v < 0, 1);
}
