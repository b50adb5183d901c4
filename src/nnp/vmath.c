#include "nnp/vmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HMD_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HMD_CPU_CLONES
#endif

/* 2^n for an integer-valued n in [-1022, 1023], by building the exponent bits. */
static inline double pow2i(double n)
{
    double t = n + 6755399441055744.0; /* 1.5 * 2^52: the low bits of t now hold n */
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits + 1023u) << 52;
    double r;
    memcpy(&r, &bits, sizeof r);
    return r;
}

/* exp(x) for x in [0, 40] (Cephes exp: Pade form on the reduced argument). */
static inline double exp_small_range(double x)
{
    const double log2e = 1.4426950408889634073599, c1 = 6.93145751953125e-1,
                 c2 = 1.42860682030941723212e-6;
    double n = floor(log2e * x + 0.5);
    double r = x - n * c1 - n * c2;
    double rr = r * r;
    double p = r * ((1.26177193074810590878e-4 * rr + 3.02994407707441961300e-2) * rr +
                    9.99999999999999999910e-1);
    double q = ((3.00198505138664455042e-6 * rr + 2.52448340349684104192e-3) * rr +
                2.27265548208155028766e-1) *
                   rr +
               2.00000000000000000009e0;
    return (1.0 + 2.0 * p / (q - p)) * pow2i(n);
}

HMD_CPU_CLONES
void hmd_vtanh(int n, const double *x, double *y)
{
    for (int i = 0; i < n; i++) {
        const double v = x[i], a = fabs(v);
        /* |x| >= 0.625: 1 - 2/(e^{2|x|} + 1); tanh(20) is 1 to double precision */
        const double e = exp_small_range(2.0 * (a < 20.0 ? a : 20.0));
        const double big = copysign(1.0 - 2.0 / (e + 1.0), v);
        /* |x| < 0.625: x + x^3 P(x^2)/Q(x^2) (Cephes tanh) */
        const double s = v * v;
        const double p = (-9.64399179425052238628e-1 * s - 9.92877231001918586564e1) * s -
                         1.61468768441708447952e3;
        const double q = ((s + 1.12811678491632931402e2) * s + 2.23548839060100448583e3) * s +
                         4.84406305325125486048e3;
        const double small = copysign(v + v * s * (p / q), v); /* keeps tanh(-0) = -0 */
        y[i] = a >= 0.625 ? big : small;
    }
}

HMD_CPU_CLONES
void hmd_gemm_bias(int rows, int k, int n, const double *x, const double *dx, const double *w,
                   const double *b, double *z, double *dz)
{
    int r = 0;
    /* four rows at a time: each row of w is loaded once per four rows */
    for (; r + 4 <= rows; r += 4) {
        double *z0 = z + (size_t)r * n, *z1 = z0 + n, *z2 = z1 + n, *z3 = z2 + n;
        const double *x0 = x + (size_t)r * k, *x1 = x0 + k, *x2 = x1 + k, *x3 = x2 + k;
        for (int j = 0; j < n; j++) {
            double bj = b ? b[j] : 0.0;
            z0[j] = z1[j] = z2[j] = z3[j] = bj;
        }
        if (dx) {
            double *t0 = dz + (size_t)r * n, *t1 = t0 + n, *t2 = t1 + n, *t3 = t2 + n;
            const double *d0 = dx + (size_t)r * k, *d1 = d0 + k, *d2 = d1 + k, *d3 = d2 + k;
            memset(t0, 0, sizeof(double) * 4 * (size_t)n);
            for (int i = 0; i < k; i++) {
                const double *wi = w + (size_t)i * n;
                const double a0 = x0[i], a1 = x1[i], a2 = x2[i], a3 = x3[i];
                const double e0 = d0[i], e1 = d1[i], e2 = d2[i], e3 = d3[i];
                for (int j = 0; j < n; j++) {
                    const double wj = wi[j];
                    z0[j] += a0 * wj;
                    z1[j] += a1 * wj;
                    z2[j] += a2 * wj;
                    z3[j] += a3 * wj;
                    t0[j] += e0 * wj;
                    t1[j] += e1 * wj;
                    t2[j] += e2 * wj;
                    t3[j] += e3 * wj;
                }
            }
        } else {
            for (int i = 0; i < k; i++) {
                const double *wi = w + (size_t)i * n;
                const double a0 = x0[i], a1 = x1[i], a2 = x2[i], a3 = x3[i];
                for (int j = 0; j < n; j++) {
                    const double wj = wi[j];
                    z0[j] += a0 * wj;
                    z1[j] += a1 * wj;
                    z2[j] += a2 * wj;
                    z3[j] += a3 * wj;
                }
            }
        }
    }
    for (; r < rows; r++) {
        double *zr = z + (size_t)r * n;
        const double *xr = x + (size_t)r * k;
        for (int j = 0; j < n; j++) {
            zr[j] = b ? b[j] : 0.0;
        }
        for (int i = 0; i < k; i++) {
            const double *wi = w + (size_t)i * n;
            for (int j = 0; j < n; j++) {
                zr[j] += xr[i] * wi[j];
            }
        }
        if (dx) {
            double *tr = dz + (size_t)r * n;
            const double *dr = dx + (size_t)r * k;
            memset(tr, 0, sizeof(double) * (size_t)n);
            for (int i = 0; i < k; i++) {
                const double *wi = w + (size_t)i * n;
                for (int j = 0; j < n; j++) {
                    tr[j] += dr[i] * wi[j];
                }
            }
        }
    }
}

HMD_CPU_CLONES
void hmd_gemm_transposed(int rows, int k, int n, const double *dz, const double *wt, double *dx)
{
    int r = 0;
    for (; r + 4 <= rows; r += 4) {
        double *o0 = dx + (size_t)r * k, *o1 = o0 + k, *o2 = o1 + k, *o3 = o2 + k;
        const double *g0 = dz + (size_t)r * n, *g1 = g0 + n, *g2 = g1 + n, *g3 = g2 + n;
        memset(o0, 0, sizeof(double) * 4 * (size_t)k);
        for (int j = 0; j < n; j++) {
            const double *wj = wt + (size_t)j * k;
            const double a0 = g0[j], a1 = g1[j], a2 = g2[j], a3 = g3[j];
            for (int i = 0; i < k; i++) {
                const double wv = wj[i];
                o0[i] += a0 * wv;
                o1[i] += a1 * wv;
                o2[i] += a2 * wv;
                o3[i] += a3 * wv;
            }
        }
    }
    for (; r < rows; r++) {
        double *o = dx + (size_t)r * k;
        const double *g = dz + (size_t)r * n;
        memset(o, 0, sizeof(double) * (size_t)k);
        for (int j = 0; j < n; j++) {
            const double *wj = wt + (size_t)j * k;
            for (int i = 0; i < k; i++) {
                o[i] += g[j] * wj[i];
            }
        }
    }
}
