#include "core/rng.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

#include <Random123/philox.h>

/* One Philox block: 4 x 32 random bits for counter (step, stream, purpose, block). */
static philox4x32_ctr_t block(uint64_t seed, uint64_t stream, uint64_t step, int purpose,
                              uint32_t blk)
{
    philox4x32_ctr_t ctr = {{(uint32_t)step, (uint32_t)(step >> 32), (uint32_t)stream,
                             (uint32_t)((stream >> 32) & 0xFFFFu) |
                                 ((uint32_t)purpose & 0xFFu) << 16 | (blk & 0xFFu) << 24}};
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    return philox4x32(ctr, key);
}

/* Uniform in (0, 1) from 64 bits: 53 bits of mantissa, never 0 or 1. */
static double to_unit(uint32_t hi, uint32_t lo)
{
    uint64_t bits = ((uint64_t)hi << 32 | lo) >> 11;
    return ((double)bits + 0.5) * 0x1.0p-53;
}

void hmd_rng_normals(uint64_t seed, uint64_t stream, uint64_t step, int purpose, int n, double *out)
{
    const double two_pi = 6.283185307179586;
    for (int k = 0; k < n; k += 2) {
        philox4x32_ctr_t r = block(seed, stream, step, purpose, (uint32_t)(k / 2));
        double u1 = to_unit(r.v[0], r.v[1]), u2 = to_unit(r.v[2], r.v[3]);
        double rad = sqrt(-2.0 * log(u1));
        out[k] = rad * cos(two_pi * u2);
        if (k + 1 < n) {
            out[k + 1] = rad * sin(two_pi * u2);
        }
    }
}

void hmd_rng_uniforms(uint64_t seed, uint64_t stream, uint64_t step, int purpose, int n,
                      double *out)
{
    for (int k = 0; k < n; k += 2) {
        /* blocks from 128 up are reserved for uniforms */
        philox4x32_ctr_t r = block(seed, stream, step, purpose, 128u + (uint32_t)(k / 2));
        out[k] = to_unit(r.v[0], r.v[1]);
        if (k + 1 < n) {
            out[k + 1] = to_unit(r.v[2], r.v[3]);
        }
    }
}

uint64_t hmd_rng_seed_from_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 20;
    return s & 0x7FFFFFFFFFFFFFFFull; /* positive, so it reads back as a valid seed */
}
