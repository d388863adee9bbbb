/*
 * report.h - the part of the workbook writer that needs no Lua: turning
 * any text into a valid, unique-able Excel sheet name and parsing colours.
 * The binding (report_lua.c) and the unit test (report_test.c) use it.
 */
#ifndef STRATA_REPORT_H
#define STRATA_REPORT_H

#include <stddef.h>
#include <stdint.h>

/* Excel's limit on a sheet name, in characters (not bytes). */
#define REPORT_SHEET_NAME_MAX 31

/*
 * Write into out (outlen bytes, at least 4 * 31 + 1 = 125 advised) a valid
 * sheet name made from in: characters []:*?/\ become '_', control
 * characters and invalid UTF-8 bytes become '_', leading and trailing
 * apostrophes and spaces are dropped, the result is cut to 31 characters on
 * a character boundary, and an empty result becomes "Sheet".  Returns the
 * length in bytes of out.  Never fails: out is always NUL-terminated.
 */
size_t report_sheet_name(const char *in, char *out, size_t outlen);

/*
 * Parse "#RRGGBB" (or "RRGGBB") into *rgb.  Returns 0 on success, -1 when s
 * is not six hex digits with an optional '#'.
 */
int report_parse_color(const char *s, uint32_t *rgb);

/*
 * What the workbook's layout counts of a cell (lua/strata/report/xlsheets.lua,
 * Sheet:put), the same as Lua 5.4 counts it there: characters are those of
 * utf8.len (strict: no surrogates, no overlong forms), and a text that is not
 * valid UTF-8 counts its bytes.
 */
#define REPORT_MAX_TEXT 32767  /* Excel's limit on a cell's text */

/* Whether s (n bytes, NULs allowed) is valid UTF-8, as utf8.len(s) ~= nil. */
int report_utf8_valid(const char *s, size_t n);

/* Characters of s (utf8.len), or its bytes when it is not valid UTF-8. */
size_t report_text_chars(const char *s, size_t n);

/* The width of a text: its widest line (lines split at '\n'). */
size_t report_text_width(const char *s, size_t n);

/* The width of a number as the writer shows it: digits, thousands
 * separators, sign, 4 for decimals when it is not whole, plus one; 0 when
 * it is not finite.  The integer form is for Lua integers. */
int64_t report_number_width(double v);
int64_t report_integer_width(int64_t v);

#endif
