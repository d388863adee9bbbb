/*
 * curl_load.h - libcurl is loaded on first use, not linked (curl_load.c
 * says why).  The engine calls curl_* as usual; these say whether the
 * library could be loaded and whether this process has loaded it.
 */
#ifndef STRATA_CURL_LOAD_H
#define STRATA_CURL_LOAD_H

/* Load libcurl now; 0, or -1 with curl_load_error(). */
int curl_load(void);
/* Why libcurl could not be loaded ("" when it was). */
const char *curl_load_error(void);
/* 1 when this process has libcurl mapped (without loading it). */
int curl_loaded(void);

#endif
