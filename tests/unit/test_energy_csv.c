/* Unit tests of src/io/energy_csv: header, exact round trip of every value, flush per row. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/energy_csv.h"

#define PATH_LEN 1024 /* test paths are short: a scratch folder and a file name */

static char scratch[PATH_LEN / 2]; /* a fresh folder for this run, under $HMD_TEST_TMP */

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_energy_csv.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

static const char header[] =
    "step,time_ps,temp_K,pe_eV,ke_eV,etot_eV,conserved_eV,press_bar,vol_A3\n";

/* Parses one data line into a row; returns the number of fields read. */
static int parse_row(const char *line, struct hmd_energy_row *row)
{
    char *end;
    row->step = strtoll(line, &end, 10);
    double *fields[] = {&row->time, &row->temp,      &row->pe,    &row->ke,
                        &row->etot, &row->conserved, &row->press, &row->vol};
    int n = 1;
    for (size_t k = 0; k < sizeof fields / sizeof fields[0] && *end == ','; k++, n++) {
        *fields[k] = strtod(end + 1, &end);
    }
    return *end == '\n' ? n : -1;
}

static void test_rows_round_trip_exactly(void **state)
{
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/md.energy.csv", scratch);
    struct hmd_energy_csv *csv;
    char note[8];
    assert_int_equal(hmd_energy_csv_open(path, &csv, note, sizeof note), HMD_OK);
    const struct hmd_energy_row rows[2] = {
        {0, 0.0, 300.0, -1234.5678901234567, 38.777, 0.1 + 0.2, 1.0 / 3.0, -125.25, 29791.0, NULL},
        {INT64_C(1) << 40, 1e-300, 5e-324, -2.5e10, 1.7976931348623157e308, -0.0, 3.141592653589793,
         NAN, INFINITY, NULL},
    };
    for (int r = 0; r < 2; r++) {
        assert_int_equal(hmd_energy_csv_write(csv, &rows[r]), HMD_OK);
    }

    /* Before close: every row is already in the file. */
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, header);
    for (int r = 0; r < 2; r++) {
        struct hmd_energy_row got;
        assert_non_null(fgets(line, sizeof line, fp));
        assert_int_equal(parse_row(line, &got), 9);
        const struct hmd_energy_row *want = &rows[r];
        assert_true(got.step == want->step);
        const double w[] = {want->time, want->temp,      want->pe,    want->ke,
                            want->etot, want->conserved, want->press, want->vol};
        const double g[] = {got.time, got.temp,      got.pe,    got.ke,
                            got.etot, got.conserved, got.press, got.vol};
        for (int k = 0; k < 8; k++) {
            if (isnan(w[k])) {
                assert_true(isnan(g[k]));
            } else {
                assert_memory_equal(&g[k], &w[k], sizeof(double)); /* bits, so -0.0 too */
            }
        }
    }
    assert_null(fgets(line, sizeof line, fp));
    fclose(fp);
    assert_int_equal(hmd_energy_csv_close(csv), HMD_OK);
}

/* A classical run's term columns: GROMACS's names with the unit, values exact. */
static void test_term_columns(void **state)
{
    (void)state;
    char path[PATH_LEN];
    snprintf(path, sizeof path, "%s/terms.energy.csv", scratch);
    struct hmd_energy_csv *csv;
    const char *names[] = {"Bond", "LJ (SR)", "Coulomb (SR)"};
    assert_int_equal(hmd_energy_csv_open_terms(path, 3, names, &csv, NULL, 0), HMD_OK);
    const double terms[3] = {0.1, -2.5, 1.0 / 3.0};
    const struct hmd_energy_row row = {7, 0.5, 1, 2, 3, 4, 5, 6, 7, terms};
    assert_int_equal(hmd_energy_csv_write(csv, &row), HMD_OK);
    assert_int_equal(hmd_energy_csv_close(csv), HMD_OK);
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "step,time_ps,temp_K,pe_eV,ke_eV,etot_eV,conserved_eV,press_bar,"
                              "vol_A3,Bond_eV,LJ (SR)_eV,Coulomb (SR)_eV\n");
    assert_non_null(fgets(line, sizeof line, fp));
    assert_string_equal(line, "7,0.5,1,2,3,4,5,6,7,0.10000000000000001,-2.5,0.33333333333333331\n");
    fclose(fp);
    const char *bad[] = {"a,b"};
    assert_int_equal(hmd_energy_csv_open_terms(path, 1, bad, &csv, NULL, 0), HMD_ESOFTWARE);
}

static void test_reopen_backs_up_and_bad_path_fails(void **state)
{
    char path[PATH_LEN], note[2 * PATH_LEN + 32];
    snprintf(path, sizeof path, "%s/again.csv", scratch);
    struct hmd_energy_csv *csv;
    assert_int_equal(hmd_energy_csv_open(path, &csv, note, sizeof note), HMD_OK);
    assert_string_equal(note, "");
    assert_int_equal(hmd_energy_csv_close(csv), HMD_OK);
    assert_int_equal(hmd_energy_csv_open(path, &csv, note, sizeof note), HMD_OK);
    assert_non_null(strstr(note, "#again.csv.1#"));
    assert_int_equal(hmd_energy_csv_close(csv), HMD_OK);
    assert_int_equal(hmd_energy_csv_close(NULL), HMD_OK);

    snprintf(path, sizeof path, "%s/missing/md.energy.csv", scratch);
    assert_int_equal(hmd_energy_csv_open(path, &csv, NULL, 0), HMD_ECANTCREAT);
    assert_null(csv);
    assert_non_null(strstr(hmd_error_msg(), path));
}

static void test_full_disk_is_an_io_error(void **state)
{
    struct hmd_energy_csv *csv;
    assert_int_equal(hmd_energy_csv_open("/dev/full", &csv, NULL, 0), HMD_EIO);
    assert_null(csv);
    assert_non_null(strstr(hmd_error_msg(), "/dev/full"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_round_trip_exactly),
        cmocka_unit_test(test_term_columns),
        cmocka_unit_test(test_reopen_backs_up_and_bad_path_fails),
        cmocka_unit_test(test_full_disk_is_an_io_error),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
