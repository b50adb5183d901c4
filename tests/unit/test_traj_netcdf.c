/* Unit tests of src/io/traj_netcdf: the file is read back with libnetcdf and checked against the
 * AMBER convention (format, dimensions, attributes, units) and the values written. Without
 * NetCDF in the build, the stubs must report HMD_ENOTSUP. */
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
#include "io/traj_netcdf.h"

/* The reading side needs libnetcdf itself, which is only linked when the writer is built. */
#if HMD_HAVE_NETCDF
#include <netcdf.h>
#endif

#define PATH_LEN 1024 /* test paths are short: a scratch folder and a file name */

static char scratch[PATH_LEN / 2]; /* a fresh folder for this run, under $HMD_TEST_TMP */

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_traj_netcdf.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

enum { NATOMS = 3 };
static const double x[3 * NATOMS] = {0.5, 1.25, 2.0, 3.0, 4.5, 5.75, 6.0, 7.0, 8.125};
static const double v[3 * NATOMS] = {0.1, -0.2, 0.3, 1, 2, 3, -4, -5, -6};
static const double f[3 * NATOMS] = {1, 0, -1, 0.5, 0.25, 0.125, 2, -3, 4};

#if HMD_HAVE_NETCDF

#define NC_OK(call) assert_int_equal((call), NC_NOERR)

static void assert_text_att(int ncid, int varid, const char *att, const char *want)
{
    char buf[128] = "";
    size_t len;
    NC_OK(nc_inq_attlen(ncid, varid, att, &len));
    assert_true(len < sizeof buf);
    NC_OK(nc_get_att_text(ncid, varid, att, buf));
    buf[len] = '\0';
    assert_string_equal(buf, want);
}

static void assert_dim(int ncid, const char *name, size_t want)
{
    int id;
    size_t len;
    NC_OK(nc_inq_dimid(ncid, name, &id));
    NC_OK(nc_inq_dimlen(ncid, id, &len));
    assert_int_equal(len, want);
}

/* Checks the type and units of variable `name` and returns its id. */
static int check_var(int ncid, const char *name, nc_type type, const char *units)
{
    int id;
    nc_type got;
    NC_OK(nc_inq_varid(ncid, name, &id));
    NC_OK(nc_inq_vartype(ncid, id, &got));
    assert_int_equal(got, type);
    if (units) {
        assert_text_att(ncid, id, "units", units);
    }
    return id;
}

static void assert_frame_floats(int ncid, int id, size_t frame, const double *want, double scale)
{
    float got[3 * NATOMS];
    const size_t start[3] = {frame, 0, 0}, count[3] = {1, NATOMS, 3};
    NC_OK(nc_get_vara_float(ncid, id, start, count, got));
    for (int k = 0; k < 3 * NATOMS; k++) {
        assert_true(got[k] == (float)(want[k] * scale));
    }
}

static void test_periodic_file_follows_the_convention(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/traj.nc", scratch);
    const double h[3][3] = {{20, 0, 0}, {0, 21, 0}, {0, 0, 22}};
    const double h2[3][3] = {{20, 0, 0}, {5, 21, 0}, {0, 0, 22}};
    const bool pbc[3] = {true, true, true};
    struct hmd_box box, box2;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    assert_int_equal(hmd_box_init(&box2, h2, pbc), HMD_OK);

    struct hmd_netcdf_traj *traj;
    assert_int_equal(hmd_netcdf_traj_open(path, &traj, NATOMS, true, true, true, "0.1.0", NULL, 0),
                     HMD_OK);
    assert_int_equal(hmd_netcdf_traj_write_frame(traj, x, v, f, &box, 0.0), HMD_OK);
    assert_int_equal(hmd_netcdf_traj_write_frame(traj, x, v, f, &box2, 0.5), HMD_OK);
    assert_int_equal(hmd_netcdf_traj_write_frame(traj, x, NULL, f, &box, 1.0), HMD_ESOFTWARE);
    assert_int_equal(hmd_netcdf_traj_close(traj), HMD_OK);

    int ncid, format;
    NC_OK(nc_open(path, NC_NOWRITE, &ncid));
    NC_OK(nc_inq_format(ncid, &format));
    assert_int_equal(format, NC_FORMAT_64BIT_OFFSET);
    assert_text_att(ncid, NC_GLOBAL, "Conventions", "AMBER");
    assert_text_att(ncid, NC_GLOBAL, "ConventionVersion", "1.0");
    assert_text_att(ncid, NC_GLOBAL, "program", "halomd");
    assert_text_att(ncid, NC_GLOBAL, "programVersion", "0.1.0");

    assert_dim(ncid, "frame", 2);
    assert_dim(ncid, "spatial", 3);
    assert_dim(ncid, "atom", NATOMS);
    assert_dim(ncid, "cell_spatial", 3);
    assert_dim(ncid, "cell_angular", 3);
    assert_dim(ncid, "label", 5);
    int unlimited, frame_dim;
    NC_OK(nc_inq_unlimdim(ncid, &unlimited));
    NC_OK(nc_inq_dimid(ncid, "frame", &frame_dim));
    assert_int_equal(unlimited, frame_dim);

    char labels[16] = "";
    NC_OK(nc_get_var_text(ncid, check_var(ncid, "spatial", NC_CHAR, NULL), labels));
    assert_memory_equal(labels, "xyz", 3);
    NC_OK(nc_get_var_text(ncid, check_var(ncid, "cell_spatial", NC_CHAR, NULL), labels));
    assert_memory_equal(labels, "abc", 3);
    NC_OK(nc_get_var_text(ncid, check_var(ncid, "cell_angular", NC_CHAR, NULL), labels));
    assert_memory_equal(labels, "alphabeta gamma", 15);

    float time[2];
    NC_OK(nc_get_var_float(ncid, check_var(ncid, "time", NC_FLOAT, "picosecond"), time));
    assert_true(time[0] == 0.0f && time[1] == 0.5f);

    int coord = check_var(ncid, "coordinates", NC_FLOAT, "angstrom");
    int vel = check_var(ncid, "velocities", NC_FLOAT, "angstrom/picosecond");
    int force = check_var(ncid, "forces", NC_FLOAT, "kilocalorie/mole/angstrom");
    for (size_t fr = 0; fr < 2; fr++) {
        assert_frame_floats(ncid, coord, fr, x, 1.0);
        assert_frame_floats(ncid, vel, fr, v, 1.0);
        assert_frame_floats(ncid, force, fr, f, 23.060547830619026);
    }

    double len[2][3], ang[2][3];
    NC_OK(nc_get_var_double(ncid, check_var(ncid, "cell_lengths", NC_DOUBLE, "angstrom"),
                            &len[0][0]));
    NC_OK(nc_get_var_double(ncid, check_var(ncid, "cell_angles", NC_DOUBLE, "degree"), &ang[0][0]));
    const double want_len[2][3] = {{20, 21, 22}, {20, sqrt(25.0 + 21 * 21), 22}};
    const double gamma2 = acos(5 / sqrt(25.0 + 21 * 21)) * 180 / acos(-1.0);
    const double want_ang[2][3] = {{90, 90, 90}, {90, 90, gamma2}};
    for (int fr = 0; fr < 2; fr++) {
        for (int d = 0; d < 3; d++) {
            assert_true(fabs(len[fr][d] - want_len[fr][d]) < 1e-12);
            assert_true(fabs(ang[fr][d] - want_ang[fr][d]) < 1e-12);
        }
    }
    NC_OK(nc_close(ncid));
}

static void test_optional_variables_are_left_out(void **state)
{
    char path[PATH_LEN], note[2 * PATH_LEN + 32];
    snprintf(path, sizeof path, "%s/plain.nc", scratch);
    for (int run = 0; run < 2; run++) {
        struct hmd_netcdf_traj *traj;
        assert_int_equal(
            hmd_netcdf_traj_open(path, &traj, NATOMS, false, false, false, "x", note, sizeof note),
            HMD_OK);
        /* Arrays and cell the file was not opened for are ignored. */
        assert_int_equal(hmd_netcdf_traj_write_frame(traj, x, NULL, NULL, NULL, 2.0), HMD_OK);
        assert_int_equal(hmd_netcdf_traj_close(traj), HMD_OK);
    }
    assert_non_null(strstr(note, "#plain.nc.1#"));

    int ncid, id;
    NC_OK(nc_open(path, NC_NOWRITE, &ncid));
    assert_dim(ncid, "frame", 1);
    const char *absent[] = {"velocities", "forces", "cell_lengths", "cell_angles"};
    for (size_t k = 0; k < sizeof absent / sizeof absent[0]; k++) {
        assert_int_equal(nc_inq_varid(ncid, absent[k], &id), NC_ENOTVAR);
    }
    assert_frame_floats(ncid, check_var(ncid, "coordinates", NC_FLOAT, "angstrom"), 0, x, 1.0);
    NC_OK(nc_close(ncid));
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

/* Readers rebuild a lower-triangular cell from lengths and angles, so the vectors of a rotated
 * cell must come out in the frame of that cell. */
static void test_rotated_cell_vectors_follow_the_cell(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/rotated.nc", scratch);
    const double h0[3][3] = {{10, 0, 0}, {3, 9, 0}, {-2, 1.5, 8}};
    const bool pbc[3] = {true, true, true};
    const double n = sqrt(14.0);
    const double u[3] = {1 / n, 2 / n, 3 / n};
    double h[3][3], xr[3 * NATOMS], vr[3 * NATOMS], fr[3 * NATOMS];
    for (int a = 0; a < 3; a++) {
        rotate(u, 0.7, h0[a], h[a]);
        rotate(u, 0.7, x + 3 * a, xr + 3 * a);
        rotate(u, 0.7, v + 3 * a, vr + 3 * a);
        rotate(u, 0.7, f + 3 * a, fr + 3 * a);
    }
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    struct hmd_netcdf_traj *traj;
    assert_int_equal(hmd_netcdf_traj_open(path, &traj, NATOMS, true, true, true, "0", NULL, 0),
                     HMD_OK);
    assert_int_equal(hmd_netcdf_traj_write_frame(traj, xr, vr, fr, &box, 0.0), HMD_OK);
    assert_int_equal(hmd_netcdf_traj_close(traj), HMD_OK);

    int ncid, id;
    NC_OK(nc_open(path, NC_NOWRITE, &ncid));
    const double *want[3] = {x, v, f};
    const double scale[3] = {1.0, 1.0, 23.060547830619026};
    const char *names[3] = {"coordinates", "velocities", "forces"};
    for (int k = 0; k < 3; k++) {
        float got[3 * NATOMS];
        NC_OK(nc_inq_varid(ncid, names[k], &id));
        NC_OK(nc_get_var_float(ncid, id, got));
        for (int i = 0; i < 3 * NATOMS; i++) {
            assert_true(fabs(got[i] - want[k][i] * scale[k]) < 1e-5 * (1 + fabs(got[i])));
        }
    }
    NC_OK(nc_close(ncid));
}

static void test_uncreatable_file_is_reported(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/none/traj.nc", scratch);
    struct hmd_netcdf_traj *traj;
    assert_int_equal(hmd_netcdf_traj_open(path, &traj, NATOMS, false, false, false, "0", NULL, 0),
                     HMD_ECANTCREAT);
    assert_null(traj);
    assert_non_null(strstr(hmd_error_msg(), path));
    assert_int_equal(hmd_netcdf_traj_close(NULL), HMD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_periodic_file_follows_the_convention),
        cmocka_unit_test(test_optional_variables_are_left_out),
        cmocka_unit_test(test_rotated_cell_vectors_follow_the_cell),
        cmocka_unit_test(test_uncreatable_file_is_reported),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}

#else

static void test_stub_reports_not_supported(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/traj.nc", scratch);
    struct hmd_netcdf_traj *traj = (struct hmd_netcdf_traj *)1;
    assert_int_equal(hmd_netcdf_traj_open(path, &traj, NATOMS, true, true, true, "0", NULL, 0),
                     HMD_ENOTSUP);
    assert_null(traj);
    assert_non_null(strstr(hmd_error_msg(), "without NetCDF"));
    assert_int_equal(hmd_netcdf_traj_write_frame(NULL, x, v, f, NULL, 0.0), HMD_ENOTSUP);
    assert_int_equal(hmd_netcdf_traj_close(NULL), HMD_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stub_reports_not_supported),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}

#endif /* HMD_HAVE_NETCDF */
