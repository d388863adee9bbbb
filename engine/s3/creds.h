/*
 * creds.h - S3 credentials from the environment or a credentials file,
 * never from a spec.  The values are secrets: callers keep them out of
 * every output and wipe them (s3_creds_clear) when done.
 */
#ifndef STRATA_S3_CREDS_H
#define STRATA_S3_CREDS_H

#include <stddef.h>

struct s3_creds {
  char *access_key;      /* malloc'd */
  char *secret_key;      /* malloc'd */
  char *session_token;   /* malloc'd, or NULL */
};

/*
 * Read the variables named ak_env / sk_env (tok_env may be NULL).
 * Returns 0, or -1 with err naming the missing variable (never a value).
 */
int s3_creds_from_env(const char *ak_env, const char *sk_env,
                      const char *tok_env, struct s3_creds *c, char *err,
                      size_t cap);

/*
 * Read an AWS-style shared credentials file: "[profile]" sections of
 * "aws_access_key_id = ...", "aws_secret_access_key = ...",
 * "aws_session_token = ..." (profile NULL: "default").  Returns 0, or -1
 * with err naming the file, line or missing field (never a value).
 */
int s3_creds_from_file(const char *path, const char *profile,
                       struct s3_creds *c, char *err, size_t cap);

/* Wipe and free; NULL-safe, repeatable. */
void s3_creds_clear(struct s3_creds *c);

#endif
