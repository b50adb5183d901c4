/* Unit tests of src/nnp/vmath: vectorised tanh against libm on fresh random inputs over the
 * whole range (small, medium, saturated, signed zeros), and the GEMM kernels against naive
 * loops. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <cmocka.h>

#include "nnp/vmath.h"

static uint64_t state;

static double urand(void)
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(state >> 11) * 0x1.0p-53;
}

static void test_tanh_matches_libm(void **unused)
{
    state = (uint64_t)time(NULL); /* fresh inputs every run; the seed is printed on failure */
    const uint64_t seed = state;
    enum { N = 200000 };
    double *x = malloc(sizeof(double) * N), *y = malloc(sizeof(double) * N);
    for (int i = 0; i < N; i++) {
        /* log-uniform magnitudes from 1e-12 to 30, both signs */
        double mag = pow(10.0, -12.0 + 13.5 * urand());
        x[i] = (urand() < 0.5 ? -mag : mag);
    }
    x[0] = 0.0;
    x[1] = -0.0;
    x[2] = 0.625;
    x[3] = -0.625;
    x[4] = 20.0;
    x[5] = 700.0;
    hmd_vtanh(N, x, y);
    double worst = 0.0;
    for (int i = 0; i < N; i++) {
        double ref = tanh(x[i]);
        double err = fabs(y[i] - ref) / fmax(fabs(ref), 1e-300);
        worst = fmax(worst, err);
    }
    if (worst > 1e-15) {
        fail_msg("tanh relative error %g (seed %llu)", worst, (unsigned long long)seed);
    }
    assert_true(signbit(y[1]) && y[1] == 0.0);
    free(x);
    free(y);
}

static void test_gemm_kernels(void **unused)
{
    state = 42;
    enum { ROWS = 7, K = 5, NN = 9 };
    enum { NP = 16, KP = 16 }; /* hmd_gemm_padded(NN), hmd_gemm_padded(K) */
    double x[ROWS * K], dx[ROWS * K], w[K * NN], wp[K * NP] = {0}, wtp[NN * KP] = {0}, b[NN],
                                                        bp[NP] = {0}, z[ROWS * NN], dz[ROWS * NN],
                                                        back[ROWS * K];
    for (int i = 0; i < ROWS * K; i++) {
        x[i] = urand() - 0.5;
        dx[i] = urand() - 0.5;
    }
    for (int i = 0; i < K; i++) {
        for (int j = 0; j < NN; j++) {
            w[i * NN + j] = wp[i * NP + j] = wtp[j * KP + i] = urand() - 0.5;
        }
    }
    for (int j = 0; j < NN; j++) {
        b[j] = bp[j] = urand();
    }
    assert_int_equal(hmd_gemm_padded(NN), NP);
    hmd_gemm_bias(ROWS, K, NN, x, dx, wp, bp, z, dz);
    hmd_gemm_transposed(ROWS, K, NN, z, wtp, back);
    for (int r = 0; r < ROWS; r++) {
        for (int j = 0; j < NN; j++) {
            double s = b[j], t = 0;
            for (int i = 0; i < K; i++) {
                s += x[r * K + i] * w[i * NN + j];
                t += dx[r * K + i] * w[i * NN + j];
            }
            assert_true(fabs(s - z[r * NN + j]) < 1e-14);
            assert_true(fabs(t - dz[r * NN + j]) < 1e-14);
        }
        for (int i = 0; i < K; i++) {
            double s = 0;
            for (int j = 0; j < NN; j++) {
                s += z[r * NN + j] * w[i * NN + j];
            }
            assert_true(fabs(s - back[r * K + i]) < 1e-13);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tanh_matches_libm),
        cmocka_unit_test(test_gemm_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
