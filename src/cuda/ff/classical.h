/* The classical force field on the GPU: a device force provider (ff/provider.h,
 * HMD_FORCE_DEVICE), the CUDA twin of ff/classical.h (same formulas: ff/ff_kernels.h).
 *
 * io (device pointers): x [nall][3], id [nall], f [nall][3] and ev [HMD_FORCE_NEV] added to,
 * terms [its term count] and atom_energy [nlocal] added to when not NULL (device memory too);
 * atom_virial must be NULL; io->box in host memory; io->stream the cudaStream_t to queue on.
 *
 * `prepare` (neighbour-list steps) builds the nonbonded pair list on the device
 * (cuda/ff/pair_list.cuh: every partner of each centre within rlist) and the bonded part of
 * the rank's plan on the host (ff/ff_plan.h, hmd_ff_plan_build_bonded) from io->host's
 * positions and ids (copied from the device when io->host is NULL), and uploads it; it
 * synchronises the stream and is the only place the provider allocates. `compute` queues
 * kernels only (no allocation, copy or synchronisation: it can be captured in a CUDA graph).
 * No floating-point atomics: each centre's warp sums its pair forces in a fixed order over a
 * list whose order depends on the positions alone (every pair is
 * computed from both sides, half the energy and virial each, so ghosts get no pair forces),
 * each bonded interaction writes its forces to its own slots and each atom sums its slots in a
 * fixed order, energies and virial are reduced in fixed trees (blocks, then one). Two computes on
 * the same input give bitwise the same result.
 *
 * Without CUDA in the build the create function is a stub that returns HMD_ENOTSUP.
 */
#ifndef HMD_CUDA_FF_CLASSICAL_H
#define HMD_CUDA_FF_CLASSICAL_H

#ifdef __cplusplus
extern "C" {
#endif
#include "core/error.h"
#include "ff/ff_model.h"
#include "ff/provider.h"
#include "io/topology.h"
#ifdef __cplusplus
}
#endif

#if HMD_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif

/* Makes *p the device provider of topology `top` (borrowed during the call) with settings `s`
 * (an nnp-group too: its pairs, self terms and inner interactions left out, as on the CPU);
 * its pair lists cover rlist (Å, >= the cut-off: the neighbour-list cut-off of the run, the
 * cut-off plus the Verlet buffer), and stay valid while no atom moves more than half of
 * rlist - cut-off. `atom_energies`: computes may ask for per-atom energies (io->atom_energy;
 * list steps then also resolve each home atom's energy shares, which a resident step, that
 * never asks, does without). Uploads the model to the current device. Returns HMD_OK, HMD_ECONFIG
 * (settings, rlist), HMD_ENOMEM, HMD_ESOFTWARE (a CUDA error, the call named); *p is zeroed on
 * failure. Free with hmd_force_provider_destroy. */
int hmd_ff_classical_create_cuda(struct hmd_force_provider *p, const struct hmd_topology *top,
                                 const struct hmd_ff_settings *s, double rlist, bool atom_energies);

#ifdef __cplusplus
}
#endif
#else
static inline int hmd_ff_classical_create_cuda(struct hmd_force_provider *p,
                                               const struct hmd_topology *top,
                                               const struct hmd_ff_settings *s, double rlist,
                                               bool atom_energies)
{
    (void)top, (void)s, (void)rlist, (void)atom_energies;
    p->ops = NULL;
    p->self = NULL;
    return hmd_error_set(HMD_ENOTSUP, "the classical force field on the GPU needs a build with "
                                      "CUDA (this one has HALOMD_CUDA off or no nvcc)");
}
#endif

#endif /* HMD_CUDA_FF_CLASSICAL_H */
