/*
 * lazylib.c - open a library on first use and resolve its symbols
 * (lazylib.h says why).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "lazylib.h"

static void lazylib_open(struct lazylib *l)
{
  /* RTLD_LOCAL: its symbols serve only the shim's table, never interpose
   * on anything else; RTLD_NODELETE: never unloaded */
  void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if(!h) {
    snprintf(l->why, sizeof(l->why), "%s could not be loaded: %s "
             "(Debian package %s)", l->soname, dlerror(), l->package);
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
