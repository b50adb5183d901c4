/* Thermostats applied after the second velocity-Verlet half step, CPU reference:
 *   v-rescale: Bussi, Donadio, Parrinello, J. Chem. Phys. 126, 014101 (2007): the kinetic
 *              energy K is rescaled to a value drawn from the canonical dynamics of K with
 *              relaxation time tau_t (one global random stream, so every rank agrees);
 *   langevin:  v = c1 v + sqrt((1 - c1^2) kT/m) xi with c1 = exp(-dt/tau_t), xi per atom from
 *              the counter-based generator keyed by the global atom id.
 * Both return the kinetic energy they added to the whole system (eV), which the conserved
 * energy subtracts. Collective (the kinetic energy is summed over ranks).
 */
#ifndef HMD_MD_THERMOSTAT_H
#define HMD_MD_THERMOSTAT_H

#include <stdint.h>

#include "core/atoms.h"

struct hmd_thermostat {
    double ref_t;  /* reference temperature (K) */
    double tau_t;  /* coupling time (ps) */
    double dt;     /* time step (ps) */
    double ndof;   /* degrees of freedom of the kinetic energy */
    uint64_t seed; /* noise seed */
};

/* Bussi stochastic velocity rescaling at `step`. Returns K_new - K (eV). */
double hmd_thermostat_vrescale_cpu(const struct hmd_thermostat *th, struct hmd_atoms *atoms,
                                   int64_t step);

/* Langevin friction and noise at `step`. Returns K_new - K (eV). */
double hmd_thermostat_langevin_cpu(const struct hmd_thermostat *th, struct hmd_atoms *atoms,
                                   int64_t step);

/* The new kinetic energy of the Bussi thermostat, for kinetic energy `kin` (eV), target
 * `kin_ref` = ndof kT/2 (eV), c = exp(-dt/tau): draws from the global stream at `step`. */
double hmd_vrescale_kinetic(double kin, double kin_ref, double ndof, double c, uint64_t seed,
                            int64_t step);

#endif /* HMD_MD_THERMOSTAT_H */
