/*
 * crypto_load.c - OpenSSL's libcrypto, loaded the first time the engine
 * hashes or signs: SHA-256 (core.sha256, SigV4's payload hash) and
 * HMAC-SHA256 (SigV4's signing key).  A cell that does neither no longer
 * maps it in the fork server and its own child (engine/core/lazylib.h
 * says why that matters).
 *
 * The three functions are defined here with OpenSSL 3's prototypes
 * (openssl/evp.h, openssl/hmac.h) and forward to libcrypto's, bound to
 * OPENSSL_3.0.0, the version every 3.x symbol of that era carries
 * (util/libcrypto.num, docs/provenance.md).  Without the library they
 * fail as OpenSSL reports failure (0, NULL) and crypto_load_error() says
 * why.
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>


#include "crypto_load.h"
#include "lazylib.h"

#ifndef STRATA_LIBCRYPTO_SONAME
#define STRATA_LIBCRYPTO_SONAME "libcrypto.so.3"
#endif

static struct {
  int (*digest)(const void *, size_t, unsigned char *, unsigned int *,
                const EVP_MD *, ENGINE *);
  const EVP_MD *(*sha256)(void);
  unsigned char *(*hmac)(const EVP_MD *, const void *, int,
                         const unsigned char *, size_t, unsigned char *,
                         unsigned int *);
} fn;

static const struct lazylib_sym syms[] = {
  { (void **)&fn.digest, "EVP_Digest", "OPENSSL_3.0.0" },
  { (void **)&fn.sha256, "EVP_sha256", "OPENSSL_3.0.0" },
  { (void **)&fn.hmac, "HMAC", "OPENSSL_3.0.0" },
};

static struct lazylib lib = {
  STRATA_LIBCRYPTO_SONAME, "libssl3", syms,
  sizeof(syms) / sizeof(syms[0]), 0, ""
};
static int ready(void)
{
  return lazylib_ready(&lib);
}

LAZYLIB_ENTRY_POINTS(crypto, lib)

int EVP_Digest(const void *data, size_t count, unsigned char *md,
               unsigned int *size, const EVP_MD *type, ENGINE *impl)
{
  return ready() ? fn.digest(data, count, md, size, type, impl) : 0;
}

const EVP_MD *EVP_sha256(void)
{
  return ready() ? fn.sha256() : NULL;
}

unsigned char *HMAC(const EVP_MD *evp_md, const void *key, int key_len,
                    const unsigned char *data, size_t data_len,
                    unsigned char *md, unsigned int *md_len)
{
  return ready() ? fn.hmac(evp_md, key, key_len, data, data_len, md, md_len)
                 : NULL;
}
