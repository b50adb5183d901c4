/* The draws behind core/rng.h, inline for the host and the GPU (core/hd.h): Philox4x32-10 with
 * counter (step, stream, purpose, block) and key seed; normals by Box-Muller on 53-bit
 * uniforms. Both sides compute the same numbers from the same key (up to the last bit of the
 * math library's log, cos and sin). */
#ifndef HMD_CORE_RNG_DRAW_H
#define HMD_CORE_RNG_DRAW_H

#include <math.h>
#include <stdint.h>

#include <Random123/philox.h>

#include "core/hd.h"

/* One Philox block: 4 x 32 random bits for counter (step, stream, purpose, block). */
static inline HMD_HD philox4x32_ctr_t hmd_rng_block(uint64_t seed, uint64_t stream, uint64_t step,
                                                    int purpose, uint32_t blk)
{
    philox4x32_ctr_t ctr = {{(uint32_t)step, (uint32_t)(step >> 32), (uint32_t)stream,
                             (uint32_t)((stream >> 32) & 0xFFFFu) |
                                 ((uint32_t)purpose & 0xFFu) << 16 | (blk & 0xFFu) << 24}};
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    return philox4x32(ctr, key);
}

/* Uniform in (0, 1) from 64 bits: 53 bits of mantissa, never 0 or 1. */
static inline HMD_HD double hmd_rng_to_unit(uint32_t hi, uint32_t lo)
{
    uint64_t bits = ((uint64_t)hi << 32 | lo) >> 11;
    return ((double)bits + 0.5) * 0x1.0p-53;
}

/* hmd_rng_normals (core/rng.h). */
static inline HMD_HD void hmd_rng_normals_draw(uint64_t seed, uint64_t stream, uint64_t step,
                                               int purpose, int n, double *out)
{
    const double two_pi = 6.283185307179586;
    for (int k = 0; k < n; k += 2) {
        philox4x32_ctr_t r = hmd_rng_block(seed, stream, step, purpose, (uint32_t)(k / 2));
        double u1 = hmd_rng_to_unit(r.v[0], r.v[1]), u2 = hmd_rng_to_unit(r.v[2], r.v[3]);
        double rad = sqrt(-2.0 * log(u1));
        out[k] = rad * cos(two_pi * u2);
        if (k + 1 < n) {
            out[k + 1] = rad * sin(two_pi * u2);
        }
    }
}

/* hmd_rng_uniforms (core/rng.h): blocks from 128 up are reserved for uniforms. */
static inline HMD_HD void hmd_rng_uniforms_draw(uint64_t seed, uint64_t stream, uint64_t step,
                                                int purpose, int n, double *out)
{
    for (int k = 0; k < n; k += 2) {
        philox4x32_ctr_t r = hmd_rng_block(seed, stream, step, purpose, 128u + (uint32_t)(k / 2));
        out[k] = hmd_rng_to_unit(r.v[0], r.v[1]);
        if (k + 1 < n) {
            out[k + 1] = hmd_rng_to_unit(r.v[2], r.v[3]);
        }
    }
}

#endif /* HMD_CORE_RNG_DRAW_H */
