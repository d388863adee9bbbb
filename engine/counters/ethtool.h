/*
 * ethtool.h - NIC statistics through the ethtool ioctl (ethtool.c).
 */
#ifndef STRATA_COUNTERS_ETHTOOL_H
#define STRATA_COUNTERS_ETHTOOL_H

#include "set.h"

/* `ethtool -S <ifname>` through the ioctl: ethtool.<if>.<stat> (live
 * host only).  -1 with errno when the interface has no statistics. */
int ctr_read_ethtool(const char *ifname, struct ctr_set *s);

#endif
