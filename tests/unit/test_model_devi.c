/* Unit tests of src/nnp/model_devi (deviation statistics and the compatibility check),
 * src/io/model_devi_out (dp model-devi's layout) and src/nnp/test_errors (dp test's errors
 * and their weighted merge), on cases whose answers follow from the definitions. The numbers
 * of real models are checked against DeePMD-kit by the goldens (tests/data/model_devi,
 * tests/data/dptest). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/model_devi_out.h"
#include "nnp/model_devi.h"
#include "nnp/test_errors.h"
#include "test_util.h"

/* Two models whose forces differ by +-a on one component of each atom: std = a on that
 * component, e_i = a; the virial of model k is k * (c+1) on component c. */
static void test_absolute_deviation(void **state)
{
    const double a[3] = {0.5, 2.0, 1.0}; /* per atom */
    double f0[9] = {0}, f1[9] = {0}, v0[9], v1[9];
    for (int i = 0; i < 3; i++) {
        f0[3 * i + i] = 10.0 + a[i];
        f1[3 * i + i] = 10.0 - a[i];
    }
    for (int c = 0; c < 9; c++) {
        v0[c] = 0.0;
        v1[c] = 3.0 * (c + 1); /* /natoms: 0 and c+1; std = (c+1)/2 */
    }
    const double *force[2] = {f0, f1}, *virial[2] = {v0, v1};
    const double energy[2] = {-3.0, 3.0}; /* per atom -1 and 1: std 1 */
    struct hmd_model_devi d;
    double atom[3];
    hmd_model_devi_compute(2, 3, force, virial, energy, 0.0, 0.0, &d, atom);
    assert_near(d.max_devi_f, 2.0, 1e-15);
    assert_near(d.min_devi_f, 0.5, 1e-15);
    assert_near(d.avg_devi_f, 3.5 / 3, 1e-15);
    assert_near(atom[0], 0.5, 1e-15);
    assert_near(atom[1], 2.0, 1e-15);
    assert_near(d.max_devi_v, 4.5, 1e-15);
    assert_near(d.min_devi_v, 0.5, 1e-15);
    double sq = 0;
    for (int c = 0; c < 9; c++) {
        sq += 0.25 * (c + 1) * (c + 1);
    }
    assert_near(d.avg_devi_v, sqrt(sq / 9), 1e-14);
    assert_near(d.devi_e, 1.0, 1e-15);
}

/* relative: e_i / (|mean F_i| + level); relative_v per component, LAMMPS's definition. */
static void test_relative_deviation(void **state)
{
    double f0[3] = {3.0 + 1.0, 4.0, 0.0}, f1[3] = {3.0 - 1.0, 4.0, 0.0}; /* |mean| = 5 */
    double v0[9], v1[9];
    for (int c = 0; c < 9; c++) {
        v0[c] = 2.0 * c + 1.0; /* natoms 1: mean c + 1 ... */
        v1[c] = 1.0;           /* ... std c */
    }
    const double *force[2] = {f0, f1}, *virial[2] = {v0, v1};
    const double energy[2] = {1.0, 1.0};
    struct hmd_model_devi d;
    hmd_model_devi_compute(2, 1, force, virial, energy, 1.0, 0.5, &d, NULL);
    assert_near(d.max_devi_f, 1.0 / (5.0 + 1.0), 1e-15);
    assert_near(d.max_devi_v, 8.0 / (9.0 + 0.5), 1e-15); /* component 8: std 8, mean 9 */
    assert_near(d.min_devi_v, 0.0, 1e-15);
    assert_near(d.devi_e, 0.0, 1e-15);
}

static void test_one_model_deviates_by_nothing(void **state)
{
    const double f[6] = {1, 2, 3, 4, 5, 6}, v[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const double *force[1] = {f}, *virial[1] = {v};
    const double energy[1] = {-5.0};
    struct hmd_model_devi d;
    hmd_model_devi_compute(1, 2, force, virial, energy, 0.0, 0.0, &d, NULL);
    assert_true(d.max_devi_f == 0.0 && d.max_devi_v == 0.0 && d.devi_e == 0.0);
}

/* Models with the same types in another order are mapped; other type sets and cut-offs are
 * refused with both files named. */
static void test_compatibility(void **state)
{
    char names0[3][8] = {"O", "H", "C"}, names1[3][8] = {"H", "C", "O"}, names2[2][8] = {"O", "H"};
    char names3[3][8] = {"O", "H", "N"};
    struct hmd_dp_model m0 = {.ntypes = 3, .type_map = names0, .rcut = 6.0};
    struct hmd_dp_model m1 = {.ntypes = 3, .type_map = names1, .rcut = 6.0};
    struct hmd_dp_model m2 = {.ntypes = 2, .type_map = names2, .rcut = 6.0};
    struct hmd_dp_model m3 = {.ntypes = 3, .type_map = names3, .rcut = 6.0};
    struct hmd_dp_model m4 = {.ntypes = 3, .type_map = names1, .rcut = 5.0};
    const char *paths[2] = {"a.dp", "b.dp"};
    int map[6];
    const struct hmd_dp_model *ok[2] = {&m0, &m1};
    assert_int_equal(hmd_model_devi_check(ok, paths, 2, map), HMD_OK);
    assert_int_equal(map[0], 0);
    assert_int_equal(map[3], 2); /* O is type 2 of b.dp */
    assert_int_equal(map[4], 0); /* H */
    assert_int_equal(map[5], 1); /* C */
    const struct hmd_dp_model *fewer[2] = {&m0, &m2}, *other[2] = {&m0, &m3}, *cut[2] = {&m0, &m4};
    assert_int_equal(hmd_model_devi_check(fewer, paths, 2, map), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "b.dp has the type map [O, H], a.dp has [O, H, C]"));
    assert_int_equal(hmd_model_devi_check(other, paths, 2, map), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "[O, H, N]"));
    assert_int_equal(hmd_model_devi_check(cut, paths, 2, map), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "b.dp has rcut 5 Å, a.dp 6 Å"));
}

/* The layout of numpy.savetxt(fmt=["%12d"] + ["%19.6e"] * n, delimiter="") under
 * DeePMD-kit's header. */
static void test_table_layout(void **state)
{
    char buf[4096] = "";
    FILE *fp = fmemopen(buf, sizeof buf, "w");
    struct hmd_model_devi d = {1.5, 0.25, 1.0, 2.0, 0.125, 0.5, 1e-3};
    const double atom[2] = {0.75, 1.25};
    assert_int_equal(hmd_model_devi_out_header(fp, "x", "sys/a", true), HMD_OK);
    assert_int_equal(hmd_model_devi_out_row(fp, "x", 100, &d, atom, 2), HMD_OK);
    fclose(fp);
    const char *want =
        "# sys/a\n"
        "# step      max_devi_v         min_devi_v         avg_devi_v         max_devi_f        "
        " min_devi_f         avg_devi_f         devi_e             atm_devi_f(N)      \n"
        "         100       1.500000e+00       2.500000e-01       1.000000e+00       "
        "2.000000e+00       1.250000e-01       5.000000e-01       1.000000e-03       "
        "7.500000e-01       1.250000e+00\n";
    assert_string_equal(buf, want);
}

/* dp test's errors: MAE and RMSE over every value, per-atom scalings, stress -W/V, and a
 * merge of two systems equal to one pass over all values. */
static void test_errors_and_merge(void **state)
{
    const double e = 10.0, f[6] = {1, 1, 1, 1, 1, 1}, v[9] = {0};
    const double pf[6] = {1, 2, 1, 1, 1, -1}, pv[9] = {4, 0, 0, 0, 0, 0, 0, 0, 0};
    struct hmd_test_frame fr = {.natoms = 2,
                                .volume = 8.0,
                                .energy = &e,
                                .force = f,
                                .virial = v,
                                .pred_energy = 12.0,
                                .pred_force = pf,
                                .pred_virial = pv};
    struct hmd_test_errors a;
    memset(&a, 0, sizeof a);
    hmd_test_errors_add(&a, &fr);
    double mae, rmse;
    assert_true(hmd_test_errors_get(&a, HMD_TEST_E, &mae, &rmse));
    assert_near(mae, 2.0, 0);
    assert_true(hmd_test_errors_get(&a, HMD_TEST_EA, &mae, &rmse));
    assert_near(mae, 1.0, 0);
    assert_true(hmd_test_errors_get(&a, HMD_TEST_F, &mae, &rmse));
    assert_near(mae, 3.0 / 6, 1e-15);        /* |1| + |-2| over 6 */
    assert_near(rmse, sqrt(5.0 / 6), 1e-15); /* 1 + 4 over 6 */
    assert_true(hmd_test_errors_get(&a, HMD_TEST_S, &mae, &rmse));
    assert_near(mae, 0.5 / 9, 1e-15); /* -4/8 on one of 9 */
    assert_true(hmd_test_errors_get(&a, HMD_TEST_VA, &mae, &rmse));
    assert_near(rmse, sqrt(4.0 / 9), 1e-15);
    assert_near(a.weight[HMD_TEST_F], 6, 0);
    /* a second system without virial labels, merged */
    struct hmd_test_frame fr2 = {
        .natoms = 1, .energy = &e, .force = f, .pred_energy = 9.0, .pred_force = pf + 3};
    struct hmd_test_errors b, total;
    memset(&b, 0, sizeof b);
    memset(&total, 0, sizeof total);
    hmd_test_errors_add(&b, &fr2);
    assert_false(hmd_test_errors_get(&b, HMD_TEST_V, &mae, &rmse));
    hmd_test_errors_merge(&total, &a);
    hmd_test_errors_merge(&total, &b);
    assert_true(hmd_test_errors_get(&total, HMD_TEST_E, &mae, &rmse));
    assert_near(mae, 1.5, 1e-15); /* 2 and 1 */
    assert_near(rmse, sqrt(2.5), 1e-15);
    assert_true(hmd_test_errors_get(&total, HMD_TEST_F, &mae, &rmse));
    assert_near(mae, 5.0 / 9, 1e-15); /* and |0|, |0|, |-2| */
    assert_near(total.weight[HMD_TEST_V], 9, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absolute_deviation),
        cmocka_unit_test(test_relative_deviation),
        cmocka_unit_test(test_one_model_deviates_by_nothing),
        cmocka_unit_test(test_compatibility),
        cmocka_unit_test(test_table_layout),
        cmocka_unit_test(test_errors_and_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
