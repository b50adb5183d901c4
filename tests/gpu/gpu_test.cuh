/* What the CUDA test programs under tests/gpu share: a check that ends the program on a failed
 * CUDA call, the skip without a device, and copies to and from the device. Header only; each
 * program is one translation unit. */
#ifndef HMD_TESTS_GPU_TEST_CUH
#define HMD_TESTS_GPU_TEST_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

/* Ends the program, naming the call and CUDA's reason, when x is not cudaSuccess. */
#define CUDA_OK(x)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* True, having said so, when the machine has no CUDA device (the test then exits 77: skipped). */
static inline bool no_cuda_device()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("no CUDA device: skipped\n");
        return true;
    }
    return false;
}

/* A device copy of the n values at p (at least one element allocated). */
template <typename T> T *to_device(const T *p, size_t n)
{
    T *d = NULL;
    CUDA_OK(cudaMalloc(&d, std::max<size_t>(1, n) * sizeof(T)));
    CUDA_OK(cudaMemcpy(d, p, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

/* n doubles on the device, every one NaN: an entry a kernel leaves unwritten stays NaN. */
static inline double *nan_on_device(size_t n)
{
    double *d = NULL;
    CUDA_OK(cudaMalloc(&d, std::max<size_t>(1, n) * sizeof(double)));
    CUDA_OK(cudaMemset(d, 0xff, n * sizeof(double)));
    return d;
}

/* A host copy of the n doubles at d. */
static inline std::vector<double> from_device(const double *d, size_t n)
{
    std::vector<double> v(n);
    CUDA_OK(cudaMemcpy(v.data(), d, n * sizeof(double), cudaMemcpyDeviceToHost));
    return v;
}

#endif /* HMD_TESTS_GPU_TEST_CUH */
