/* Unit tests of src/io/pdb.c: files written by GROMACS and ASE (see
 * tests/data/structures/README.md), CRYST1 to a lower-triangular cell, MODEL and END frames,
 * elements from columns 77-78 or guessed, and input errors naming file and line. */
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

static void test_gromacs_editconf(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_pdb_read(DATA "salt.pdb", &frames, &n), HMD_OK);
    assert_int_equal(n, 1);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 35);
    assert_string_equal(f->title, "water and salt");
    assert_null(f->v);
    assert_null(f->mass);
    /* no element column: guessed from the names */
    assert_string_equal(f->name[0], "OW");
    assert_string_equal(f->resname[0], "SOL");
    assert_string_equal(f->element[0], "O");
    assert_string_equal(f->element[1], "H");
    assert_string_equal(f->name[33], "NA");
    assert_string_equal(f->element[33], "Na");
    assert_string_equal(f->element[34], "Cl");
    assert_int_equal(f->resnr[34], 13);
    assert_int_equal(f->line[0], 5);
    assert_vec(&f->x[0], 2.3, 6.28, 1.13, 1e-12);
    assert_true(f->has_box);
    assert_vec(f->box.h[0], 7.5, 0, 0, 0);
    assert_vec(f->box.h[1], 0, 7.5, 0, 0);
    assert_vec(f->box.h[2], 0, 0, 7.5, 0);
    hmd_frames_free(frames, n);
}

static void test_gromacs_models(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_pdb_read(DATA "traj.pdb", &frames, &n), HMD_OK);
    assert_int_equal(n, 2);
    assert_near(frames[0].time, 0.0, 0);
    assert_near(frames[1].time, 0.001, 1e-15);
    assert_int_equal(frames[1].natoms, 35);
    assert_vec(&frames[1].x[0], 2.272, 6.208, 1.103, 1e-12);
    assert_string_equal(frames[1].element[34], "Cl"); /* element column "Cl" */
    assert_int_equal(frames[1].line[34], 82);
    assert_true(frames[1].has_box);
    hmd_frames_free(frames, n);
}

static void test_ase_triclinic(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_pdb_read(DATA "water_ase.pdb", &frames, &n), HMD_OK);
    const struct hmd_frame *f = &frames[0];
    assert_int_equal(f->natoms, 8);
    assert_string_equal(f->name[6], "Na");
    assert_string_equal(f->element[6], "Na"); /* element column "NA" */
    assert_string_equal(f->element[7], "Cl");
    /* ASE's cell rows (9 0 0), (1.5 8.5 0), (-1 2 10) through CRYST1's rounded lengths and
     * angles */
    assert_true(hmd_box_is_lower_triangular(&f->box));
    assert_vec(f->box.h[0], 9.0, 0, 0, 1e-12);
    assert_vec(f->box.h[1], 1.5, 8.5, 0, 2e-3);
    assert_vec(f->box.h[2], -1.0, 2.0, 10.0, 2e-3);
    assert_vec(&f->x[3 * 7], 6.0, 2.5, 7.5, 1e-12);
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

#define ATOM_O "ATOM      1  OW  SOL     1       2.300   6.280   1.130  1.00  0.00           O\n"
#define ATOM_H "ATOM      2  HW1 SOL     1       1.370   6.258   1.496  1.00  0.00           H\n"
#define HETATM_CA "HETATM    3 CA    CA     2       0.500   0.500   0.500  1.00  0.00\n"

static void test_frames_and_boxes(void **state)
{
    struct hmd_frame *frames;
    int n;
    /* VMD style: frames separated by END, placeholder cell, no element column */
    const char *path = tmp_file("pdb_vmd.pdb", "CRYST1    1.000    1.000    1.000  90.00  90.00  "
                                               "90.00 P 1           1\n" ATOM_O ATOM_H
                                               "END\n" ATOM_O ATOM_H HETATM_CA "END\n");
    assert_int_equal(hmd_pdb_read(path, &frames, &n), HMD_OK);
    assert_int_equal(n, 2);
    assert_int_equal(frames[0].natoms, 2);
    assert_int_equal(frames[1].natoms, 3);
    assert_false(frames[0].has_box);
    assert_string_equal(frames[1].element[2], "Ca"); /* residue CA, atom CA: calcium */
    assert_int_equal(frames[1].line[2], 7);
    hmd_frames_free(frames, n);

    /* no CRYST1 at all; ATOM records after ENDMDL start a new frame */
    path = tmp_file("pdb_nocryst.pdb",
                    "REMARK test\nMODEL        1\n" ATOM_O "TER\nENDMDL\n" ATOM_H "END\n");
    assert_int_equal(hmd_pdb_read(path, &frames, &n), HMD_OK);
    assert_int_equal(n, 2);
    assert_false(frames[0].has_box);
    assert_string_equal(frames[1].element[0], "H");
    hmd_frames_free(frames, n);

    /* a monoclinic cell: c tilted in xz; unknown element column falls back to the name */
    path = tmp_file("pdb_mono.pdb", "CRYST1   10.000   12.000   14.000  90.00 120.00  90.00 P "
                                    "1           1\n"
                                    "ATOM      1  OW  SOL     1       2.300   6.280   1.130  "
                                    "1.00  0.00           X\n");
    assert_int_equal(hmd_pdb_read(path, &frames, &n), HMD_OK);
    assert_string_equal(frames[0].element[0], "O");
    assert_vec(frames[0].box.h[0], 10, 0, 0, 0);
    assert_vec(frames[0].box.h[1], 0, 12, 0, 0);
    assert_vec(frames[0].box.h[2], -7.0, 0, 14 * sqrt(3) / 2, 1e-12);
    hmd_frames_free(frames, n);
}

static void expect_error(const char *name, const char *text, const char *where, const char *what)
{
    struct hmd_frame *frames = (void *)1;
    int n = -1;
    hmd_error_clear();
    assert_int_equal(hmd_pdb_read(tmp_file(name, text), &frames, &n), HMD_EDATA);
    assert_null(frames);
    assert_int_equal(n, 0);
    const char *msg = hmd_error_msg();
    if (!strstr(msg, where) || !strstr(msg, what)) {
        fail_msg("message '%s' should contain '%s' and '%s'", msg, where, what);
    }
}

static void test_errors(void **state)
{
    expect_error("pdb_empty.pdb", "", "pdb_empty.pdb:1:", "file is empty");
    expect_error("pdb_noatoms.pdb", "REMARK nothing\nEND\n",
                 "pdb_noatoms.pdb:2:", "no ATOM or HETATM records");
    expect_error("pdb_x.pdb",
                 ATOM_O "ATOM      2  HW1 SOL     1       1.3a0   6.258   1.496  1.00  0.00\n",
                 "pdb_x.pdb:2:", "x in columns 31-38 is '   1.3a0'");
    expect_error("pdb_nan.pdb",
                 ATOM_O "ATOM      2  HW1 SOL     1       1.370     nan   1.496  1.00  0.00\n",
                 "pdb_nan.pdb:2:", "y in columns 39-46 is '     nan', not a finite number");
    expect_error("pdb_short.pdb", ATOM_O "ATOM      2  HW1 SOL     1       1.370   6.258\n",
                 "pdb_short.pdb:2:", "z in columns 47-54 is ''");
    expect_error("pdb_cryst.pdb",
                 "CRYST1   10.000   1x.000   10.000  90.00  90.00  90.00 P 1           1\n" ATOM_O,
                 "pdb_cryst.pdb:1:", "CRYST1: b in columns 16-24 is '   1x.000'");
    expect_error("pdb_angles.pdb",
                 "CRYST1   10.000   10.000   10.000 150.00 150.00 150.00 P 1           1\n" ATOM_O,
                 "pdb_angles.pdb:1:", "do not form a cell");
    expect_error("pdb_flat.pdb",
                 "CRYST1   10.000   10.000    0.000  90.00  90.00  90.00 P 1           1\n" ATOM_O,
                 "pdb_flat.pdb:1:", "do not form a cell");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gromacs_editconf), cmocka_unit_test(test_gromacs_models),
        cmocka_unit_test(test_ase_triclinic),    cmocka_unit_test(test_frames_and_boxes),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
