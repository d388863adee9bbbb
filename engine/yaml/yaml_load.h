/*
 * yaml_load.h - libyaml is loaded on first use, not linked (yaml_load.c
 * says why).  The engine calls yaml_* as usual; these say whether the
 * library could be loaded and whether this process has it.
 */
#ifndef STRATA_YAML_LOAD_H
#define STRATA_YAML_LOAD_H

/* Load libyaml now; 0, or -1 with yaml_load_error(). */
int yaml_load(void);
/* Why libyaml could not be loaded ("" when it was). */
const char *yaml_load_error(void);
/* 1 when this process has libyaml mapped (without loading it). */
int yaml_loaded(void);

#endif
