/* tanh in double without branches, for kernels that evaluate many independent units at once
 * (slots_embed_dmma): CUDA's tanh takes one of two paths by |z|, so each call is a branch and
 * the calls of a thread run one after another, each waiting out its chain of dependent FP64
 * operations. Written only from arithmetic, the units of a tile interleave. Header-only, so that
 * bench/gpu_single/tanh_ulp.cu measures the same code. */
#ifndef HMD_CUDA_TANH_BRANCHLESS_CUH
#define HMD_CUDA_TANH_BRANCHLESS_CUH

/* tanh(z) = -m / (2 + m) with m = expm1(-2|z|), the sign of z put back. m comes from
 * -2|z| = k ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two parts, Cody and Waite), as
 * 2^k expm1(r) + (2^k - 1), with expm1(r) from its Taylor series to r^13 (the next term is below
 * 2^-53 r); the quotient from an approximate reciprocal refined once by Newton's method, and a
 * last correction of the quotient. No conversion to or from a 64-bit type (a quarter of the FP64
 * rate on compute capability 9.0): k is rounded by adding 1.5 2^52, which leaves it in the low
 * bits, 2^k is made from those bits, and the reciprocal comes from rcp.approx.ftz.f64. |z| is
 * capped at 40 (tanh(40) is 1 in double); NaN stays NaN. */
__device__ inline double tanh_branchless(double z)
{
    const double az = fabs(z), a = az > 40.0 ? 40.0 : az;
    const double x = -2.0 * a;
    const double round_k = 6755399441055744.0;                /* 1.5 2^52 */
    const double kb = fma(x, 1.4426950408889634074, round_k); /* round_k + k, k = rint(x / ln 2) */
    const double k = kb - round_k;
    double r = fma(-k, 6.93147180369123816490e-01, x); /* ln 2, high part: k of it exact */
    r = fma(-k, 1.90821492927058770002e-10, r);        /* and the rest */
    double q = 1.0 / 6227020800.0;                     /* 1/13! */
    q = fma(q, r, 1.0 / 479001600.0);
    q = fma(q, r, 1.0 / 39916800.0);
    q = fma(q, r, 1.0 / 3628800.0);
    q = fma(q, r, 1.0 / 362880.0);
    q = fma(q, r, 1.0 / 40320.0);
    q = fma(q, r, 1.0 / 5040.0);
    q = fma(q, r, 1.0 / 720.0);
    q = fma(q, r, 1.0 / 120.0);
    q = fma(q, r, 1.0 / 24.0);
    q = fma(q, r, 1.0 / 6.0);
    q = fma(q, r, 0.5);
    const double em_r = fma(q, r * r, r); /* expm1(r) */
    /* 2^k, k in [-115, 0], from k's low bits (two's complement; unsigned, as for NaN they are
     * arbitrary) */
    const double scale = __hiloint2double((int)(((unsigned)__double2loint(kb) + 1023u) << 20), 0);
    const double m = fma(scale, em_r, scale - 1.0); /* expm1(x), in (-1, 0] */
    const double y = 2.0 + m, num = -m;             /* y in (1, 2] */
    double rcp; /* rcp.approx: no range check (y is far from denormal and infinity) */
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(rcp) : "d"(y));
    /* rcp.approx.ftz.f64 reads the top 32 bits of y (about 2^-20); one Newton step takes it to
     * about 2^-40, and the correction below rounds the quotient */
    rcp = fma(rcp, fma(-y, rcp, 1.0), rcp);
    double t = num * rcp;
    t = fma(fma(-t, y, num), rcp, t);
    return copysign(t, z);
}

#endif
