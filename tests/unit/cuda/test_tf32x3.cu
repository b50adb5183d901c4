/* The 3xTF32 split (src/cuda/tf32x3.cuh) on the host, where it runs without a GPU: TF32 rounding
 * to nearest with ties away from zero, hi + lo within 2^-22 of x, the weights' [hi; hi; lo]
 * layout, and a product of split operands (TF32-exact values, as the tensor cores multiply them,
 * summed in double where the tensor cores sum in fp32) within 2e-6 of the double product, where
 * TF32 alone is off by about 1e-4; and the cuBLAS calls of the forward (one product of
 * [hi | lo | hi]) and backward (two of [hi | lo]) input projections, run on the host through a
 * stand-in for cublasGemmEx. A wrong pairing of the parts (e.g. lo with lo) fails the product
 * checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" { /* (cmocka.h has no C++ guards) */
#include <cmocka.h>
}

#include <cublas_v2.h>

#include <cmath>
#include <vector>

/* Whether x has more than TF32's 10 mantissa bits. */
static bool not_tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x1fffu) != 0;
}

/* cublasGemmEx on the host, for the products tf32x3.cuh asks for (column-major, no transposes,
 * fp32 with TF32 compute): the operands must be TF32 values, as the split makes them; sums in
 * double. Lets the test run the real hmd_tf32x3_gemm and hmd_tf32x3_gemm2_add without a GPU. */
static cublasStatus_t host_gemm_ex(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb,
                                   int m, int n, int k, const void *alpha, const void *A,
                                   cudaDataType at, int lda, const void *B, cudaDataType bt,
                                   int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                                   cublasComputeType_t compute, cublasGemmAlgo_t)
{
    if (ta != CUBLAS_OP_N || tb != CUBLAS_OP_N || at != CUDA_R_32F || bt != CUDA_R_32F ||
        ct != CUDA_R_32F || compute != CUBLAS_COMPUTE_32F_FAST_TF32 || lda < m || ldb < k ||
        ldc < m) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const float *a = (const float *)A, *b = (const float *)B, al = *(const float *)alpha,
                be = *(const float *)beta;
    float *c = (float *)C;
    for (int j = 0; j < n; j++) {
        for (int i = 0; i < m; i++) {
            double sum = 0;
            for (int l = 0; l < k; l++) {
                const float x = a[i + (size_t)l * lda], y = b[l + (size_t)j * ldb];
                if (not_tf32(x) || not_tf32(y)) {
                    return CUBLAS_STATUS_EXECUTION_FAILED; /* not a TF32 value */
                }
                sum += (double)x * y;
            }
            float *cij = c + i + (size_t)j * ldc;
            *cij = (float)(al * sum + (be == 0.0f ? 0.0 : (double)be * *cij));
        }
    }
    return CUBLAS_STATUS_SUCCESS;
}
#define cublasGemmEx host_gemm_ex

#include "cuda/nnp/tf32x3.cuh"
#include "test_util.h"

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static double urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0 - 0.5;
}

static void test_round(void **state)
{
    (void)state;
    const float one = 1.0f, ulp = std::ldexp(1.0f, -10); /* TF32's spacing at 1 */
    assert_true(hmd_tf32_round(one) == one);
    assert_true(hmd_tf32_round(one + ulp / 2) == one + ulp);       /* tie: away from zero */
    assert_true(hmd_tf32_round(-(one + ulp / 2)) == -(one + ulp)); /* and symmetric */
    assert_true(hmd_tf32_round(one + ulp / 2 - std::ldexp(1.0f, -23)) == one); /* below a tie */
    assert_true(hmd_tf32_round(one + 0.75f * ulp) == one + ulp);
    assert_true(std::isinf(hmd_tf32_round(INFINITY)));
    assert_true(std::isnan(hmd_tf32_round(NAN)));
    unsigned s = 7;
    for (int k = 0; k < 10000; k++) {
        const float x = (float)(urand(&s) * std::ldexp(1.0, (int)(urand(&s) * 60)));
        const float r = hmd_tf32_round(x);
        assert_int_equal(to_bits(r) & 0x1fffu, 0); /* 10 mantissa bits left */
        assert_true(std::fabs((double)r - x) <= std::ldexp(std::fabs((double)x), -11));
    }
}

/* hi + lo carries x to within 2^-22 |x|, through the activations' split. */
static void test_split(void **state)
{
    (void)state;
    enum { ROWS = 3, W = 50 };
    std::vector<float> a(ROWS * W), a3(3 * ROWS * W);
    unsigned s = 11;
    for (float &x : a) {
        x = (float)(urand(&s) * std::ldexp(1.0, (int)(urand(&s) * 20)));
    }
    for (size_t e = 0; e < a.size(); e++) {
        hmd_tf32x3_split_element(e, W, a.data(), a3.data());
    }
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < W; j++) {
            const float *row = a3.data() + 3 * r * W;
            const double x = a[r * W + j], hi = row[j], lo = row[W + j];
            assert_true(row[2 * W + j] == row[j]);
            assert_int_equal(to_bits(row[W + j]) & 0x1fffu, 0);
            assert_true(std::fabs(hi + lo - x) <= std::ldexp(std::fabs(x), -22));
        }
    }
}

/* C = A W through the split operands against the double product. */
static void test_product(void **state)
{
    (void)state;
    enum { M = 16, K = 256, N = 24 };
    unsigned s = 3;
    std::vector<float> a(M * K), a3(3 * M * K);
    std::vector<double> w(K * N);
    for (float &x : a) {
        x = (float)urand(&s);
    }
    for (double &x : w) {
        x = urand(&s) * 0.1;
    }
    for (size_t e = 0; e < a.size(); e++) {
        hmd_tf32x3_split_element(e, K, a.data(), a3.data());
    }
    const std::vector<float> w3 = hmd_tf32x3_weights(w.data(), K, N);
    double worst = 0, worst_tf32 = 0, scale = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double exact = 0, split = 0, plain = 0;
            for (int k = 0; k < K; k++) {
                exact += (double)a[i * K + k] * w[k * N + j];
                plain += (double)hmd_tf32_round(a[i * K + k]) * w3[k * N + j];
            }
            for (int k = 0; k < 3 * K; k++) {
                split += (double)a3[i * 3 * K + k] * w3[k * N + j];
            }
            worst = std::fmax(worst, std::fabs(split - exact));
            worst_tf32 = std::fmax(worst_tf32, std::fabs(plain - exact));
            scale = std::fmax(scale, std::fabs(exact));
        }
    }
    /* each term within about 3 2^-22 of its value (measured: 5e-8 of the scale; with the
     * tensor cores' fp32 sums, 1e-6) */
    assert_true(worst / scale < 2e-6);
    assert_true(worst_tf32 / scale > 1e-5); /* TF32 alone: the compensation matters */
}

/* The products as dpa1_eval.cu makes them, through tf32x3.cuh's cuBLAS calls (host_gemm_ex):
 * backward, dx += dQKV W_in^T from [dx_hi | dx_lo] written as k_qkv_backward writes it
 * (hmd_tf32x2_put, warp w: row w / 3, part w % 3) and W_in^T split at upload
 * (hmd_tf32x3_weights, transposed); forward, G W_in from hmd_tf32x3_split_element. Both within
 * 2e-6 of the double products; a wrong offset, leading dimension or beta is far off. Inputs with
 * full 24-bit mantissas, so that lo needs its own rounding. */
static void test_gemm_calls(void **state)
{
    (void)state;
    enum { ROWS = 37, H = 8, M = 20 }; /* M != 3H, an odd row count */
    unsigned s = 9;
    auto full = [&s]() { return (float)(urand(&s) * 1.7320508075688772); };
    std::vector<double> w(M * 3 * H); /* in_proj.w: [n_in = M][n_out = 3H] */
    for (double &x : w) {
        x = urand(&s) * 0.2;
    }
    std::vector<float> dqkv(ROWS * 3 * H), resid(ROWS * M), G(ROWS * M);
    for (std::vector<float> *v : {&dqkv, &resid, &G}) {
        for (float &x : *v) {
            x = full();
        }
    }
    std::vector<float> work(ROWS * 6 * H, NAN);
    for (int wi = 0; wi < ROWS * 3; wi++) {
        for (int h = 0; h < H; h++) {
            hmd_tf32x2_put(work.data(), wi / 3, (size_t)(wi % 3) * H + h, 3 * H,
                           dqkv[(size_t)wi * H + h]);
        }
    }
    const std::vector<float> b3t = hmd_tf32x3_weights(w.data(), 3 * H, M, true);
    std::vector<float> dx = resid;
    assert_int_equal(
        hmd_tf32x3_gemm2_add(NULL, ROWS, M, 3 * H, work.data(), b3t.data(), dx.data(), M),
        CUBLAS_STATUS_SUCCESS);
    double worst = 0, scale = 0;
    for (int i = 0; i < ROWS; i++) {
        for (int j = 0; j < M; j++) {
            double e = resid[i * M + j];
            for (int q = 0; q < 3 * H; q++) {
                e += (double)dqkv[i * 3 * H + q] * w[j * 3 * H + q];
            }
            worst = std::fmax(worst, std::fabs(e - dx[i * M + j]));
            scale = std::fmax(scale, std::fabs(e));
        }
    }
    assert_true(worst / scale < 2e-6); /* NaN (a hole in work) fails too */

    std::vector<float> x3(ROWS * 3 * M), out(ROWS * 3 * H);
    for (size_t e = 0; e < G.size(); e++) {
        hmd_tf32x3_split_element(e, M, G.data(), x3.data());
    }
    const std::vector<float> b3 = hmd_tf32x3_weights(w.data(), M, 3 * H);
    assert_int_equal(hmd_tf32x3_gemm(NULL, ROWS, 3 * H, M, x3.data(), b3.data(), out.data(), 3 * H),
                     CUBLAS_STATUS_SUCCESS);
    worst = scale = 0;
    for (int i = 0; i < ROWS; i++) {
        for (int j = 0; j < 3 * H; j++) {
            double e = 0;
            for (int q = 0; q < M; q++) {
                e += (double)G[i * M + q] * w[q * 3 * H + j];
            }
            worst = std::fmax(worst, std::fabs(e - out[i * 3 * H + j]));
            scale = std::fmax(scale, std::fabs(e));
        }
    }
    assert_true(worst / scale < 2e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_product),
        cmocka_unit_test(test_gemm_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
