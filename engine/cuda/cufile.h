/*
 * cufile.h - file <-> GPU memory through NVIDIA cuFile (GPUDirect
 * Storage): libcufile opened at run time (dlopen "libcufile.so.0"), a
 * file read into (or written from) one device buffer with cuFileRead /
 * cuFileWrite, timed, and the bytes compared with the file afterwards.
 *
 * Which path cuFile took is named, not guessed: with the nvidia-fs kernel
 * module loaded (/sys/module/nvidia_fs) reads can go NVMe -> GPU by DMA
 * ("gds"); without it cuFile runs in compatibility mode ("compat": POSIX
 * I/O into cuFile's own pinned bounce buffers, then a copy to the GPU),
 * when /etc/cufile.json allows it (properties.allow_compat_mode).
 * No lua.h.
 */
#ifndef STRATA_CUFILE_H
#define STRATA_CUFILE_H

#include <stddef.h>
#include <stdint.h>

struct cufile_opts {
  const char *path;
  int write;               /* 0: file -> GPU (cuFileRead), 1: GPU -> file */
  uint64_t offset, size;   /* file region; size bytes of device memory */
  size_t chunk;            /* bytes per cuFileRead/Write call (0: 16 MiB) */
  int device;
  int direct;              /* open with O_DIRECT (default 1; GDS needs it) */
  int verify;              /* compare the GPU's bytes with the file's */
};

struct cufile_result {
  uint64_t bytes;          /* moved by cuFile */
  double seconds;          /* the I/O calls, first to last */
  double register_s;       /* driver open + handle + buffer registration */
  char mode[16];           /* "gds" or "compat" */
  int version;             /* cuFileGetVersion (e.g. 1151x), 0 unknown */
  int buf_registered;      /* cuFileBufRegister succeeded */
  int direct;              /* the file was opened O_DIRECT */
  int verified;            /* 1 compared, 0 not checked */
  uint64_t verify_errors;  /* bytes that differ */
  uint64_t first_bad;      /* offset in the region of the first one */
};

/*
 * Run the transfer.  Returns a cuda_status (cuda.h): CUDA_ABSENT when
 * libcufile, the driver or a GPU is missing (err says which), CUDA_FAILED
 * on an error of cuFile or the file (err names the call and the value it
 * returned).
 */
int cufile_io(const struct cufile_opts *o, struct cufile_result *r,
              char *err, size_t errlen);

#endif
