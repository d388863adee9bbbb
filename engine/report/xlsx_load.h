/*
 * xlsx_load.h - libxlsxwriter is loaded on first use, not linked
 * (xlsx_load.c says why).  The engine calls workbook_*, worksheet_*,
 * format_*, chart_* and lxw_* as usual; these say whether the library
 * could be loaded and whether this process has it.
 */
#ifndef STRATA_XLSX_LOAD_H
#define STRATA_XLSX_LOAD_H

/* Load libxlsxwriter now; 0, or -1 with xlsx_load_error(). */
int xlsx_load(void);
/* Why libxlsxwriter could not be loaded ("" when it was). */
const char *xlsx_load_error(void);
/* 1 when this process has libxlsxwriter mapped (without loading it). */
int xlsx_loaded(void);

#endif
