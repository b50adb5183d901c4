/* The halo test's replay stage (tests/mpi/test_halo_identity.c, device transports): forward and
 * reverse repeated many times with no host in between, values that change with every round, so
 * that a ghost or a returned force from an earlier round (a signal taken for the wrong
 * exchange, a store that lands late) is caught.
 *
 * One round: home positions += 1 Å (all three components), forward, every ghost checked against
 * its value at the start plus the round number, ghost forces set to the round number, home
 * forces to 0, reverse, every home atom checked to have received round * copies[k]. A transport
 * that can be recorded runs the round as one CUDA graph replayed `rounds` times back to back;
 * another (mpi) runs it eagerly. Collective. */
#ifndef HMD_TESTS_GPU_HALO_REPLAY_H
#define HMD_TESTS_GPU_HALO_REPLAY_H

#include "cuda/cuda_api.h"
#include "halo/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `rounds` rounds of t over the arrays of `s` (set up by the caller for `box`, positions
 * and ghosts current on the device), copies[k] the number of ghost copies of home atom k
 * [nlocal] over all ranks. *bad: values found wrong on this rank. Returns HMD_OK or the
 * transport's or CUDA's error. */
int hmd_test_halo_replay(struct hmd_halo_transport *t, struct hmd_cuda_state *s,
                         const struct hmd_box *box, const double *copies, int rounds,
                         long long *bad);

#ifdef __cplusplus
}
#endif

#endif /* HMD_TESTS_GPU_HALO_REPLAY_H */
