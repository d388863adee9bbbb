/*
 * verbs.h - the RDMA verbs primitives of strata, in plain C (no lua.h).
 *
 * A thin layer over libibverbs that the measuring engines (bw.c, lat.c),
 * the peer agent (serve.c) and other families (s3rdma: hipobj-rc-v2) share:
 * open a device and pick a GID, register host memory or a dma-buf, make
 * CQs and RC QPs, connect them given the far end's qpn/psn/gid/mtu, post
 * work requests and poll with a deadline.
 *
 * Errors: every call returns a verbs_code (VERBS_OK = 0) or NULL, and
 * leaves a message in a thread-local buffer read with verbs_errmsg():
 * "<what>: <lib text> (<errno>)".  VERBS_ENODEV and VERBS_EUNSUPPORTED
 * mean a prerequisite is absent (the Lua binding turns them into SKIP);
 * everything else is a failure.
 *
 * Connection attributes follow what interoperates (../../shared/
 * S3RDMA-WIRE.md): path MTU = min(local active MTU, remote's), timeout 14,
 * retry 7, RNR retry 7, GRH hop limit 64, the GID index picked by
 * verbs_gid_select (RoCEv2 IPv4-mapped first) unless overridden.
 */
#ifndef STRATA_VERBS_H
#define STRATA_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

enum verbs_code {
  VERBS_OK = 0,
  VERBS_ENODEV,        /* no RDMA device, or the named one is absent */
  VERBS_EPORT,         /* port number invalid or the port is not ACTIVE */
  VERBS_EGID,          /* GID index out of range / no usable GID */
  VERBS_ESYS,          /* a verbs or system call failed: see errmsg */
  VERBS_ENOMEM,        /* allocation or registration ran out of memory */
  VERBS_ETIMEDOUT,     /* no completion / no reply before the deadline */
  VERBS_EWC,           /* a work completion came back with an error */
  VERBS_EPEER,         /* the peer refused, misbehaved or went away */
  VERBS_EUNSUPPORTED,  /* device/build cannot do it (e.g. dma-buf MR) */
  VERBS_EINVAL,        /* bad argument */
  VERBS_ESTOPPED       /* strata_stop_flag raised (SIGINT/SIGTERM) */
};

/* Short name of a code ("ENODEV" ...); never NULL. */
const char *verbs_strerror(enum verbs_code c);
/* The calling thread's last error message ("" when none). */
const char *verbs_errmsg(void);
/* Set the calling thread's message; returns c (for "return verbs_fail"). */
enum verbs_code verbs_fail(enum verbs_code c, const char *fmt, ...)
  __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ */
/* Devices and GIDs                                                    */

/* GID types as the kernel reports them. */
enum verbs_gid_type {
  VERBS_GID_IB = 0,
  VERBS_GID_ROCE_V1 = 1,
  VERBS_GID_ROCE_V2 = 2
};

/* An open device: context + PD + the chosen port and GID. */
struct verbs_dev {
  struct ibv_context *ctx;
  struct ibv_pd *pd;
  struct ibv_device_attr attr;
  struct ibv_port_attr port_attr;
  char name[64];
  uint8_t port;            /* 1-based port number */
  int gid_index;           /* the GID used for connections */
  union ibv_gid gid;
  enum verbs_gid_type gid_type;
  enum ibv_mtu mtu;        /* the port's active MTU */
};

/*
 * Open device name (NULL or "" = the first device) on port (1-based),
 * allocate a PD and select a GID (gid_index < 0 = verbs_gid_select's
 * choice).  The port must be PORT_ACTIVE (else VERBS_EPORT).  On failure
 * nothing stays open.  Close with verbs_dev_close.
 */
enum verbs_code verbs_dev_open(struct verbs_dev *d, const char *name,
                               int port, int gid_index);
/* Release the PD and context; NULL-safe and idempotent. */
void verbs_dev_close(struct verbs_dev *d);

/*
 * Pick the GID to connect with on ctx/port: RoCEv2 IPv4-mapped first,
 * then RoCEv2 (other), then RoCEv1 IPv4-mapped, then any RoCEv1 / IB GID.
 * Reads the table in one call (ibv_query_gid_table: no per-entry sysfs
 * walk, which matters on rxe's 1024-entry table).  Fills *index, *gid and
 * *type.  VERBS_EGID when the port has no valid GID.
 */
enum verbs_code verbs_gid_select(struct ibv_context *ctx, uint8_t port,
                                 int *index, union ibv_gid *gid,
                                 enum verbs_gid_type *type);
/*
 * Read GID index on ctx/port.  VERBS_EGID when the index is out of the
 * table or the entry is empty/unusable.
 */
enum verbs_code verbs_gid_get(struct ibv_context *ctx, uint8_t port,
                              int index, union ibv_gid *gid,
                              enum verbs_gid_type *type);
/* 1 when gid is IPv4-mapped (::ffff:a.b.c.d). */
int verbs_gid_is_ipv4(const union ibv_gid *gid);
/* Format gid as 32 lowercase hex digits (buf >= 33) / as an IPv6 text. */
void verbs_gid_hex(const union ibv_gid *gid, char *buf);
/* The GID as an address: dotted IPv4 when IPv4-mapped, else IPv6 text
 * (len >= 46). */
void verbs_gid_text(const union ibv_gid *gid, char *buf, size_t len);
int verbs_gid_from_hex(const char *hex, union ibv_gid *gid);

/* Bytes of an ibv_mtu value (IBV_MTU_1024 -> 1024); 0 when unknown. */
int verbs_mtu_bytes(enum ibv_mtu m);
/* Line rate of a port in Gbit/s from active_speed and active_width
 * (data rate after encoding, as ibv_devinfo prints it); 0 when unknown. */
double verbs_port_rate_gbps(const struct ibv_port_attr *pa);

/* ------------------------------------------------------------------ */
/* Memory                                                              */

enum verbs_mem_kind {
  VERBS_MEM_HOST = 0,      /* page-aligned anonymous memory */
  VERBS_MEM_CUDA           /* device memory exported as a dma-buf fd */
};

/* A buffer and its MR.  For host memory strata owns the pages. */
struct verbs_buf {
  enum verbs_mem_kind kind;
  void *addr;              /* host: mapped address; cuda: NULL */
  size_t len;
  size_t map_len;          /* host: bytes mapped (rounded up) */
  int hugepages;           /* host: mapped with MAP_HUGETLB */
  struct ibv_mr *mr;
};

/*
 * Allocate len bytes of page-aligned host memory (hugepages = 1: 2 MiB
 * huge pages, VERBS_ENOMEM when none are reserved; numa_node >= 0: bind
 * the pages to that node with mbind), touch it, and register it on d's PD
 * with access (IBV_ACCESS_* flags).  Free with verbs_buf_free.
 */
enum verbs_code verbs_buf_host(struct verbs_dev *d, struct verbs_buf *b,
                               size_t len, int hugepages, int numa_node,
                               int access);
/*
 * Register length bytes at offset of a dma-buf (fd, e.g. a CUDA
 * allocation exported by the cuda family) with ibv_reg_dmabuf_mr; iova
 * is the address the peer uses (0 is fine for RDMA: rkey + iova).  The fd
 * stays the caller's.  VERBS_EUNSUPPORTED when the device/kernel cannot
 * (EOPNOTSUPP/ENOSYS/EPROTONOSUPPORT), with the library's text.
 */
enum verbs_code verbs_buf_dmabuf(struct verbs_dev *d, struct verbs_buf *b,
                                 int fd, uint64_t offset, size_t length,
                                 uint64_t iova, int access);
/* Register caller-owned host memory (not freed by verbs_buf_free). */
enum verbs_code verbs_buf_wrap(struct verbs_dev *d, struct verbs_buf *b,
                               void *addr, size_t len, int access);
/* Deregister and (for memory strata mapped) unmap; NULL-safe, idempotent. */
void verbs_buf_free(struct verbs_buf *b);

/* ------------------------------------------------------------------ */
/* CQs, RC QPs and connection                                          */

/* What one side tells the other to connect an RC QP (and reach a buffer). */
struct verbs_endpoint {
  uint32_t qpn;
  uint32_t psn;            /* 24 bits */
  union ibv_gid gid;
  uint16_t lid;
  uint8_t port;
  enum ibv_mtu mtu;        /* the sender's active MTU */
  uint64_t addr;           /* a remote buffer (0 when none) */
  uint32_t rkey;
  uint64_t len;
};

struct verbs_qp_opts {
  uint32_t max_send_wr;    /* send queue depth */
  uint32_t max_recv_wr;    /* receive queue depth (0 = 1) */
  uint32_t max_inline;     /* inline bytes wanted; lowered if refused */
  uint32_t max_sge;        /* 0 = 1 */
};

/* A CQ with depth entries. NULL + errmsg on failure. */
struct ibv_cq *verbs_cq_create(struct verbs_dev *d, int depth);
/* Destroy a CQ; NULL-safe. */
void verbs_cq_destroy(struct ibv_cq **cq);

/*
 * Create an RC QP (state RESET) on d with the given CQs.  When max_inline
 * is refused, retries with 0 and reports the granted value in
 * o->max_inline.  NULL + errmsg on failure.
 */
struct ibv_qp *verbs_qp_create(struct verbs_dev *d, struct ibv_cq *send_cq,
                               struct ibv_cq *recv_cq,
                               struct verbs_qp_opts *o);
/* Destroy a QP; NULL-safe. */
void verbs_qp_destroy(struct ibv_qp **qp);

/* Fill ep with qp's number, psn, d's GID/LID/port/MTU (no buffer). */
void verbs_endpoint_local(const struct verbs_dev *d, const struct ibv_qp *qp,
                          uint32_t psn, struct verbs_endpoint *ep);
/* A random 24-bit non-zero PSN. */
uint32_t verbs_random_psn(void);

/*
 * Take qp RESET -> INIT -> RTR -> RTS towards remote: path MTU =
 * min(d->mtu, remote->mtu), GRH with d->gid_index and hop limit 64,
 * timeout VERBS_QP_TIMEOUT, retry VERBS_RETRY_CNT, RNR retry 7, min RNR timer 12,
 * access local write + remote write + remote read, max_rd_atomic from the
 * device (<= 16).
 */
enum verbs_code verbs_qp_connect(struct ibv_qp *qp, const struct verbs_dev *d,
                                 uint32_t local_psn,
                                 const struct verbs_endpoint *remote);
/*
 * The same with the local ACK timeout given: ibv_qp_attr.timeout, the
 * exponent of 4.096 us x 2^timeout a requester waits for an ACK before it
 * retransmits (1..31; anything else: VERBS_QP_TIMEOUT, perftest's
 * DEF_QP_TIME, 67 ms; 0, wait for ever, is never asked).  A wire slower than the QPs' packets in flight
 * (software RoCE between TCG guests) needs more: docs/verbs.md.
 */
#define VERBS_QP_TIMEOUT 14
enum verbs_code verbs_qp_connect_timeout(struct ibv_qp *qp,
                                         const struct verbs_dev *d,
                                         uint32_t local_psn,
                                         const struct verbs_endpoint *remote,
                                         int timeout, int retry);
/*
 * retry: ibv_qp_attr.retry_cnt, how many times a requester retransmits
 * after an ACK timeout before the WR completes IBV_WC_RETRY_EXC_ERR (1..7;
 * anything else: VERBS_RETRY_CNT, perftest's 7).  Soft-RoCE reads 7 as
 * "retry for ever" (drivers/infiniband/sw/rxe/rxe_comp.c: "if
 * (qp->comp.retry_cnt != 7) qp->comp.retry_cnt--"), so there a path that
 * never ACKs stalls until the run's timeout unless it is 6 or less.
 */
#define VERBS_RETRY_CNT 7

/*
 * Post one work request on qp.  signaled: ask for a completion.  laddr /
 * len / lkey describe the local bytes (len 0 allowed for WRITE_WITH_IMM
 * and SEND).  imm is taken in host order and sent in network order.
 * inline_ok: post with IBV_SEND_INLINE (len <= the QP's max_inline).
 */
enum verbs_code verbs_post_write(struct ibv_qp *qp, uint64_t wr_id,
                                 uint64_t laddr, uint32_t len, uint32_t lkey,
                                 uint64_t raddr, uint32_t rkey,
                                 int signaled, int inline_ok);
enum verbs_code verbs_post_write_imm(struct ibv_qp *qp, uint64_t wr_id,
                                     uint64_t laddr, uint32_t len,
                                     uint32_t lkey, uint64_t raddr,
                                     uint32_t rkey, uint32_t imm,
                                     int signaled);
enum verbs_code verbs_post_read(struct ibv_qp *qp, uint64_t wr_id,
                                uint64_t laddr, uint32_t len, uint32_t lkey,
                                uint64_t raddr, uint32_t rkey, int signaled);
enum verbs_code verbs_post_send(struct ibv_qp *qp, uint64_t wr_id,
                                uint64_t laddr, uint32_t len, uint32_t lkey,
                                int signaled, int inline_ok);
enum verbs_code verbs_post_recv(struct ibv_qp *qp, uint64_t wr_id,
                                uint64_t laddr, uint32_t len, uint32_t lkey);

/*
 * Busy-poll cq for up to max completions until at least one arrives or
 * timeout_ns passes (0 = one non-blocking pass).  Returns the number of
 * completions (>= 0; 0 only on a non-blocking pass), or -VERBS_ETIMEDOUT,
 * -VERBS_ESTOPPED, -VERBS_ESYS.  Completions with a bad status are
 * returned as they are: check wc[i].status (verbs_wc_check helps).
 */
int verbs_poll(struct ibv_cq *cq, struct ibv_wc *wc, int max,
               uint64_t timeout_ns);
/*
 * Busy-wait etiquette: a waiter that has seen nothing for VERBS_YIELD_NS
 * calls sched_yield() between polls.  A real NIC answers in microseconds,
 * so measurements there never reach it; software RoCE (rxe, siw) does its
 * work in kernel threads on the same CPUs, and a spinning waiter would
 * starve them until the next scheduler tick (4 ms).
 */
#define VERBS_YIELD_NS 100000ull

/* VERBS_OK when wc->status is success, else VERBS_EWC with the message
 * "<what>: work completion <ibv_wc_status_str> (<status>), vendor 0x.." */
enum verbs_code verbs_wc_check(const struct ibv_wc *wc, const char *what);

/* ------------------------------------------------------------------ */
/* Inventory (inventory.c)                                             */

/* Port counters: names and values read from sysfs (hw_counters and
 * counters); n entries.  Free with verbs_counters_free. */
struct verbs_counters {
  size_t n;
  char (*name)[64];
  uint64_t *value;
};

/* Read every counter of dev/port; a missing directory gives n = 0. */
enum verbs_code verbs_counters_read(const char *dev, int port,
                                    struct verbs_counters *c);
void verbs_counters_free(struct verbs_counters *c);

#endif
