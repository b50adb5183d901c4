/* The 3xTF32 split (src/cuda/tf32x3.cuh) on the host, where it runs without a GPU: TF32 rounding
 * to nearest with ties away from zero, hi + lo within 2^-22 of x, the weights' [hi; hi; lo]
 * layout, and a product of split operands (TF32-exact values, as the tensor cores multiply them,
 * summed in double where the tensor cores sum in fp32) within 2e-6 of the double product, where
 * TF32 alone is off by about 1e-4, through one product of [hi | lo | hi] and through the two of
 * [hi | lo] that the backward input projection uses. A wrong pairing of the parts (e.g. lo with
 * lo) fails the product checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" { /* (cmocka.h has no C++ guards) */
#include <cmocka.h>
}

#include "cuda/tf32x3.cuh"
#include "test_util.h"

#include <cmath>
#include <vector>

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

/* C = A W^T through the two products of hmd_tf32x3_gemm2_add: A2 = [A_hi | A_lo] (hmd_tf32_split)
 * and the split transpose of a row-major N x K matrix (hmd_tf32x3_weights, transposed), against
 * the double product. A transposition or a wrong pairing of the parts is off by far more. */
static void test_product_pair(void **state)
{
    (void)state;
    enum { M = 16, K = 192, N = 24 };
    unsigned s = 5;
    std::vector<float> a(M * K), a2(2 * M * K);
    std::vector<double> wt(N * K); /* row-major N x K; B = wt^T */
    for (float &x : a) {
        x = (float)urand(&s);
    }
    for (double &x : wt) {
        x = urand(&s) * 0.1;
    }
    for (int i = 0; i < M; i++) {
        for (int k = 0; k < K; k++) {
            hmd_tf32_split(a[i * K + k], &a2[i * 2 * K + k], &a2[i * 2 * K + K + k]);
        }
    }
    const std::vector<float> b3 = hmd_tf32x3_weights(wt.data(), K, N, true);
    double worst = 0, scale = 0;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) {
            double exact = 0, pair = 0;
            for (int k = 0; k < K; k++) {
                exact += (double)a[i * K + k] * wt[j * K + k];
            }
            for (int k = 0; k < 2 * K; k++) { /* [A_hi | A_lo] [B_hi; B_hi] */
                pair += (double)a2[i * 2 * K + k] * b3[k * N + j];
            }
            for (int k = 0; k < K; k++) { /* + A_hi B_lo */
                pair += (double)a2[i * 2 * K + k] * b3[(2 * K + k) * N + j];
            }
            worst = std::fmax(worst, std::fabs(pair - exact));
            scale = std::fmax(scale, std::fabs(exact));
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
        cmocka_unit_test(test_product_pair),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
