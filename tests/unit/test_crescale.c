/* Unit tests of src/couple/crescale: the C-rescale barostat's scaling matrix (deterministic part
 * against the formula, each coupling type), its application to cell, positions and velocities,
 * and the ensemble it samples: an ideal gas held at the kinetic pressure N kT / V must reach
 * the NPT volume distribution p(V) ~ V^N exp(-P0 V / kT), whose mean is (N + 1) kT / P0 and
 * variance (N + 1) (kT / P0)^2. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/units.h"
#include "md/crescale.h"
#include "test_util.h"

static struct hmd_crescale iso(double beta, double ref_t)
{
    struct hmd_crescale c = {
        .type = HMD_PCOUPL_ISOTROPIC, .tau_p = 2.0, .ref_t = ref_t, .seed = 12345};
    for (int d = 0; d < 3; d++) {
        c.ref_p[d][d] = 1.0;
        c.compressibility[d][d] = beta;
    }
    return c;
}

static void test_check(void **state)
{
    struct hmd_crescale c = iso(4.5e-5, 300);
    assert_int_equal(hmd_crescale_check(&c), HMD_OK);
    c.tau_p = 0;
    assert_int_equal(hmd_crescale_check(&c), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "tau-p"));
    c = iso(0, 300);
    assert_int_equal(hmd_crescale_check(&c), HMD_ECONFIG);
    c = iso(-1e-5, 300);
    assert_int_equal(hmd_crescale_check(&c), HMD_ECONFIG);
}

/* Without noise (ref_t = 0) mu is the exponential of the drift, per type. */
static void test_drift(void **state)
{
    const double pres[3][3] = {{400, 10, -20}, {10, 250, 30}, {-20, 30, -100}};
    const double dt = 0.01, V = 1000;
    double mu[3][3];
    struct hmd_crescale c = iso(4.5e-5, 0);
    assert_int_equal(hmd_crescale_mu(&c, pres, V, dt, 7, mu), HMD_OK);
    const double f = 4.5e-5 * dt / 2.0, p = (400 + 250 - 100) / 3.0;
    for (int a = 0; a < 3; a++) {
        assert_near(mu[a][a], exp(-f * (1.0 - p) / 3), 1e-15);
        for (int b = 0; b < 3; b++) {
            if (a != b) {
                assert_true(mu[a][b] == 0);
            }
        }
    }
    assert_true(mu[0][0] > 1); /* pressure above the reference: the cell grows */
    c.type = HMD_PCOUPL_SEMIISOTROPIC;
    c.ref_p[2][2] = -50;
    assert_int_equal(hmd_crescale_mu(&c, pres, V, dt, 7, mu), HMD_OK);
    assert_near(mu[0][0], exp(-f * (1.0 - 325) / 3), 1e-15);
    assert_near(mu[1][1], mu[0][0], 0);
    assert_near(mu[2][2], exp(-f * (-50 + 100) / 3), 1e-15);
    c.type = HMD_PCOUPL_ANISOTROPIC;
    c.compressibility[1][0] = c.compressibility[0][1] = 4.5e-5;
    assert_int_equal(hmd_crescale_mu(&c, pres, V, dt, 7, mu), HMD_OK);
    assert_true(mu[0][1] == 0 && mu[0][2] == 0 && mu[1][2] == 0); /* lower triangular */
    assert_near(mu[1][0], -f * (0 - 10) / 3, 1e-4 * f * 10 / 3);  /* first order */
    assert_true(mu[2][0] == 0);                                   /* that element not coupled */
}

/* The cell and positions scale as row vectors by mu, velocities by its inverse; the kinetic
 * energy change is returned. */
static void test_apply(void **state)
{
    struct hmd_box box;
    const double h[3][3] = {{10, 0, 0}, {1, 9, 0}, {-2, 0.5, 8}};
    const bool pbc[3] = {true, true, true};
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    const double mu[3][3] = {{1.01, 0, 0}, {0.002, 0.99, 0}, {-0.001, 0.003, 1.02}};
    double x[6] = {1, 2, 3, -1, 0.5, 4}, v[6] = {0.3, -0.2, 0.1, 1, 2, -1}, m[2] = {16, 1};
    double x0[6], v0[6], dk;
    memcpy(x0, x, sizeof x);
    memcpy(v0, v, sizeof v);
    assert_int_equal(hmd_crescale_apply(mu, &box, 2, x, v, m, &dk), HMD_OK);
    double k_before = 0, k_after = 0;
    for (int i = 0; i < 2; i++) {
        for (int b = 0; b < 3; b++) {
            double want = 0, back = 0;
            for (int a = 0; a < 3; a++) {
                want += x0[3 * i + a] * mu[a][b];
                back += v[3 * i + a] * mu[a][b]; /* v' mu = v */
            }
            assert_near(x[3 * i + b], want, 1e-14);
            assert_near(back, v0[3 * i + b], 1e-14);
            k_before += 0.5 * m[i] * v0[3 * i + b] * v0[3 * i + b];
            k_after += 0.5 * m[i] * v[3 * i + b] * v[3 * i + b];
        }
    }
    assert_near(dk, (k_after - k_before) * HMD_MVV2E, 1e-16);
    assert_near(box.h[1][0], 1 * 1.01 + 9 * 0.002, 1e-14);
    assert_true(box.h[0][1] == 0 && box.h[0][2] == 0 && box.h[1][2] == 0);
    assert_near(hmd_box_volume(&box), 720 * 1.01 * 0.99 * 1.02, 1e-9);
}

/* Ideal gas: P = N kT / V (the kinetic pressure of a perfect thermostat). */
static void ideal_gas(double noise_scale, double *mean, double *var, double *want_mean,
                      double *want_var)
{
    const int N = 100;
    const double T = 300, P0 = 1000, kt = HMD_BOLTZMANN * T;
    struct hmd_crescale c = iso(1e-3, T * noise_scale * noise_scale);
    for (int d = 0; d < 3; d++) {
        c.ref_p[d][d] = P0;
    }
    const double v_ideal = (N + 1) * kt / (P0 / HMD_EV_PER_A3_TO_BAR);
    double V = v_ideal * 1.3, s = 0, s2 = 0;
    long count = 0;
    for (long step = 0; step < 1500000; step++) {
        const double p = N * kt / V * HMD_EV_PER_A3_TO_BAR;
        const double pres[3][3] = {{p, 0, 0}, {0, p, 0}, {0, 0, p}};
        double mu[3][3];
        assert_int_equal(hmd_crescale_mu(&c, pres, V, 0.01, step, mu), HMD_OK);
        V *= mu[0][0] * mu[1][1] * mu[2][2];
        if (step >= 20000) {
            s += V;
            s2 += V * V;
            count++;
        }
    }
    *mean = s / count;
    *var = s2 / count - *mean * *mean;
    *want_mean = v_ideal;
    *want_var = v_ideal * v_ideal / (N + 1);
}

static void test_ideal_gas_ensemble(void **state)
{
    double mean, var, want_mean, want_var;
    ideal_gas(1.0, &mean, &var, &want_mean, &want_var);
    printf("ideal gas: <V> %.2f (NPT %.2f), var %.1f (NPT %.1f)\n", mean, want_mean, var, want_var);
    assert_true(fabs(mean / want_mean - 1) < 0.005);
    assert_true(fabs(var / want_var - 1) < 0.08); /* 3.5 sigma of ~3,700 independent samples */
    /* noise too strong by sqrt(2): the variance is off, and the test sees it */
    ideal_gas(sqrt(2.0), &mean, &var, &want_mean, &want_var);
    assert_false(fabs(var / want_var - 1) < 0.08);
}

static void test_blow_up_refused(void **state)
{
    struct hmd_crescale c = iso(4.5e-5, 300);
    const double pres[3][3] = {{NAN, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    double mu[3][3];
    assert_int_equal(hmd_crescale_mu(&c, pres, 1000, 0.01, 1, mu), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "blew up"));
    const double huge[3][3] = {{1e9, 0, 0}, {0, 1e9, 0}, {0, 0, 1e9}};
    assert_int_equal(hmd_crescale_mu(&c, huge, 1000, 0.01, 1, mu), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "tau-p too short"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),           cmocka_unit_test(test_drift),
        cmocka_unit_test(test_apply),           cmocka_unit_test(test_ideal_gas_ensemble),
        cmocka_unit_test(test_blow_up_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
