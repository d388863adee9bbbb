/*
 * target.c - what a storage job may touch: the CPUs of a NUMA node
 * (numa_cpu_nodes -> /sys/devices/system/node/node<N>/cpulist, the same
 * syntax as fio's cpus_allowed), and the raw-device guard: a block device
 * that is mounted or held by another device (an md array, LVM) is never a
 * target, whatever the options say.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "storage.h"
#include "strata.h"
#include "sys.h"

int stg_cpulist_parse(const char *s, int *cpus, size_t max, size_t *n)
{
  /* the parser is the sys family's (sys_cpulist); this lists the CPUs */
  enum { MASK = 8192 };
  unsigned char *mask = calloc(MASK, 1);
  int rc = -1;
  *n = 0;
  if(mask && sys_cpulist(s, mask, MASK) >= 0) {
    rc = 0;
    for(int c = 0; c < MASK; c++) {
      if(!mask[c])
        continue;
      if(*n >= max) {
        rc = -1;
        break;
      }
      cpus[(*n)++] = c;
    }
  }
  free(mask);
  return rc;
}

int stg_node_cpus(const char *root, int node, int *cpus, size_t max,
                  size_t *n)
{
  char path[512], *buf = NULL;
  snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%d/cpulist",
           root ? root : "", node);
  if(strata_read_file(path, 4096, &buf, NULL, NULL))
    return -1;
  int rc = stg_cpulist_parse(buf, cpus, max, n);
  free(buf);
  if(rc)
    errno = EINVAL;
  return rc;
}

/* Is maj:min the device of a mount in mountinfo (field 3)? */
static int mounted(const char *root, unsigned maj, unsigned min)
{
  char path[512], *buf = NULL, want[32];
  snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
  if(strata_read_file(path, 0, &buf, NULL, NULL))
    return 0;
  snprintf(want, sizeof(want), " %u:%u ", maj, min);
  int hit = 0;
  for(char *line = buf; line && *line && !hit;) {
    char *nl = strchr(line, '\n');
    if(nl)
      *nl = 0;
    /* "36 35 98:0 /mnt1 ...": the third field */
    char *p = strchr(line, ' ');
    p = p ? strchr(p + 1, ' ') : NULL;
    if(p && !strncmp(p, want, strlen(want)))
      hit = 1;
    line = nl ? nl + 1 : NULL;
  }
  free(buf);
  return hit;
}

static int has_holders(const char *root, unsigned maj, unsigned min)
{
  char path[512];
  snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u/holders", root, maj,
           min);
  DIR *d = opendir(path);
  struct dirent *e;
  int n = 0;
  if(!d)
    return 0;
  while((e = readdir(d)))
    if(e->d_name[0] != '.')
      n++;
  closedir(d);
  return n > 0;
}

int stg_device_in_use(const char *root, const char *path, char *why,
                      size_t len)
{
  struct stat st;
  if(stat(path, &st) || !S_ISBLK(st.st_mode))
    return 0;
  unsigned maj = major(st.st_rdev), min = minor(st.st_rdev);
  if(!root)
    root = "";
  if(mounted(root, maj, min)) {
    snprintf(why, len, "%s (%u:%u) is mounted", path, maj, min);
    return 1;
  }
  if(has_holders(root, maj, min)) {
    snprintf(why, len, "%s (%u:%u) is held by another device (md, dm: "
             "/sys/dev/block/%u:%u/holders)", path, maj, min, maj, min);
    return 1;
  }
  return 0;
}
