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
 * 2^-53 r); the quotient from an approximate float reciprocal refined once by Newton's method,
 * and a last correction of the quotient. |z| is capped at 40 (tanh(40) is 1 in double); NaN
 * stays NaN. */
__device__ inline double tanh_branchless(double z)
{
    const double az = fabs(z), a = az > 40.0 ? 40.0 : az;
    const double x = -2.0 * a;
    const double k = rint(x * 1.4426950408889634074);  /* x / ln 2 */
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
    /* 2^k for k in [-115, 0] from its exponent bits */
    const double scale = __longlong_as_double((long long)((int)k + 1023) << 52);
    const double m = fma(scale, em_r, scale - 1.0); /* expm1(x), in (-1, 0] */
    const double y = 2.0 + m, num = -m;             /* y in (1, 2] */
    float rcp_f; /* rcp.approx: no range check (y is far from denormal and infinity) */
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(rcp_f) : "f"((float)y));
    double rcp = rcp_f;
    rcp = fma(rcp, fma(-y, rcp, 1.0), rcp); /* to about 2^-44; the correction below squares it */
    double t = num * rcp;
    t = fma(fma(-t, y, num), rcp, t);
    return copysign(t, z);
}

#endif
