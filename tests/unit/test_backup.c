/* Unit tests of src/io/backup: GROMACS-style #name.n# backups that never replace a file. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/backup.h"

#define PATH_LEN 1024 /* test paths are short: a scratch folder and a file name */

static char scratch[PATH_LEN / 2]; /* a fresh folder for this run, under $HMD_TEST_TMP */

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_backup.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

static void scratch_path(char *out, const char *name)
{
    snprintf(out, PATH_LEN, "%s/%s", scratch, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static void assert_file_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    assert_string_equal(buf, text);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void test_open_creates_then_backs_up_in_order(void **state)
{
    char path[PATH_LEN], b1[PATH_LEN], b2[PATH_LEN], expected[4 * PATH_LEN];
    scratch_path(path, "md.log");
    scratch_path(b1, "#md.log.1#");
    scratch_path(b2, "#md.log.2#");
    char note[4 * PATH_LEN];
    FILE *fp;

    assert_int_equal(hmd_output_open(path, &fp, note, sizeof note), HMD_OK);
    assert_string_equal(note, "");
    fputs("run 1\n", fp);
    assert_int_equal(fclose(fp), 0);

    assert_int_equal(hmd_output_open(path, &fp, note, sizeof note), HMD_OK);
    snprintf(expected, sizeof expected, "Backed up %s to %s", path, b1);
    assert_string_equal(note, expected);
    fputs("run 2\n", fp);
    assert_int_equal(fclose(fp), 0);
    assert_file_text(b1, "run 1\n");

    assert_int_equal(hmd_output_open(path, &fp, note, sizeof note), HMD_OK);
    snprintf(expected, sizeof expected, "Backed up %s to %s", path, b2);
    assert_string_equal(note, expected);
    assert_int_equal(fclose(fp), 0);
    assert_file_text(b1, "run 1\n");
    assert_file_text(b2, "run 2\n");
    assert_file_text(path, "");
}

static void test_backup_takes_smallest_free_number(void **state)
{
    char path[PATH_LEN], b1[PATH_LEN], b2[PATH_LEN], b3[PATH_LEN];
    scratch_path(path, "traj.xyz");
    scratch_path(b1, "#traj.xyz.1#");
    scratch_path(b2, "#traj.xyz.2#");
    scratch_path(b3, "#traj.xyz.3#");
    write_text(b2, "old 2\n");
    write_text(path, "current\n");
    char note[4 * PATH_LEN];
    assert_int_equal(hmd_output_backup(path, note, sizeof note), HMD_OK);
    assert_false(exists(path));
    assert_file_text(b1, "current\n");
    assert_file_text(b2, "old 2\n");
    write_text(path, "next\n");
    assert_int_equal(hmd_output_backup(path, NULL, 0), HMD_OK);
    assert_file_text(b3, "next\n");
    assert_file_text(b2, "old 2\n");
}

static void test_missing_file_needs_no_backup(void **state)
{
    char path[PATH_LEN], note[64] = "stale";
    scratch_path(path, "absent.csv");
    assert_int_equal(hmd_output_backup(path, note, sizeof note), HMD_OK);
    assert_string_equal(note, "");
    assert_false(exists(path));
}

static void test_relative_name_in_current_folder(void **state)
{
    char cwd[PATH_LEN];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(scratch), 0);
    write_text("plain.gro", "x\n");
    char note[128];
    int status = hmd_output_backup("plain.gro", note, sizeof note);
    bool moved = exists("#plain.gro.1#");
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(status, HMD_OK);
    assert_string_equal(note, "Backed up plain.gro to #plain.gro.1#");
    assert_true(moved);
}

static void test_unwritable_places_are_reported(void **state)
{
    char dir[PATH_LEN], path[PATH_LEN];
    scratch_path(dir, "a_folder");
    assert_int_equal(mkdir(dir, 0755), 0);
    FILE *fp = (FILE *)1;
    assert_int_equal(hmd_output_open(dir, &fp, NULL, 0), HMD_ECANTCREAT);
    assert_null(fp);
    assert_non_null(strstr(hmd_error_msg(), dir));
    assert_non_null(strstr(hmd_error_msg(), "directory"));

    scratch_path(path, "no_such_folder/md.log");
    assert_int_equal(hmd_output_open(path, &fp, NULL, 0), HMD_ECANTCREAT);
    assert_non_null(strstr(hmd_error_msg(), path));
    assert_non_null(strstr(hmd_error_msg(), strerror(ENOENT)));
}

static void test_device_is_written_not_moved(void **state)
{
    char note[64] = "stale";
    FILE *fp;
    assert_int_equal(hmd_output_open("/dev/null", &fp, note, sizeof note), HMD_OK);
    assert_string_equal(note, "");
    fputs("discarded\n", fp);
    assert_int_equal(fclose(fp), 0);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_too_many_backups_refused(void **state)
{
    char path[PATH_LEN], backup[PATH_LEN], name[32];
    for (int n = 1; n <= HMD_OUTPUT_MAX_BACKUPS; n++) {
        snprintf(name, sizeof name, "#full.csv.%d#", n);
        scratch_path(backup, name);
        write_text(backup, "b\n");
    }
    scratch_path(path, "full.csv");
    write_text(path, "keep me\n");
    assert_int_equal(hmd_output_backup(path, NULL, 0), HMD_ECANTCREAT);
    assert_non_null(strstr(hmd_error_msg(), "remove old backups"));
    assert_file_text(path, "keep me\n");
    assert_file_text(backup, "b\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_creates_then_backs_up_in_order),
        cmocka_unit_test(test_backup_takes_smallest_free_number),
        cmocka_unit_test(test_missing_file_needs_no_backup),
        cmocka_unit_test(test_relative_name_in_current_folder),
        cmocka_unit_test(test_unwritable_places_are_reported),
        cmocka_unit_test(test_device_is_written_not_moved),
        cmocka_unit_test(test_too_many_backups_refused),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
