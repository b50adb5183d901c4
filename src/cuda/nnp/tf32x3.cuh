/* Error-compensated TF32 products ("3xTF32") for precision = mixed: C = A B with A, B in fp32
 * run on the tensor cores at close to fp32's accuracy. Each operand is split into a TF32 part and
 * the rest, a = a_hi + a_lo (both TF32: 10 mantissa bits each, so a_hi + a_lo holds about 21 of
 * fp32's 24), and C = a_hi b_hi + a_lo b_hi + a_hi b_lo (a_lo b_lo is below fp32's rounding). One
 * TF32 product over the inner dimension taken three times gives the three terms at once:
 *   A3 = [A_hi | A_lo | A_hi] (m x 3k), B3 = [B_hi; B_hi; B_lo] (3k x n), C = A3 B3.
 * On an H200 that runs 1.7x a DGEMM and 2.1x an SGEMM of the same shape, at about four times
 * SGEMM's error (bench/results/gemm_tf32_2026-11-30_50a29eb.json). The weights are split once,
 * at upload (hmd_tf32x3_weights); the activations by hmd_tf32x3_split before each product, or,
 * where the kernel that makes them writes the parts itself, as A2 = [A_hi | A_lo] (m x 2k,
 * hmd_tf32x2_put) for two products that take the same three terms (hmd_tf32x3_gemm2_add), so that
 * A_hi is written once. Row-major throughout, as the callers store their arrays. */
#ifndef HMD_CUDA_TF32X3_CUH
#define HMD_CUDA_TF32X3_CUH

#include <cublas_v2.h>
#include <string.h>
#include <vector>

namespace
{

/* x rounded to TF32 (10 mantissa bits, to nearest, ties away from zero, as cvt.rna.tf32.f32);
 * infinities and NaN unchanged, |x| within half a TF32 step of FLT_MAX to infinity. (A split
 * of an infinite value is not: its lo is NaN. The operands here are finite.) */
__host__ __device__ inline float hmd_tf32_round(float x)
{
    unsigned u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u = (u + 0x1000u) & ~0x1fffu;
    }
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

/* B3 = [W_hi; W_hi; W_lo] (3k x n, row-major) of the k x n matrix w, its parts taken from the
 * double values: hi = tf32(w), lo = tf32(w - hi). w is row-major (element (i, j) at w[i n + j]),
 * or, when `transposed`, the row-major n x k matrix whose transpose is meant (at w[j k + i]). */
inline std::vector<float> hmd_tf32x3_weights(const double *w, int k, int n, bool transposed = false)
{
    const size_t kn = (size_t)k * n;
    std::vector<float> b3(3 * kn);
    for (size_t e = 0; e < kn; e++) {
        const double x = transposed ? w[(e % n) * k + e / n] : w[e];
        const float hi = hmd_tf32_round((float)x);
        b3[e] = b3[kn + e] = hi;
        b3[2 * kn + e] = hmd_tf32_round((float)(x - (double)hi));
    }
    return b3;
}

/* x = hi + lo to about 2^-21 of x: hi = tf32(x), lo = tf32(x - hi) (x - hi is exact in fp32). */
__host__ __device__ inline void hmd_tf32_split(float x, float *hi, float *lo)
{
    *hi = hmd_tf32_round(x);
    *lo = hmd_tf32_round(x - *hi);
}

/* Element (row, col) x of a row-major matrix `width` wide into its two places in A2 = [A_hi |
 * A_lo] (2 width wide) (hmd_tf32_split). */
__host__ __device__ inline void hmd_tf32x2_put(float *a2, size_t row, size_t col, size_t width,
                                               float x)
{
    float *r = a2 + 2 * row * width;
    hmd_tf32_split(x, &r[col], &r[width + col]);
}

/* Element e of the row-major a (rows x width) into its three places in A3 = [A_hi | A_lo | A_hi]
 * (rows x 3 width) (hmd_tf32_split). */
__host__ __device__ inline void hmd_tf32x3_split_element(size_t e, int width, const float *a,
                                                         float *a3)
{
    const size_t r = e / width, j = e % width;
    float hi, lo;
    hmd_tf32_split(a[e], &hi, &lo);
    float *row = a3 + 3 * r * width;
    row[j] = hi;
    row[width + j] = lo;
    row[2 * width + j] = hi;
}

/* A3 of the first *count rows of a (hmd_tf32x3_split_element), one element per thread. */
__global__ void hmd_tf32x3_split(const int *count, int width, const float *a, float *a3)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < (size_t)*count * width) {
        hmd_tf32x3_split_element(e, width, a, a3);
    }
}

/* Row-major C (m x n, leading dimension ldc) = beta C + A (m x kk, leading dimension lda) B (kk
 * x n, leading dimension n), one TF32 product on the tensor cores. Returns cuBLAS's status. */
inline cublasStatus_t hmd_tf32_gemm(cublasHandle_t h, int m, int n, int kk, const float *a, int lda,
                                    const float *b, float beta, float *c, int ldc)
{
    const float one = 1.0f;
    /* column-major C^T = B^T A^T */
    return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, &one, b, CUDA_R_32F, n, a,
                        CUDA_R_32F, lda, &beta, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                        CUBLAS_GEMM_DEFAULT);
}

/* Row-major C (m x n, leading dimension ldc) = A3 B3 for the split operands above (inner
 * dimension 3k), one TF32 product. Returns cuBLAS's status. */
inline cublasStatus_t hmd_tf32x3_gemm(cublasHandle_t h, int m, int n, int k, const float *a3,
                                      const float *b3, float *c, int ldc)
{
    return hmd_tf32_gemm(h, m, n, 3 * k, a3, 3 * k, b3, 0.0f, c, ldc);
}

/* Row-major C (m x n, leading dimension ldc) += A B from A2 = [A_hi | A_lo] (m x 2k) and B3:
 * [A_hi | A_lo] [B_hi; B_hi], then A_hi B_lo, two TF32 products. Returns cuBLAS's status. */
inline cublasStatus_t hmd_tf32x3_gemm2_add(cublasHandle_t h, int m, int n, int k, const float *a2,
                                           const float *b3, float *c, int ldc)
{
    const cublasStatus_t r = hmd_tf32_gemm(h, m, n, 2 * k, a2, 2 * k, b3, 1.0f, c, ldc);
    return r != CUBLAS_STATUS_SUCCESS
               ? r
               : hmd_tf32_gemm(h, m, n, k, a2, 2 * k, b3 + 2 * (size_t)k * n, 1.0f, c, ldc);
}

} // namespace

#endif /* HMD_CUDA_TF32X3_CUH */
