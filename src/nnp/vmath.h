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

/* y[i] = tanh(x[i]) for i < n; y may alias x. */
void hmd_vtanh(int n, const double *x, double *y);

/* z[rows][n] = x[rows][k] w[k][n] + b (b may be NULL), and when dx is not NULL also the tangent
 * dz[rows][n] = dx[rows][k] w[k][n], sharing each load of w. */
void hmd_gemm_bias(int rows, int k, int n, const double *x, const double *dx, const double *w,
                   const double *b, double *z, double *dz);

/* dx[rows][k] = dz[rows][n] w^T, given wt = w^T stored as [n][k]. */
void hmd_gemm_transposed(int rows, int k, int n, const double *dz, const double *wt, double *dx);

#endif /* HMD_NNP_VMATH_H */
