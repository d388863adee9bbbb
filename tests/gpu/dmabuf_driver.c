/*
 * dmabuf_driver.c - what the CUDA driver itself does with the dma-buf
 * export of small allocations (issue 9 section 5), outside strata: for
 * each size n, cuMemAlloc(n) and cuMemAlloc(n rounded up to 64 KiB, as
 * perftest's src/cuda_memory.c allocates), then cuMemGetAddressRange and
 * cuMemGetHandleForAddressRange over the allocation's range rounded up to
 * the host page.  Build and run on a GPU host:
 *   nvcc -o dmabuf_driver tests/gpu/dmabuf_driver.c -lcuda && ./dmabuf_driver
 */
#include <cuda.h>
#include <stdio.h>
#include <unistd.h>

static const char *name(CUresult r)
{
  const char *s = NULL;
  cuGetErrorName(r, &s);
  return s ? s : "?";
}

static void try_export(size_t n, size_t alloc)
{
  CUdeviceptr p = 0, base = 0;
  size_t asize = 0, page = (size_t)sysconf(_SC_PAGESIZE);
  int fd = -1;
  CUresult r = cuMemAlloc(&p, alloc);
  if(r != CUDA_SUCCESS) {
    printf("%10zu %10zu cuMemAlloc %s\n", n, alloc, name(r));
    return;
  }
  cuMemGetAddressRange(&base, &asize, p);
  /* strata's old rule: end rounded up to the page, clamped to the range */
  size_t end = (n + page - 1) & ~(page - 1);
  if(end > asize)
    end = asize;
  r = cuMemGetHandleForAddressRange(&fd, base, end,
                                    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  printf("%10zu %10zu %10zu %10zu %s\n", n, alloc, asize, end, name(r));
  if(fd >= 0)
    close(fd);
  cuMemFree(p);
}

int main(void)
{
  static const size_t sizes[] = { 1, 2, 128, 4095, 4096, 4097, 65535, 65536,
                                  65537, (1u << 20) + 1, 64u << 20,
                                  (64u << 20) + 1 };
  CUdevice d;
  CUcontext c;
  int v = 0;
  if(cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
     cuDevicePrimaryCtxRetain(&c, d) != CUDA_SUCCESS ||
     cuCtxSetCurrent(c) != CUDA_SUCCESS) {
    fprintf(stderr, "no CUDA device\n");
    return 2;
  }
  cuDriverGetVersion(&v);
  printf("driver API %d, host page %ld\n", v, sysconf(_SC_PAGESIZE));
  printf("%10s %10s %10s %10s %s\n", "size", "alloc", "range", "export",
         "cuMemGetHandleForAddressRange");
  for(size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    try_export(sizes[i], sizes[i]);
    try_export(sizes[i], (sizes[i] + 65535) & ~(size_t)65535);
  }
  return 0;
}
