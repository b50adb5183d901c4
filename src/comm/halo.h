/* Halo verbs (named after LAMMPS' communication patterns):
 *   migrate  - at neighbour-list steps: home atoms that left this rank's subdomain move to the
 *              rank that owns them now;
 *   borders  - at neighbour-list steps: decide which atoms become ghosts where (a new plan) and
 *              create the ghosts (positions, types, ids);
 *   forward  - every step: owners -> ghosts, positions with the periodic shift;
 *   reverse  - every step: ghosts -> owners, per-atom values (forces, atomic virials) summed.
 * Peers are the neighbouring subdomains of dd/domain.h; with one rank along a periodic vector
 * the peer is this rank and the swap makes periodic images, so a single rank is the special
 * case of the same code. Transport: comm/comm.h (MPI point-to-point, or copies).
 *
 * Collective: every function here is called by every rank in the same order.
 */
#ifndef HMD_COMM_HALO_H
#define HMD_COMM_HALO_H

#include "core/atoms.h"
#include "core/box.h"
#include "dd/halo_plan.h"

struct hmd_domain;

/* Largest number of pulses per direction: a subdomain thinner than cutoff/8 is refused. */
#define HMD_HALO_MAX_PULSES 8

/* Moves home atoms whose fractional position (atoms wrapped into the cell along periodic
 * vectors) lies outside this rank's subdomain to their owner, along a, then b, then c.
 * Positions, velocities, masses, types and ids travel; ghosts must be absent (nghost 0).
 * HMD_ENOMEM on failure. */
int hmd_halo_migrate(struct hmd_atoms *atoms, const struct hmd_box *box,
                     const struct hmd_domain *dd);

/* Rebuilds `plan` and the ghosts of `atoms` (nghost is reset): every atom of another
 * subdomain, or periodic image, within `cutoff` (Å) of this subdomain along each vector becomes
 * a ghost. Returns HMD_EDATA when a subdomain is thinner than cutoff / HMD_HALO_MAX_PULSES
 * along a vector with periodic images (the message says how thin and what is needed),
 * HMD_ENOMEM on allocation failure. */
int hmd_halo_borders(struct hmd_halo_plan *plan, struct hmd_atoms *atoms, const struct hmd_box *box,
                     const struct hmd_domain *dd, double cutoff);

/* Forward: x[ghost] = x[owner] + shift for every swap in order (x [nall][3], Å). */
void hmd_halo_forward_x(struct hmd_halo_plan *plan, double *x);

/* Reverse: v[owner] += v[ghost] for every swap in reverse order (v [nall][ncomp], ncomp <= 9).
 * Ghost entries keep their values. */
void hmd_halo_reverse(struct hmd_halo_plan *plan, double *v, int ncomp);

#endif /* HMD_COMM_HALO_H */
