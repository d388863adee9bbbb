/*
 * inventory.c - what the host's RDMA devices are (sysfs side): port
 * counters, netdev mapping, driver, firmware, NUMA node.  The verbs side
 * (ports, GIDs) is queried through libibverbs in verbs_lua.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

static int cmp_name(const void *a, const void *b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append every readable counter file of dir to c. */
static enum verbs_code read_dir(const char *dir, struct verbs_counters *c)
{
  DIR *dp = opendir(dir);
  struct dirent *de;
  char *names[512];
  size_t nn = 0;

  if(!dp)
    return VERBS_OK;
  while((de = readdir(dp)) && nn < 512) {
    if(de->d_name[0] == '.' || !strcmp(de->d_name, "lifespan"))
      continue;
    names[nn] = strdup(de->d_name);
    if(!names[nn])
      break;
    nn++;
  }
  closedir(dp);
  qsort(names, nn, sizeof(names[0]), cmp_name);
  for(size_t i = 0; i < nn; i++) {
    char path[512];
    unsigned long long v;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    f = fopen(path, "r");
    if(f && fscanf(f, "%llu", &v) == 1) {
      void *nm = realloc(c->name, (c->n + 1) * sizeof(*c->name));
      void *nv = nm ? realloc(c->value, (c->n + 1) * sizeof(*c->value))
                    : NULL;
      if(nm)
        c->name = nm;
      if(!nv) {
        fclose(f);
        for(size_t j = i; j < nn; j++)
          free(names[j]);
        return verbs_fail(VERBS_ENOMEM, "counters: out of memory");
      }
      c->value = nv;
      snprintf(c->name[c->n], sizeof(c->name[0]), "%s", names[i]);
      c->value[c->n] = v;
      c->n++;
    }
    if(f)
      fclose(f);
    free(names[i]);
  }
  return VERBS_OK;
}

enum verbs_code verbs_counters_read(const char *dev, int port,
                                    struct verbs_counters *c)
{
  char dir[256];
  enum verbs_code rc;

  memset(c, 0, sizeof(*c));
  snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%d/hw_counters",
           dev, port);
  rc = read_dir(dir, c);
  if(rc)
    return rc;
  snprintf(dir, sizeof(dir), "/sys/class/infiniband/%s/ports/%d/counters",
           dev, port);
  return read_dir(dir, c);
}

void verbs_counters_free(struct verbs_counters *c)
{
  if(!c)
    return;
  free(c->name);
  free(c->value);
  c->name = NULL;
  c->value = NULL;
  c->n = 0;
}
