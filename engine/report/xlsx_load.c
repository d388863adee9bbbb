/*
 * xlsx_load.c - libxlsxwriter, loaded the first time the engine writes a
 * workbook.
 *
 * libxlsxwriter and the libraries it brings (libminizip, zlib and
 * OpenSSL's libcrypto, whose MD5_* Debian's build calls) were mapped in
 * the fork server and in every cell's child, though only the runner
 * writes a workbook, after its last cell (engine/core/lazylib.h says what
 * each mapping costs a fork).  So the binary is not linked against it:
 * the functions engine/report calls are defined here with the prototypes
 * of xlsxwriter.h and forward to libxlsxwriter's own, resolved once per
 * process (engine/core/lazylib.c).  Everything else the engine uses from
 * the headers is a type, a constant or a struct field.
 *
 * The list below was taken from the prototypes of the installed headers
 * (/usr/include/xlsxwriter/{workbook,worksheet,format,chart,utility}.h,
 * Debian libxlsxwriter-dev 1.1.4-2+b1; docs/provenance.md); each
 * definition is checked against the header's declaration by the
 * compiler, and a call to a function missing here fails the link
 * (`nm -u build/strata` lists what must be here).  libxlsxwriter's
 * symbols carry no version: dlsym.
 *
 * Without the library workbook_new_opt returns NULL, as when it cannot
 * create a workbook, and xlsx_load_error() says why: report.workbook
 * raises with it (report_lua.c).  The other functions need a workbook,
 * so they are never reached without one; they do nothing or return
 * LXW_ERROR_FEATURE_NOT_SUPPORTED, and lxw_strerror the loader's reason.
 */
#include <xlsxwriter.h>

#include "lazylib.h"
#include "xlsx_load.h"

#ifndef STRATA_LIBXLSXWRITER_SONAME
#define STRATA_LIBXLSXWRITER_SONAME "libxlsxwriter.so.4"
#endif

/* Every function strata calls: F(return type, name, (parameters),
 * (arguments), what it returns without the library); V(...) for those
 * that return nothing. */
#define XLSX_FUNCTIONS(F, V)                                                 \
  F(lxw_chart_series *, chart_add_series, (lxw_chart *chart, const char      \
    *categories, const char *values), (chart, categories, values), NULL)     \
  V(chart_axis_major_gridlines_set_visible, (lxw_chart_axis *axis, uint8_t   \
    visible), (axis, visible))                                               \
  V(chart_axis_set_crossing_min, (lxw_chart_axis *axis), (axis))             \
  V(chart_axis_set_log_base, (lxw_chart_axis *axis, uint16_t log_base),      \
    (axis, log_base))                                                        \
  V(chart_axis_set_max, (lxw_chart_axis *axis, double max), (axis, max))     \
  V(chart_axis_set_min, (lxw_chart_axis *axis, double min), (axis, min))     \
  V(chart_axis_set_name, (lxw_chart_axis *axis, const char *name), (axis,    \
    name))                                                                   \
  V(chart_axis_set_num_format, (lxw_chart_axis *axis, const char             \
    *num_format), (axis, num_format))                                        \
  V(chart_axis_set_reverse, (lxw_chart_axis *axis), (axis))                  \
  V(chart_legend_set_position, (lxw_chart *chart, uint8_t position),         \
    (chart, position))                                                       \
  V(chart_series_set_categories, (lxw_chart_series *series, const char       \
    *sheetname, lxw_row_t first_row, lxw_col_t first_col, lxw_row_t          \
    last_row, lxw_col_t last_col), (series, sheetname, first_row,            \
    first_col, last_row, last_col))                                          \
  V(chart_series_set_line, (lxw_chart_series *series, lxw_chart_line         \
    *line), (series, line))                                                  \
  V(chart_series_set_marker_type, (lxw_chart_series *series, uint8_t         \
    type), (series, type))                                                   \
  V(chart_series_set_name, (lxw_chart_series *series, const char *name),     \
    (series, name))                                                          \
  V(chart_series_set_name_range, (lxw_chart_series *series, const char       \
    *sheetname, lxw_row_t row, lxw_col_t col), (series, sheetname, row,      \
    col))                                                                    \
  V(chart_series_set_smooth, (lxw_chart_series *series, uint8_t smooth),     \
    (series, smooth))                                                        \
  V(chart_series_set_values, (lxw_chart_series *series, const char           \
    *sheetname, lxw_row_t first_row, lxw_col_t first_col, lxw_row_t          \
    last_row, lxw_col_t last_col), (series, sheetname, first_row,            \
    first_col, last_row, last_col))                                          \
  V(chart_set_style, (lxw_chart *chart, uint8_t style_id), (chart,           \
    style_id))                                                               \
  V(chart_title_off, (lxw_chart *chart), (chart))                            \
  V(chart_title_set_name, (lxw_chart *chart, const char *name), (chart,      \
    name))                                                                   \
  V(format_set_align, (lxw_format *format, uint8_t alignment), (format,      \
    alignment))                                                              \
  V(format_set_bg_color, (lxw_format *format, lxw_color_t color), (format,   \
    color))                                                                  \
  V(format_set_bold, (lxw_format *format), (format))                         \
  V(format_set_border, (lxw_format *format, uint8_t style), (format,         \
    style))                                                                  \
  V(format_set_border_color, (lxw_format *format, lxw_color_t color),        \
    (format, color))                                                         \
  V(format_set_bottom, (lxw_format *format, uint8_t style), (format,         \
    style))                                                                  \
  V(format_set_font_color, (lxw_format *format, lxw_color_t color),          \
    (format, color))                                                         \
  V(format_set_font_name, (lxw_format *format, const char *font_name),       \
    (format, font_name))                                                     \
  V(format_set_font_size, (lxw_format *format, double size), (format,        \
    size))                                                                   \
  V(format_set_font_strikeout, (lxw_format *format), (format))               \
  V(format_set_indent, (lxw_format *format, uint8_t level), (format,         \
    level))                                                                  \
  V(format_set_italic, (lxw_format *format), (format))                       \
  V(format_set_left, (lxw_format *format, uint8_t style), (format, style))   \
  V(format_set_num_format, (lxw_format *format, const char *num_format),     \
    (format, num_format))                                                    \
  V(format_set_pattern, (lxw_format *format, uint8_t index), (format,        \
    index))                                                                  \
  V(format_set_right, (lxw_format *format, uint8_t style), (format,          \
    style))                                                                  \
  V(format_set_rotation, (lxw_format *format, int16_t angle), (format,       \
    angle))                                                                  \
  V(format_set_shrink, (lxw_format *format), (format))                       \
  V(format_set_text_wrap, (lxw_format *format), (format))                    \
  V(format_set_top, (lxw_format *format, uint8_t style), (format, style))    \
  V(format_set_underline, (lxw_format *format, uint8_t style), (format,      \
    style))                                                                  \
  V(lxw_rowcol_to_cell, (char *cell_name, lxw_row_t row, lxw_col_t col),     \
    (cell_name, row, col))                                                   \
  F(char *, lxw_strerror, (lxw_error error_num), (error_num),               \
    (char *)lib.why)                                                         \
  F(const char *, lxw_version, (void), (), NULL)                             \
  V(lxw_workbook_free, (lxw_workbook *workbook), (workbook))                 \
  F(lxw_chart *, workbook_add_chart, (lxw_workbook *workbook, uint8_t        \
    chart_type), (workbook, chart_type), NULL)                               \
  F(lxw_format *, workbook_add_format, (lxw_workbook *workbook),             \
    (workbook), NULL)                                                        \
  F(lxw_worksheet *, workbook_add_worksheet, (lxw_workbook *workbook,        \
    const char *sheetname), (workbook, sheetname), NULL)                     \
  F(lxw_error, workbook_close, (lxw_workbook *workbook), (workbook),         \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_workbook *, workbook_new_opt, (const char *filename,                 \
    lxw_workbook_options *options), (filename, options), NULL)               \
  F(lxw_error, workbook_set_properties, (lxw_workbook *workbook,             \
    lxw_doc_properties *properties), (workbook, properties),                 \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, workbook_validate_sheet_name, (lxw_workbook *workbook,        \
    const char *sheetname), (workbook, sheetname),                           \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  V(worksheet_activate, (lxw_worksheet *worksheet), (worksheet))             \
  F(lxw_error, worksheet_autofilter, (lxw_worksheet *worksheet, lxw_row_t    \
    first_row, lxw_col_t first_col, lxw_row_t last_row, lxw_col_t            \
    last_col), (worksheet, first_row, first_col, last_row, last_col),        \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_conditional_format_range, (lxw_worksheet          \
    *worksheet, lxw_row_t first_row, lxw_col_t first_col, lxw_row_t          \
    last_row, lxw_col_t last_col, lxw_conditional_format                     \
    *conditional_format), (worksheet, first_row, first_col, last_row,        \
    last_col, conditional_format), LXW_ERROR_FEATURE_NOT_SUPPORTED)          \
  V(worksheet_fit_to_pages, (lxw_worksheet *worksheet, uint16_t width,       \
    uint16_t height), (worksheet, width, height))                            \
  V(worksheet_freeze_panes, (lxw_worksheet *worksheet, lxw_row_t row,        \
    lxw_col_t col), (worksheet, row, col))                                   \
  V(worksheet_gridlines, (lxw_worksheet *worksheet, uint8_t option),         \
    (worksheet, option))                                                     \
  V(worksheet_hide, (lxw_worksheet *worksheet), (worksheet))                 \
  F(lxw_error, worksheet_insert_chart_opt, (lxw_worksheet *worksheet,        \
    lxw_row_t row, lxw_col_t col, lxw_chart *chart, lxw_chart_options        \
    *user_options), (worksheet, row, col, chart, user_options),              \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_merge_range, (lxw_worksheet *worksheet, lxw_row_t   \
    first_row, lxw_col_t first_col, lxw_row_t last_row, lxw_col_t            \
    last_col, const char *string, lxw_format *format), (worksheet,           \
    first_row, first_col, last_row, last_col, string, format),               \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_repeat_rows, (lxw_worksheet *worksheet, lxw_row_t   \
    first_row, lxw_row_t last_row), (worksheet, first_row, last_row),        \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_set_column, (lxw_worksheet *worksheet, lxw_col_t    \
    first_col, lxw_col_t last_col, double width, lxw_format *format),        \
    (worksheet, first_col, last_col, width, format),                         \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_set_footer, (lxw_worksheet *worksheet, const char   \
    *string), (worksheet, string), LXW_ERROR_FEATURE_NOT_SUPPORTED)          \
  F(lxw_error, worksheet_set_header, (lxw_worksheet *worksheet, const char   \
    *string), (worksheet, string), LXW_ERROR_FEATURE_NOT_SUPPORTED)          \
  V(worksheet_set_landscape, (lxw_worksheet *worksheet), (worksheet))        \
  F(lxw_error, worksheet_set_row, (lxw_worksheet *worksheet, lxw_row_t       \
    row, double height, lxw_format *format), (worksheet, row, height,        \
    format), LXW_ERROR_FEATURE_NOT_SUPPORTED)                                \
  V(worksheet_set_tab_color, (lxw_worksheet *worksheet, lxw_color_t          \
    color), (worksheet, color))                                              \
  V(worksheet_set_zoom, (lxw_worksheet *worksheet, uint16_t scale),          \
    (worksheet, scale))                                                      \
  F(lxw_error, worksheet_write_blank, (lxw_worksheet *worksheet, lxw_row_t   \
    row, lxw_col_t col, lxw_format *format), (worksheet, row, col,           \
    format), LXW_ERROR_FEATURE_NOT_SUPPORTED)                                \
  F(lxw_error, worksheet_write_boolean, (lxw_worksheet *worksheet,           \
    lxw_row_t row, lxw_col_t col, int value, lxw_format *format),            \
    (worksheet, row, col, value, format), LXW_ERROR_FEATURE_NOT_SUPPORTED)   \
  F(lxw_error, worksheet_write_formula, (lxw_worksheet *worksheet,           \
    lxw_row_t row, lxw_col_t col, const char *formula, lxw_format            \
    *format), (worksheet, row, col, formula, format),                        \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_write_formula_num, (lxw_worksheet *worksheet,       \
    lxw_row_t row, lxw_col_t col, const char *formula, lxw_format *format,   \
    double result), (worksheet, row, col, formula, format, result),          \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_write_number, (lxw_worksheet *worksheet,            \
    lxw_row_t row, lxw_col_t col, double number, lxw_format *format),        \
    (worksheet, row, col, number, format),                                   \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_write_string, (lxw_worksheet *worksheet,            \
    lxw_row_t row, lxw_col_t col, const char *string, lxw_format *format),   \
    (worksheet, row, col, string, format),                                   \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)                                         \
  F(lxw_error, worksheet_write_url_opt, (lxw_worksheet *worksheet,           \
    lxw_row_t row_num, lxw_col_t col_num, const char *url, lxw_format        \
    *format, const char *string, const char *tooltip), (worksheet,           \
    row_num, col_num, url, format, string, tooltip),                         \
    LXW_ERROR_FEATURE_NOT_SUPPORTED)

#define SLOT_F(ret, fname, params, args, fail) __typeof__(fname) *fname;
#define SLOT_V(fname, params, args) __typeof__(fname) *fname;
static struct {
  XLSX_FUNCTIONS(SLOT_F, SLOT_V)
} fn;

#define SYM_F(ret, fname, params, args, fail) \
  { (void **)&fn.fname, #fname, NULL },
#define SYM_V(fname, params, args) { (void **)&fn.fname, #fname, NULL },
static const struct lazylib_sym syms[] = {
  XLSX_FUNCTIONS(SYM_F, SYM_V)
};

static struct lazylib lib = {
  STRATA_LIBXLSXWRITER_SONAME, "libxlsxwriter4", syms,
  sizeof(syms) / sizeof(syms[0]), 0, ""
};
static int ready(void)
{
  return lazylib_ready(&lib);
}

LAZYLIB_ENTRY_POINTS(xlsx, lib)

#define DEFINE_F(ret, fname, params, args, fail) \
  ret fname params { return ready() ? fn.fname args : fail; }
#define DEFINE_V(fname, params, args) \
  void fname params { if(ready()) fn.fname args; }
XLSX_FUNCTIONS(DEFINE_F, DEFINE_V)
