/* Unit tests of src/io/checkpoint: the HDF5 checkpoint behind a hashed header. Round trip of
 * every field (bit for bit, several blocks), the previous checkpoint kept, a truncated file, a
 * flipped byte at every region of the file, a missing previous checkpoint named as missing, an
 * old JSON checkpoint, the temporary file gone after a write. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/checkpoint.h"
#include "test_util.h"

#define PATH_LEN 1024

static char scratch[PATH_LEN / 2];

static int make_scratch(void **state)
{
    return hmd_test_scratch(scratch, sizeof scratch, "test_checkpoint");
}

static void scratch_path(char *out, const char *name)
{
    snprintf(out, PATH_LEN, "%s/%s", scratch, name);
}

/* A checkpoint of n atoms whose numbers name the atom, the component and `step`, with values
 * that do not survive a decimal round trip (so a bit-for-bit comparison means something). */
static void make(struct hmd_checkpoint *c, int n, int64_t step, bool list)
{
    memset(c, 0, sizeof *c);
    c->step = step;
    c->dt = 0.0005;
    c->thermostat_work = -1.0 / 3.0;
    c->barostat_work = 1e-300;
    c->natoms = n;
    c->has_box = true;
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            c->h[a][b] = a == b ? 12.5 + a / 7.0 : 0.1 * (a - b) / 3.0;
        }
    }
    c->gen_seed = -7;
    c->ld_seed = INT64_C(0x7123456789abcdef);
    c->model_hash[0] = UINT64_C(0xfedcba9876543210);
    c->model_hash[1] = 42;
    snprintf(c->model, sizeof c->model, "/models/water (1).dp");
    c->x = malloc(sizeof(double) * 3 * n);
    c->v = malloc(sizeof(double) * 3 * n);
    c->list_step = list ? step - 3 : -1;
    c->x_list = list ? malloc(sizeof(double) * 3 * n) : NULL;
    for (int a = 0; a < 3; a++) { /* the list's cell: another one (pressure coupling) */
        for (int b = 0; b < 3; b++) {
            c->h_list[a][b] = c->h[a][b] * (1.0 - 1e-3 / 7.0);
        }
    }
    c->list_disp2 = list ? 0.0123 / 9.0 : -1.0;
    for (int k = 0; k < 3 * n; k++) {
        c->x[k] = (k + 0.1 * (double)step) / 3.0;
        c->v[k] = -k / 7.0;
        if (list) {
            c->x_list[k] = c->x[k] - 1e-3 / 9.0;
        }
    }
}

static void assert_same(const struct hmd_checkpoint *a, const struct hmd_checkpoint *b)
{
    assert_int_equal(a->step, b->step);
    assert_int_equal(a->natoms, b->natoms);
    assert_int_equal(a->has_box, b->has_box);
    assert_int_equal(a->gen_seed, b->gen_seed);
    assert_int_equal(a->ld_seed, b->ld_seed);
    assert_int_equal(a->list_step, b->list_step);
    assert_memory_equal(a->model_hash, b->model_hash, sizeof a->model_hash);
    assert_string_equal(a->model, b->model);
    assert_memory_equal(&a->dt, &b->dt, sizeof a->dt);
    assert_memory_equal(&a->thermostat_work, &b->thermostat_work, sizeof(double));
    assert_memory_equal(&a->barostat_work, &b->barostat_work, sizeof(double));
    assert_memory_equal(a->h, b->h, sizeof a->h);
    assert_memory_equal(a->x, b->x, sizeof(double) * 3 * a->natoms);
    assert_memory_equal(a->v, b->v, sizeof(double) * 3 * a->natoms);
    assert_true((a->x_list == NULL) == (b->x_list == NULL));
    if (a->x_list) {
        assert_memory_equal(a->x_list, b->x_list, sizeof(double) * 3 * a->natoms);
        assert_memory_equal(a->h_list, b->h_list, sizeof a->h_list);
        assert_memory_equal(&a->list_disp2, &b->list_disp2, sizeof(double));
    } else { /* without a list: the checkpoint's cell and no displacement */
        assert_memory_equal(b->h_list, b->h, sizeof b->h);
        assert_true(b->list_disp2 == -1.0);
    }
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        assert_int_equal(fwrite(buf, 1, n, out), n);
    }
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

static void flip_byte(const char *path, long at)
{
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, at), 1);
    b ^= 0x10;
    assert_int_equal(pwrite(fd, &b, 1, at), 1);
    close(fd);
}

/* Every field back bit for bit, with arrays of three blocks (the last one partial). */
static void test_round_trip(void **state)
{
    char path[PATH_LEN], tmp[PATH_LEN + 8];
    scratch_path(path, "rt.cpt");
    const int sizes[] = {1, 2 * HMD_CPT_BLOCK_ATOMS + 17};
    for (int s = 0; s < 2; s++) {
        struct hmd_checkpoint w, r;
        make(&w, sizes[s], 100 + s, s == 1);
        assert_int_equal(hmd_checkpoint_write(path, &w, NULL, 0), HMD_OK);
        assert_int_equal(hmd_checkpoint_read(path, &r), HMD_OK);
        assert_same(&w, &r);
        hmd_checkpoint_free(&w);
        hmd_checkpoint_free(&r);
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_int_equal(access(tmp, F_OK), -1); /* the temporary file is gone */
}

/* The second write keeps the first as rt2_prev.cpt; both read, each with its own step. */
static void test_previous_kept(void **state)
{
    char path[PATH_LEN], prev[PATH_LEN], note[PATH_LEN * 2];
    scratch_path(path, "keep.cpt");
    assert_int_equal(hmd_checkpoint_prev_path(path, prev, sizeof prev), HMD_OK);
    assert_non_null(strstr(prev, "keep_prev.cpt"));
    struct hmd_checkpoint w, r;
    for (int64_t step = 10; step <= 30; step += 10) {
        make(&w, 5, step, false);
        assert_int_equal(hmd_checkpoint_write(path, &w, note, sizeof note), HMD_OK);
        hmd_checkpoint_free(&w);
        assert_true(step == 10 ? strstr(note, "previous") == NULL
                               : strstr(note, "keep_prev.cpt") != NULL);
    }
    assert_int_equal(hmd_checkpoint_read(path, &r), HMD_OK);
    assert_int_equal(r.step, 30);
    hmd_checkpoint_free(&r);
    assert_int_equal(hmd_checkpoint_read(prev, &r), HMD_OK);
    assert_int_equal(r.step, 20);
    hmd_checkpoint_free(&r);
    char other[8];
    assert_int_equal(hmd_checkpoint_prev_path("x.cpt", other, sizeof other), HMD_EUSAGE);
    assert_int_equal(hmd_checkpoint_prev_path("st", other, sizeof other), HMD_OK);
    assert_string_equal(other, "st_prev");
}

/* Truncated at any length: refused, with the previous checkpoint named (it exists here). */
static void test_truncated(void **state)
{
    char path[PATH_LEN], cut[PATH_LEN];
    scratch_path(path, "trunc.cpt");
    struct hmd_checkpoint w, r;
    for (int k = 0; k < 2; k++) { /* two writes: trunc_prev.cpt exists */
        make(&w, 1000, 7 + k, false);
        assert_int_equal(hmd_checkpoint_write(path, &w, NULL, 0), HMD_OK);
        hmd_checkpoint_free(&w);
    }
    const long size = file_size(path);
    const long cuts[] = {0, 1, 15, 100, 511, 512, 513, 4096, size / 2, size - 1};
    scratch_path(cut, "trunc_copy.cpt");
    char prev_of_cut[PATH_LEN];
    scratch_path(prev_of_cut, "trunc_copy_prev.cpt");
    copy_file(path, prev_of_cut);
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        copy_file(path, cut);
        assert_int_equal(truncate(cut, cuts[k]), 0);
        assert_int_equal(hmd_checkpoint_read(cut, &r), HMD_EDATA);
        assert_null(r.x);
        if (cuts[k] >= 512) {
            assert_non_null(strstr(hmd_error_msg(), "truncated"));
        }
        if (cuts[k] > 15) {
            if (!strstr(hmd_error_msg(), "trunc_copy_prev.cpt is there")) {
                fail_msg("cut %ld: %s", cuts[k], hmd_error_msg());
            }
        }
    }
    /* and a file longer than written */
    copy_file(path, cut);
    FILE *fp = fopen(cut, "ab");
    fputc('x', fp);
    fclose(fp);
    assert_int_equal(hmd_checkpoint_read(cut, &r), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "longer than written"));
}

/* A flipped byte anywhere (header, HDF5 metadata, arrays, the end) is refused; without a
 * previous checkpoint the message says there is none. */
static void test_flipped_bytes(void **state)
{
    char path[PATH_LEN], bad[PATH_LEN];
    scratch_path(path, "flip.cpt");
    scratch_path(bad, "flip_alone.cpt");
    struct hmd_checkpoint w, r;
    make(&w, 3000, 11, true);
    assert_int_equal(hmd_checkpoint_write(path, &w, NULL, 0), HMD_OK);
    hmd_checkpoint_free(&w);
    const long size = file_size(path);
    int refused = 0, tried = 0;
    for (long at = 0; at < size; at += (at < 1024 ? 7 : 997)) {
        copy_file(path, bad);
        flip_byte(bad, at);
        tried++;
        assert_int_equal(hmd_checkpoint_read(bad, &r), HMD_EDATA);
        assert_null(r.x);
        /* a damaged magic string is "not a checkpoint"; anything else names the previous */
        assert_non_null(strstr(hmd_error_msg(), at < 16 ? "not a halomd checkpoint"
                                                        : "there is no previous checkpoint"));
        refused++;
    }
    copy_file(path, bad);
    flip_byte(bad, size - 1);
    assert_int_equal(hmd_checkpoint_read(bad, &r), HMD_EDATA);
    assert_true(refused > 100 && tried >= refused);
}

/* The previous format (JSON), a file that is not a checkpoint, a missing file. */
static void test_other_files(void **state)
{
    char path[PATH_LEN];
    struct hmd_checkpoint r;
    scratch_path(path, "old.cpt");
    FILE *fp = fopen(path, "w");
    fputs("{\"schema\":\"halomd-cpt-1\",\"step\":5}", fp);
    fclose(fp);
    assert_int_equal(hmd_checkpoint_read(path, &r), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "JSON checkpoint of an earlier halomd"));
    scratch_path(path, "text.cpt");
    fp = fopen(path, "w");
    fputs("hello", fp);
    fclose(fp);
    assert_int_equal(hmd_checkpoint_read(path, &r), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "not a halomd checkpoint"));
    scratch_path(path, "none.cpt");
    assert_int_equal(hmd_checkpoint_read(path, &r), HMD_ENOINPUT);
    struct hmd_checkpoint empty = {.natoms = 0, .dt = 0.001};
    assert_int_equal(hmd_checkpoint_write(path, &empty, NULL, 0), HMD_ECONFIG);
    scratch_path(path, "no_such_dir/x.cpt");
    struct hmd_checkpoint w;
    make(&w, 2, 1, false);
    assert_int_equal(hmd_checkpoint_write(path, &w, NULL, 0), HMD_ECANTCREAT);
    assert_non_null(strstr(hmd_error_msg(), "no_such_dir/x.cpt.tmp"));
    hmd_checkpoint_free(&w);
}

/* The model hash: a streamed XXH3-128 that changes with one byte of the file. */
static void test_hash_file(void **state)
{
    char path[PATH_LEN];
    scratch_path(path, "model.bin");
    FILE *fp = fopen(path, "wb");
    for (int k = 0; k < 3 << 20; k++) {
        fputc(k * 31 % 251, fp);
    }
    fclose(fp);
    uint64_t a[2], b[2];
    assert_int_equal(hmd_checkpoint_hash_file(path, a), HMD_OK);
    flip_byte(path, 2 << 20);
    assert_int_equal(hmd_checkpoint_hash_file(path, b), HMD_OK);
    assert_true(a[0] != b[0] || a[1] != b[1]);
    scratch_path(path, "missing.bin");
    assert_int_equal(hmd_checkpoint_hash_file(path, a), HMD_ENOINPUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),  cmocka_unit_test(test_previous_kept),
        cmocka_unit_test(test_truncated),   cmocka_unit_test(test_flipped_bytes),
        cmocka_unit_test(test_other_files), cmocka_unit_test(test_hash_file),
    };
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
