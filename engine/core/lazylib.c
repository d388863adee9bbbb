/*
 * lazylib.c - open a library on first use and resolve its symbols
 * (lazylib.h says why).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lazylib.h"

/* Why a library could not be opened: dlopen's words between these two
 * (lazylib_dlerror takes them out again). */
#define NOT_LOADED " could not be loaded: "
#define PACKAGE_IS " (Debian package "

static void lazylib_open(struct lazylib *l)
{
  /* RTLD_LOCAL: its symbols serve only the shim's table, never interpose
   * on anything else; RTLD_NODELETE: never unloaded */
  void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if(!h) {
    snprintf(l->why, sizeof(l->why), "%s" NOT_LOADED "%s" PACKAGE_IS "%s)",
             l->soname, dlerror(), l->package);
    __atomic_store_n(&l->state, -1, __ATOMIC_RELEASE);
    return;
  }
  for(size_t i = 0; i < l->nsyms; i++) {
    const struct lazylib_sym *s = &l->syms[i];
    *s->slot = s->version ? dlvsym(h, s->name, s->version)
                          : dlsym(h, s->name);
    if(!*s->slot) {
      snprintf(l->why, sizeof(l->why), "%s has no %s%s%s: older than the "
               "headers strata was built with (Debian package %s)",
               l->soname, s->name, s->version ? "@" : "",
               s->version ? s->version : "", l->package);
      __atomic_store_n(&l->state, -1, __ATOMIC_RELEASE);
      return;
    }
  }
  __atomic_store_n(&l->state, 1, __ATOMIC_RELEASE);
}

int lazylib_ready(struct lazylib *l)
{
  /* tried once per process, whichever thread asks first; the others wait
   * for its answer (l->why is written before state, read after) */
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  int st = __atomic_load_n(&l->state, __ATOMIC_ACQUIRE);
  if(!st) {
    pthread_mutex_lock(&lock);
    if(!l->state)
      lazylib_open(l);
    st = l->state;
    pthread_mutex_unlock(&lock);
  }
  return st > 0;
}

int lazylib_mapped(const char *soname)
{
  void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if(h)
    dlclose(h);
  return h != NULL;
}

void *lazylib_handle(struct lazylib *l)
{
  void *h;
  if(!lazylib_ready(l))
    return NULL;
  /* the handle lazylib_open had: the library is never unloaded
   * (RTLD_NODELETE), so this one stays valid after the dlclose */
  h = dlopen(l->soname, RTLD_NOW | RTLD_NOLOAD);
  if(h)
    dlclose(h);
  return h;
}

void lazylib_dlerror(const struct lazylib *l, char *buf, size_t len)
{
  size_t n = strlen(l->soname);
  const char *p = l->why + n, *e = NULL;
  if(__atomic_load_n(&l->state, __ATOMIC_ACQUIRE) >= 0 ||
     strncmp(l->why, l->soname, n) ||
     strncmp(p, NOT_LOADED, strlen(NOT_LOADED))) {
    snprintf(buf, len, "%s", l->why);
    return;
  }
  p += strlen(NOT_LOADED);
  /* up to the last " (Debian package ": the package named at the end (a
   * long message cut short has none) */
  for(const char *q = strstr(p, PACKAGE_IS); q; q = strstr(q + 1, PACKAGE_IS))
    e = q;
  snprintf(buf, len, "%.*s", (int)(e ? (size_t)(e - p) : strlen(p)), p);
}
