/* The periodic shifts of a halo plan's swaps on the device, as the device transports (self,
 * nvshmem) read them: recomputed and copied only when the cell changes, from pageable memory
 * when the stream runs eagerly, from a pinned buffer when the copy is being recorded into a CUDA
 * graph (a replay reads the buffer: the step synchronises its stream before it records a step
 * for a new cell, so no replay reads it while it changes). C++ (device transports) only. */
#ifndef HMD_CUDA_HALO_SHIFTS_CUH
#define HMD_CUDA_HALO_SHIFTS_CUH

#include <cuda_runtime.h>

#include <stddef.h>

extern "C" {
#include "core/box.h"
#include "dd/halo_plan.h"
}

struct hmd_cuda_halo_shifts {
    double *dev;    /* [HMD_HALO_MAX_SWAPS][3] on the device: what the kernels read */
    double *pinned; /* [HMD_HALO_MAX_SWAPS][3]: the source of a recorded copy */
    double h[3][3]; /* the cell of the shifts on the device */
    bool valid;     /* false: recompute at the next update (a new plan) */
};

/* Bytes of device memory the shifts take. */
constexpr size_t HMD_CUDA_HALO_SHIFTS_BYTES = 3 * HMD_HALO_MAX_SWAPS * sizeof(double);

/* Allocates zeroed *s's buffers. HMD_ENOMEM. */
int hmd_cuda_halo_shifts_init(struct hmd_cuda_halo_shifts *s);

/* The swaps' shifts of `plan` in cell `box` queued onto the device on `stream`, unless they
 * are valid for this cell already. */
int hmd_cuda_halo_shifts_update(struct hmd_cuda_halo_shifts *s, const struct hmd_halo_plan *plan,
                                const struct hmd_box *box, cudaStream_t stream);

/* Frees the buffers (an initialised or zeroed *s) and zeroes *s. */
void hmd_cuda_halo_shifts_free(struct hmd_cuda_halo_shifts *s);

#endif /* HMD_CUDA_HALO_SHIFTS_CUH */
