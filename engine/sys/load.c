/*
 * load.c - known load for the host layer's self-checks: a CPU spin of a
 * given CPU time and a TCP transfer over loopback (a receiver thread counts
 * and checks every byte), so that a test can tell the counter sampler saw
 * exactly what was done.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "strata.h"
#include "sys.h"

static double thread_cpu_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spin until this thread has had `seconds` of CPU, not of wall clock: on a
 * host shared with other work (or a VM whose CPU is stolen) a wall-clock
 * spin may get a small share of a CPU, and a check of the sampler against
 * it would blame the sampler for the host's load.  A host that gives the
 * thread less than a tenth of a CPU ends the spin at 10 x seconds + 1 s of
 * wall clock; *cpu_s says what it had. */
uint64_t sys_spin(double seconds, double *cpu_s)
{
  uint64_t cap = strata_now_ns() + (uint64_t)((seconds * 10 + 1) * 1e9), n = 0;
  double c0 = thread_cpu_s(), used = 0;
  volatile uint64_t x = 1;
  while(!strata_stop_flag) {
    for(int i = 0; i < 100000; i++)
      x = x * 6364136223846793005ull + 1442695040888963407ull;
    n += 100000;
    used = thread_cpu_s() - c0;
    if(used >= seconds || strata_now_ns() >= cap)
      break;
  }
  if(cpu_s)
    *cpu_s = used;
  return n;
}

struct rx {
  int lfd;
  uint64_t got, bad;
  uint64_t deadline;
  int err;
};

static unsigned char pattern(uint64_t off)
{
  return (unsigned char)(off * 131 + (off >> 12));
}

static void *rx_main(void *arg)
{
  struct rx *r = arg;
  unsigned char *buf = malloc(1 << 20);
  struct pollfd pf;
  int fd;
  pf.fd = r->lfd;
  pf.events = POLLIN;
  if(!buf) {
    r->err = ENOMEM;
    return NULL;
  }
  if(poll(&pf, 1, (int)((r->deadline - strata_now_ns()) / 1000000)) != 1) {
    r->err = ETIMEDOUT;
    free(buf);
    return NULL;
  }
  fd = accept(r->lfd, NULL, NULL);
  if(fd < 0) {
    r->err = errno;
    free(buf);
    return NULL;
  }
  for(;;) {
    ssize_t k;
    pf.fd = fd;
    if(strata_now_ns() >= r->deadline ||
       poll(&pf, 1, (int)((r->deadline - strata_now_ns()) / 1000000) + 1)
       != 1) {
      r->err = ETIMEDOUT;
      break;
    }
    k = read(fd, buf, 1 << 20);
    if(k < 0 && errno == EINTR)
      continue;
    if(k <= 0) {
      if(k < 0)
        r->err = errno;
      break;
    }
    for(ssize_t i = 0; i < k; i++)
      r->bad += buf[i] != pattern(r->got + (uint64_t)i);
    r->got += (uint64_t)k;
  }
  close(fd);
  free(buf);
  return NULL;
}

int sys_tcp_loopback(uint64_t bytes, double timeout_s,
                     struct sys_loopback *out, char *err, size_t errlen)
{
  struct sockaddr_in a;
  socklen_t al = sizeof(a);
  struct rx r = { -1, 0, 0, 0, 0 };
  pthread_t th;
  unsigned char *buf = NULL;
  uint64_t t0, sent = 0;
  int fd = -1, one = 1, rc = -1;

  memset(out, 0, sizeof(*out));
  memset(&a, 0, sizeof(a));
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  r.lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if(r.lfd < 0 || bind(r.lfd, (struct sockaddr *)&a, sizeof(a)) ||
     listen(r.lfd, 1) || getsockname(r.lfd, (struct sockaddr *)&a, &al)) {
    snprintf(err, errlen, "listen on 127.0.0.1: %s", strerror(errno));
    goto out;
  }
  buf = malloc(1 << 20);
  if(!buf) {
    snprintf(err, errlen, "out of memory");
    goto out;
  }
  t0 = strata_now_ns();
  r.deadline = t0 + (uint64_t)(timeout_s * 1e9);
  if(pthread_create(&th, NULL, rx_main, &r)) {
    snprintf(err, errlen, "pthread_create failed");
    goto out;
  }
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if(fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
    snprintf(err, errlen, "connect to 127.0.0.1:%d: %s", ntohs(a.sin_port),
             strerror(errno));
    shutdown(r.lfd, SHUT_RDWR);
  }
  else {
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    while(sent < bytes && !strata_stop_flag &&
          strata_now_ns() < r.deadline) {
      size_t n = bytes - sent < (1u << 20) ? (size_t)(bytes - sent)
                                           : (size_t)1 << 20;
      ssize_t k;
      for(size_t i = 0; i < n; i++)
        buf[i] = pattern(sent + i);
      k = send(fd, buf, n, MSG_NOSIGNAL);
      if(k < 0) {
        if(errno == EINTR)
          continue;
        break;
      }
      sent += (uint64_t)k;
    }
    shutdown(fd, SHUT_WR);
  }
  pthread_join(th, NULL);
  out->bytes = r.got;
  out->corrupt = r.bad;
  out->duration_s = (double)(strata_now_ns() - t0) / 1e9;
  out->gbps = out->duration_s > 0 ? (double)r.got * 8 / out->duration_s / 1e9
                                  : 0;
  if(fd >= 0 && sent == bytes && r.got == bytes && !r.err)
    rc = 0;
  else if(fd >= 0)
    snprintf(err, errlen, "sent %llu of %llu bytes, received %llu%s%s",
             (unsigned long long)sent, (unsigned long long)bytes,
             (unsigned long long)r.got, r.err ? ": " : "",
             r.err ? strerror(r.err) : "");
out:
  if(fd >= 0)
    close(fd);
  if(r.lfd >= 0)
    close(r.lfd);
  free(buf);
  return rc;
}
