/*
 * sigv4_test.c - the signer against AWS's published SigV4 test vectors
 * (fixtures/s3/sigv4/<name>/<name>.req + .authz, see its README.md).
 * Usage: sigv4_test <vectors folder>.  Hardware-free; ctest label unit.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"
#include "sigv4.h"

#define MAXH 32

static const struct {
  const char *ak, *sk;
} keys[] = {
  { "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
  { "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
};

/* Sign one vector; 0 when the Authorization header matches. */
static int check(const char *dir, const char *name)
{
  char path[1024], enc[1024], auth[1024], ak[64], region[32], service[32];
  struct sigv4_header h[MAXH];
  char *vals[MAXH] = { 0 };
  struct sigv4_request r = { 0 };
  struct sigv4_creds c = { 0 };
  char hash[65], *req, *authz, *line, *body = "", *date = NULL, *q, *sp;
  size_t len, alen, nh = 0;
  int rc = 1;

  snprintf(path, sizeof(path), "%s/%s.req", name, name);
  req = check_fixture(dir, path, &len);
  snprintf(path, sizeof(path), "%s/%s.authz", name, name);
  authz = check_fixture(dir, path, &alen);
  if(!req || !authz) {
    fprintf(stderr, "%s: cannot read the vector\n", name);
    goto out;
  }
  while(alen && (authz[alen - 1] == '\n' || authz[alen - 1] == '\r'))
    authz[--alen] = '\0';
  sp = strstr(req, "\n\n");
  if(sp) {
    *sp = '\0';
    body = sp + 2;
  }
  line = strtok(req, "\n");          /* "METHOD target HTTP/1.1" */
  sp = strrchr(line, ' ');
  *sp = '\0';
  sp = strchr(line, ' ');
  *sp = '\0';
  r.method = line;
  q = strchr(sp + 1, '?');
  if(q)
    *q++ = '\0';
  sigv4_uri_encode(sp + 1, strlen(sp + 1), 1, enc, sizeof(enc));
  r.path = enc;
  r.query = q;
  while((line = strtok(NULL, "\n"))) {
    char *colon = strchr(line, ':');
    if(line[0] == ' ' && nh) {       /* continuation: join with ',' */
      char *v = vals[nh - 1], *t = line;
      while(*t == ' ')
        t++;
      vals[nh - 1] = malloc(strlen(v) + strlen(t) + 2);
      sprintf(vals[nh - 1], "%s,%s", v, t);
      free(v);
      h[nh - 1].value = vals[nh - 1];
      continue;
    }
    if(!colon || nh == MAXH)
      goto out;
    *colon = '\0';
    h[nh].name = line;
    vals[nh] = strdup(colon + 1);
    h[nh].value = vals[nh];
    if(!strcasecmp(line, "x-amz-date"))
      date = vals[nh];
    nh++;
  }
  r.headers = h;
  r.nheaders = nh;
  sigv4_sha256_hex(body, strlen(body), hash);
  r.payload_hash = hash;
  /* Credential=<ak>/<date>/<region>/<service>/aws4_request */
  if(sscanf(strstr(authz, "Credential=") + 11,
            "%63[^/]/%*8s/%31[^/]/%31[^/]/", ak, region, service) != 3)
    goto out;
  c.access_key = ak;
  for(size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
    if(!strcmp(keys[i].ak, ak))
      c.secret_key = keys[i].sk;
  if(!date || sigv4_authorization(&c, &r, date, region, service, auth,
                                  sizeof(auth))) {
    fprintf(stderr, "%s: signing failed\n", name);
    goto out;
  }
  if(strcmp(auth, authz)) {
    char *cr = NULL;
    sigv4_canonical_request(&r, &cr);
    fprintf(stderr, "FAIL %s\n  got  %s\n  want %s\ncanonical:\n%s\n", name,
            auth, authz, cr ? cr : "?");
    free(cr);
    goto out;
  }
  printf("ok   %s\n", name);
  rc = 0;
out:
  for(size_t i = 0; i < nh; i++)
    free(vals[i]);
  free(req);
  free(authz);
  return rc;
}

static void selfchecks(void)
{
  char out[80];
  sigv4_uri_encode("a b/ü~", 7, 1, out, sizeof(out));
  CHECK(!strcmp(out, "a%20b/%C3%BC~"));
  sigv4_uri_encode("a/b", 3, 0, out, sizeof(out));
  CHECK(!strcmp(out, "a%2Fb"));
  CHECK(sigv4_uri_encode("abcdef", 6, 0, out, 4) == (size_t)-1);
  sigv4_amz_date(0, out);
  CHECK(!strcmp(out, "19700101T000000Z"));
  sigv4_sha256_hex("", 0, out);
  CHECK(!strcmp(out, SIGV4_EMPTY_SHA256));
}

int main(int argc, char **argv)
{
  DIR *d;
  struct dirent *e;
  int fails = 0, n = 0;

  if(argc != 2) {
    fprintf(stderr, "usage: %s <sigv4 vectors folder>\n", argv[0]);
    return 2;
  }
  d = opendir(argv[1]);
  if(!d) {
    perror(argv[1]);
    return 2;
  }
  while((e = readdir(d))) {
    if(e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
      continue;
    fails += check(argv[1], e->d_name);
    n++;
  }
  closedir(d);
  selfchecks();
  printf("%d vectors, %d failed\n", n, fails);
  CHECKF(fails == 0, "%d of %d vectors failed", fails, n);
  CHECKF(n >= 20, "only %d vectors in %s", n, argv[1]);
  return check_result("sigv4_test");
}
