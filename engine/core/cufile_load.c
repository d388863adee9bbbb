/*
 * cufile_load.c - libcufile, opened on first use (cufile_load.h).  The
 * library comes with NVIDIA's GPUDirect Storage, never with Debian: a
 * node without it SKIPs (cuda.cufile) or says so (the s3rdma preflight),
 * and strata neither links nor bundles it.  lazylib opens it by SONAME
 * first (the name libcuobjclient asks for), then by the toolkit's
 * development name; the symbols are looked up here, where their absence
 * has its own message and two are optional.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "cufile_load.h"
#include "lazylib.h"

#define PACKAGE "none: NVIDIA GPUDirect Storage"

static struct lazylib libs[] = {
  { CUFILE_SONAME, PACKAGE, NULL, 0, 0, "" },
  { "libcufile.so", PACKAGE, NULL, 0, 0, "" },
};

int cufile_load_api(struct cufile_api *a, char *err, size_t len)
{
  char why[sizeof(libs[0].why)] = "";
  void *lib = NULL;
  for(size_t i = 0; i < sizeof(libs) / sizeof(libs[0]) && !lib; i++)
    if(!(lib = lazylib_handle(&libs[i])))
      lazylib_dlerror(&libs[i], why, sizeof(why));
  if(!lib) {
    snprintf(err, len, "libcufile (GPUDirect Storage) not found: %s", why);
    return -1;
  }
#define SYM(f, n)                                                   \
  do {                                                              \
    *(void **)&a->f = dlsym(lib, n);                                \
    if(!a->f) {                                                     \
      snprintf(err, len, "libcufile lacks %s", n);                  \
      return -1;                                                    \
    }                                                               \
  } while(0)
  SYM(driver_open, "cuFileDriverOpen");
  SYM(driver_close, "cuFileDriverClose");
  SYM(handle_register, "cuFileHandleRegister");
  SYM(handle_deregister, "cuFileHandleDeregister");
  SYM(buf_register, "cuFileBufRegister");
  SYM(buf_deregister, "cuFileBufDeregister");
  SYM(read, "cuFileRead");
  SYM(write, "cuFileWrite");
#undef SYM
  *(void **)&a->get_version = dlsym(lib, "cuFileGetVersion");
  return 0;
}

int cufile_load_facts(const char *sym, char *path, size_t pathlen,
                      int *version, int *has_sym, char *why,
                      size_t whylen)
{
  struct link_map *lm = NULL;
  cufile_error_t (*v)(int *);
  /* by SONAME, as libcuobjclient asks for it: whichever copy the loader
   * finds first (or one already mapped) is the one cuObject gets */
  void *lib = lazylib_handle(&libs[0]);
  path[0] = '\0';
  *version = *has_sym = 0;
  if(!lib) {
    lazylib_dlerror(&libs[0], why, whylen);
    return 0;
  }
  if(!dlinfo(lib, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name)
    snprintf(path, pathlen, "%s", lm->l_name);
  *has_sym = dlsym(lib, sym) != NULL;
  *(void **)&v = dlsym(lib, "cuFileGetVersion");
  if(v) {
    int ver = 0;
    if(v(&ver).err == 0)
      *version = ver;
  }
  return 1;
}
