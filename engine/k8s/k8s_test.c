/* k8s_test.c - the token reader (k8s.c), hardware- and network-free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "k8s.h"

static char *with(const char *content, char *err, size_t errlen)
{
  char path[] = "/tmp/strata-k8s-test-XXXXXX";
  int fd = mkstemp(path);
  char *tok;
  CHECK(fd >= 0);
  if(fd < 0)
    return NULL;
  CHECK(write(fd, content, strlen(content)) == (ssize_t)strlen(content));
  close(fd);
  tok = k8s_read_token(path, err, errlen);
  unlink(path);
  return tok;
}

int main(void)
{
  char err[256];
  char *t;
  t = with("eyJhbGciOiJSUzI1NiJ9.x.y", err, sizeof(err));
  CHECK(t && strcmp(t, "eyJhbGciOiJSUzI1NiJ9.x.y") == 0);
  free(t);
  t = with("  abc.def \r\nsecond line\n", err, sizeof(err));
  CHECK(t && strcmp(t, "abc.def") == 0);
  free(t);
  t = with("\n\n  \n", err, sizeof(err));
  CHECK(t == NULL && strstr(err, "is empty"));
  t = k8s_read_token("/nonexistent/strata/token", err, sizeof(err));
  CHECK(t == NULL && strstr(err, "token file /nonexistent/strata/token: No such file"));
  if(check_failures)
    fprintf(stderr, "k8s_test: %d failure(s)\n", check_failures);
  else
    printf("k8s_test: ok\n");
  return check_failures ? 1 : 0;
}
