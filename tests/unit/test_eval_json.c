/* Unit tests of src/io/eval_json: a non-finite result is named as such (jansson refuses NaN and
 * infinity, which used to come out as "out of memory"). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/eval_json.h"

static void test_nonfinite_named(void **state)
{
    const char *tm[2] = {"O", "H"};
    struct hmd_eval_json *doc = hmd_eval_json_create("m.dp", "c.xyz", tm, 2);
    assert_non_null(doc);
    double ae[2] = {1, 2}, f[6] = {0, 1, 2, 3, 4, 5}, w[9] = {0};
    struct hmd_eval_frame_result r = {
        .natoms = 2, .energy = 3, .atom_energy = ae, .force = f, .virial = w};
    assert_int_equal(hmd_eval_json_add(doc, &r), HMD_OK);
    f[4] = NAN;
    assert_int_equal(hmd_eval_json_add(doc, &r), HMD_ESOFTWARE);
    assert_non_null(strstr(hmd_error_msg(), "non-finite force on atom 2"));
    assert_null(strstr(hmd_error_msg(), "out of memory"));
    f[4] = 0;
    r.energy = INFINITY;
    assert_int_equal(hmd_eval_json_add(doc, &r), HMD_ESOFTWARE);
    assert_non_null(strstr(hmd_error_msg(), "non-finite energy"));
    r.energy = 0;
    w[8] = -INFINITY;
    assert_int_equal(hmd_eval_json_add(doc, &r), HMD_ESOFTWARE);
    assert_non_null(strstr(hmd_error_msg(), "non-finite virial"));
    hmd_eval_json_destroy(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_nonfinite_named)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
