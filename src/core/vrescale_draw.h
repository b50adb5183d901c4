/* The stochastic part of the Bussi thermostat (md/thermostat.h), inline for the host and the
 * GPU (core/hd.h) so both draw the same new kinetic energy for the same (seed, step). */
#ifndef HMD_CORE_VRESCALE_DRAW_H
#define HMD_CORE_VRESCALE_DRAW_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"
#include "core/rng.h"
#include "core/rng_draw.h"

/* Gamma(shape, 1) by Marsaglia and Tsang (2000), shape >= 1, on the global stream: attempt k
 * uses the numbers of sub-step k so the draw is a pure function of (seed, step). */
static inline HMD_HD double hmd_vrescale_gamma(double shape, uint64_t seed, int64_t step)
{
    const double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (uint64_t attempt = 0;; attempt++) {
        double x, u, v;
        /* the stream id carries the attempt so every attempt has fresh numbers */
        uint64_t stream = HMD_RNG_GLOBAL_STREAM - 1 - attempt;
        hmd_rng_normals_draw(seed, stream, (uint64_t)step, HMD_RNG_VRESCALE, 1, &x);
        hmd_rng_uniforms_draw(seed, stream, (uint64_t)step, HMD_RNG_VRESCALE, 1, &u);
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
static inline HMD_HD double hmd_vrescale_chi2(double n, uint64_t seed, int64_t step)
{
    if (n < 1.0) {
        return 0.0;
    }
    if (n < 2.0) { /* shape 1/2: a single squared normal */
        double g;
        hmd_rng_normals_draw(seed, HMD_RNG_GLOBAL_STREAM - 1000000, (uint64_t)step,
                             HMD_RNG_VRESCALE, 1, &g);
        return g * g;
    }
    return 2.0 * hmd_vrescale_gamma(0.5 * n, seed, step);
}

/* hmd_vrescale_kinetic (md/thermostat.h). */
static inline HMD_HD double hmd_vrescale_kinetic_draw(double kin, double kin_ref, double ndof,
                                                      double c, uint64_t seed, int64_t step)
{
    double r1;
    hmd_rng_normals_draw(seed, HMD_RNG_GLOBAL_STREAM, (uint64_t)step, HMD_RNG_VRESCALE, 1, &r1);
    double s = hmd_vrescale_chi2(ndof - 1.0, seed, step);
    return kin * c + kin_ref / ndof * (1.0 - c) * (r1 * r1 + s) +
           2.0 * r1 * sqrt(c * (1.0 - c) * kin * kin_ref / ndof);
}

#endif /* HMD_CORE_VRESCALE_DRAW_H */
