/* The CUDA backend as the host code sees it: a device copy of a Deep Potential model that
 * evaluates energies, forces and virial on the GPU (src/cuda/dp_eval.cu), the twin of
 * hmd_dp_compute_cpu (nnp/dp_eval.h).
 *
 * This version moves the atoms to the device at each call and the results back; the GPU builds
 * its own neighbour list (cell list, src/cuda/nbr_list.cu) from the home atoms and the ghosts
 * the host halo made. Supported: se_e2_a, networks or compressed tables, in double. Other
 * models are refused (HMD_ENOTSUP) when the context is made.
 *
 * Without CUDA in the build (HMD_HAVE_CUDA 0) every function is a stub: hmd_cuda_dp_create
 * returns HMD_ENOTSUP.
 */
#ifndef HMD_CUDA_CUDA_API_H
#define HMD_CUDA_CUDA_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "core/error.h"
#include "nnp/dp_eval.h"
#ifdef __cplusplus
}
#endif

struct hmd_cuda_dp;

#if HMD_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif

/* Writes "NVIDIA H200 (132 SMs, 140.4 GiB)" of the current device into buf. Returns HMD_OK, or
 * HMD_ENOTSUP with a message when there is no usable device. */
int hmd_cuda_device_info(char *buf, size_t len);

/* Uploads `m` (borrowed during the call) and makes the evaluation context. Returns HMD_OK,
 * HMD_ENOTSUP (no device; a model kind the GPU path does not have), HMD_ENOMEM. */
int hmd_cuda_dp_create(struct hmd_cuda_dp **dp, const struct hmd_dp_model *m);

/* hmd_dp_compute_cpu on the GPU, same arguments and results except that the neighbour list is
 * built on the device with cut-off `rlist` (>= rcut) from x. out->atom_virial must be NULL.
 * Returns HMD_OK, HMD_ENOMEM, or HMD_ESOFTWARE on a CUDA error (message names the call). */
int hmd_cuda_dp_compute(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *x,
                        const int *type, int type0, double rlist, struct hmd_dp_output *out);

/* Device memory the context holds (bytes). */
size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp);

/* Frees the context (NULL is fine). */
void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp);

#ifdef __cplusplus
}
#endif
#else /* no CUDA in this build */
static inline int hmd_cuda_device_info(char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return hmd_error_set(HMD_ENOTSUP, "this halomd was built without CUDA (HALOMD_CUDA=OFF or no "
                                      "nvcc at build time)");
}
static inline int hmd_cuda_dp_create(struct hmd_cuda_dp **dp, const struct hmd_dp_model *m)
{
    (void)m;
    *dp = NULL;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_dp_compute(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *x,
                                      const int *type, int type0, double rlist,
                                      struct hmd_dp_output *out)
{
    (void)dp, (void)nlocal, (void)nall, (void)x, (void)type, (void)type0, (void)rlist, (void)out;
    return hmd_cuda_device_info(NULL, 0);
}
static inline size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp)
{
    (void)dp;
    return 0;
}
static inline void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp)
{
    (void)dp;
}
#endif

#endif /* HMD_CUDA_CUDA_API_H */
