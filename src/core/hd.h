/* HMD_HD marks small functions that the C host code and the CUDA kernels share, so the GPU
 * computes the same numbers as the CPU reference from the same source. */
#ifndef HMD_CORE_HD_H
#define HMD_CORE_HD_H

#ifdef __CUDACC__
#define HMD_HD __host__ __device__
#else
#define HMD_HD
#endif

#endif /* HMD_CORE_HD_H */
