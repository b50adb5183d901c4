/* Physical constants in halomd's units (LAMMPS metal: Å, eV, ps, g/mol, K, bar), from the
 * CODATA 2018 exact values. */
#ifndef HMD_CORE_UNITS_H
#define HMD_CORE_UNITS_H

#include <math.h>

#define HMD_BOLTZMANN 8.617333262e-5 /* k_B (eV/K) */

/* (g/mol) (Å/ps)^2 in eV: 1e-3 kg / N_A * 1e4 m^2/s^2 / e. Kinetic energy = 0.5 m v^2 * this. */
#define HMD_MVV2E (1e-3 / 6.02214076e23 * 1e4 / 1.602176634e-19)

/* eV/Å^3 in bar: e * 1e30 / 1e5. */
#define HMD_EV_PER_A3_TO_BAR (1.602176634e-19 * 1e30 / 1e5)

/* Å^3 g/mol to g/cm^3 density: g/mol / N_A / (1e-24 cm^3). */
#define HMD_AMU_PER_A3_TO_G_PER_CM3 (1.0 / 6.02214076e23 / 1e-24)

/* ASE's unit of time, 1e-10 s * sqrt(amu / e) (CODATA 2018), in ps: ASE's momenta are in
 * amu Å per this unit (extended XYZ `momenta`). */
static inline double hmd_ase_time_unit_ps(void)
{
    return 1e2 * sqrt(1.66053906660e-27 / 1.602176634e-19);
}
/* GROMACS's units, converted where topologies are read (io/topology): kJ/mol and nm. */
#define HMD_KJ_PER_MOL_TO_EV (1e3 / (6.02214076e23 * 1.602176634e-19)) /* 1 kJ/mol in eV */
#define HMD_NM_TO_A 10.0                                               /* 1 nm in Å */

/* Coulomb's constant 1/(4 pi eps0) in kJ mol^-1 nm e^-2, as GROMACS 2022 defines it
 * (ONE_4PI_EPS0 in units.h: eps0 = 8.8541878128e-12 F/m, CODATA 2018), and in eV Å e^-2. */
#define HMD_COULOMB_KJ_MOL_NM                                                                      \
    (1.0 /                                                                                         \
     (4.0 * 3.14159265358979323846 *                                                               \
      (8.8541878128e-12 * 1e-9 * 1e3 / (1.602176634e-19 * 1.602176634e-19 * 6.02214076e23))))
#define HMD_COULOMB_EV_A (HMD_COULOMB_KJ_MOL_NM * HMD_KJ_PER_MOL_TO_EV * HMD_NM_TO_A)

#endif /* HMD_CORE_UNITS_H */
