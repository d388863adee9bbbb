/*
 * ctl.c - the control protocol's line codec and sockets (see ctl.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "strata.h"
#include "ctl.h"

int ctl_parse(struct ctl_msg *m)
{
  char *save = NULL, *tok;
  m->n = 0;
  m->verb = strtok_r(m->line, " \t\r\n", &save);
  if(!m->verb)
    return -1;
  while((tok = strtok_r(NULL, " \t\r\n", &save))) {
    char *eq = strchr(tok, '=');
    if(!eq || eq == tok || m->n >= CTL_MAX_KV)
      return -1;
    *eq = '\0';
    m->key[m->n] = tok;
    m->val[m->n] = eq + 1;
    m->n++;
  }
  return 0;
}

const char *ctl_get(const struct ctl_msg *m, const char *key)
{
  for(int i = 0; i < m->n; i++)
    if(!strcmp(m->key[i], key))
      return m->val[i];
  return NULL;
}

int ctl_get_u64(const struct ctl_msg *m, const char *key, uint64_t *v)
{
  const char *s = ctl_get(m, key);
  char *end;
  if(!s || !*s || *s == '-')
    return -1;
  errno = 0;
  *v = strtoull(s, &end, 0);
  return *end || errno ? -1 : 0;
}

int ctl_get_int(const struct ctl_msg *m, const char *key, int *v)
{
  const char *s = ctl_get(m, key);
  char *end;
  long x;
  if(!s || !*s)
    return -1;
  errno = 0;
  x = strtol(s, &end, 0);
  if(*end || errno || x < -2147483647L || x > 2147483647L)
    return -1;
  *v = (int)x;
  return 0;
}

int ctl_get_dbl(const struct ctl_msg *m, const char *key, double *v)
{
  const char *s = ctl_get(m, key);
  char *end;
  if(!s || !*s)
    return -1;
  *v = strtod(s, &end);
  return *end ? -1 : 0;
}

int ctl_get_list(const struct ctl_msg *m, const char *key, uint32_t *out,
                 int max)
{
  const char *s = ctl_get(m, key);
  int n = 0;
  if(!s || !*s)
    return -1;
  while(*s) {
    char *end;
    unsigned long v;
    if(n >= max)
      return -1;
    errno = 0;
    v = strtoul(s, &end, 0);
    if(end == s || errno || v > 0xffffffffUL)
      return -1;
    out[n++] = (uint32_t)v;
    if(*end == ',')
      end++;
    else if(*end)
      return -1;
    s = end;
  }
  return n;
}

int ctl_write(int fd, const char *buf, size_t len, int timeout_ms)
{
  uint64_t deadline = strata_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  while(len) {
    struct pollfd p = {fd, POLLOUT, 0};
    ssize_t w;
    int left = (int)((deadline - strata_now_ns()) / 1000000ull);
    if(strata_now_ns() >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    if(poll(&p, 1, left) <= 0) {
      if(errno != EINTR)
        errno = ETIMEDOUT;
      return -1;
    }
    w = send(fd, buf, len, MSG_NOSIGNAL);
    if(w < 0) {
      if(errno == EINTR || errno == EAGAIN)
        continue;
      return -1;
    }
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

int ctl_send(int fd, int timeout_ms, const char *fmt, ...)
{
  char line[CTL_LINE];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
  va_end(ap);
  if(n < 0 || n >= (int)sizeof(line) - 1) {
    errno = EMSGSIZE;
    return -1;
  }
  line[n++] = '\n';
  return ctl_write(fd, line, (size_t)n, timeout_ms);
}

int ctl_recv(struct ctl_conn *c, struct ctl_msg *m, int timeout_ms)
{
  uint64_t deadline = strata_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  for(;;) {
    char *nl = memchr(c->rb, '\n', c->rlen);
    struct pollfd p = {c->fd, POLLIN, 0};
    ssize_t r;
    uint64_t now;
    if(nl) {
      size_t len = (size_t)(nl - c->rb);
      memcpy(m->line, c->rb, len);
      m->line[len] = '\0';
      c->rlen -= len + 1;
      memmove(c->rb, nl + 1, c->rlen);
      if(ctl_parse(m)) {
        errno = EPROTO;
        return -1;
      }
      return 0;
    }
    if(c->rlen >= sizeof(c->rb) - 1) {
      errno = EPROTO;
      return -1;
    }
    now = strata_now_ns();
    if(now >= deadline) {
      errno = ETIMEDOUT;
      return -1;
    }
    r = poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1);
    if(r < 0 && errno == EINTR) {
      if(strata_stop_flag) {
        errno = EINTR;
        return -1;
      }
      continue;
    }
    if(r <= 0)
      continue;
    r = recv(c->fd, c->rb + c->rlen, sizeof(c->rb) - 1 - c->rlen, 0);
    if(r == 0) {
      errno = ECONNRESET;
      return -1;
    }
    if(r < 0) {
      if(errno == EINTR || errno == EAGAIN)
        continue;
      return -1;
    }
    c->rlen += (size_t)r;
  }
}

int ctl_connect(const char *host, int port, int timeout_ms)
{
  struct addrinfo hints, *res = NULL, *ai;
  char ps[16];
  int fd = -1, rc, last = 0;

  memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  snprintf(ps, sizeof(ps), "%d", port);
  rc = getaddrinfo(host, ps, &hints, &res);
  if(rc) {
    verbs_fail(VERBS_EPEER, "peer %s:%d: cannot resolve: %s", host, port,
               gai_strerror(rc));
    return -1;
  }
  for(ai = res; ai; ai = ai->ai_next) {
    struct pollfd p;
    int one = 1, err = 0;
    socklen_t el = sizeof(err);
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
    if(fd < 0)
      continue;
    (void)fcntl(fd, F_SETFL, O_NONBLOCK);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if(connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
      break;
    if(errno == EINPROGRESS) {
      p.fd = fd;
      p.events = POLLOUT;
      if(poll(&p, 1, timeout_ms) == 1 &&
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && !err)
        break;
      last = err ? err : ETIMEDOUT;
    }
    else
      last = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if(fd < 0)
    verbs_fail(VERBS_EPEER, "peer %s:%d: cannot connect: %s (%d)", host,
               port, strerror(last), last);
  return fd;
}

int ctl_listen(const char *addr, int port)
{
  struct addrinfo hints, *res = NULL;
  char ps[16];
  int fd, one = 1, rc;

  memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  hints.ai_family = addr ? AF_UNSPEC : AF_INET;
  snprintf(ps, sizeof(ps), "%d", port);
  rc = getaddrinfo(addr, ps, &hints, &res);
  if(rc) {
    verbs_fail(VERBS_EINVAL, "listen address %s: %s", addr ? addr : "*",
               gai_strerror(rc));
    return -1;
  }
  fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0);
  if(fd < 0 ||
     setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
     bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64)) {
    int e = errno;
    verbs_fail(VERBS_ESYS, "listen on %s:%d: %s (%d)", addr ? addr : "*",
               port, strerror(e), e);
    if(fd >= 0)
      close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

int ctl_token_eq(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b);
  unsigned char d = (unsigned char)(la != lb);
  for(size_t i = 0; i < la; i++)
    d |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
  return d == 0 && lb > 0;
}

const char *ctl_op_name(enum verbs_op op)
{
  switch(op) {
  case VERBS_OP_WRITE:
    return "write";
  case VERBS_OP_READ:
    return "read";
  case VERBS_OP_SEND:
    return "send";
  }
  return "?";
}

int ctl_op_parse(const char *s, enum verbs_op *op)
{
  if(!s)
    return -1;
  if(!strcmp(s, "write"))
    *op = VERBS_OP_WRITE;
  else if(!strcmp(s, "read"))
    *op = VERBS_OP_READ;
  else if(!strcmp(s, "send"))
    *op = VERBS_OP_SEND;
  else
    return -1;
  return 0;
}
