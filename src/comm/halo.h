/* Halo verbs (named after LAMMPS' communication patterns):
 *   borders  - at neighbour-list steps: decide which atoms become ghosts where (a new plan) and
 *              create the ghosts (positions, types, ids);
 *   forward  - every step: owners -> ghosts, positions with the periodic shift;
 *   reverse  - every step: ghosts -> owners, per-atom values (forces, atomic virials) summed.
 * This version has the `self` transport only: ghosts are periodic images of the rank's own
 * atoms, so a swap with yourself is a copy. The plan layout (dd/halo_plan.h) is the one the MPI
 * transport will replay.
 */
#ifndef HMD_COMM_HALO_H
#define HMD_COMM_HALO_H

#include "core/atoms.h"
#include "core/box.h"
#include "dd/halo_plan.h"

/* Largest number of pulses per direction: a cell thinner than cutoff/8 is refused. */
#define HMD_HALO_MAX_PULSES 8

/* Rebuilds `plan` and the ghosts of `atoms` (nghost is reset) so that every periodic image of
 * a home atom within `cutoff` (Å) of the cell along each periodic direction exists as a ghost.
 * Home atoms should be wrapped into the cell. Returns HMD_EDATA when the cell is thinner than
 * cutoff / HMD_HALO_MAX_PULSES along a periodic direction (the message says how thin and what
 * is needed), HMD_ENOMEM on allocation failure. */
int hmd_halo_borders_self(struct hmd_halo_plan *plan, struct hmd_atoms *atoms,
                          const struct hmd_box *box, double cutoff);

/* Forward: x[ghost] = x[owner] + shift for every swap in order (x [nall][3], Å). */
void hmd_halo_forward_x(const struct hmd_halo_plan *plan, double *x);

/* Reverse: v[owner] += v[ghost] for every swap in reverse order (v [nall][ncomp]). Ghost
 * entries keep their values. */
void hmd_halo_reverse(const struct hmd_halo_plan *plan, double *v, int ncomp);

#endif /* HMD_COMM_HALO_H */
