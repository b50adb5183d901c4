/* Array kernels of the CPU networks, written so the compiler vectorises them, and compiled for
 * several x86-64 levels picked at run time (AVX-512, AVX2+FMA, baseline SSE2).
 *
 * hmd_vtanh is accurate to a few ulp (Cephes' rational approximation below 0.625, exp-based
 * above; tested against libm on fresh random inputs in tests/unit/test_vmath.c), and unlike
 * libm's tanh it vectorises, which matters: the embedding nets evaluate tens of thousands of
 * tanh per atom and step.
 */
#ifndef HMD_NNP_VMATH_H
#define HMD_NNP_VMATH_H

#include <stddef.h>

/* Compiles a function for AVX-512, AVX2+FMA and baseline x86-64; the loader picks the best
 * the CPU has. Only for functions whose hot loops are vectorisable. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HMD_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HMD_CPU_CLONES
#endif

/* y[i] = tanh(x[i]) for i < n; y may alias x. */
void hmd_vtanh(int n, const double *x, double *y);

/* Column blocking of the packed weights: a layer's weights are stored with their output width
 * rounded up to a multiple of this (zero columns), so the kernels need no tail code. */
#define HMD_GEMM_BLOCK 16

/* Width rounded up to a multiple of HMD_GEMM_BLOCK. */
static inline int hmd_gemm_padded(int n)
{
    return (n + HMD_GEMM_BLOCK - 1) / HMD_GEMM_BLOCK * HMD_GEMM_BLOCK;
}

/* z[rows][n] = x[rows][k] w[k][n] + b, and when dx is not NULL also the tangent
 * dz[rows][n] = dx[rows][k] w[k][n], sharing each load of w. wp is w packed as [k][n_pad]
 * with n_pad = hmd_gemm_padded(n), bp the bias padded to n_pad (zeros when the layer has
 * none). Register-blocked: 4 rows x HMD_GEMM_BLOCK columns of z stay in registers over k. */
void hmd_gemm_bias(int rows, int k, int n, const double *x, const double *dx, const double *wp,
                   const double *bp, double *z, double *dz);

/* dx[rows][k] = dz[rows][n] w^T, given wtp = w^T packed as [n][k_pad] with
 * k_pad = hmd_gemm_padded(k). */
void hmd_gemm_transposed(int rows, int k, int n, const double *dz, const double *wtp, double *dx);

/* c[rows][n] = a[rows][k] B, rows of a with stride lda and of c with stride ldc, B packed as
 * [k][n_pad] (n_pad = hmd_gemm_padded(n), zero columns beyond n; hmd_gemm_pack_transposed).
 * The kernel of hmd_gemm_bias without the bias. */
void hmd_gemm_strided(int rows, int k, int n, const double *a, size_t lda, const double *bp,
                      double *c, size_t ldc);

/* Packs B = b for hmd_gemm_strided: b holds k rows of length n (stride ldb), bp receives
 * [k][hmd_gemm_padded(n)]. */
void hmd_gemm_pack(int k, int n, const double *b, size_t ldb, double *bp);

/* Packs B = b^T for hmd_gemm_strided: b holds n rows of length k (stride ldb), bp receives
 * [k][hmd_gemm_padded(n)]. So hmd_gemm_strided with it gives c[i][j] = a_i . b_j. */
void hmd_gemm_pack_transposed(int n, int k, const double *b, size_t ldb, double *bp);

#endif /* HMD_NNP_VMATH_H */
