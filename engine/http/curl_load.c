/*
 * curl_load.c - libcurl, loaded the first time the engine calls it.
 *
 * strata forks one child per matrix cell from a fork server, and a fork
 * copies every mapping of the process that forks.  libcurl brings 28
 * libraries with it (TLS, Kerberos, LDAP, SSH, IDN, ...: ~140 of the
 * fork server's 226 mappings), which a cell that does no HTTP never
 * uses; each of them made every fork and every child's exit slower
 * (docs/performance.md, "Runner").  So the binary is not linked against
 * libcurl: the curl_* functions the engine calls are defined here, with
 * libcurl's own prototypes (curl/curl.h, curl/multi.h), and resolve
 * libcurl's on first use, once per process (engine/core/lazylib.c).
 *
 * curl_easy_setopt and curl_easy_getinfo are variadic: their one
 * argument is a long, a curl_off_t, a data pointer or a function pointer
 * (libcurl reads it with va_arg as the option's type), all passed in one
 * 64-bit register or stack slot on the LP64 ABIs strata builds for;
 * it is taken here as a void * and passed on in the same slot.
 */
#define CURL_DISABLE_TYPECHECK   /* the macros would rename what is defined here */
#include <curl/curl.h>

#include <stdarg.h>

#include "curl_load.h"
#include "lazylib.h"

#ifndef STRATA_LIBCURL_SONAME
#define STRATA_LIBCURL_SONAME "libcurl.so.4"
#endif

_Static_assert(sizeof(long) == sizeof(void *) &&
               sizeof(curl_off_t) == sizeof(void *),
               "curl_easy_setopt's argument is forwarded in one pointer slot");

static struct {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  CURLcode (*easy_perform)(CURL *);
  void (*easy_cleanup)(CURL *);
  void (*easy_reset)(CURL *);
  const char *(*easy_strerror)(CURLcode);
  char *(*easy_escape)(CURL *, const char *, int);
  void (*free)(void *);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  curl_version_info_data *(*version_info)(CURLversion);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_add_handle)(CURLM *, CURL *);
  CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
  CURLMcode (*multi_perform)(CURLM *, int *);
  CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int,
                          int *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
  CURLMcode (*multi_cleanup)(CURLM *);
} fn;

static const struct lazylib_sym syms[] = {
  { (void **)&fn.global_init, "curl_global_init", NULL },
  { (void **)&fn.easy_init, "curl_easy_init", NULL },
  { (void **)&fn.easy_setopt, "curl_easy_setopt", NULL },
  { (void **)&fn.easy_getinfo, "curl_easy_getinfo", NULL },
  { (void **)&fn.easy_perform, "curl_easy_perform", NULL },
  { (void **)&fn.easy_cleanup, "curl_easy_cleanup", NULL },
  { (void **)&fn.easy_reset, "curl_easy_reset", NULL },
  { (void **)&fn.easy_strerror, "curl_easy_strerror", NULL },
  { (void **)&fn.easy_escape, "curl_easy_escape", NULL },
  { (void **)&fn.free, "curl_free", NULL },
  { (void **)&fn.slist_append, "curl_slist_append", NULL },
  { (void **)&fn.slist_free_all, "curl_slist_free_all", NULL },
  { (void **)&fn.version_info, "curl_version_info", NULL },
  { (void **)&fn.multi_init, "curl_multi_init", NULL },
  { (void **)&fn.multi_add_handle, "curl_multi_add_handle", NULL },
  { (void **)&fn.multi_remove_handle, "curl_multi_remove_handle", NULL },
  { (void **)&fn.multi_perform, "curl_multi_perform", NULL },
  { (void **)&fn.multi_poll, "curl_multi_poll", NULL },
  { (void **)&fn.multi_info_read, "curl_multi_info_read", NULL },
  { (void **)&fn.multi_cleanup, "curl_multi_cleanup", NULL },
};

/* Unversioned (dlsym): libcurl's symbol version names its TLS backend
 * (CURL_OPENSSL_4, CURL_GNUTLS_4, ...), which differs between builds of
 * the same SONAME. */
static struct lazylib lib = {
  STRATA_LIBCURL_SONAME, "libcurl4", syms,
  sizeof(syms) / sizeof(syms[0]), 0, ""
};
static int ready(void)
{
  return lazylib_ready(&lib);
}

LAZYLIB_ENTRY_POINTS(curl, lib)

CURLcode curl_global_init(long flags)
{
  return ready() ? fn.global_init(flags) : CURLE_FAILED_INIT;
}

CURL *curl_easy_init(void)
{
  return ready() ? fn.easy_init() : NULL;
}

CURLcode curl_easy_setopt(CURL *c, CURLoption option, ...)
{
  va_list ap;
  void *arg;
  va_start(ap, option);
  arg = va_arg(ap, void *);
  va_end(ap);
  return ready() ? fn.easy_setopt(c, option, arg) : CURLE_FAILED_INIT;
}

CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
  va_list ap;
  void *arg;
  va_start(ap, info);
  arg = va_arg(ap, void *);
  va_end(ap);
  return ready() ? fn.easy_getinfo(c, info, arg) : CURLE_FAILED_INIT;
}

CURLcode curl_easy_perform(CURL *c)
{
  return ready() ? fn.easy_perform(c) : CURLE_FAILED_INIT;
}

void curl_easy_cleanup(CURL *c)
{
  if(ready())
    fn.easy_cleanup(c);
}

void curl_easy_reset(CURL *c)
{
  if(ready())
    fn.easy_reset(c);
}

const char *curl_easy_strerror(CURLcode code)
{
  return ready() ? fn.easy_strerror(code) : lib.why;
}

char *curl_easy_escape(CURL *c, const char *s, int length)
{
  return ready() ? fn.easy_escape(c, s, length) : NULL;
}

void curl_free(void *p)
{
  if(ready())
    fn.free(p);
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
  return ready() ? fn.slist_append(l, s) : NULL;
}

void curl_slist_free_all(struct curl_slist *l)
{
  if(ready())
    fn.slist_free_all(l);
}

curl_version_info_data *curl_version_info(CURLversion v)
{
  return ready() ? fn.version_info(v) : NULL;
}

CURLM *curl_multi_init(void)
{
  return ready() ? fn.multi_init() : NULL;
}

CURLMcode curl_multi_add_handle(CURLM *m, CURL *c)
{
  return ready() ? fn.multi_add_handle(m, c) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_remove_handle(CURLM *m, CURL *c)
{
  return ready() ? fn.multi_remove_handle(m, c) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_perform(CURLM *m, int *running)
{
  return ready() ? fn.multi_perform(m, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd extra[],
                          unsigned int nextra, int timeout_ms, int *numfds)
{
  return ready() ? fn.multi_poll(m, extra, nextra, timeout_ms, numfds)
                 : CURLM_INTERNAL_ERROR;
}

CURLMsg *curl_multi_info_read(CURLM *m, int *left)
{
  return ready() ? fn.multi_info_read(m, left) : NULL;
}

CURLMcode curl_multi_cleanup(CURLM *m)
{
  return ready() ? fn.multi_cleanup(m) : CURLM_INTERNAL_ERROR;
}
