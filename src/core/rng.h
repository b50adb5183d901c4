/* Counter-based random numbers (Random123 Philox4x32-10). A draw is a pure function of
 * (seed, stream id, step, purpose, index): per-atom draws use the global atom id as stream, so
 * the numbers an atom gets do not depend on which rank owns it, on the thread count, or on
 * restarts. The same function compiles for CUDA later and gives the same numbers.
 */
#ifndef HMD_CORE_RNG_H
#define HMD_CORE_RNG_H

#include <stdint.h>

enum hmd_rng_purpose {
    HMD_RNG_GEN_VEL = 1,  /* initial Maxwell-Boltzmann velocities */
    HMD_RNG_LANGEVIN = 2, /* Langevin noise */
    HMD_RNG_VRESCALE = 3, /* Bussi thermostat (global stream) */
    HMD_RNG_CRESCALE = 4, /* C-rescale barostat (global stream; couple/crescale.h) */
};

/* Stream id of draws shared by all atoms (thermostat-wide numbers). */
#define HMD_RNG_GLOBAL_STREAM ((uint64_t)0xFFFFFFFFFFFFull)

/* Writes n standard normal numbers (Box-Muller on 53-bit uniforms) for the key (seed, stream,
 * step, purpose); index k of the output is the k-th number of that key. stream < 2^48. */
void hmd_rng_normals(uint64_t seed, uint64_t stream, uint64_t step, int purpose, int n,
                     double *out);

/* Writes n uniform numbers in (0, 1) for the key, independent of hmd_rng_normals' numbers for
 * the same key (a different sub-counter). */
void hmd_rng_uniforms(uint64_t seed, uint64_t stream, uint64_t step, int purpose, int n,
                      double *out);

/* A seed from the clock and the process id, for seed parameters set to -1. */
uint64_t hmd_rng_seed_from_clock(void);

#endif /* HMD_CORE_RNG_H */
