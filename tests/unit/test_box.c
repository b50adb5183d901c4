/* Unit tests of src/core/box: inverse, face distances, wrap, degenerate cells. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "core/box.h"
#include "core/error.h"

static void test_triclinic_inverse_and_faces(void **state)
{
    const double h[3][3] = {{10, 0, 0}, {3, 9, 0}, {-2, 1.5, 8}};
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            double m = 0;
            for (int k = 0; k < 3; k++) {
                m += box.h[a][k] * box.hinv[k][b];
            }
            assert_true(fabs(m - (a == b)) < 1e-14);
        }
    }
    double dist[3];
    hmd_box_face_distances(&box, dist);
    /* lower-triangular: face distance along c is h[2][2], along b is the b-c plane height */
    assert_true(fabs(dist[2] - 8.0) < 1e-12);
    assert_true(fabs(hmd_box_volume(&box) - 720.0) < 1e-9);
}

static void test_wrap_keeps_inside_atoms_exact(void **state)
{
    const double h[3][3] = {{10, 0, 0}, {3, 9, 0}, {-2, 1.5, 8}};
    const bool pbc[3] = {true, true, false};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    double r[3] = {1.2345678901234, 2.5, 3.25}, r0[3] = {1.2345678901234, 2.5, 3.25};
    int image[3];
    hmd_box_wrap(&box, r, image);
    assert_memory_equal(r, r0, sizeof r);
    double far[3];
    for (int k = 0; k < 3; k++) {
        far[k] = r0[k] + 2 * h[0][k] - h[1][k]; /* +2a -1b */
    }
    hmd_box_wrap(&box, far, image);
    assert_int_equal(image[0], 2);
    assert_int_equal(image[1], -1);
    assert_int_equal(image[2], 0);
    assert_true(fabs(far[0] - r0[0]) < 1e-12 && fabs(far[1] - r0[1]) < 1e-12);
}

static void test_degenerate_and_left_handed(void **state)
{
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    const double flat[3][3] = {{10, 0, 0}, {0, 10, 0}, {5, 5, 0}};
    assert_int_equal(hmd_box_init(&box, flat, pbc), HMD_EDATA);
    const double left[3][3] = {{10, 0, 0}, {0, 0, 10}, {0, 10, 0}};
    assert_int_equal(hmd_box_init(&box, left, pbc), HMD_EDATA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_triclinic_inverse_and_faces),
        cmocka_unit_test(test_wrap_keeps_inside_atoms_exact),
        cmocka_unit_test(test_degenerate_and_left_handed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
