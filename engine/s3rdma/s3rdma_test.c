/*
 * s3rdma_test.c - hardware-free checks of the s3rdma family: the token
 * codec (a hand-built vector), the cuObject descriptor, the reply codes,
 * the wire parsers, the Prometheus reader and
 * the data pattern.  Exit status 0 when every check holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cuobj_desc.h"
#include "pattern.h"
#include "token.h"
#include "wire.h"

static void test_token(void)
{
  struct s3rdma_token t, u;
  char hex[89];
  const char *why = NULL;
  /* transport 01 | qpn 0x00123456 LE | gid ::ffff:10.77.0.1 | rkey
   * 0xdeadbeef LE | addr 0x7f0011223344 LE | len 4096 LE | port 1 |
   * lid 0x0102 LE, written out by hand */
  static const char want[] =
    "01" "56341200"
    "00000000000000000000ffff0a4d0001"
    "efbeadde"
    "4433221100" "7f0000"
    "0010000000000000"
    "01" "0201";
  memset(&t, 0, sizeof(t));
  t.transport = 1;
  t.qpn = 0x123456;
  t.gid[10] = 0xff, t.gid[11] = 0xff;
  t.gid[12] = 10, t.gid[13] = 77, t.gid[14] = 0, t.gid[15] = 1;
  t.rkey = 0xdeadbeef;
  t.addr = 0x7f0011223344ull;
  t.len = 4096;
  t.port = 1;
  t.lid = 0x0102;
  s3rdma_token_encode(&t, hex);
  CHECK(strlen(want) == 88);
  CHECK(!strcmp(hex, want));
  CHECK(!s3rdma_token_decode(hex, 88, &u, &why));
  CHECK(!memcmp(&t.gid, &u.gid, 16) && u.qpn == t.qpn &&
        u.rkey == t.rkey && u.addr == t.addr && u.len == t.len &&
        u.port == 1 && u.lid == 0x0102 && u.transport == 1);
  hex[1] = '0';                 /* hipObject's 0x00 (DC): not spoken */
  CHECK(s3rdma_token_decode(hex, 88, &u, &why) && !strcmp(why,
                                                          "transport"));
  hex[0] = '7';
  CHECK(s3rdma_token_decode(hex, 88, &u, &why) && !strcmp(why,
                                                          "transport"));
  CHECK(s3rdma_token_decode(want, 87, &u, &why) && !strcmp(why, "length"));
  memcpy(hex, want, 89);
  hex[40] = 'g';
  CHECK(s3rdma_token_decode(hex, 88, &u, &why) && !strcmp(why, "not hex"));
  /* upper case decodes too */
  memcpy(hex, want, 89);
  for(int i = 0; i < 88; i++)
    if(hex[i] >= 'a')
      hex[i] = (char)(hex[i] - 32);
  CHECK(!s3rdma_token_decode(hex, 88, &u, &why) && u.rkey == 0xdeadbeef);
}

static void test_wire(void)
{
  uint64_t v;
  int code;
  char tok[89];
  struct s3rdma_target t;
  const char *why;
  char out[256];

  CHECK(!s3rdma_parse_hex("00ff10", 6, &v) && v == 0xff10);
  CHECK(s3rdma_parse_hex("1234567", 6, &v));
  CHECK(s3rdma_parse_hex("", 6, &v));
  CHECK(s3rdma_parse_hex("12x", 6, &v));
  CHECK(!s3rdma_parse_dec("2147483647", &v) && v == 2147483647ull);
  CHECK(s3rdma_parse_dec("-1", &v));
  CHECK(s3rdma_parse_dec("99999999999999999999999", &v));
  CHECK(!s3rdma_reply_parse("206", &code, tok) && code == 206 && !tok[0]);
  CHECK(!s3rdma_reply_parse("ok", &code, tok) && code == 200);
  CHECK(s3rdma_reply_parse("200:abc", &code, tok));
  memset(out, 'a', 88);
  strcpy(out, "200:");
  memset(out + 4, 'a', 88);
  out[92] = '\0';
  CHECK(!s3rdma_reply_parse(out, &code, tok) && code == 200 &&
        strlen(tok) == 88);
  CHECK(!s3rdma_target_parse("/bkt/a/b%20c?partNumber=3&uploadId=x%2By",
                             &t, &why));
  CHECK(!strcmp(t.bucket, "bkt") && !strcmp(t.key, "a/b c") &&
        t.part == 3 && !strcmp(t.upload_id, "x+y"));
  CHECK(s3rdma_target_parse("/bkt", &t, &why));
  CHECK(s3rdma_target_parse("/bkt/k?partNumber=0", &t, &why));
  CHECK(s3rdma_target_parse("/bkt/../etc", &t, &why));
  CHECK(s3rdma_target_parse("/bkt/k%2", &t, &why));
  /* a NUL would cut the key short of what was signed (bench/fuzz) */
  CHECK(s3rdma_target_parse("/bkt/a%00b", &t, &why));
  CHECK(!s3rdma_target_build("bkt", "a/b c", 2, "x+y", out, sizeof(out)));
  CHECK(!strcmp(out, "/bkt/a/b%20c?partNumber=2&uploadId=x%2By"));
  CHECK(!s3rdma_target_parse(out, &t, &why) && t.part == 2);
}

static void test_pattern(void)
{
  size_t n = 100000;
  unsigned char *a = malloc(n), *b = malloc(n);
  uint64_t s = s3rdma_pattern_seed(7, 3);
  s3rdma_pattern_fill(a, s, 0, n);
  s3rdma_pattern_fill(b, s, 13, n - 13);     /* an unaligned range */
  CHECK(!memcmp(a + 13, b, n - 13));
  CHECK(s3rdma_pattern_check(a, s, 0, n) == -1);
  CHECK(s3rdma_pattern_check(b, s, 13, n - 13) == -1);
  a[5000] ^= 1;
  CHECK(s3rdma_pattern_check(a, s, 0, n) == 5000);
  CHECK(s3rdma_pattern_check(a, s3rdma_pattern_seed(7, 4), 0, 64) >= 0);
  free(a);
  free(b);
}

/* The cuObject descriptor, built with libcufile 1.18's own format string
 * (cuobj_desc.h names where it was read). */
static void test_cuobj_desc(void)
{
  struct s3rdma_cuobj_desc d;
  char desc[128], tok[160], why[160];
  unsigned long long addr = 0x7f12345000ull;
  unsigned long gid_hi = 0, gid_lo = 0x0000ffff0a4d0001ul;
  int n = snprintf(desc, sizeof(desc),
                   "%016llx:%08x:%08x:%04x:%06x:%d:%016lx%016lx", addr,
                   0x1000000u, 0xdeadbeefu, 0x1u, 0x00abcdu, 1, gid_hi,
                   gid_lo);
  CHECK(n == S3RDMA_CUOBJ_DESC_LEN);
  CHECK(!s3rdma_cuobj_desc_parse(desc, (size_t)n, &d, why, sizeof(why)));
  CHECK(d.addr == addr && d.size == 0x1000000u && d.rkey == 0xdeadbeefu &&
        d.lid == 1 && d.qpn == 0xabcd && d.gid_present == 1 &&
        d.gid[10] == 0xff && d.gid[12] == 10 && d.gid[15] == 1);
  /* current contract: verbatim; the old one: + ":<addr>:<size>" (115) */
  CHECK(!s3rdma_cuobj_token_form(desc, S3RDMA_CONTRACT_CURRENT, addr,
                                 0x1000000u, tok, sizeof(tok), why,
                                 sizeof(why)) && !strcmp(tok, desc));
  CHECK(!s3rdma_cuobj_token_form(desc, S3RDMA_CONTRACT_SUFFIX, addr,
                                 0x1000000u, tok, sizeof(tok), why,
                                 sizeof(why)) &&
        strlen(tok) == S3RDMA_CUOBJ_DESC_LEN + S3RDMA_CUOBJ_SUFFIX_LEN &&
        !strcmp(tok + 81, ":0000007f12345000:0000000001000000"));
  /* a suffixed token is not a descriptor: refused before sending */
  CHECK(s3rdma_cuobj_desc_parse(tok, strlen(tok), &d, why, sizeof(why)) &&
        strstr(why, "length 115, expected exactly 81"));
  desc[20] = 'z';
  CHECK(s3rdma_cuobj_desc_parse(desc, 81, &d, why, sizeof(why)) &&
        strstr(why, "field 2 (size)"));
  desc[20] = '0';
  desc[16] = '-';
  CHECK(s3rdma_cuobj_desc_parse(desc, 81, &d, why, sizeof(why)) &&
        strstr(why, "after field 1"));
  desc[16] = ':';
  desc[47] = '7';                 /* gid_present must be 0 or 1 */
  CHECK(s3rdma_cuobj_desc_parse(desc, 81, &d, why, sizeof(why)) &&
        strstr(why, "gid_present"));
}

/* Which x-amz-rdma-reply codes mean the bytes moved (wire.h). */
static void test_reply_ok(void)
{
  CHECK(s3rdma_reply_ok(0, 0, 200) && s3rdma_reply_ok(0, 1, 206));
  CHECK(s3rdma_reply_ok(1, 0, 200) && s3rdma_reply_ok(1, 0, 204));
  CHECK(s3rdma_reply_ok(1, 1, 206) && !s3rdma_reply_ok(1, 0, 206));
  CHECK(!s3rdma_reply_ok(0, 0, 204) && !s3rdma_reply_ok(0, 0, 501) &&
        !s3rdma_reply_ok(1, 0, 501) && !s3rdma_reply_ok(0, 0, 0));
}

int main(void)
{
  test_cuobj_desc();
  test_reply_ok();
  test_token();
  test_wire();
  test_pattern();
  return check_result("s3rdma_test");
}
