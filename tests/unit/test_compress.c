/* Model compression at the model level (nnp/compress.h, md/model_setup.h): what is refused and
 * why, what each model-compress mode leaves in the model. The tables' numbers are checked by
 * test_tabulate, their forces by test_dp_physics, their results against DeePMD-kit by the
 * compressed goldens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/params.h"
#include "io/model_dp.h"
#include "md/model_setup.h"
#include "nnp/compress.h"

static const struct hmd_compress_opts defaults = {
    .extrapolate = 5, .stride0 = 0.01, .stride1 = 0.1};

static void load(const char *file, struct hmd_dp_model *m)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", HMD_TEST_DATA, file);
    if (hmd_model_read_dp(path, m)) {
        fail_msg("%s", hmd_error_msg());
    }
}

static void test_needs_min_nbor_dist(void **state)
{
    struct hmd_dp_model m = {0};
    load("deeppot.dp", &m); /* DeePMD-kit's test model records no min_nbor_dist */
    assert_true(m.min_nbor_dist == 0);
    assert_int_equal(hmd_model_compress(&m, &defaults), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "compress-min-nbor-dist"));
    assert_false(m.compression.on);
    struct hmd_compress_opts given = defaults;
    given.min_nbor_dist = 0.9;
    assert_int_equal(hmd_model_compress(&m, &given), HMD_OK);
    assert_true(m.compression.on && !m.compression.from_file && m.compression.geometric);
    assert_non_null(m.se.table);
    assert_true(m.compression.min_nbor_dist == 0.9);
    hmd_model_free(&m);
}

static void test_bad_settings(void **state)
{
    struct hmd_dp_model m = {0};
    load("se_e2_a_small_tanh.dp", &m);
    struct hmd_compress_opts bad = defaults;
    bad.extrapolate = 1.0;
    assert_int_equal(hmd_model_compress(&m, &bad), HMD_ECONFIG);
    bad = defaults;
    bad.stride0 = 0;
    assert_int_equal(hmd_model_compress(&m, &bad), HMD_ECONFIG);
    assert_null(m.se.table);
    hmd_model_free(&m);
}

static void test_dpa1_concat_refused(void **state)
{
    struct hmd_dp_model m = {0};
    load("dpa1_small_concat.dp", &m);
    assert_int_equal(hmd_model_compress(&m, &defaults), HMD_ENOTSUP);
    assert_non_null(strstr(hmd_error_msg(), "concat"));
    hmd_model_free(&m);
}

static void test_dpa1_with_attention_keeps_net(void **state)
{
    struct hmd_dp_model m = {0};
    load("se_atten_v2_small.dp", &m);
    assert_true(m.dpa1.nlayers > 0);
    assert_int_equal(hmd_model_compress(&m, &defaults), HMD_OK);
    assert_true(m.compression.on && !m.compression.geometric);
    assert_null(m.dpa1.table);
    hmd_model_free(&m);
}

static void test_dpa1_strip_tabulated(void **state)
{
    struct hmd_dp_model m = {0};
    load("dpa1_small_strip_l0.dp", &m);
    assert_int_equal(hmd_model_compress(&m, &defaults), HMD_OK);
    assert_true(m.compression.on && m.compression.geometric);
    assert_non_null(m.dpa1.table);
    assert_int_equal(m.dpa1.table->M, m.dpa1.M);
    hmd_model_free(&m);
}

/* A compressed file: auto and yes keep its tables, no sets them aside. */
static void test_setup_modes(void **state)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/compressed_coarse_se_e2_a_small_tanh.dp", HMD_TEST_DATA);
    const enum hmd_model_compress modes[] = {HMD_COMPRESS_AUTO, HMD_COMPRESS_YES, HMD_COMPRESS_NO};
    for (int k = 0; k < 3; k++) {
        struct hmd_params p;
        hmd_params_defaults(&p);
        p.model_compress = modes[k];
        struct hmd_dp_model m = {0};
        if (hmd_model_setup(path, &p, &m)) {
            fail_msg("%s", hmd_error_msg());
        }
        const bool tables = modes[k] != HMD_COMPRESS_NO;
        assert_int_equal(m.compression.on, tables);
        assert_int_equal(m.se.table != NULL, tables);
        if (tables) {
            assert_true(m.compression.from_file);
            assert_true(m.compression.stride0 == 0.2 && m.compression.stride1 == 2.0);
            assert_true(m.compression.extrapolate == 4);
        }
        hmd_model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_needs_min_nbor_dist),
        cmocka_unit_test(test_bad_settings),
        cmocka_unit_test(test_dpa1_concat_refused),
        cmocka_unit_test(test_dpa1_with_attention_keeps_net),
        cmocka_unit_test(test_dpa1_strip_tabulated),
        cmocka_unit_test(test_setup_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
