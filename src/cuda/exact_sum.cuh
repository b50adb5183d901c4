/* Exact sums of doubles on the GPU, the same whatever order the threads add in: a value v is
 * held as two 64-bit integers, hi = floor(v 2^20) and lo = (v 2^20 - hi) 2^44 (in [0, 2^44],
 * rounded: the bits of v below 2^-64 are dropped), each added with an integer atomic, which
 * is associative. The sum of up to 2^19 values is exact (lo cannot overflow) and is rounded
 * once when read (hmd_exact_value), so it is as close to the exact sum of the contributions as
 * a double can be; sums of doubles with floating-point atomics are not reproducible in their
 * last bits, which is enough for two runs of the same input to part. Values beyond +-2^30
 * (and non-finite ones) are clamped: no physical force or virial term comes near (a system
 * that blew up shows it in its energy, which is summed apart). Used for forces and the virial,
 * so that GPU trajectories are bitwise reproducible. */
#ifndef HMD_CUDA_EXACT_SUM_CUH
#define HMD_CUDA_EXACT_SUM_CUH

#include <cuda_runtime.h>
#include <math.h>

/* An exact accumulator: hi 2^-20 + lo 2^-64, hi a two's complement integer. Zero bits are
 * zero. */
struct hmd_exact {
    unsigned long long hi, lo;
};

#define HMD_EXACT_LIMIT 0x1p30

/* Adds v to *a (global or shared memory), atomically. */
__device__ inline void hmd_exact_add(hmd_exact *a, double v)
{
    v = fabs(v) < HMD_EXACT_LIMIT ? v : copysign(HMD_EXACT_LIMIT, v);
    const double s = v * 0x1p20; /* exact: a power of 2 */
    const double h = floor(s);
    const unsigned long long lo = __double2ull_rn((s - h) * 0x1p44); /* s - h is exact */
    atomicAdd(&a->hi, (unsigned long long)(long long)h);
    atomicAdd(&a->lo, lo);
}

/* Adds accumulator b to *a, atomically. */
__device__ inline void hmd_exact_add_exact(hmd_exact *a, const hmd_exact &b)
{
    atomicAdd(&a->hi, b.hi);
    atomicAdd(&a->lo, b.lo);
}

/* The value of a, rounded once to the nearest double. */
__host__ __device__ inline double hmd_exact_value(const hmd_exact &a)
{
    const unsigned long long carry = a.lo >> 44, lo = a.lo & ((1ull << 44) - 1);
    const long long hi = (long long)(a.hi + carry);
    return (double)hi * 0x1p-20 + (double)lo * 0x1p-64;
}

#endif /* HMD_CUDA_EXACT_SUM_CUH */
