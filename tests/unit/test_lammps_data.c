/* Unit tests of src/io/lammps_data.c: a data file written by ASE (atom style full, element
 * comments, velocities), a hand-made one (no style hint, image flags, ids out of order, skipped
 * sections), and input errors naming file and line. */
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

static void test_ase_full(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_lammps_data_read(DATA "water_ase.data", &frames, &n), HMD_OK);
    assert_int_equal(n, 1);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 8);
    assert_string_equal(f->title, "(written by ASE)");
    const char *elements[8] = {"O", "H", "H", "O", "H", "H", "Na", "Cl"};
    const char *names[8] = {"1", "2", "2", "1", "2", "2", "3", "4"};
    for (int i = 0; i < 8; i++) {
        assert_string_equal(f->element[i], elements[i]);
        assert_string_equal(f->name[i], names[i]);
        assert_int_equal(f->line[i], 20 + i);
    }
    assert_near(f->mass[0], 15.999, 1e-8);
    assert_near(f->mass[7], 35.45, 1e-8);
    assert_vec(&f->x[3], 1.957, 1.0, 1.0, 1e-15);
    assert_vec(&f->v[3], 10.0, 3.0, -4.0, 1e-14);
    assert_vec(&f->v[3 * 6], 1.5, 0.0, -1.5, 1e-14);
    assert_vec(f->box.h[0], 9.0, 0, 0, 0);
    assert_vec(f->box.h[1], 1.5, 8.5, 0, 0);
    assert_vec(f->box.h[2], -1.0, 2.0, 10.0, 0);
    assert_true(f->has_box && f->box.periodic[0] && f->box.periodic[1] && f->box.periodic[2]);
    assert_null(f->resname);
    assert_null(f->resnr);
    hmd_frames_free(frames, n);
}

static void test_handmade(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_lammps_data_read(DATA "handmade.data", &frames, &n), HMD_OK);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 5);
    /* a = (10 0 0), b = (1 10 0), c = (-0.5 0.25 12), origin (-1 0 2) */
    assert_vec(f->box.h[1], 1.0, 10.0, 0, 0);
    assert_vec(f->box.h[2], -0.5, 0.25, 12.0, 0);
    /* sorted by id; image flags applied; shifted by -(xlo, ylo, zlo) */
    assert_vec(&f->x[0], 11.5, -0.25, -12.0, 1e-12); /* id 1, image 1 0 -1 */
    assert_vec(&f->x[3], 3.0, 10.0, 0.0, 1e-12);     /* id 2, image 0 1 0 */
    assert_vec(&f->x[6], 1.5, 1.0, 1.0, 1e-12);      /* id 3 */
    assert_vec(&f->x[9], -4.5, 4.0, 6.0, 1e-12);     /* id 4, image -1 0 0 */
    assert_vec(&f->x[12], 5.0, 4.0, 6.0, 1e-12);     /* id 5 */
    assert_int_equal(f->line[0], 26);
    assert_int_equal(f->line[4], 28);
    /* element from the mass (no comments), mass per atom, name is the type */
    assert_string_equal(f->element[0], "O");
    assert_string_equal(f->element[1], "H");
    assert_string_equal(f->name[4], "1");
    assert_near(f->mass[0], 15.9994, 0);
    assert_near(f->mass[3], 1.008, 0);
    assert_vec(&f->v[0], 1.0, 0, 0, 0);
    assert_vec(&f->v[6], 0, 0, 3.0, 0);
    assert_vec(&f->v[12], 0.5, 0.5, 0.5, 0);
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

#define HEADER                                                                                     \
    "LAMMPS data file via write_data, version 2 Aug 2023, timestep = 0, units = metal\n\n"         \
    "2 atoms\n2 atom types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\n"
#define MASSES "Masses\n\n1 15.999 # O\n2 1.008 # H\n\n"

static void test_styles(void **state)
{
    struct hmd_frame *frames;
    int n;
    const char *path =
        tmp_file("lmp_atomic.data", HEADER MASSES "Atoms # atomic\n\n2 2 1.0 2.0 3.0\n1 1 4 5 6\n");
    assert_int_equal(hmd_lammps_data_read(path, &frames, &n), HMD_OK);
    assert_null(frames[0].v);
    assert_vec(&frames[0].x[0], 4, 5, 6, 0);
    assert_string_equal(frames[0].element[1], "H");
    hmd_frames_free(frames, n);

    /* "# full" decides, though 6+3 columns would read as charge with image flags */
    path = tmp_file("lmp_full.data",
                    HEADER MASSES "Atoms # full\n\n1 7 1 -0.8 1 2 3\n2 7 2 0.4 1.5 2 3 1 0 0\n");
    assert_int_equal(hmd_lammps_data_read(path, &frames, &n), HMD_OK);
    assert_vec(&frames[0].x[3], 11.5, 2, 3, 0);
    hmd_frames_free(frames, n);

    /* elements named in any case; Masses after Atoms; unknown sections skipped */
    path = tmp_file("lmp_order.data", HEADER "Atoms\n\n1 1 0 0 0\n2 2 1 1 1\n\n"
                                             "Bond Coeffs # harmonic\n\n1 450 0.9572\n\n"
                                             "Masses\n\n1 35.45 # cl\n2 2.014 # D\n");
    assert_int_equal(hmd_lammps_data_read(path, &frames, &n), HMD_OK);
    assert_string_equal(frames[0].element[0], "Cl");
    assert_string_equal(frames[0].element[1], ""); /* deuterium: no element */
    assert_near(frames[0].mass[1], 2.014, 0);
    hmd_frames_free(frames, n);
}

static void expect_error(const char *name, const char *text, const char *where, const char *what)
{
    struct hmd_frame *frames = (void *)1;
    int n = -1;
    hmd_error_clear();
    assert_int_equal(hmd_lammps_data_read(tmp_file(name, text), &frames, &n), HMD_EDATA);
    assert_null(frames);
    assert_int_equal(n, 0);
    const char *msg = hmd_error_msg();
    if (!strstr(msg, where) || !strstr(msg, what)) {
        fail_msg("message '%s' should contain '%s' and '%s'", msg, where, what);
    }
}

#define ATOMS "Atoms # atomic\n\n1 1 0 0 0\n2 2 1 1 1\n"

static void test_errors(void **state)
{
    expect_error("lmp_empty.data", "", "lmp_empty.data:1:", "file is empty");
    expect_error("lmp_units.data",
                 "LAMMPS data file via write_data, version 2 Aug 2023, timestep = 0, units = "
                 "real\n\n2 atoms\n",
                 "lmp_units.data:1:", "'units = real'");
    expect_error("lmp_noatoms.data", HEADER MASSES, "lmp_noatoms.data:14:", "no Atoms section");
    expect_error("lmp_noheader.data", "title\n2 atoms\n",
                 "lmp_noheader.data:2:", "no Atoms section");
    expect_error("lmp_notypes.data",
                 "t\n\n2 atoms\n0 1 xlo xhi\n0 1 ylo yhi\n0 1 zlo zhi\n"
                 "\nAtoms\n\n1 1 0 0 0\n",
                 "lmp_notypes.data:8:", "has no '<N> atom types' line");
    expect_error("lmp_nobox.data",
                 "t\n\n2 atoms\n1 atom types\n0 1 xlo xhi\n0 1 zlo zhi\n"
                 "\nAtoms\n\n1 1 0 0 0\n",
                 "lmp_nobox.data:8:", "no '<lo> <hi> ylo yhi' line");
    expect_error("lmp_bounds.data", "t\n\n2 atoms\n5 1 xlo xhi\n",
                 "lmp_bounds.data:4:", "expected '<lo> <hi> xlo xhi' with hi > lo");
    expect_error("lmp_count.data", "t\n\ntwo atoms\n",
                 "lmp_count.data:3:", "has no '<N> atoms' line");
    expect_error("lmp_header.data", "t\n\n5 10\n", "lmp_header.data:3:", "expected a header line");
    expect_error("lmp_natoms.data", "t\n\n-2 atoms\n",
                 "lmp_natoms.data:3:", "expected '<N> atoms' with N a positive integer");
    expect_error("lmp_type.data", HEADER MASSES "Atoms # atomic\n\n1 1 0 0 0\n2 3 1 1 1\n",
                 "lmp_type.data:18:", "atom 2 has type 3, but the header declares 2 atom types");
    expect_error("lmp_dup.data", HEADER MASSES "Atoms # atomic\n\n2 1 0 0 0\n2 2 1 1 1\n",
                 "lmp_dup.data:18:", "atom id 2 appears twice (also on line 17)");
    expect_error("lmp_fewer.data", HEADER MASSES "Atoms # atomic\n\n1 1 0 0 0\n",
                 "lmp_fewer.data:15:", "the Atoms section has 1 atoms, but line 3 declares 2");
    expect_error("lmp_more.data", HEADER MASSES ATOMS "3 1 2 2 2\n",
                 "lmp_more.data:19:", "more atoms than the 2 declared on line 3");
    expect_error("lmp_vel.data", HEADER MASSES ATOMS "\nVelocities\n\n1 0 0 0\n9 1 1 1\n",
                 "lmp_vel.data:23:", "Velocities: atom id 9 is not in the Atoms section");
    expect_error("lmp_veldup.data", HEADER MASSES ATOMS "\nVelocities\n\n1 0 0 0\n1 1 1 1\n",
                 "lmp_veldup.data:23:", "Velocities: atom id 1 appears twice (also on line 22)");
    expect_error("lmp_velfew.data", HEADER MASSES ATOMS "\nVelocities\n\n1 0 0 0\n",
                 "lmp_velfew.data:20:", "the Velocities section has 1 lines");
    expect_error("lmp_velnum.data", HEADER MASSES ATOMS "\nVelocities\n\n1 0 x 0\n",
                 "lmp_velnum.data:22:", "Velocities: expected '<id> <vx> <vy> <vz>'");
    expect_error("lmp_nomass.data", HEADER "Masses\n\n1 15.999\n\n" ATOMS,
                 "lmp_nomass.data:4:", "atom type 2 has no mass");
    expect_error("lmp_masstype.data", HEADER "Masses\n\n3 15.999\n",
                 "lmp_masstype.data:12:", "Masses: type 3 is not declared");
    expect_error("lmp_massneg.data", HEADER "Masses\n\n1 -1\n",
                 "lmp_massneg.data:12:", "positive mass");
    expect_error("lmp_y.data", HEADER MASSES "Atoms # atomic\n\n1 1 0 abc 0\n",
                 "lmp_y.data:17:", "atom 1: y is 'abc', not a finite number");
    expect_error("lmp_nan.data", HEADER MASSES "Atoms # atomic\n\n1 1 0 0 nan\n",
                 "lmp_nan.data:17:", "atom 1: z is 'nan', not a finite number");
    expect_error("lmp_image.data", HEADER MASSES "Atoms # atomic\n\n1 1 0 0 0 0 0.5 0\n",
                 "lmp_image.data:17:", "image flag y is '0.5'");
    expect_error("lmp_id.data", HEADER MASSES "Atoms # atomic\n\n0 1 0 0 0\n",
                 "lmp_id.data:17:", "atom id '0' is not a positive integer");
    expect_error("lmp_style.data", HEADER MASSES "Atoms # sphere\n\n1 1 1 1 0 0 0\n",
                 "lmp_style.data:15:", "atom style 'sphere' is not supported");
    expect_error("lmp_ncols.data", HEADER MASSES "Atoms # full\n\n1 1 1 0 0 0\n",
                 "lmp_ncols.data:17:",
                 "expected 7 columns (id mol type q x y z) or 10 with image flags; found 6");
    expect_error("lmp_guess.data", HEADER MASSES "Atoms\n\n1 1 0 0 0 0\n2 2 0 0\n",
                 "lmp_guess.data:18:", "expected 6 columns (id type q x y z)");
    expect_error("lmp_twice.data", HEADER MASSES ATOMS "\nAtoms\n\n",
                 "lmp_twice.data:20:", "second Atoms section (the first is on line 15)");
    expect_error("lmp_tric.data", "t\n\n1 atoms\n1 0 0 avec\n",
                 "lmp_tric.data:4:", "general triclinic cells");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ase_full),
        cmocka_unit_test(test_handmade),
        cmocka_unit_test(test_styles),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
