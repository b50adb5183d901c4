/* The swaps' periodic shifts on the device (cuda/halo/shifts.cuh). */
#include "cuda/halo/shifts.cuh"

#include "cuda/cuda_internal.cuh"

#include <string.h>

int hmd_cuda_halo_shifts_init(struct hmd_cuda_halo_shifts *s)
{
    memset(s, 0, sizeof *s);
    if (cudaMalloc((void **)&s->dev, HMD_CUDA_HALO_SHIFTS_BYTES) != cudaSuccess ||
        cudaHostAlloc((void **)&s->pinned, HMD_CUDA_HALO_SHIFTS_BYTES, cudaHostAllocDefault) !=
            cudaSuccess ||
        cudaMemset(s->dev, 0, HMD_CUDA_HALO_SHIFTS_BYTES) != cudaSuccess) {
        cudaGetLastError();
        hmd_cuda_halo_shifts_free(s);
        return hmd_error_set(HMD_ENOMEM, "GPU: no room for the halo's shifts");
    }
    return HMD_OK;
}

int hmd_cuda_halo_shifts_update(struct hmd_cuda_halo_shifts *s, const struct hmd_halo_plan *plan,
                                const struct hmd_box *box, cudaStream_t stream)
{
    if (s->valid && !memcmp(s->h, box->h, sizeof s->h)) {
        return HMD_OK;
    }
    double shift[3 * HMD_HALO_MAX_SWAPS] = {0.0};
    for (int k = 0; k < plan->nswap; k++) {
        hmd_halo_swap_shift(&plan->swap[k], box, &shift[3 * k]);
    }
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    HMD_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
    if (capturing != cudaStreamCaptureStatusNone) { /* recorded: a replay reads `pinned` */
        memcpy(s->pinned, shift, sizeof shift);
        HMD_CUDA_CHECK(
            cudaMemcpyAsync(s->dev, s->pinned, sizeof shift, cudaMemcpyHostToDevice, stream));
    } else { /* from pageable memory: staged before the call returns, so `shift` may go */
        HMD_CUDA_CHECK(
            cudaMemcpyAsync(s->dev, shift, sizeof shift, cudaMemcpyHostToDevice, stream));
    }
    memcpy(s->h, box->h, sizeof s->h);
    s->valid = true;
    return HMD_OK;
}

void hmd_cuda_halo_shifts_free(struct hmd_cuda_halo_shifts *s)
{
    cudaFree(s->dev);
    cudaFreeHost(s->pinned);
    memset(s, 0, sizeof *s);
}
