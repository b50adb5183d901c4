#include "nnp/vmath.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 2^n for an integer-valued n in [-1022, 1023], by building the exponent bits. */
static inline __attribute__((always_inline)) double pow2i(double n)
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
static inline __attribute__((always_inline)) double exp_small_range(double x)
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

/* One 4 x HMD_GEMM_BLOCK tile of out = in[4 rows][k] wp[k][j0 ..] (+ bias), accumulated in
 * registers over k. Rows beyond `nr` repeat the last valid row and are not stored. */
static inline __attribute__((always_inline)) void gemm_tile(int nr, int k, int ncols, int ld_in,
                                                            int ld_w, int ld_out, const double *in,
                                                            const double *wp, const double *bias,
                                                            double *out)
{
    double acc[4][HMD_GEMM_BLOCK];
    const double *row[4];
    for (int q = 0; q < 4; q++) {
        row[q] = in + (size_t)(q < nr ? q : nr - 1) * ld_in;
        for (int jj = 0; jj < HMD_GEMM_BLOCK; jj++) {
            acc[q][jj] = bias ? bias[jj] : 0.0;
        }
    }
    for (int i = 0; i < k; i++) {
        const double *wi = wp + (size_t)i * ld_w;
        const double a0 = row[0][i], a1 = row[1][i], a2 = row[2][i], a3 = row[3][i];
        for (int jj = 0; jj < HMD_GEMM_BLOCK; jj++) {
            acc[0][jj] += a0 * wi[jj];
            acc[1][jj] += a1 * wi[jj];
            acc[2][jj] += a2 * wi[jj];
            acc[3][jj] += a3 * wi[jj];
        }
    }
    /* full tiles are stored with fixed trip counts so acc can live in registers; partial
     * tiles go through a buffer */
    if (nr == 4 && ncols == HMD_GEMM_BLOCK) {
        for (int q = 0; q < 4; q++) {
            for (int jj = 0; jj < HMD_GEMM_BLOCK; jj++) {
                out[(size_t)q * ld_out + jj] = acc[q][jj];
            }
        }
        return;
    }
    double buf[4][HMD_GEMM_BLOCK];
    for (int q = 0; q < 4; q++) {
        for (int jj = 0; jj < HMD_GEMM_BLOCK; jj++) {
            buf[q][jj] = acc[q][jj];
        }
    }
    for (int q = 0; q < nr; q++) {
        for (int jj = 0; jj < ncols; jj++) {
            out[(size_t)q * ld_out + jj] = buf[q][jj];
        }
    }
}

HMD_CPU_CLONES
void hmd_gemm_bias(int rows, int k, int n, const double *x, const double *dx, const double *wp,
                   const double *bp, double *z, double *dz)
{
    /* the tangent is a second pass over the same tile: both accumulators at once would not
     * fit in the registers */
    const int n_pad = hmd_gemm_padded(n);
    for (int r = 0; r < rows; r += 4) {
        const int nr = rows - r < 4 ? rows - r : 4;
        for (int j0 = 0; j0 < n_pad; j0 += HMD_GEMM_BLOCK) {
            const int ncols = n - j0 < HMD_GEMM_BLOCK ? n - j0 : HMD_GEMM_BLOCK;
            const size_t o = (size_t)r * n + j0;
            gemm_tile(nr, k, ncols, k, n_pad, n, x + (size_t)r * k, wp + j0, bp + j0, z + o);
            if (dx) {
                gemm_tile(nr, k, ncols, k, n_pad, n, dx + (size_t)r * k, wp + j0, NULL, dz + o);
            }
        }
    }
}

HMD_CPU_CLONES
void hmd_gemm_transposed(int rows, int k, int n, const double *dz, const double *wtp, double *dx)
{
    const int k_pad = hmd_gemm_padded(k);
    for (int r = 0; r < rows; r += 4) {
        const int nr = rows - r < 4 ? rows - r : 4;
        for (int i0 = 0; i0 < k_pad; i0 += HMD_GEMM_BLOCK) {
            const int ncols = k - i0 < HMD_GEMM_BLOCK ? k - i0 : HMD_GEMM_BLOCK;
            gemm_tile(nr, n, ncols, n, k_pad, k, dz + (size_t)r * n, wtp + i0, NULL,
                      dx + (size_t)r * k + i0);
        }
    }
}

HMD_CPU_CLONES
void hmd_gemm_strided(int rows, int k, int n, const double *a, size_t lda, const double *bp,
                      double *c, size_t ldc)
{
    const int n_pad = hmd_gemm_padded(n);
    for (int r = 0; r < rows; r += 4) {
        const int nr = rows - r < 4 ? rows - r : 4;
        for (int j0 = 0; j0 < n_pad; j0 += HMD_GEMM_BLOCK) {
            const int ncols = n - j0 < HMD_GEMM_BLOCK ? n - j0 : HMD_GEMM_BLOCK;
            gemm_tile(nr, k, ncols, lda, n_pad, ldc, a + (size_t)r * lda, bp + j0, NULL,
                      c + (size_t)r * ldc + j0);
        }
    }
}

void hmd_gemm_pack(int k, int n, const double *b, size_t ldb, double *bp)
{
    const int n_pad = hmd_gemm_padded(n);
    for (int i = 0; i < k; i++) {
        double *dst = bp + (size_t)i * n_pad;
        memcpy(dst, b + (size_t)i * ldb, sizeof(double) * n);
        for (int j = n; j < n_pad; j++) {
            dst[j] = 0.0;
        }
    }
}

void hmd_gemm_pack_transposed(int n, int k, const double *b, size_t ldb, double *bp)
{
    const int n_pad = hmd_gemm_padded(n);
    for (int i = 0; i < k; i++) {
        double *dst = bp + (size_t)i * n_pad;
        for (int j = 0; j < n; j++) {
            dst[j] = b[(size_t)j * ldb + i];
        }
        for (int j = n; j < n_pad; j++) {
            dst[j] = 0.0;
        }
    }
}
