/*
 * crypto_load.h - libcrypto is loaded on first use, not linked
 * (crypto_load.c says why).  The engine calls EVP_Digest, EVP_sha256 and
 * HMAC as usual; these say whether the library could be loaded and
 * whether this process has it.
 */
#ifndef STRATA_CRYPTO_LOAD_H
#define STRATA_CRYPTO_LOAD_H

/* Load libcrypto now; 0, or -1 with crypto_load_error(). */
int crypto_load(void);
/* Why libcrypto could not be loaded ("" when it was). */
const char *crypto_load_error(void);
/* 1 when this process has libcrypto mapped (without loading it). */
int crypto_loaded(void);

#endif
