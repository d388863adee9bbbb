/*
 * engine.h - the measuring engine behind verbs.bw / verbs.lat and the peer
 * agent (strata serve): a "side" is one end of a test (device, buffer,
 * QPs); loops in bw.c and lat.c run between two sides, in one process
 * (loopback, two threads) or across a control connection (ctl.c, serve.c).
 *
 * Buffer layout of a side: per QP q two slots of `slot` bytes,
 *   [q * 2 * slot]          receive slot: the peer's WRITE/SEND lands here,
 *                           READ results land here
 *   [q * 2 * slot + slot]   send slot: WRITE/SEND source, the peer READs it
 * so the remote address of QP q is raddr + q*2*slot (+ slot for READ).
 * When qps pairs would pass max_buffer, QPs share pairs: QP q uses pair
 * q % nslots (both ends compute nslots alike from the test); the pattern
 * depends on the pair, so sharing writers put the same bytes.
 */
#ifndef STRATA_VERBS_ENGINE_H
#define STRATA_VERBS_ENGINE_H

#include <stdint.h>

#include "stats.h"
#include "verbs.h"

#define VERBS_MAX_QPS 256
#define VERBS_MAX_BUFFER (1ull << 30)

enum verbs_op { VERBS_OP_WRITE, VERBS_OP_READ, VERBS_OP_SEND };
enum verbs_kind { VERBS_KIND_BW, VERBS_KIND_LAT };

/* Everything both ends must agree on (sent in SETUP). */
struct verbs_test {
  enum verbs_kind kind;
  enum verbs_op op;
  uint64_t size;         /* message bytes */
  int qps;
  int tx_depth;          /* outstanding sends per QP */
  int rx_depth;          /* receives posted per QP (SEND) */
  int cq_mod;            /* signal every cq_mod sends (bw) */
  uint64_t iters;        /* per QP; 0 = run for duration_s */
  double duration_s;
  int bidir;             /* both sides send (bw) */
  int validate;          /* check a pattern at the receiving end */
  int inline_size;       /* max inline bytes asked for (lat) */
  double timeout_s;      /* no progress for this long = failure */
  enum verbs_mem_kind mem;
  int hugepages;
  int numa;              /* -1 = any */
  int dmabuf_fd;         /* cuda: exported allocation (-1 = none) */
  uint64_t dmabuf_off;
  uint64_t max_buffer;    /* bytes per side before QPs share slots
                             (0 = VERBS_MAX_BUFFER) */
  int active;            /* SETUP role=active: the agent posts (incast) */
  int qp_timeout;        /* ibv_qp_attr.timeout 1..31; 0 = VERBS_QP_TIMEOUT */
  int retry_cnt;         /* ibv_qp_attr.retry_cnt 1..7; 0 = VERBS_RETRY_CNT */
};

struct verbs_side {
  struct verbs_dev dev;
  struct verbs_buf buf;
  struct ibv_cq *scq, *rcq;
  struct ibv_qp *qp[VERBS_MAX_QPS];
  uint32_t psn[VERBS_MAX_QPS];
  int nqp;
  uint64_t slot;         /* bytes per slot (size rounded up to 64) */
  int nslots;            /* slot pairs: QP q uses pair q % nslots */
  uint32_t max_inline;
  int qp_timeout;        /* what side_connect gives its QPs (verbs_test) */
  int retry_cnt;
  uint8_t seed;          /* pattern seed of this side's send slots */
  /* the peer's buffer */
  uint64_t raddr;
  uint32_t rkey;
};

/* One side's measured outcome. */
struct verbs_outcome {
  uint64_t msgs;         /* completed sends / reads (bw), samples (lat) */
  uint64_t bytes;
  uint64_t recvs;        /* receive completions (SEND) */
  uint64_t t_first_ns, t_last_ns;  /* first post, last completion */
  double peak_gbps;
  double cpu_s;          /* user+system CPU of the calling thread */
  struct stats_samples lat_us;
  int validated;         /* 1 checked and equal, 0 not checked */
  int64_t mismatch_at;   /* first bad byte offset, -1 when none */
};

/* Open d/port/gid, allocate the buffer (host, or cuda from dmabuf_fd),
 * CQs and t->qps QPs.  On failure everything is released. */
enum verbs_code side_open(struct verbs_side *s, const struct verbs_test *t,
                          const char *dev, int port, int gid_index,
                          uint8_t seed);
/* Fill ep (common part) with this side's GID/MTU/buffer. */
void side_endpoint(const struct verbs_side *s, struct verbs_endpoint *ep);
/* Connect QP i to the peer's QP numbers/PSNs and remember its buffer. */
/*
 * The default CQ moderation (signal one send in n) for size-byte messages
 * on qps QPs: perftest's 100, but a signaled completion at least every
 * 4 MiB the QPs move together.  The QPs share the wire, so a QP's first
 * signaled completion comes after about n x size x qps bytes: with n per
 * QP alone (4 MiB / size) 4 QPs of 1 MiB WRITEs waited for 16 MiB, longer
 * than the no-progress timeout on a slow wire (docs/verbs.md).
 */
int verbs_default_cq_mod(uint64_t size, int qps);

enum verbs_code side_connect(struct verbs_side *s,
                             const struct verbs_endpoint *peer,
                             const uint32_t *qpn, const uint32_t *psn);
/* QP 0's ACK timeout as the device holds it (ibv_query_qp), -1 if unknown. */
int side_qp_timeout(const struct verbs_side *s);
void side_close(struct verbs_side *s);

/* Slot pairs for a test: min(qps, max_buffer / (2 * slot)), at least 1. */
int side_nslots(const struct verbs_test *t);
/* The pattern byte at offset i of pair q's send slot on a side with seed. */
static inline uint8_t side_pattern(uint8_t seed, int q, uint64_t i)
{
  return (uint8_t)(i * 131u + (uint64_t)q * 17u + seed * 101u + 1u);
}
/* Fill this side's send slots with its pattern. */
void side_fill(struct verbs_side *s, uint64_t size);
/* Check the receive slots hold the peer's pattern (peer_seed); sets
 * o->validated and o->mismatch_at. */
void side_check(struct verbs_side *s, uint64_t size, uint8_t peer_seed,
                struct verbs_outcome *o);

/* Bandwidth loop (bw.c).  send: this side posts WRITE/READ/SEND;
 * recv: this side services SEND receives.  Stops at t->iters per QP or
 * after t->duration_s, or when *stop is raised (receiver).  */
enum verbs_code bw_loop(struct verbs_side *s, const struct verbs_test *t,
                        int send, int recv, volatile int *stop,
                        struct verbs_outcome *o);
/* Pre-post t->rx_depth receives on every QP (SEND). */
enum verbs_code bw_prepost(struct verbs_side *s, const struct verbs_test *t);

/* Latency ping-pong (lat.c): initiator measures, responder answers.
 * *stop aborts the responder. */
enum verbs_code lat_loop(struct verbs_side *s, const struct verbs_test *t,
                         int initiator, volatile int *stop,
                         struct verbs_outcome *o);

void outcome_free(struct verbs_outcome *o);

/* CPU seconds (user + system) used by the calling thread. */
double thread_cpu_s(void);

#endif
