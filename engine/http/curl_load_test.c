/*
 * curl_load_test.c - libcurl is not mapped until the engine first calls
 * it, and calls through the loader reach the real library: the variadic
 * setopt/getinfo forward a long, a curl_off_t, a data pointer and a
 * function pointer intact (a file:// transfer of this file, compared
 * byte for byte with a plain read).
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "curl_load.h"
#include "strata.h"

struct sink { char *p; size_t n, cap; };

static size_t on_data(char *d, size_t size, size_t nmemb, void *arg)
{
  struct sink *s = arg;
  size_t n = size * nmemb;
  if(s->n + n > s->cap) {
    size_t cap = (s->n + n) * 2;
    char *p = realloc(s->p, cap);
    if(!p)
      return 0;
    s->p = p;
    s->cap = cap;
  }
  memcpy(s->p + s->n, d, n);
  s->n += n;
  return n;
}

int main(void)
{
  struct sink s = { NULL, 0, 0 };
  char url[4200];
  size_t want_n = 0;
  char *want = NULL;
  curl_off_t got = -1;
  long code = -1;
  CURL *e;
  CURLcode rc;

  CHECK(strata_read_file(__FILE__, 0, &want, NULL, &want_n) == 0 && want_n > 0);
  CHECK(!curl_loaded());                    /* nothing has called it yet */
  CHECK(curl_load() == 0);
  CHECK(strcmp(curl_load_error(), "") == 0);
  CHECK(curl_loaded());
  CHECK(curl_version_info(CURLVERSION_NOW) != NULL);

  e = curl_easy_init();
  CHECK(e != NULL);
  snprintf(url, sizeof(url), "file://%s", __FILE__);
  CHECK(curl_easy_setopt(e, CURLOPT_URL, url) == CURLE_OK);          /* char * */
  CHECK(curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data) == CURLE_OK);
  CHECK(curl_easy_setopt(e, CURLOPT_WRITEDATA, &s) == CURLE_OK);     /* void * */
  CHECK(curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 10000L) == CURLE_OK); /* long */
  CHECK(curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
                         (curl_off_t)1 << 40) == CURLE_OK);          /* off_t */
  rc = curl_easy_perform(e);
  CHECKF(rc == CURLE_OK, "%s", curl_easy_strerror(rc));
  CHECK(curl_easy_getinfo(e, CURLINFO_SIZE_DOWNLOAD_T, &got) == CURLE_OK);
  CHECK(curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK);
  CHECKF(got == (curl_off_t)want_n, "%lld of %zu", (long long)got, want_n);
  CHECK(s.n == want_n && memcmp(s.p, want, want_n) == 0);
  CHECK(code == 0);                  /* file:// has no response code */

  /* a curl_off_t and a long argument after the reset: resume from an
   * offset (the tail only), then no body at all */
  curl_easy_reset(e);
  s.n = 0;
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
  CHECK(curl_easy_setopt(e, CURLOPT_RESUME_FROM_LARGE, (curl_off_t)100) == CURLE_OK);
  rc = curl_easy_perform(e);
  CHECKF(rc == CURLE_OK, "%s", curl_easy_strerror(rc));
  CHECKF(s.n == want_n - 100 && memcmp(s.p, want + 100, s.n) == 0, "%zu", s.n);
  curl_easy_reset(e);
  s.n = 0;
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &s);
  CHECK(curl_easy_setopt(e, CURLOPT_NOBODY, 1L) == CURLE_OK);
  rc = curl_easy_perform(e);
  CHECKF(rc == CURLE_OK, "%s", curl_easy_strerror(rc));
  CHECKF(s.n < want_n, "%zu", s.n);    /* file:// NOBODY: headers at most */
  curl_easy_cleanup(e);
  free(s.p);
  free(want);
  return check_result("curl_load_test");
}
