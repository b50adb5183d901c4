/* Unit tests of src/io/xyz.c: extended XYZ written by ASE (momenta, masses, partial pbc; see
 * tests/data/structures/README.md), hand-written extended XYZ (quotes, vel, Time, odd column
 * types), plain XYZ, and input errors naming file and line. */
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

static void assert_vec_scaled(const double *got, const double *want, double scale, double tol)
{
    for (int d = 0; d < 3; d++) {
        assert_near(got[d], scale * want[d], tol);
    }
}

/* What tests/data/structures/README.md gave ASE. */
static const double cell[3][3] = {{9.0, 0.0, 0.0}, {1.5, 8.5, 0.0}, {-1.0, 2.0, 10.0}};
static const char *const symbols[8] = {"O", "H", "H", "O", "H", "H", "Na", "Cl"};
static const double pos[8][3] = {
    {1.000, 1.000, 1.000}, {1.957, 1.000, 1.000}, {0.760, 1.927, 1.000}, {4.000, 4.000, 5.000},
    {4.957, 4.000, 5.000}, {3.760, 4.927, 5.000}, {2.500, 6.000, 3.000}, {6.000, 2.500, 7.500},
};
static const double vel[8][3] = {
    {1.0, -2.0, 0.5}, {10.0, 3.0, -4.0}, {-6.0, 2.0, 8.0}, {0.25, 0.5, -0.75},
    {4.0, -8.0, 2.0}, {-3.0, 7.0, 1.0},  {1.5, 0.0, -1.5}, {-0.5, 2.5, 0.0},
};

static void test_ase_momenta(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_xyz_read(DATA "water.extxyz", &frames, &n), HMD_OK);
    assert_int_equal(n, 2);
    for (int k = 0; k < 2; k++) {
        const struct hmd_frame *f = &frames[k];
        assert_int_equal(f->natoms, 8);
        assert_true(f->has_box);
        for (int a = 0; a < 3; a++) {
            assert_vec_scaled(f->box.h[a], cell[a], 1.0, 0);
        }
        const double shift[3] = {0.5 * k, 0.25 * k, -0.125 * k};
        for (int i = 0; i < 8; i++) {
            assert_string_equal(f->element[i], symbols[i]);
            assert_string_equal(f->name[i], symbols[i]);
            assert_int_equal(f->line[i], 3 + 10 * k + i);
            for (int d = 0; d < 3; d++) {
                assert_near(f->x[3 * i + d], pos[i][d] + shift[d], 1e-12);
            }
            /* frame 0: momenta over standard weights (ASE's Na is 22.98977, ours 22.990);
             * frame 1: over the masses column */
            assert_vec_scaled(&f->v[3 * i], vel[i], 1.0 + k, k == 0 ? 1e-4 : 1e-5);
        }
    }
    assert_null(frames[0].mass);
    assert_non_null(frames[1].mass);
    assert_near(frames[1].mass[6], 23.0, 0);
    assert_true(frames[0].box.periodic[2]);
    assert_true(frames[1].box.periodic[0] && frames[1].box.periodic[1]);
    assert_false(frames[1].box.periodic[2]); /* pbc="T T F" */
    assert_non_null(strstr(frames[0].title, "energy=-123.25"));
    hmd_frames_free(frames, n);
}

static void test_handmade_extended(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_xyz_read(DATA "handmade.extxyz", &frames, &n), HMD_OK);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 3);
    assert_near(f->time, 1.5, 0);
    assert_string_equal(f->name[0], "OW");
    assert_string_equal(f->element[0], "O");
    assert_string_equal(f->name[1], "HW1");
    assert_string_equal(f->element[1], "H");
    assert_string_equal(f->name[2], "Na+");
    assert_string_equal(f->element[2], "Na");
    const double v1[3] = {1.0, 2.0, 3.0}, x2[3] = {5.0, 5.0, 5.0};
    assert_vec_scaled(&f->v[3], v1, 1.0, 0);
    assert_vec_scaled(&f->x[6], x2, 1.0, 0);
    assert_near(f->box.h[1][1], 11.0, 0);
    assert_near(f->box.h[2][2], 12.0, 0);
    assert_null(f->mass);
    hmd_frames_free(frames, n);
}

static void test_plain(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_xyz_read(DATA "plain.xyz", &frames, &n), HMD_OK);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 3);
    assert_false(f->has_box);
    assert_null(f->v);
    assert_string_equal(f->title, "water molecule, plain XYZ");
    assert_string_equal(f->element[2], "H");
    assert_near(f->x[6], -0.239987, 0);
    assert_near(f->x[7], 0.926627, 0);
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

static void test_plain_variants(void **state)
{
    struct hmd_frame *frames;
    int n;
    /* atomic numbers and upper-case symbols as species, extra columns, two frames with blank
     * lines between */
    const char *path = tmp_file("xyz_variants.xyz", "2\n\n8 0 0 0 extra\nCL 1 0 0\n\n"
                                                    "1\nsecond\nOW 0 0 1\n\n");
    assert_int_equal(hmd_xyz_read(path, &frames, &n), HMD_OK);
    assert_int_equal(n, 2);
    assert_string_equal(frames[0].element[0], "O");
    assert_string_equal(frames[0].element[1], "Cl");
    assert_string_equal(frames[1].element[0], "O");
    assert_int_equal(frames[1].line[0], 8);
    assert_false(frames[1].has_box);
    hmd_frames_free(frames, n);

    /* pbc all false with a lattice: a cell that is not periodic */
    path = tmp_file("xyz_nopbc.xyz", "1\nLattice=\"5 0 0 0 5 0 0 0 5\" pbc=\"F F F\"\nH 1 1 1\n");
    assert_int_equal(hmd_xyz_read(path, &frames, &n), HMD_OK);
    assert_true(frames[0].has_box);
    assert_false(frames[0].box.periodic[0] || frames[0].box.periodic[1] ||
                 frames[0].box.periodic[2]);
    hmd_frames_free(frames, n);
}

static void expect_error(const char *name, const char *text, const char *where, const char *what)
{
    struct hmd_frame *frames = (void *)1;
    int n = -1;
    hmd_error_clear();
    assert_int_equal(hmd_xyz_read(tmp_file(name, text), &frames, &n), HMD_EDATA);
    assert_null(frames);
    assert_int_equal(n, 0);
    const char *msg = hmd_error_msg();
    if (!strstr(msg, where) || !strstr(msg, what)) {
        fail_msg("message '%s' should contain '%s' and '%s'", msg, where, what);
    }
}

#define LATTICE "Lattice=\"5 0 0 0 5 0 0 0 5\" "

static void test_errors(void **state)
{
    expect_error("xyz_empty.xyz", "", "xyz_empty.xyz:1:", "file is empty");
    expect_error("xyz_count.xyz", "three\n\nH 0 0 0\n",
                 "xyz_count.xyz:1:", "expected the number of atoms");
    expect_error("xyz_nocomment.xyz", "2\n",
                 "xyz_nocomment.xyz:1:", "file ends after the atom count");
    expect_error("xyz_short.xyz", "3\ncomment\nH 0 0 0\nH 1 0 0\n",
                 "xyz_short.xyz:4:", "file ends after 2 of the 3 atoms declared on line 1");
    expect_error("xyz_frame2.xyz", "1\n\nH 0 0 0\n2\n\nH 0 0 0\n",
                 "xyz_frame2.xyz:6:", "file ends after 1 of the 2 atoms declared on line 4");
    expect_error("xyz_nopos.xyz", "1\nProperties=species:S:1:position:R:3\nH 0 0 0\n",
                 "xyz_nopos.xyz:2:", "there is no pos:R:3");
    expect_error("xyz_postype.xyz", "1\nProperties=species:S:1:pos:I:3\nH 0 0 0\n",
                 "xyz_postype.xyz:2:", "pos is I:3; expected pos:R:3");
    expect_error("xyz_props.xyz", "1\nProperties=species:S:1:pos:R\nH 0 0 0\n",
                 "xyz_props.xyz:2:", "a name, type or count is missing");
    expect_error("xyz_proptype.xyz", "1\nProperties=species:S:1:pos:R:3:q:X:1\nH 0 0 0 1\n",
                 "xyz_proptype.xyz:2:", "types are S, R, I or L");
    expect_error("xyz_lattice.xyz", "1\nLattice=\"5 0 0 0 5 0\"\nH 0 0 0\n",
                 "xyz_lattice.xyz:2:", "Lattice has 6 values; expected 9");
    expect_error("xyz_latnum.xyz", "1\nLattice=\"5 0 0 0 five 0 0 0 5\"\nH 0 0 0\n",
                 "xyz_latnum.xyz:2:", "Lattice value 5 is 'five'");
    expect_error("xyz_flat.xyz", "1\nLattice=\"5 0 0 0 5 0 0 0 0\"\nH 0 0 0\n",
                 "xyz_flat.xyz:2:", "Lattice: cell is degenerate");
    expect_error("xyz_pbc.xyz", "1\n" LATTICE "pbc=\"T T\"\nH 0 0 0\n",
                 "xyz_pbc.xyz:2:", "pbc: expected three of T, F");
    expect_error("xyz_pbconly.xyz", "1\npbc=\"T T T\"\nH 0 0 0\n",
                 "xyz_pbconly.xyz:2:", "pbc has periodic directions but there is no Lattice");
    expect_error("xyz_time.xyz", "1\n" LATTICE "Time=soon\nH 0 0 0\n",
                 "xyz_time.xyz:2:", "Time is 'soon'");
    expect_error("xyz_x.xyz", "2\n\nH 0 0 0\nH 0 abc 0\n",
                 "xyz_x.xyz:4:", "atom 2: pos (column 3) is 'abc', not a finite number");
    expect_error("xyz_nan.xyz", "1\n" LATTICE "\nH 0 0 nan\n",
                 "xyz_nan.xyz:3:", "atom 1: pos (column 4) is 'nan', not a finite number");
    expect_error("xyz_inf.xyz", "1\n\nH inf 0 0\n", "xyz_inf.xyz:3:", "is 'inf', not a finite");
    expect_error("xyz_cols.xyz",
                 "1\n" LATTICE "Properties=species:S:1:pos:R:3:vel:R:3\nH 0 0 0 1\n",
                 "xyz_cols.xyz:3:", "atom 1: expected 7 columns (from Properties); found 5");
    expect_error("xyz_extra.xyz", "1\n" LATTICE "Properties=species:S:1:pos:R:3\nH 0 0 0 1\n",
                 "xyz_extra.xyz:3:", "expected 4 columns (from Properties); found 5");
    expect_error("xyz_plaincols.xyz", "1\nplain\nH 0 0\n",
                 "xyz_plaincols.xyz:3:", "expected 4 columns (species x y z); found 3");
    expect_error("xyz_momenta.xyz",
                 "1\n" LATTICE "Properties=species:S:1:pos:R:3:momenta:R:3\nX 0 0 0 1 1 1\n",
                 "xyz_momenta.xyz:3:", "atom 1 'X': momenta need a mass");
    expect_error("xyz_mass.xyz", "1\nProperties=species:S:1:pos:R:3:masses:R:1\nH 0 0 0 -1\n",
                 "xyz_mass.xyz:3:", "atom 1: mass -1 is not positive");
    expect_error("xyz_z.xyz", "1\nProperties=Z:I:1:pos:R:3\n200 0 0 0\n",
                 "xyz_z.xyz:3:", "Z (column 1) is '200', not an atomic number");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ase_momenta), cmocka_unit_test(test_handmade_extended),
        cmocka_unit_test(test_plain),       cmocka_unit_test(test_plain_variants),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
