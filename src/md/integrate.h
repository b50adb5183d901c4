/* Velocity Verlet halves, kinetic energy, centre-of-mass motion and initial velocities, CPU
 * reference. Units: x Å, v Å/ps, f eV/Å, m g/mol, dt ps. The half steps act on this rank's
 * home atoms; the functions marked Collective reduce over ranks. */
#ifndef HMD_MD_INTEGRATE_H
#define HMD_MD_INTEGRATE_H

#include <stdint.h>

#include "core/atoms.h"

/* First half step of velocity Verlet: v += f/m dt/2, then x += v dt (home atoms). */
void hmd_integrate_first_half_cpu(struct hmd_atoms *atoms, double dt);

/* Second half step: v += f/m dt/2 (home atoms). */
void hmd_integrate_second_half_cpu(struct hmd_atoms *atoms, double dt);

/* Kinetic energy tensor sum_i m v_a v_b (eV, 3x3 row-major, not halved) of the whole system and
 * returns its kinetic energy 0.5 sum m v^2 (eV). Collective (sums over ranks). */
double hmd_integrate_kinetic_energy(const struct hmd_atoms *atoms, double ke_tensor[9]);

/* Removes the centre-of-mass velocity of the whole system. Collective. */
void hmd_integrate_remove_com(struct hmd_atoms *atoms);

/* Draws Maxwell-Boltzmann velocities at `temp` (K) from the counter-based generator keyed by
 * `seed` and each atom's global id (so the same velocities whatever rank owns the atom),
 * removes the centre-of-mass motion when `remove_com`, and scales to exactly `temp` for `ndof`
 * degrees of freedom. Collective. */
void hmd_integrate_generate_velocities(struct hmd_atoms *atoms, double temp, uint64_t seed,
                                       int remove_com, double ndof);

#endif /* HMD_MD_INTEGRATE_H */
