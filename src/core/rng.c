#include "core/rng.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

#include "core/rng_draw.h"

void hmd_rng_normals(uint64_t seed, uint64_t stream, uint64_t step, int purpose, int n, double *out)
{
    hmd_rng_normals_draw(seed, stream, step, purpose, n, out);
}

void hmd_rng_uniforms(uint64_t seed, uint64_t stream, uint64_t step, int purpose, int n,
                      double *out)
{
    hmd_rng_uniforms_draw(seed, stream, step, purpose, n, out);
}

uint64_t hmd_rng_seed_from_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^ (uint64_t)getpid() << 20;
    return s & 0x7FFFFFFFFFFFFFFFull; /* positive, so it reads back as a valid seed */
}
