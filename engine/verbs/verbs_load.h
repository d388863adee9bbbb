/*
 * verbs_load.h - libibverbs is loaded on first use, not linked
 * (verbs_load.c says why).  The engine calls ibv_* as usual; these say
 * whether the library could be loaded and whether this process has it.
 */
#ifndef STRATA_VERBS_LOAD_H
#define STRATA_VERBS_LOAD_H

/* Load libibverbs now; 0, or -1 with verbs_load_error(). */
int verbs_load(void);
/* Why libibverbs could not be loaded ("" when it was). */
const char *verbs_load_error(void);
/* 1 when this process has libibverbs mapped (without loading it). */
int verbs_loaded(void);

#endif
