/* Unit tests of src/em/minimize: steepest descent and FIRE bring a perturbed 13-atom
 * Lennard-Jones icosahedron (epsilon 1 eV, sigma 1 Å) to the published global minimum,
 * -44.326801 epsilon (Wales and Doye, J. Phys. Chem. A 101, 5111 (1997); the Cambridge Cluster
 * Database), below emtol; nsteps stops them; a failing or non-finite force is passed on. */
#include <math.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/rng.h"
#include "md/minimize.h"
#include "test_util.h"

#define LJ13_MIN (-44.326801)

struct lj {
    int calls, fail_at; /* the callback fails at call fail_at (0: never) */
};

static int lj_force(void *ctx, int n, const double *x, double *f, double *energy)
{
    struct lj *s = ctx;
    if (++s->calls == s->fail_at) {
        return hmd_error_set(HMD_ESOFTWARE, "planted failure");
    }
    memset(f, 0, sizeof(double) * 3 * n);
    double e = 0;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            double d[3], r2 = 0;
            for (int k = 0; k < 3; k++) {
                d[k] = x[3 * i + k] - x[3 * j + k];
                r2 += d[k] * d[k];
            }
            const double s6 = 1 / (r2 * r2 * r2);
            e += 4 * (s6 * s6 - s6);
            const double g = 24 * (2 * s6 * s6 - s6) / r2; /* -dE/dr / r */
            for (int k = 0; k < 3; k++) {
                f[3 * i + k] += g * d[k];
                f[3 * j + k] -= g * d[k];
            }
        }
    }
    *energy = e;
    return HMD_OK;
}

/* A centred icosahedron of nearest-neighbour distance about 1.1 Å, each atom moved by up to
 * 0.08 Å (Philox numbers of seed 3). */
static void lj13(double *x)
{
    const double p = (1 + sqrt(5.0)) / 2, r = 1.1 / 2;
    const double v[12][3] = {{0, 1, p}, {0, -1, p}, {0, 1, -p}, {0, -1, -p},
                             {1, p, 0}, {-1, p, 0}, {1, -p, 0}, {-1, -p, 0},
                             {p, 0, 1}, {p, 0, -1}, {-p, 0, 1}, {-p, 0, -1}};
    double u[39];
    hmd_rng_uniforms(3, 0, 0, 1, 39, u);
    memset(x, 0, 3 * sizeof *x);
    for (int i = 0; i < 12; i++) {
        for (int k = 0; k < 3; k++) {
            x[3 * (i + 1) + k] = r * v[i][k];
        }
    }
    for (int k = 0; k < 39; k++) {
        x[k] += 0.16 * (u[k] - 0.5);
    }
}

/* Minimises the perturbed LJ13 with steep or FIRE; checks convergence to the published
 * minimum within `tol` eV. */
static void minimise_lj13(bool fire, double emtol, double emstep, double tol)
{
    double x[39], m[13];
    lj13(x);
    for (int i = 0; i < 13; i++) {
        m[i] = 1.0;
    }
    struct lj s = {0};
    struct hmd_em_opts o = {.emtol = emtol, .emstep = emstep, .nsteps = 100000};
    struct hmd_em_result r;
    assert_int_equal(fire ? hmd_em_fire(13, x, m, lj_force, &s, &o, &r)
                          : hmd_em_steep(13, x, lj_force, &s, &o, &r),
                     HMD_OK);
    printf("%s: %lld steps, E %.8f, fmax %.2e\n", fire ? "fire" : "steep", (long long)r.steps,
           r.energy, r.fmax);
    assert_true(r.converged && r.fmax < emtol);
    assert_near(r.energy, LJ13_MIN, tol);
    assert_int_equal(r.evaluations, s.calls);
}

static void test_steep_lj13(void **state)
{
    minimise_lj13(false, 1e-4, 0.01, 1e-5);
}

static void test_fire_lj13(void **state)
{
    minimise_lj13(true, 1e-6, 2e-4, 1e-6);
}

static void test_limits_and_errors(void **state)
{
    double x[39];
    lj13(x);
    struct lj s = {0};
    struct hmd_em_opts o = {.emtol = 1e-8, .emstep = 0.01, .nsteps = 5};
    struct hmd_em_result r;
    assert_int_equal(hmd_em_steep(13, x, lj_force, &s, &o, &r), HMD_OK);
    assert_int_equal(r.steps, 5);
    assert_false(r.converged);
    lj13(x);
    assert_int_equal(hmd_em_fire(13, x, NULL, lj_force, &s, &o, &r), HMD_OK);
    assert_int_equal(r.steps, 5);
    struct lj bad = {.fail_at = 3};
    o.nsteps = 100;
    assert_int_equal(hmd_em_steep(13, x, lj_force, &bad, &o, &r), HMD_ESOFTWARE);
    assert_string_equal(hmd_error_msg(), "planted failure");
    o.emtol = 0;
    assert_int_equal(hmd_em_fire(13, x, NULL, lj_force, &s, &o, &r), HMD_ECONFIG);
    /* two atoms at one place: the start is refused as non-finite */
    o.emtol = 1e-4;
    x[3] = x[0];
    x[4] = x[1];
    x[5] = x[2];
    assert_int_equal(hmd_em_steep(13, x, lj_force, &s, &o, &r), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "not finite"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steep_lj13),
        cmocka_unit_test(test_fire_lj13),
        cmocka_unit_test(test_limits_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
