#include "md/thermostat.h"

#include <math.h>

#include "core/rng.h"
#include "core/units.h"
#include "md/integrate.h"

/* Gamma(shape, 1) by Marsaglia and Tsang (2000), shape >= 1, on the global stream: attempt k
 * uses the numbers of sub-step k so the draw is a pure function of (seed, step). */
static double gamma_draw(double shape, uint64_t seed, int64_t step)
{
    const double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (uint64_t attempt = 0;; attempt++) {
        double x, u, v;
        /* the stream id carries the attempt so every attempt has fresh numbers */
        uint64_t stream = HMD_RNG_GLOBAL_STREAM - 1 - attempt;
        hmd_rng_normals(seed, stream, (uint64_t)step, HMD_RNG_VRESCALE, 1, &x);
        hmd_rng_uniforms(seed, stream, (uint64_t)step, HMD_RNG_VRESCALE, 1, &u);
        v = 1.0 + c * x;
        if (v <= 0.0) {
            continue;
        }
        v = v * v * v;
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v)) {
            return d * v;
        }
    }
}

/* Sum of n squared standard normals (chi-square with n degrees of freedom). */
static double chi2_draw(double n, uint64_t seed, int64_t step)
{
    if (n < 1.0) {
        return 0.0;
    }
    if (n < 2.0) { /* shape 1/2: a single squared normal */
        double g;
        hmd_rng_normals(seed, HMD_RNG_GLOBAL_STREAM - 1000000, (uint64_t)step, HMD_RNG_VRESCALE, 1,
                        &g);
        return g * g;
    }
    return 2.0 * gamma_draw(0.5 * n, seed, step);
}

double hmd_vrescale_kinetic(double kin, double kin_ref, double ndof, double c, uint64_t seed,
                            int64_t step)
{
    double r1;
    hmd_rng_normals(seed, HMD_RNG_GLOBAL_STREAM, (uint64_t)step, HMD_RNG_VRESCALE, 1, &r1);
    double s = chi2_draw(ndof - 1.0, seed, step);
    return kin * c + kin_ref / ndof * (1.0 - c) * (r1 * r1 + s) +
           2.0 * r1 * sqrt(c * (1.0 - c) * kin * kin_ref / ndof);
}

double hmd_thermostat_vrescale_cpu(const struct hmd_thermostat *th, struct hmd_atoms *atoms,
                                   int64_t step)
{
    double ke[9];
    const double kin = hmd_kinetic_energy(atoms, ke);
    if (kin <= 0.0 || th->ndof <= 0.0) {
        return 0.0;
    }
    const double kin_ref = 0.5 * th->ndof * HMD_BOLTZMANN * th->ref_t;
    const double c = exp(-th->dt / th->tau_t);
    double kin_new = hmd_vrescale_kinetic(kin, kin_ref, th->ndof, c, th->seed, step);
    if (kin_new < 0.0) {
        kin_new = 0.0;
    }
    const double alpha = sqrt(kin_new / kin);
    for (int i = 0; i < 3 * atoms->nlocal; i++) {
        atoms->v[i] *= alpha;
    }
    return kin_new - kin;
}

double hmd_thermostat_langevin_cpu(const struct hmd_thermostat *th, struct hmd_atoms *atoms,
                                   int64_t step)
{
    double ke[9];
    const double before = hmd_kinetic_energy(atoms, ke);
    const double c1 = exp(-th->dt / th->tau_t), c2 = sqrt(1.0 - c1 * c1);
    for (int i = 0; i < atoms->nlocal; i++) {
        double xi[3];
        hmd_rng_normals(th->seed, (uint64_t)atoms->id[i], (uint64_t)step, HMD_RNG_LANGEVIN, 3, xi);
        const double sigma = sqrt(HMD_BOLTZMANN * th->ref_t / (atoms->mass[i] * HMD_MVV2E));
        for (int d = 0; d < 3; d++) {
            atoms->v[3 * i + d] = c1 * atoms->v[3 * i + d] + c2 * sigma * xi[d];
        }
    }
    return hmd_kinetic_energy(atoms, ke) - before;
}
