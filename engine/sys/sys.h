/*
 * sys.h - host facts and processes without Lua: bounded file reads,
 * sysfs attributes, CPU lists, PCI class and vendor names, the ethtool
 * driver-info ioctl, and a shell-free process runner with a deadline that
 * kills the child's whole process group.
 */
#ifndef STRATA_SYS_H
#define STRATA_SYS_H

#include <stddef.h>

/* Read a file, at most max bytes (0 = 16 MiB).  *buf malloc'd, NUL ended.
 * -1 with errno on failure; EFBIG when the file holds more than max. */
int sys_read_file(const char *path, size_t max, char **buf, size_t *len);

/* <dir>/<name> into out with trailing whitespace trimmed; -1 when absent
 * or unreadable (sysfs attributes). */
int sys_attr(const char *dir, const char *name, char *out, size_t len);
/* The basename of the symlink <dir>/<name> (e.g. a driver); -1 if none. */
int sys_link_base(const char *dir, const char *name, char *out, size_t len);

/* Number of CPUs in a kernel CPU list ("0-3,8,10-11"); -1 if malformed.
 * If mask is not NULL, sets mask[cpu] = 1 for cpu < masklen. */
int sys_cpulist(const char *list, unsigned char *mask, size_t masklen);

/* "gpu", "nic", "infiniband", "nvme" for the classes inventory lists, or
 * NULL.  cls is the 24-bit class (0x030200). */
const char *sys_pci_kind(unsigned cls);
/* Short vendor name for common PCI vendors, or NULL. */
const char *sys_pci_vendor(unsigned vendor);
/* Device name from a pci.ids file (first found of the usual places), or
 * -1.  ids_path NULL = search /usr/share/hwdata, /usr/share/misc. */
int sys_pci_ids_name(const char *ids_path, unsigned vendor, unsigned device,
                     char *out, size_t len);

/* ETHTOOL_GDRVINFO for a live interface; -1 with errno when not
 * supported (lo, virtual) or not permitted. */
struct sys_drvinfo {
  char driver[32], version[32], fw_version[32], bus_info[32];
};
int sys_ethtool_drvinfo(const char *ifname, struct sys_drvinfo *out);

/* The PCI function (DDDD:BB:DD.F) nearest a sysfs path; -1 if none. */
int sys_pci_of_path(const char *real, char *out, size_t len);

/* --- Processes -------------------------------------------------------- */

struct sys_run_opts {
  char *const *argv;         /* argv[0] looked up on PATH */
  char *const *envp;         /* NULL = inherit */
  const char *cwd;           /* NULL = inherit */
  const char *in;            /* stdin bytes, or NULL for /dev/null */
  size_t in_len;
  double timeout_s;          /* <= 0: none (still interruptible) */
  size_t max_output;         /* per stream; 0 = 4 MiB; the rest dropped */
};

struct sys_run_result {
  int code;                  /* exit code; 128 + signal when killed */
  int signal;                /* terminating signal or 0 */
  int timed_out;             /* the deadline killed the group */
  int interrupted;           /* strata_stop_flag killed the group */
  int exec_errno;            /* exec failed (code 127): its errno */
  char *out, *err;           /* captured, NUL ended, malloc'd */
  size_t out_len, err_len;
  int out_truncated, err_truncated;
  double duration_s;
};

/* Run argv in its own process group; never through a shell.  When the
 * command exits, what it left running in its group is killed.  Returns -1
 * (errno) only when pipes or fork fail; a missing program is a result
 * with code 127 and exec_errno set.  Free r with sys_run_free. */
int sys_run(const struct sys_run_opts *o, struct sys_run_result *r);
void sys_run_free(struct sys_run_result *r);

/* --- Known load -------------------------------------------------------- */

#include <stdint.h>

/* Busy-loop the calling thread until it has had `seconds` of CPU (wall cap
 * 10 x seconds + 1 s); returns the iterations, *cpu_s the CPU it had. */
uint64_t sys_spin(double seconds, double *cpu_s);

struct sys_loopback {
  uint64_t bytes;      /* received and counted by the receiver */
  uint64_t corrupt;    /* bytes that differed from the sent pattern */
  double duration_s, gbps;
};
/* Send bytes over one TCP connection on 127.0.0.1 to a receiver thread
 * that checks them.  -1 with err when not all arrived by the timeout. */
int sys_tcp_loopback(uint64_t bytes, double timeout_s,
                     struct sys_loopback *out, char *err, size_t errlen);

#endif
