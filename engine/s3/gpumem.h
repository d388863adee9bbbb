/*
 * gpumem.h - the GPU side of the T3 path (TCP + GPU memory): a device
 * buffer and a pinned host staging buffer per connection, and timed
 * copies between them, through engine/cuda's C API (cuda.h).  Built
 * without that family, or without CUDA, or on a host without a GPU,
 * gpumem_open returns S3W_ABSENT with the reason.
 */
#ifndef STRATA_S3_GPUMEM_H
#define STRATA_S3_GPUMEM_H

#include <stddef.h>
#include <stdint.h>

#include "payload.h"

struct gpumem {
  void *host;          /* pinned host staging, size bytes */
  void *dev;           /* device buffer, size bytes */
  uint64_t size;
  int device;
  double last_copy_s;  /* duration of the last copy */
};

/*
 * Allocate both buffers on device and fill the device one with object 0
 * of pl (so PUTs send real bytes from the GPU).  Returns 0, -1 (err: a
 * CUDA failure) or S3W_ABSENT (err: why the GPU path cannot run here).
 */
int gpumem_open(struct gpumem *g, int device, uint64_t size,
                const struct payload *pl, char *err, size_t cap);
/* Copy n bytes host -> device (GET) or device -> host (PUT), timed. */
int gpumem_to_device(struct gpumem *g, uint64_t n, char *err, size_t cap);
int gpumem_to_host(struct gpumem *g, uint64_t n, char *err, size_t cap);
/* Free both; NULL-safe, repeatable. */
void gpumem_close(struct gpumem *g);

#endif
