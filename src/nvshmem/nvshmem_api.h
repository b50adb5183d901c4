/* NVSHMEM in halomd (src/nvshmem, its own static library built with separable compilation,
 * so that the Deep Potential's kernels keep whole-program optimisation): the runtime started
 * over halomd's own MPI (a unique id broadcast by rank 0), the symmetric heap the device state
 * puts positions and forces on, and the `nvshmem` halo transport (GPU-initiated, fused
 * kernels). Without NVSHMEM in the build (HMD_HAVE_NVSHMEM 0) every function is a stub that
 * says so (HMD_ENOTSUP).
 *
 * Collective: init, finalize and the transport's setup are called by every rank.
 */
#ifndef HMD_NVSHMEM_NVSHMEM_API_H
#define HMD_NVSHMEM_NVSHMEM_API_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "core/error.h"
#include "cuda/cuda_api.h"
#include "halo/transport.h"
#ifdef __cplusplus
}
#endif

#if HMD_HAVE_NVSHMEM
#ifdef __cplusplus
extern "C" {
#endif

/* Starts NVSHMEM once for all ranks (each bound to its GPU first, hmd_cuda_select_device) and
 * checks that it can work: several ranks on one GPU need MPS with the active thread
 * percentages adding up to at most 100 (NVSHMEM's full multi-process support), or the spin
 * waits of the halo would only progress by time slicing. Writes what it found into
 * what[len]. HMD_ENOTSUP with the reason otherwise. Collective; later calls return at once. */
int hmd_nvshmem_init(char *what, size_t len);

/* Ends NVSHMEM if it was started (at the end of the run; collective). */
void hmd_nvshmem_finalize(void);

/* The symmetric heap as the device state's heap for x and f (its allocations are collective:
 * every rank asks for the same size at the same time). After hmd_nvshmem_init. */
struct hmd_cuda_heap hmd_nvshmem_heap(void);

/* Opens the nvshmem transport into *t: positions and forces must be on the symmetric heap (the
 * state's arrays made with hmd_nvshmem_heap). After hmd_nvshmem_init. Collective. */
int hmd_nvshmem_halo_open(struct hmd_halo_transport *t);

/* Whether t is the nvshmem transport storing into mapped peers by bulk copies
 * (HMD_NVSHMEM_BULK=1, the A/B variant of halo.cu). */
bool hmd_nvshmem_halo_bulk(const struct hmd_halo_transport *t);

#ifdef __cplusplus
}
#endif
#else
static inline int hmd_nvshmem_unavailable(void)
{
    return hmd_error_set(HMD_ENOTSUP, "this halomd was built without NVSHMEM (HALOMD_NVSHMEM; "
                                      "docs/install.md says how to build it in)");
}
static inline int hmd_nvshmem_init(char *what, size_t len)
{
    (void)what, (void)len;
    return hmd_nvshmem_unavailable();
}
static inline void hmd_nvshmem_finalize(void) {}
static inline struct hmd_cuda_heap hmd_nvshmem_heap(void)
{
    const struct hmd_cuda_heap none = {0};
    return none;
}
static inline bool hmd_nvshmem_halo_bulk(const struct hmd_halo_transport *t)
{
    (void)t;
    return false;
}
static inline int hmd_nvshmem_halo_open(struct hmd_halo_transport *t)
{
    (void)t;
    return hmd_nvshmem_unavailable();
}
#endif

#endif /* HMD_NVSHMEM_NVSHMEM_API_H */
