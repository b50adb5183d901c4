/* Unit tests of src/io/gro_write: fixed columns, units, number wrapping, box line, rotation of a
 * cell that is not lower triangular. */
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
#include "io/gro_write.h"

#define PATH_LEN 1024 /* test paths are short: a scratch folder and a file name */

static char scratch[PATH_LEN / 2]; /* a fresh folder for this run, under $HMD_TEST_TMP */

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_gro_write.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

static const char name[3][8] = {"OW", "HW1", "ABCDEFG"};
static const char resname[3][8] = {"SOL", "SOL", "LONGRES"};
static const int resnr[3] = {1, 1, 100001};
/* Å and Å/ps; chosen away from the rounding boundaries of %8.3f / %8.4f in nm */
static const double x[9] = {1.2612, 6.2434, 12.3456, 2.0, 7.0, 13.0, -1.0, 0.5012, 100.0};
static const double v[9] = {3.1412, -0.5, 10.0, 0.1, 0.2, 0.3, 0.12, 0.34, -0.56};

/* Runs hmd_gro_write_to() into a memory buffer; returns the text (caller frees). */
static char *gro_text(const char *title, int natoms, const char (*nm)[8], const char (*rn)[8],
                      const int *rnr, const double *xx, const double *vv, const struct hmd_box *box)
{
    char *text = NULL;
    size_t size = 0;
    FILE *fp = open_memstream(&text, &size);
    assert_non_null(fp);
    assert_int_equal(hmd_gro_write_to(fp, title, natoms, nm, rn, rnr, xx, vv, box, 10, 0.02),
                     HMD_OK);
    assert_int_equal(fclose(fp), 0);
    return text;
}

static void test_columns_units_and_names(void **state)
{
    const double h[3][3] = {{18.6206, 0, 0}, {0, 18.6206, 0}, {0, 0, 18.6206}};
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    char *text = gro_text("water\nnot in the title", 3, name, resname, resnr, x, v, &box);
    assert_string_equal(text,
                        "water t= 0.02000 step= 10\n"
                        "3\n"
                        "    1SOL     OW    1   0.126   0.624   1.235  0.3141 -0.0500  1.0000\n"
                        "    1SOL    HW1    2   0.200   0.700   1.300  0.0100  0.0200  0.0300\n"
                        "    1LONGRABCDE    3  -0.100   0.050  10.000  0.0120  0.0340 -0.0560\n"
                        "   1.86206   1.86206   1.86206\n");
    free(text);
}

static void test_defaults_without_residues_velocities_or_box(void **state)
{
    char *text = gro_text("", 2, name, NULL, NULL, x, NULL, NULL);
    assert_string_equal(text, " t= 0.02000 step= 10\n"
                              "2\n"
                              "    1MOL     OW    1   0.126   0.624   1.235\n"
                              "    1MOL    HW1    2   0.200   0.700   1.300\n"
                              "   0.00000   0.00000   0.00000\n");
    free(text);
}

static const char *last_line(const char *text)
{
    size_t n = strlen(text);
    assert_true(n >= 2);
    const char *p = text + n - 2;
    while (p > text && p[-1] != '\n') {
        p--;
    }
    return p;
}

static void test_triclinic_box_line(void **state)
{
    const double h[3][3] = {{10, 0, 0}, {3, 9, 0}, {-2, 1.5, 8}};
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    char *text = gro_text("t", 1, name, NULL, NULL, x, NULL, &box);
    assert_string_equal(last_line(text), "   1.00000   0.90000   0.80000   0.00000   0.00000"
                                         "   0.30000   0.00000  -0.20000   0.15000\n");
    free(text);
}

/* r R for the rotation by `angle` about the unit axis u (Rodrigues), row-vector convention. */
static void rotate(const double u[3], double angle, const double r[3], double out[3])
{
    double c = cos(angle), s = sin(angle);
    double ur = u[0] * r[0] + u[1] * r[1] + u[2] * r[2];
    double uxr[3] = {u[1] * r[2] - u[2] * r[1], u[2] * r[0] - u[0] * r[2],
                     u[0] * r[1] - u[1] * r[0]};
    for (int k = 0; k < 3; k++) {
        out[k] = r[k] * c + uxr[k] * s + u[k] * ur * (1 - c);
    }
}

static void test_rotated_cell_is_written_in_lower_triangular_form(void **state)
{
    const double h0[3][3] = {{10, 0, 0}, {3, 9, 0}, {-2, 1.5, 8}};
    const double rect0[3][3] = {{12, 0, 0}, {0, 13, 0}, {0, 0, 14}};
    const bool pbc[3] = {true, true, true};
    const double n = sqrt(14.0);
    const double u[3] = {1 / n, 2 / n, 3 / n};
    double h[3][3], rect[3][3], xr[9], vr[9];
    for (int a = 0; a < 3; a++) {
        rotate(u, 0.7, h0[a], h[a]);
        rotate(u, 0.7, rect0[a], rect[a]);
        rotate(u, 0.7, x + 3 * a, xr + 3 * a);
        rotate(u, 0.7, v + 3 * a, vr + 3 * a);
    }
    struct hmd_box box0, box;
    assert_int_equal(hmd_box_init(&box0, h0, pbc), HMD_OK);
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    char *want = gro_text("r", 3, name, resname, resnr, x, v, &box0);
    char *got = gro_text("r", 3, name, resname, resnr, xr, vr, &box);
    assert_string_equal(got, want);
    free(want);
    free(got);

    /* A rotated rectangular cell keeps the three-value box line. */
    assert_int_equal(hmd_box_init(&box, rect, pbc), HMD_OK);
    got = gro_text("r", 3, name, resname, resnr, xr, vr, &box);
    assert_string_equal(last_line(got), "   1.20000   1.30000   1.40000\n");
    free(got);
}

static void test_numbers_wrap_at_100000(void **state)
{
    enum { N = 100002 };
    char(*nm)[8] = calloc(N, sizeof *nm);
    int *rnr = malloc(N * sizeof *rnr);
    double *xx = calloc(3 * (size_t)N, sizeof *xx);
    assert_true(nm && rnr && xx);
    for (int i = 0; i < N; i++) {
        strcpy(nm[i], "C");
        rnr[i] = i + 1;
    }
    char *text = gro_text("big", N, (const char(*)[8])nm, NULL, rnr, xx, NULL, NULL);
    /* Atom lines 99999..100001 start after the title and count lines. */
    const char *line = text;
    for (int skip = 0; skip < 2 + 99998; skip++) {
        line = strchr(line, '\n') + 1;
    }
    assert_memory_equal(line, "99999MOL      C99999", 20);
    line = strchr(line, '\n') + 1;
    assert_memory_equal(line, "    0MOL      C    0", 20);
    line = strchr(line, '\n') + 1;
    assert_memory_equal(line, "    1MOL      C    1", 20);
    free(text);
    free(nm);
    free(rnr);
    free(xx);
}

static void test_file_is_backed_up_and_errors_name_it(void **state)
{
    char path[PATH_LEN], note[2 * PATH_LEN + 32];
    snprintf(path, sizeof path, "%s/md.gro", scratch);
    assert_int_equal(
        hmd_gro_write(path, "a", 1, name, NULL, NULL, x, NULL, NULL, 0, 0, note, sizeof note),
        HMD_OK);
    assert_string_equal(note, "");
    assert_int_equal(
        hmd_gro_write(path, "b", 1, name, NULL, NULL, x, NULL, NULL, 0, 0, note, sizeof note),
        HMD_OK);
    assert_non_null(strstr(note, "#md.gro.1#"));

    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[128];
    assert_non_null(fgets(line, sizeof line, fp));
    fclose(fp);
    assert_string_equal(line, "b t= 0.00000 step= 0\n");

    snprintf(path, sizeof path, "%s/none/md.gro", scratch);
    assert_int_equal(hmd_gro_write(path, "", 1, name, NULL, NULL, x, NULL, NULL, 0, 0, NULL, 0),
                     HMD_ECANTCREAT);
    assert_non_null(strstr(hmd_error_msg(), path));
    assert_int_equal(
        hmd_gro_write("/dev/full", "", 1, name, NULL, NULL, x, NULL, NULL, 0, 0, NULL, 0), HMD_EIO);
    assert_non_null(strstr(hmd_error_msg(), "/dev/full"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns_units_and_names),
        cmocka_unit_test(test_defaults_without_residues_velocities_or_box),
        cmocka_unit_test(test_triclinic_box_line),
        cmocka_unit_test(test_rotated_cell_is_written_in_lower_triangular_form),
        cmocka_unit_test(test_numbers_wrap_at_100000),
        cmocka_unit_test(test_file_is_backed_up_and_errors_name_it),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
