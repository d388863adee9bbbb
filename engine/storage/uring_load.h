/*
 * uring_load.h - liburing is loaded on first use, not linked
 * (uring_load.c says why).  The engine calls io_uring_* as usual; these
 * say whether the library could be loaded and whether this process has it.
 */
#ifndef STRATA_URING_LOAD_H
#define STRATA_URING_LOAD_H

/* Load liburing now; 0, or -1 with uring_load_error(). */
int uring_load(void);
/* Why liburing could not be loaded ("" when it was). */
const char *uring_load_error(void);
/* 1 when this process has liburing mapped (without loading it). */
int uring_loaded(void);

#endif
