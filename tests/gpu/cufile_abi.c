/*
 * cufile_abi.c - run on the GPU machine (tests/gpu/staging.sh): checks
 * engine/cuda/cufile.c's own declarations of cuFile's types against the
 * real cufile.h there, and prints what the header says (the capture is
 * kept in tests/storage/results/).  Build: cc -I<cuda>/include.
 */
#include <stddef.h>
#include <stdio.h>

#include <cufile.h>

int main(void)
{
  int bad = 0;
#define SAME(what, a, b)                                                  \
  do {                                                                    \
    long x_ = (long)(a), y_ = (long)(b);                                  \
    printf("%-44s %ld %s %ld\n", what, x_, x_ == y_ ? "==" : "!=", y_);   \
    bad |= x_ != y_;                                                      \
  } while(0)
  SAME("sizeof(CUfileError_t) vs 8", sizeof(CUfileError_t), 8);
  SAME("offsetof(CUfileError_t, cu_err) vs 4",
       offsetof(CUfileError_t, cu_err), 4);
  SAME("sizeof(CUfileDescr_t) vs 24", sizeof(CUfileDescr_t), 24);
  SAME("offsetof(CUfileDescr_t, handle) vs 8",
       offsetof(CUfileDescr_t, handle), 8);
  SAME("offsetof(CUfileDescr_t, fs_ops) vs 16",
       offsetof(CUfileDescr_t, fs_ops), 16);
  SAME("CU_FILE_SUCCESS vs 0", CU_FILE_SUCCESS, 0);
  SAME("CU_FILE_HANDLE_TYPE_OPAQUE_FD vs 1", CU_FILE_HANDLE_TYPE_OPAQUE_FD, 1);
  printf("CU_FILE_DRIVER_NOT_INITIALIZED = %d\n",
         (int)CU_FILE_DRIVER_NOT_INITIALIZED);
  printf("CU_FILE_PLATFORM_NOT_SUPPORTED = %d\n",
         (int)CU_FILE_PLATFORM_NOT_SUPPORTED);
  /* the header's own names of the error codes (cufileop_status_error) */
  for(int e = 5000; e <= 5060; e++)
    printf("CUfileOpError %d %s\n", e,
           cufileop_status_error((CUfileOpError)e));
  printf("abi %s\n", bad ? "MISMATCH" : "ok");
  return bad;
}
