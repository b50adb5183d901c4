/* Energy minimisation against a force callback: steepest descent as GROMACS's integrator =
 * steep does it, and FIRE (Bitzek et al., Phys. Rev. Lett. 97, 170201 (2006), the parameters
 * of that paper, as LAMMPS's min_style fire). Parameters as GROMACS names them: emtol (here in
 * eV/Å; GROMACS's default 10 kJ/mol/nm is 0.0104 eV/Å), emstep and nsteps.
 *
 * steep: from the current positions, a trial x' = x + h F / max|F| (h, the largest atom move,
 *   starts at emstep, Å); a trial of lower energy is taken and h grows by 1.2, otherwise it is
 *   dropped and h shrinks by 0.2. Stops when max|F| < emtol, after nsteps trials, or when h
 *   falls below 1e-12 Å (machine precision reached: converged as far as it can be).
 * fire:  damped MD with velocity Verlet at time step dt (starting at emstep, ps; at most 10
 *   emstep), velocities mixed toward the force direction (alpha from 0.1), dt grown by 1.1 after
 *   5 steps going downhill (power F.v > 0) and halved, with the velocities zeroed, when the
 *   power turns negative. Masses in g/mol. Stops on max|F| < emtol or after nsteps steps.
 * Positions are not wrapped (the callback applies its own periodicity).
 */
#ifndef HMD_MD_MINIMIZE_H
#define HMD_MD_MINIMIZE_H

#include <stdbool.h>
#include <stdint.h>

/* Forces f ([n][3], eV/Å, overwritten) and energy (eV) at positions x ([n][3], Å) of n atoms;
 * returns HMD_OK or a status that ends the minimisation (passed on). */
typedef int (*hmd_em_force_fn)(void *ctx, int n, const double *x, double *f, double *energy);

struct hmd_em_opts {
    double emtol;   /* eV/Å: converged when the largest force is below it */
    double emstep;  /* steep: first largest move (Å); fire: first time step (ps) */
    int64_t nsteps; /* most steps; -1: no limit */
};

struct hmd_em_result {
    int64_t steps;       /* steps taken (steep: trials) */
    int64_t evaluations; /* force calls */
    double energy;       /* eV at the returned positions */
    double fmax;         /* eV/Å, the largest force there */
    int fmax_atom;       /* its atom (from 0) */
    bool converged;      /* fmax < emtol */
};

/* Minimises in place: x ([n][3], Å) ends at the lowest-energy positions found. Returns HMD_OK
 * (converged or not: see result->converged), HMD_ECONFIG for bad options, HMD_ENOMEM, HMD_EDATA
 * when a force or the energy is not finite, or the callback's status. */
int hmd_em_steep(int n, double *x, hmd_em_force_fn force, void *ctx, const struct hmd_em_opts *opts,
                 struct hmd_em_result *result);

/* FIRE in place; mass[n] in g/mol (NULL: all 1). Returns as hmd_em_steep. */
int hmd_em_fire(int n, double *x, const double *mass, hmd_em_force_fn force, void *ctx,
                const struct hmd_em_opts *opts, struct hmd_em_result *result);

#endif /* HMD_MD_MINIMIZE_H */
