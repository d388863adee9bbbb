/*
 * creds.c - S3 credentials from the environment or a credentials file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "creds.h"

static void wipe(char **p)
{
  if(*p) {
    memset(*p, 0, strlen(*p));
    free(*p);
    *p = NULL;
  }
}

void s3_creds_clear(struct s3_creds *c)
{
  wipe(&c->access_key);
  wipe(&c->secret_key);
  wipe(&c->session_token);
}

int s3_creds_from_env(const char *ak_env, const char *sk_env,
                      const char *tok_env, struct s3_creds *c, char *err,
                      size_t cap)
{
  const char *ak = getenv(ak_env), *sk = getenv(sk_env);
  const char *tok = tok_env ? getenv(tok_env) : NULL;

  memset(c, 0, sizeof(*c));
  if(!ak || !*ak || !sk || !*sk) {
    snprintf(err, cap, "environment variable %s is not set",
             (!ak || !*ak) ? ak_env : sk_env);
    return -1;
  }
  c->access_key = strdup(ak);
  c->secret_key = strdup(sk);
  if(tok && *tok)
    c->session_token = strdup(tok);
  if(!c->access_key || !c->secret_key) {
    s3_creds_clear(c);
    snprintf(err, cap, "out of memory");
    return -1;
  }
  return 0;
}

static char *trim(char *s)
{
  char *e;
  while(*s == ' ' || *s == '\t')
    s++;
  e = s + strlen(s);
  while(e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
                  e[-1] == '\r'))
    *--e = '\0';
  return s;
}

int s3_creds_from_file(const char *path, const char *profile,
                       struct s3_creds *c, char *err, size_t cap)
{
  FILE *f = fopen(path, "r");
  char line[1024];
  int in = 0, lineno = 0, seen = 0;

  memset(c, 0, sizeof(*c));
  if(!profile)
    profile = "default";
  if(!f) {
    snprintf(err, cap, "%s: %s", path, strerror(errno));
    return -1;
  }
  while(fgets(line, sizeof(line), f)) {
    char *s = trim(line), *eq, *k, *v, **dst = NULL;
    lineno++;
    if(!*s || *s == '#' || *s == ';')
      continue;
    if(*s == '[') {
      char *end = strchr(s, ']');
      if(!end) {
        snprintf(err, cap, "%s:%d: section header without ']'", path,
                 lineno);
        goto fail;
      }
      *end = '\0';
      s = trim(s + 1);
      if(!strncmp(s, "profile ", 8))
        s = trim(s + 8);
      in = !strcmp(s, profile);
      seen |= in;
      continue;
    }
    eq = strchr(s, '=');
    if(!eq) {
      snprintf(err, cap, "%s:%d: expected 'name = value'", path, lineno);
      goto fail;
    }
    if(!in)
      continue;
    *eq = '\0';
    k = trim(s);
    v = trim(eq + 1);
    if(!strcmp(k, "aws_access_key_id"))
      dst = &c->access_key;
    else if(!strcmp(k, "aws_secret_access_key"))
      dst = &c->secret_key;
    else if(!strcmp(k, "aws_session_token"))
      dst = &c->session_token;
    if(dst) {
      wipe(dst);
      *dst = strdup(v);
    }
    memset(line, 0, sizeof(line));
  }
  fclose(f);
  f = NULL;
  if(!seen) {
    snprintf(err, cap, "%s: no [%s] profile", path, profile);
    goto fail;
  }
  if(!c->access_key || !*c->access_key || !c->secret_key ||
     !*c->secret_key) {
    snprintf(err, cap, "%s: profile [%s] lacks %s", path, profile,
             (!c->access_key || !*c->access_key) ? "aws_access_key_id"
                                                 : "aws_secret_access_key");
    goto fail;
  }
  return 0;
fail:
  memset(line, 0, sizeof(line));
  if(f)
    fclose(f);
  s3_creds_clear(c);
  return -1;
}
