/*
 * crypto_load_test.c - libcrypto is not mapped until the engine first
 * hashes, and calls through the loader reach the real library: SHA-256
 * of "abc" (FIPS 180-2, appendix B.1) and HMAC-SHA256 of RFC 4231's test
 * case 2 (key "Jefe").
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "check.h"
#include "crypto_load.h"

static void hex(const unsigned char *md, unsigned int n, char *out)
{
  for(unsigned int i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int main(void)
{
  unsigned char md[32];
  unsigned int len = 0;
  char h[65] = "";
  static const char data[] = "what do ya want for nothing?";

  CHECK(!crypto_loaded());                  /* nothing has called it yet */
  CHECK(crypto_load() == 0);
  CHECKF(strcmp(crypto_load_error(), "") == 0, "%s", crypto_load_error());
  CHECK(crypto_loaded());

  CHECK(EVP_Digest("abc", 3, md, &len, EVP_sha256(), NULL) == 1 && len == 32);
  hex(md, len, h);
  CHECKF(strcmp(h, "ba7816bf8f01cfea414140de5dae2223"
                   "b00361a396177a9cb410ff61f20015ad") == 0, "%s", h);

  len = 0;
  CHECK(HMAC(EVP_sha256(), "Jefe", 4, (const unsigned char *)data,
             sizeof(data) - 1, md, &len) != NULL && len == 32);
  hex(md, len, h);
  CHECKF(strcmp(h, "5bdcc146bf60754e6a042426089575c7"
                   "5a003f089d2739839dec58b964ec3843") == 0, "%s", h);
  return check_result("crypto_load_test");
}
