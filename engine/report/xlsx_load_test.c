/*
 * xlsx_load_test.c - libxlsxwriter (and its libminizip) is not mapped
 * until the engine first writes a workbook, and calls through the loader
 * reach the real library: a workbook of one sheet is written and its
 * bytes are a zip archive (PK\3\4, APPNOTE.TXT 4.3.7) holding the
 * sheet's XML part; the library's version is the headers'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xlsxwriter.h>

#include "check.h"
#include "lazylib.h"
#include "xlsx_load.h"

int main(void)
{
  char path[] = "/tmp/xlsx_load_test-XXXXXX";
  char cell[16] = "";
  char head[4] = { 0 };
  lxw_workbook_options opt = { 0 };
  lxw_workbook *wb;
  lxw_worksheet *ws;
  lxw_format *bold;
  FILE *f;
  char *all;
  long n;
  int fd = mkstemp(path);

  CHECK(fd >= 0);
  close(fd);
  CHECK(!xlsx_loaded());                    /* nothing has called it yet */
  CHECK(!lazylib_mapped("libminizip.so.1"));
  CHECK(xlsx_load() == 0);
  CHECKF(strcmp(xlsx_load_error(), "") == 0, "%s", xlsx_load_error());
  CHECK(xlsx_loaded());
  CHECK(lazylib_mapped("libminizip.so.1"));  /* libxlsxwriter's own NEEDED */
  CHECKF(strcmp(lxw_version(), LXW_VERSION) == 0, "%s", lxw_version());

  lxw_rowcol_to_cell(cell, 9, 27);
  CHECKF(strcmp(cell, "AB10") == 0, "%s", cell);
  CHECK(strcmp(lxw_strerror(LXW_NO_ERROR), "No error.") == 0);

  opt.use_zip64 = 1;
  wb = workbook_new_opt(path, &opt);
  CHECK(wb != NULL);
  if(wb) {
    CHECK(workbook_validate_sheet_name(wb, "bad[name") ==
          LXW_ERROR_INVALID_SHEETNAME_CHARACTER);
    ws = workbook_add_worksheet(wb, "Loaded");
    bold = workbook_add_format(wb);
    CHECK(ws != NULL && bold != NULL);
    format_set_bold(bold);
    CHECK(worksheet_write_string(ws, 0, 0, "xlsx_load_test", bold) ==
          LXW_NO_ERROR);
    CHECK(worksheet_write_number(ws, 1, 0, 92.5, NULL) == LXW_NO_ERROR);
    CHECK(workbook_close(wb) == LXW_NO_ERROR);
  }

  f = fopen(path, "rb");
  CHECK(f != NULL);
  if(f) {
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    all = malloc((size_t)n + 1);
    CHECK(all != NULL && fread(all, 1, (size_t)n, f) == (size_t)n);
    memcpy(head, all, sizeof(head));
    CHECK(memcmp(head, "PK\3\4", 4) == 0);
    all[n] = 0;
    /* the part names are stored uncompressed in the local headers */
    CHECK(memmem(all, (size_t)n, "xl/worksheets/sheet1.xml", 24) != NULL);
    free(all);
    fclose(f);
  }
  unlink(path);
  return check_result("xlsx_load_test");
}
