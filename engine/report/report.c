/*
 * report.c - sheet names and colours for the workbook writer (no Lua).
 */
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
