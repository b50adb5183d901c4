/* Unit tests of src/io/gro.c: files written by GROMACS (gmx genion, trjconv, editconf; see
 * tests/data/structures/README.md), field widths from the decimal points, and every input error
 * naming file and line. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/structure.h"
#include "test_util.h"

#define DATA HMD_TEST_DATA "/structures/readers/"

static void test_genion_output(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_gro_read(DATA "salt.gro", &frames, &n), HMD_OK);
    assert_int_equal(n, 1);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 35);
    assert_string_equal(f->title, "water and salt");
    assert_true(f->time == 0.0);
    assert_null(f->v);
    assert_null(f->mass);
    /* "    1SOL     OW    1   0.230   0.628   0.113" on line 3 */
    assert_string_equal(f->name[0], "OW");
    assert_string_equal(f->resname[0], "SOL");
    assert_int_equal(f->resnr[0], 1);
    assert_int_equal(f->line[0], 3);
    assert_string_equal(f->element[0], "O");
    assert_string_equal(f->element[1], "H");
    assert_string_equal(f->element[2], "H");
    assert_vec(&f->x[0], 2.30, 6.28, 1.13, 1e-12);
    /* the ions: residue NA atom NA, residue CL atom CL */
    assert_string_equal(f->name[33], "NA");
    assert_string_equal(f->element[33], "Na");
    assert_string_equal(f->element[34], "Cl");
    assert_int_equal(f->resnr[34], 13);
    assert_int_equal(f->line[34], 37);
    assert_vec(&f->x[3 * 34], 3.07, 0.63, 6.18, 1e-12);
    assert_true(f->has_box);
    assert_true(hmd_box_is_lower_triangular(&f->box));
    assert_vec(f->box.h[0], 7.5, 0, 0, 1e-12);
    assert_vec(f->box.h[1], 0, 7.5, 0, 1e-12);
    assert_vec(f->box.h[2], 0, 0, 7.5, 1e-12);
    assert_true(f->box.periodic[0] && f->box.periodic[1] && f->box.periodic[2]);
    hmd_frames_free(frames, n);
}

static void test_trajectory_with_velocities(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_gro_read(DATA "traj.gro", &frames, &n), HMD_OK);
    assert_int_equal(n, 2);
    assert_int_equal(frames[0].natoms, 35);
    assert_int_equal(frames[1].natoms, 35);
    assert_near(frames[0].time, 0.0, 0);
    assert_near(frames[1].time, 0.001, 1e-15);
    assert_non_null(frames[0].v);
    assert_non_null(frames[1].v);
    assert_vec(&frames[0].v[0], 4.007, 1.026, 3.057, 1e-12); /* nm/ps -> Å/ps */
    assert_vec(&frames[1].x[0], 2.27, 6.21, 1.10, 1e-12);
    assert_vec(&frames[1].v[3 * 34], -39.607, 61.368, 73.693, 1e-12);
    assert_int_equal(frames[1].line[0], 41);
    assert_string_equal(frames[1].element[34], "Cl");
    hmd_frames_free(frames, n);
}

static void test_triclinic_box(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_gro_read(DATA "tric.gro", &frames, &n), HMD_OK);
    const struct hmd_frame *f = &frames[0];
    /* v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y) =
     * 1.00000 1.06252 1.18061 0 0 0.28470 0 0.10459 0.18770 (nm) */
    assert_vec(f->box.h[0], 10.0, 0, 0, 1e-12);
    assert_vec(f->box.h[1], 2.8470, 10.6252, 0, 1e-12);
    assert_vec(f->box.h[2], 1.0459, 1.8770, 11.8061, 1e-12);
    assert_vec(&f->x[3 * 34], 7.45, 3.32, 9.32, 1e-12);
    assert_vec(&f->v[3 * 34], -43.022, 71.102, 83.495, 1e-12);
    hmd_frames_free(frames, n);
}

static void test_width_from_decimal_points(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_gro_read(DATA "hiprec.gro", &frames, &n), HMD_OK);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 3);
    assert_near(f->time, 12.5, 0);
    assert_vec(&f->x[0], 1.2345, 2.3456, 3.4567, 1e-12);
    assert_vec(&f->v[0], 1.23456, -2.34567, 3.45678, 1e-12);
    assert_vec(&f->x[6], -5.0, 101.2345, 10.0, 1e-12);
    assert_vec(&f->v[6], 0, 0, 1e-5, 1e-15);
    assert_string_equal(f->element[2], "Cl");
    assert_vec(f->box.h[0], 20, 0, 0, 1e-12);
    assert_vec(f->box.h[1], 1, 21, 0, 1e-12);
    assert_vec(f->box.h[2], -2, 3, 22, 1e-12);
    hmd_frames_free(frames, n);
}

static const char *tmp_file(const char *name, const char *text)
{
    static char path[4096];
    const char *dir = getenv("HMD_TEST_TMP");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return path;
}

static void test_zero_box_means_no_box(void **state)
{
    const char *path = tmp_file("gro_nobox.gro", "molecule\n"
                                                 "    2\n"
                                                 "    1MOL      C    1   0.100   0.200   0.300\n"
                                                 "    1MOL      O    2   0.212   0.200   0.300\n"
                                                 "   0.00000   0.00000   0.00000\n");
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_gro_read(path, &frames, &n), HMD_OK);
    assert_false(frames[0].has_box);
    assert_vec(&frames[0].x[3], 2.12, 2.0, 3.0, 1e-12);
    hmd_frames_free(frames, n);
}

/* Reads `text` as `name`, expects HMD_EDATA and a message holding `where` and `what`. */
static void expect_error(const char *name, const char *text, const char *where, const char *what)
{
    struct hmd_frame *frames = (void *)1;
    int n = -1;
    hmd_error_clear();
    assert_int_equal(hmd_gro_read(tmp_file(name, text), &frames, &n), HMD_EDATA);
    assert_null(frames);
    assert_int_equal(n, 0);
    const char *msg = hmd_error_msg();
    if (!strstr(msg, where) || !strstr(msg, what)) {
        fail_msg("message '%s' should contain '%s' and '%s'", msg, where, what);
    }
}

#define ATOM1 "    1SOL     OW    1   0.100   0.200   0.300\n"
#define ATOM2 "    1SOL    HW1    2   0.200   0.200   0.300\n"
#define BOX "   1.00000   1.00000   1.00000\n"

static void test_errors(void **state)
{
    expect_error("gro_empty.gro", "", "gro_empty.gro:1:", "file is empty");
    expect_error("gro_count.gro", "t\n  abc\n" ATOM1 BOX,
                 "gro_count.gro:2:", "expected the number of atoms");
    expect_error("gro_count0.gro", "t\n0\n" BOX,
                 "gro_count0.gro:2:", "expected the number of atoms (a positive integer)");
    expect_error("gro_nocount.gro", "title only\n",
                 "gro_nocount.gro:1:", "file ends after the title");
    expect_error("gro_short.gro", "t\n    3\n" ATOM1 ATOM2 BOX, "gro_short.gro:5:",
                 "expected atom 3 of the 3 declared on line 2; found what looks like the box");
    expect_error("gro_eof.gro", "t\n    3\n" ATOM1 ATOM2,
                 "gro_eof.gro:4:", "file ends after 2 of the 3 atoms declared on line 2");
    expect_error("gro_nobox.gro", "t\n    2\n" ATOM1 ATOM2,
                 "gro_nobox.gro:4:", "expected the box line");
    expect_error("gro_x.gro",
                 "t\n    2\n" ATOM1 "    1SOL    HW1    2   0.200   0.2x0   0.300\n" BOX,
                 "gro_x.gro:4:", "atom 2: coordinate y in columns 29-36 is '   0.2x0'");
    expect_error("gro_nan.gro",
                 "t\n    2\n" ATOM1 "    1SOL    HW1    2   0.200     nan   0.300\n" BOX,
                 "gro_nan.gro:4:", "is '     nan', not a finite number");
    expect_error("gro_cut.gro", "t\n    2\n" ATOM1 "    1SOL    HW1    2   0.200   0.200\n" BOX,
                 "gro_cut.gro:4:", "coordinate z in columns 37-44 is ''");
    expect_error("gro_dots.gro", "t\n    1\n    1SOL     OW    1   0.100  0.2000   0.300\n" BOX,
                 "gro_dots.gro:3:", "not evenly spaced");
    expect_error("gro_nodots.gro", "t\n    1\n    1SOL     OW    1     100     200     300\n" BOX,
                 "gro_nodots.gro:3:", "expected x, y, z with decimal points");
    expect_error("gro_resnr.gro", "t\n    1\n    xSOL     OW    1   0.100   0.200   0.300\n" BOX,
                 "gro_resnr.gro:3:", "residue number in columns 1-5");
    expect_error("gro_vel.gro",
                 "t\n    2\n"
                 "    1SOL     OW    1   0.100   0.200   0.300  0.1000  0.2000  0.3000\n"
                 "    1SOL    HW1    2   0.200   0.200   0.300  0.1000\n" BOX,
                 "gro_vel.gro:4:", "velocity y in columns 53-60 is ''");
    expect_error("gro_box4.gro", "t\n    1\n" ATOM1 "   1.0 1.0 1.0 1.0\n",
                 "gro_box4.gro:4:", "box line: expected 3 or 9 numbers");
    expect_error("gro_boxnan.gro", "t\n    1\n" ATOM1 "   1.0 nan 1.0\n",
                 "gro_boxnan.gro:4:", "box line: value 2 is 'nan'");
    expect_error("gro_flat.gro", "t\n    1\n" ATOM1 "   1.0 0.0 1.0\n",
                 "gro_flat.gro:4:", "box line: cell is degenerate");
    expect_error("gro_frame2.gro", "t\n    1\n" ATOM1 BOX "second frame\n    2\n" ATOM1,
                 "gro_frame2.gro:7:", "file ends after 1 of the 2 atoms declared on line 6");
}

static void test_missing_file(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_gro_read(DATA "no_such_file.gro", &frames, &n), HMD_ENOINPUT);
    assert_non_null(strstr(hmd_error_msg(), "no_such_file.gro"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_genion_output),
        cmocka_unit_test(test_trajectory_with_velocities),
        cmocka_unit_test(test_triclinic_box),
        cmocka_unit_test(test_width_from_decimal_points),
        cmocka_unit_test(test_zero_box_means_no_box),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
