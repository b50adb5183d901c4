/* What the CUDA microbenchmarks under bench/gpu_single share: a check that ends the program on a
 * failed call, and deterministic inputs. Header only; each program is one translation unit. */
#ifndef HMD_BENCH_CUDA_CUH
#define HMD_BENCH_CUDA_CUH

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

/* Ends the program, naming the call, when x (a CUDA, cuBLAS or halomd status) is not 0. */
#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if ((x) != 0) {                                                                            \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #x);                         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* x[0..n) = finite values in [-1, 1), a hash of the index and seed. */
template <typename T> __global__ void k_fill(size_t n, unsigned seed, T *x)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = ((unsigned)i + seed) * 2654435761u;
        h ^= h >> 15;
        x[i] = (T)((float)(h & 0xffff) / 32768.0f - 1.0f);
    }
}

#endif /* HMD_BENCH_CUDA_CUH */
