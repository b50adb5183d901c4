/* Unit tests of the error paths of src/io/traj_h5md, src/io/traj_xtc and src/io/out_groups
 * (their files are read back by other programs in tests/production/test_traj_readback.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/out_groups.h"
#include "io/structure.h"
#include "io/traj_h5md.h"
#include "io/traj_xtc.h"
#include "test_util.h"

static char scratch[512];

static int make_scratch(void **state)
{
    return hmd_test_scratch(scratch, sizeof scratch, "test_traj_writers");
}

/* Four atoms: SOL O, SOL H, NA Na, and one without a residue name or element. */
static void make_frame(struct hmd_frame *f)
{
    assert_int_equal(hmd_frame_alloc(f, 4), HMD_OK);
    f->resname = calloc(4, sizeof *f->resname);
    const char *res[4] = {"SOL", "SOL", "NA", ""}, *el[4] = {"O", "H", "Na", ""};
    for (int i = 0; i < 4; i++) {
        strcpy(f->resname[i], res[i]);
        strcpy(f->element[i], el[i]);
    }
}

static void test_groups(void **state)
{
    struct hmd_frame f;
    make_frame(&f);
    int *sel, n;
    assert_int_equal(hmd_out_group_select("System", "k", &f, &sel, &n), HMD_OK);
    assert_null(sel);
    assert_int_equal(n, 4);
    assert_int_equal(hmd_out_group_select("non-water", "k", &f, &sel, &n), HMD_OK);
    assert_int_equal(n, 2);
    assert_int_equal(sel[0], 2);
    assert_int_equal(sel[1], 3);
    free(sel);
    assert_int_equal(hmd_out_group_select(" NA\t@O ", "k", &f, &sel, &n), HMD_OK);
    assert_int_equal(n, 2); /* union, in the structure's order */
    assert_int_equal(sel[0], 0);
    assert_int_equal(sel[1], 2);
    free(sel);
    assert_int_equal(hmd_out_group_select("Water System", "k", &f, &sel, &n), HMD_OK);
    assert_null(sel);
    assert_int_equal(hmd_out_group_select("Protein", "compressed-x-grps", &f, &sel, &n),
                     HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "compressed-x-grps: group 'Protein' has no atoms"));
    assert_non_null(strstr(hmd_error_msg(), "SOL, NA"));
    assert_int_equal(hmd_out_group_select("  ", "h5md-grps", &f, &sel, &n), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "h5md-grps is empty"));
    assert_int_equal(hmd_out_group_select("sol", "k", &f, &sel, &n), HMD_ECONFIG);
    hmd_frame_free(&f);
}

static void test_h5md_errors(void **state)
{
    char path[1024];
    struct hmd_h5md_traj *t;
    const int bad_sel[2] = {0, 4};
    snprintf(path, sizeof path, "%s/a.h5md", scratch);
    assert_int_equal(hmd_h5md_traj_open(path, &t, 4, bad_sel, 2, NULL, NULL, HMD_H5MD_POSITION,
                                        NULL, "v", NULL, 0),
                     HMD_ECONFIG);
    assert_null(t);
    assert_int_equal(hmd_h5md_traj_open(path, &t, 4, NULL, 0, NULL, NULL, 0, NULL, "v", NULL, 0),
                     HMD_ECONFIG);
    snprintf(path, sizeof path, "%s/none/a.h5md", scratch);
    assert_int_equal(
        hmd_h5md_traj_open(path, &t, 4, NULL, 0, NULL, NULL, HMD_H5MD_POSITION, NULL, "v", NULL, 0),
        HMD_ECANTCREAT);
    assert_non_null(strstr(hmd_error_msg(), path));
    /* a file without velocities refuses them; without a cell, positions need none */
    snprintf(path, sizeof path, "%s/b.h5md", scratch);
    assert_int_equal(hmd_h5md_traj_open(path, &t, 4, NULL, 0, "water", NULL, HMD_H5MD_POSITION,
                                        NULL, "v", NULL, 0),
                     HMD_OK);
    double x[12] = {0};
    assert_int_equal(hmd_h5md_traj_write_frame(t, x, NULL, NULL, NULL, 0, 0.0), HMD_OK);
    assert_int_equal(hmd_h5md_traj_write_frame(t, NULL, x, NULL, NULL, 1, 0.1), HMD_ESOFTWARE);
    assert_non_null(strstr(hmd_error_msg(), "without /velocity"));
    assert_int_equal(hmd_h5md_traj_close(t), HMD_OK);
    assert_int_equal(hmd_h5md_traj_close(NULL), HMD_OK);
    /* a second file of that name backs the first up */
    char note[2048];
    assert_int_equal(hmd_h5md_traj_open(path, &t, 4, NULL, 0, NULL, NULL, HMD_H5MD_FORCE, NULL, "v",
                                        note, sizeof note),
                     HMD_OK);
    assert_non_null(strstr(note, "#b.h5md.1#"));
    assert_int_equal(hmd_h5md_traj_close(t), HMD_OK);
}

static void test_xtc_without_chemfiles(void **state)
{
    char path[1024];
    struct hmd_xtc_traj *t;
    snprintf(path, sizeof path, "%s/a.xtc", scratch);
    assert_int_equal(hmd_xtc_traj_open(path, &t, 4, NULL, 0, 0.0, NULL, 0), HMD_ECONFIG);
    setenv("HALOMD_CHEMFILES", "/nonexistent/libchemfiles.so", 1);
    assert_int_equal(hmd_xtc_traj_open(path, &t, 4, NULL, 0, 1000, NULL, 0), HMD_ENOTSUP);
    assert_null(t);
    assert_non_null(strstr(hmd_error_msg(), "pip install chemfiles"));
    assert_int_equal(hmd_xtc_traj_close(NULL), HMD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_h5md_errors),
        cmocka_unit_test(test_xtc_without_chemfiles),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
