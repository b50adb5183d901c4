/* The GPU a rank uses (cuda_api.h hmd_cuda_device_info, hmd_cuda_select_device). */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

extern "C" int hmd_cuda_device_info(char *buf, size_t len)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda: no CUDA device is visible");
    }
    int dev = 0;
    HMD_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    HMD_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    if (buf) {
        snprintf(buf, len, "GPU %d: %s (%d SMs, %.1f GiB, compute capability %d.%d)", dev, p.name,
                 p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.major, p.minor);
    }
    return HMD_OK;
}

extern "C" int hmd_cuda_select_device(int local_rank, int *device, int *ndevices)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda: no CUDA device is visible");
    }
    const int dev = local_rank % n;
    HMD_CUDA_CHECK(cudaSetDevice(dev));
    HMD_CUDA_CHECK(cudaFree(0)); /* the context now (NVSHMEM under MPS needs one first) */
    if (device) {
        *device = dev;
    }
    if (ndevices) {
        *ndevices = n;
    }
    return HMD_OK;
}
