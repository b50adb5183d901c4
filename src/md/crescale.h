/* The C-rescale barostat (Bernetti and Bussi, J. Chem. Phys. 153, 114107 (2020)) as GROMACS
 * discretises it (pcoupl = c-rescale; pcoupltype isotropic, semiisotropic, anisotropic; tau-p,
 * ref-p, compressibility): a stochastic cell rescaling that samples the isothermal-isobaric
 * ensemble with first-order relaxation of the pressure and the right volume fluctuations.
 *
 * Every nstpcouple steps, with the pressure tensor P (bar, kinetic part included), the volume V
 * and kT of the reference temperature, a scaling matrix mu is drawn (f = compressibility x
 * nstpcouple dt / tau-p, xi standard normal, c = bar per eV/Å^3):
 *   isotropic      mu_dd = exp(-f (P0 - tr P / 3) / 3 + sqrt(2 kT f c / V) xi / 3), one xi
 *   semiisotropic  x, y: exp(-f (P0_xx - (P_xx + P_yy) / 2) / 3 + sqrt(4 kT f c / (3 V)) xi / 2)
 *                  z:    exp(-f (P0_zz - P_zz) / 3 + sqrt(2 kT f c / (3 V)) xi_z)
 *   anisotropic    mu = exp of the lower triangle of -f_ab (P0_ab - P_ab) / 3
 *                  + sqrt(2 kT f_ab c / (3 V)) xi_ab (each element its own xi; the upper
 *                  triangle is folded onto the lower one, so the cell keeps a along x and b in
 *                  the xy plane and nothing rotates)
 * and applied to the cell and positions as row vectors (h' = h mu, x' = x mu) and to the
 * velocities inversely (v' = v mu^-1). The draws are Philox numbers keyed by (seed, step), so a
 * run continued from a checkpoint repeats them. The energy the rescaling gives the kinetic
 * energy is returned, for the conserved quantity K + U + P0 V - thermostat work - barostat
 * work (P0 = tr ref-p / 3).
 */
#ifndef HMD_MD_CRESCALE_H
#define HMD_MD_CRESCALE_H

#include <stdint.h>

#include "core/box.h"

enum hmd_pcoupl_type {
    HMD_PCOUPL_ISOTROPIC,
    HMD_PCOUPL_SEMIISOTROPIC, /* x and y together (a membrane's area), z apart */
    HMD_PCOUPL_ANISOTROPIC,   /* every element of the lower triangle */
};

struct hmd_crescale {
    enum hmd_pcoupl_type type;
    double tau_p;                 /* coupling time (ps), > 0 */
    double ref_p[3][3];           /* reference pressure (bar): isotropic reads [0][0];
                                   * semiisotropic [0][0] (xy) and [2][2]; anisotropic all */
    double compressibility[3][3]; /* 1/bar, same layout; 0 leaves that element alone */
    double ref_t;  /* temperature of the noise (K), >= 0 (0: no noise, Berendsen-like) */
    uint64_t seed; /* the noise's seed (the run's, drawn when -1 was asked) */
};

/* Checks the parameters. Returns HMD_OK or HMD_ECONFIG naming the bad one. */
int hmd_crescale_check(const struct hmd_crescale *c);

/* The scaling matrix mu (lower triangular) for a coupling step: pressure tensor `pres` (bar),
 * volume (Å^3, > 0), dt = nstpcouple x the time step (ps), `step` keys the draws. Returns
 * HMD_OK, or HMD_EDATA when the pressure or volume is not finite or mu would be (a blown-up
 * system), or the cell would shrink or grow by more than 10% in one step (tau-p too short). */
int hmd_crescale_mu(const struct hmd_crescale *c, const double pres[3][3], double volume, double dt,
                    int64_t step, double mu[3][3]);

/* Applies mu: the cell h' = h mu (periodic flags kept; HMD_EDATA if the new cell is degenerate),
 * positions x' = x mu and velocities v' = v mu^-1 of n atoms ([n][3], Å and Å/ps; v may be
 * NULL). With masses (g/mol, may be NULL) *dkin receives the kinetic energy change (eV). */
int hmd_crescale_apply(const double mu[3][3], struct hmd_box *box, int n, double *x, double *v,
                       const double *mass, double *dkin);

#endif /* HMD_MD_CRESCALE_H */
