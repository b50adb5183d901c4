/* The Deep Potential (nnp/dp_eval.h, se_e2_a and DPA-1, networks or compressed tables) as a host
 * force provider (ff/provider.h): descriptors for the home atoms with ghosts as neighbours, from
 * the host neighbour list; forces on home atoms and ghosts, energy, virial, per-atom energies and
 * virials added to the caller's arrays. One energy term, "Deep Potential". The CUDA twin is a
 * device provider of src/cuda (cuda/cuda_api.h). */
#ifndef HMD_FF_DP_H
#define HMD_FF_DP_H

#include "ff/provider.h"
#include "nnp/model.h"

/* Makes *p evaluate `model` (borrowed for the provider's life). HMD_ENOMEM. */
int hmd_ff_dp_create(struct hmd_force_provider *p, const struct hmd_dp_model *model);

#endif /* HMD_FF_DP_H */
