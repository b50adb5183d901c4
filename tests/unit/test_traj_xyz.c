/* Unit tests of src/io/traj_xyz: extended XYZ header keys, optional columns, exact numbers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/box.h"
#include "core/error.h"
#include "core/units.h"
#include "io/traj_xyz.h"

#define PATH_LEN 1024 /* test paths are short: a scratch folder and a file name */

static char scratch[PATH_LEN / 2]; /* a fresh folder for this run, under $HMD_TEST_TMP */

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_traj_xyz.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

static const char element[3][4] = {"O", "H", ""};
static const double x[9] = {0.1 + 0.2, 1.0 / 3.0,        -7.25, 1e-17, 12.0, 2.0 / 3.0, -0.0,
                            99.5,      3.141592653589793};
static const double v[9] = {1, -2, 3, 0.5, 0.25, -0.125, 1e-5, 2e-5, 3e-5};
static const double f[9] = {-0.1, 0.2, -0.3, 4, 5, 6, 1.0 / 7.0, 0, -1e300};

/* Reads the rest of `line` as n doubles separated by blanks into out; returns the number read. */
static int read_doubles(const char *line, double *out, int n)
{
    char *end;
    int k = 0;
    for (; k < n; k++) {
        out[k] = strtod(line, &end);
        if (end == line) {
            break;
        }
        line = end;
    }
    return k;
}

static void assert_bits_equal(const double *got, const double *want, int n)
{
    assert_memory_equal(got, want, n * sizeof(double));
}

static void test_two_frames_read_back(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/traj.xyz", scratch);
    const double h[3][3] = {{10, 0, 0}, {3, 9.5, 0}, {-2, 1.5, 8.125}};
    const bool pbc[3] = {true, true, false};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);

    struct hmd_xyz_traj *traj;
    assert_int_equal(hmd_xyz_traj_open(path, &traj, NULL, 0), HMD_OK);
    assert_int_equal(hmd_xyz_traj_write_frame(traj, 3, element, x, v, f, &box, 100, 0.05, -76.5),
                     HMD_OK);
    assert_int_equal(
        hmd_xyz_traj_write_frame(traj, 3, element, x, NULL, f, NULL, 200, 0.1, 1.0 / 3.0), HMD_OK);
    assert_int_equal(hmd_xyz_traj_close(traj), HMD_OK);

    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[2048];
    double got[10];

    /* Frame 1: cell, pbc flags, all three vector columns. */
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "3\n");
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "Lattice=\"10 0 0 3 9.5 0 -2 1.5 8.125\" "
                              "Properties=species:S:1:pos:R:3:masses:R:1:momenta:R:3:forces:R:3 "
                              "energy=-76.5 "
                              "step=100 time=0.050000000000000003 pbc=\"T T F\"\n");
    for (int i = 0; i < 3; i++) {
        assert_non_null(fgets(line, sizeof line, fp));
        const char *sym = i == 2 ? "X" : element[i]; /* unknown element written as X */
        size_t len = strlen(sym);
        assert_memory_equal(line, sym, len);
        assert_int_equal(read_doubles(line + len, got, 10), 10);
        assert_bits_equal(got, x + 3 * i, 3);
        /* masses: the element's weight, 1 for X; momenta / masses / ASE's time unit = v */
        const double mass[3] = {15.999, 1.008, 1.0};
        assert_true(got[3] == mass[i]);
        for (int d = 0; d < 3; d++) {
            const double back = got[4 + d] / got[3] / hmd_ase_time_unit_ps();
            assert_true(fabs(back - v[3 * i + d]) <= 4e-16 * fabs(v[3 * i + d]));
        }
        assert_bits_equal(got + 7, f + 3 * i, 3);
    }

    /* Frame 2: no cell, no velocities. */
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "3\n");
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "Properties=species:S:1:pos:R:3:forces:R:3 "
                              "energy=0.33333333333333331 step=200 time=0.10000000000000001 "
                              "pbc=\"F F F\"\n");
    for (int i = 0; i < 3; i++) {
        assert_non_null(fgets(line, sizeof line, fp));
        assert_int_equal(read_doubles(line + 1, got, 9), 6);
        assert_bits_equal(got, x + 3 * i, 3);
        assert_bits_equal(got + 3, f + 3 * i, 3);
    }
    assert_null(fgets(line, sizeof line, fp));
    fclose(fp);
}

static void test_errors_name_the_file(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/none/traj.xyz", scratch);
    struct hmd_xyz_traj *traj;
    assert_int_equal(hmd_xyz_traj_open(path, &traj, NULL, 0), HMD_ECANTCREAT);
    assert_null(traj);
    assert_non_null(strstr(hmd_error_msg(), path));

    assert_int_equal(hmd_xyz_traj_open("/dev/full", &traj, NULL, 0), HMD_OK);
    assert_int_equal(hmd_xyz_traj_write_frame(traj, 3, element, x, NULL, NULL, NULL, 0, 0, 0),
                     HMD_EIO);
    assert_non_null(strstr(hmd_error_msg(), "cannot write /dev/full: "));
    hmd_xyz_traj_close(traj);
    assert_int_equal(hmd_xyz_traj_close(NULL), HMD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_frames_read_back),
        cmocka_unit_test(test_errors_name_the_file),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
