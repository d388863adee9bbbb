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

#endif
