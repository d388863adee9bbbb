/*
 * report_test.c - unit test of the workbook writer's Lua-free part:
 * sheet-name sanitising (forbidden characters, UTF-8 boundaries, the 31
 * character limit, apostrophes), colour parsing, and the widths the
 * layout counts (report_layout_lua.c: the same as Lua's utf8.len and the
 * writer's number rule).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "report.h"

static void expect_name(const char *in, const char *want)
{
  char out[128];
  size_t n = report_sheet_name(in, out, sizeof(out));
  CHECKF(!strcmp(out, want) && n == strlen(want),
         "sheet_name(\"%s\") = \"%s\" (%zu), want \"%s\"", in, out, n,
         want);
}

static void expect_color(const char *in, int rc, unsigned want)
{
  uint32_t v = 0xdeadbeef;
  int got = report_parse_color(in, &v);
  CHECKF(got == rc && (rc != 0 || v == want),
         "parse_color(\"%s\") = %d 0x%06x, want %d 0x%06x",
         in ? in : "(null)", got, (unsigned)v, rc, want);
}

int main(void)
{
  char small[6];

  expect_name("R2 Host RDMA bandwidth", "R2 Host RDMA bandwidth");
  expect_name("a[b]c:d*e?f/g\\h", "a_b_c_d_e_f_g_h");
  expect_name("'quoted'", "quoted");
  expect_name("  spaced  ", "spaced");
  expect_name("", "Sheet");
  expect_name(NULL, "Sheet");
  expect_name("'''", "Sheet");
  /* 31 characters kept, the rest cut. */
  expect_name("0123456789012345678901234567890123456789",
              "0123456789012345678901234567890");
  /* Multi-byte characters count as one: 31 x "é" (2 bytes each). */
  {
    char in[128] = "", want[128] = "";
    for(int i = 0; i < 40; i++)
      strcat(in, "\xc3\xa9");
    for(int i = 0; i < 31; i++)
      strcat(want, "\xc3\xa9");
    expect_name(in, want);
  }
  /* Invalid UTF-8 and control characters become '_'. */
  expect_name("a\xff" "b\tc", "a_b_c");
  expect_name("x\xe2\x82", "x__");         /* truncated sequence */
  expect_name("\xc0\xafz", "__z");          /* overlong '/' */
  expect_name("\xed\xa0\x80q", "___q");     /* surrogate */
  expect_name("GPU \xe2\x86\x92 NIC", "GPU \xe2\x86\x92 NIC");
  /* Cut at the end of a 31-character name that ends in a space. */
  expect_name("012345678901234567890123456789 x", "012345678901234567890123456789");
  /* A tiny buffer never overflows and never splits a character. */
  report_sheet_name("abcd\xc3\xa9", small, sizeof(small));
  CHECKF(!strcmp(small, "abcd"), "small buffer: \"%s\"", small);

  expect_color("#1F4E78", 0, 0x1f4e78);
  expect_color("c6efce", 0, 0xc6efce);
  expect_color("#FFF", -1, 0);
  expect_color("#1F4E78A", -1, 0);
  expect_color("#GG0000", -1, 0);
  expect_color(NULL, -1, 0);

  /* Texts: characters as utf8.len counts them, bytes when not UTF-8. */
  CHECK(report_utf8_valid("", 0));
  CHECK(report_utf8_valid("a\0b", 3));             /* NUL is a character */
  CHECK(report_utf8_valid("\xe2\x86\x92", 3));
  CHECK(!report_utf8_valid("\xe2\x86", 2));        /* cut sequence */
  CHECK(!report_utf8_valid("\xc0\xaf", 2));        /* overlong */
  CHECK(!report_utf8_valid("\xed\xa0\x80", 3));    /* surrogate */
  CHECK(!report_utf8_valid("\xf4\x90\x80\x80", 4)); /* past U+10FFFF */
  CHECK(report_text_chars("GPU \xe2\x86\x92 NIC", 11) == 9);
  CHECK(report_text_chars("a\xff" "b", 3) == 3);
  CHECK(report_text_width("ab\ncdef\n", 8) == 4);  /* the widest line */
  CHECK(report_text_width("\xc3\xa9\xc3\xa9\nabc", 8) == 3);
  CHECK(report_text_width("\xc3\xa9\xff\nab", 6) == 3);  /* that line's bytes */
  /* Numbers: digits, separators, sign, 4 for decimals, plus one. */
  CHECK(report_integer_width(0) == 2);
  CHECK(report_integer_width(9) == 2);
  CHECK(report_integer_width(10) == 3);
  CHECK(report_integer_width(1000) == 6);            /* 1,000 */
  CHECK(report_integer_width(-1234567) == 11);       /* -1,234,567 */
  CHECK(report_integer_width(INT64_MIN) == 3);       /* math.abs wraps */
  CHECK(report_number_width(2.5) == 6);
  CHECK(report_number_width(1000.0) == 6);
  CHECK(report_number_width(-0.001) == 7);
  CHECK(report_number_width(1e300) == 402);
  CHECK(report_number_width(0.0 / 0.0) == 0);
  CHECK(report_number_width(1.0 / 0.0) == 0);

  return check_result("report_test");
}
