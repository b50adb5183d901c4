/* Unit tests of src/io/deepmd_data: DeePMD-kit systems read as DeePMD-kit's DeepmdData reads
 * them (sets in order, labels of any shape with the right size, nopbc, type_map.raw), every
 * inconsistency refused with a message naming the file, and systems found below a folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/deepmd_data.h"

static char scratch[512];

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_deepmd_data.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

static const char *path_of(const char *rel)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", scratch, rel);
    return path;
}

static void write_text(const char *rel, const char *text)
{
    FILE *fp = fopen(path_of(rel), "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void make_dir(const char *rel)
{
    mkdir(path_of(rel), 0755);
}

/* An .npy of n doubles v with the shape text "(2, 6)". */
static void write_npy(const char *rel, const char *shape, const double *v, size_t n)
{
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': %s, }", shape);
    size_t hlen = strlen(dict) + 1;
    while ((10 + hlen) % 64) {
        hlen++;
    }
    FILE *fp = fopen(path_of(rel), "wb");
    assert_non_null(fp);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, hlen & 0xff, hlen >> 8};
    fwrite(head, 1, 10, fp);
    fputs(dict, fp);
    for (size_t k = strlen(dict) + 1; k < hlen; k++) {
        fputc(' ', fp);
    }
    fputc('\n', fp);
    fwrite(v, sizeof(double), n, fp);
    fclose(fp);
}

/* set.000: two frames in the 10 Å cube, set.001: one in an 11 Å cube */
static const double box0[18] = {10, 0, 0, 0, 10, 0, 0, 0, 10, 10, 0, 0, 0, 10, 0, 0, 0, 10};
static const double box1[9] = {11, 0, 0, 0, 11, 0, 0, 0, 11};
static double coord[18], force[18], virial[27], energy[3] = {-1, -2, -3};

/* sys/: 2 atoms of types "1 0" named H O, set.000 with 2 frames, set.001 with 1. */
static void make_system(const char *name)
{
    char rel[256];
    for (int k = 0; k < 18; k++) {
        coord[k] = 0.5 * k;
        force[k] = -0.25 * k;
    }
    for (int k = 0; k < 27; k++) {
        virial[k] = k;
    }
    make_dir(name);
    snprintf(rel, sizeof rel, "%s/type.raw", name);
    write_text(rel, "1 # hydrogen\n0\n");
    snprintf(rel, sizeof rel, "%s/type_map.raw", name);
    write_text(rel, "O\nH\n");
    for (int s = 0; s < 2; s++) {
        const int n = s == 0 ? 2 : 1, off = s == 0 ? 0 : 2;
        char shape[32];
        snprintf(rel, sizeof rel, "%s/set.%03d", name, s);
        make_dir(rel);
        snprintf(rel, sizeof rel, "%s/set.%03d/coord.npy", name, s);
        snprintf(shape, sizeof shape, "(%d, 6)", n);
        write_npy(rel, shape, coord + 6 * off, 6 * (size_t)n);
        snprintf(rel, sizeof rel, "%s/set.%03d/box.npy", name, s);
        snprintf(shape, sizeof shape, "(%d, 9)", n);
        write_npy(rel, shape, s == 0 ? box0 : box1, 9 * (size_t)n);
        snprintf(rel, sizeof rel, "%s/set.%03d/energy.npy", name, s);
        snprintf(shape, sizeof shape, "(%d,)", n);
        write_npy(rel, shape, energy + off, (size_t)n);
        snprintf(rel, sizeof rel, "%s/set.%03d/force.npy", name, s);
        snprintf(shape, sizeof shape, "(%d, 2, 3)", n); /* any shape of the right size */
        write_npy(rel, shape, force + 6 * off, 6 * (size_t)n);
        snprintf(rel, sizeof rel, "%s/set.%03d/virial.npy", name, s);
        snprintf(shape, sizeof shape, "(%d, 9)", n);
        write_npy(rel, shape, virial + 9 * off, 9 * (size_t)n);
    }
}

static void test_read_a_system(void **state)
{
    make_system("good");
    struct hmd_deepmd_system sys;
    assert_int_equal(hmd_deepmd_system_read(path_of("good"), &sys), HMD_OK);
    assert_int_equal(sys.natoms, 2);
    assert_int_equal(sys.nframes, 3);
    assert_int_equal(sys.nsets, 2);
    assert_int_equal(sys.type[0], 1);
    assert_int_equal(sys.ntypes, 2);
    assert_string_equal(sys.type_map[1], "H");
    assert_true(sys.pbc);
    assert_memory_equal(sys.coord, coord, sizeof coord);
    assert_memory_equal(sys.force, force, sizeof force);
    assert_memory_equal(sys.virial, virial, sizeof virial);
    assert_true(sys.energy[2] == -3.0);
    /* frame 2 (set.001): its own box, types named from type_map.raw */
    struct hmd_frame frame;
    assert_int_equal(hmd_deepmd_system_frame(&sys, 2, NULL, 0, &frame), HMD_OK);
    assert_true(frame.has_box && frame.box.h[0][0] == 11.0);
    assert_string_equal(frame.element[0], "H");
    assert_string_equal(frame.element[1], "O");
    assert_true(frame.x[0] == coord[12]);
    hmd_frame_free(&frame);
    hmd_deepmd_system_free(&sys);
}

static void test_nopbc_and_no_type_map(void **state)
{
    make_dir("cluster");
    make_dir("cluster/set.000");
    write_text("cluster/type.raw", "0 1 1");
    write_text("cluster/nopbc", "");
    write_npy("cluster/set.000/coord.npy", "(9,)", coord, 9); /* 1-D: one frame */
    struct hmd_deepmd_system sys;
    assert_int_equal(hmd_deepmd_system_read(path_of("cluster"), &sys), HMD_OK);
    assert_false(sys.pbc);
    assert_null(sys.box);
    assert_null(sys.energy);
    assert_int_equal(sys.nframes, 1);
    const char *names[2] = {"O", "H"};
    struct hmd_frame frame;
    assert_int_equal(hmd_deepmd_system_frame(&sys, 0, names, 2, &frame), HMD_OK);
    assert_false(frame.has_box);
    assert_string_equal(frame.element[2], "H");
    hmd_frame_free(&frame);
    /* without names for type 1 */
    assert_int_equal(hmd_deepmd_system_frame(&sys, 0, names, 1, &frame), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "cluster/type.raw:2: type 1, but the system has no "
                                            "type_map.raw and the model has 1 types"));
    hmd_deepmd_system_free(&sys);
}

/* status and the words the message must hold */
static void expect_refused(const char *rel, int status, const char *what)
{
    struct hmd_deepmd_system sys;
    assert_int_equal(hmd_deepmd_system_read(path_of(rel), &sys), status);
    if (!strstr(hmd_error_msg(), what)) {
        fail_msg("message '%s' should say '%s'", hmd_error_msg(), what);
    }
    assert_null(sys.coord);
}

/* Breaks a copy of the good system: removes file `drop`, or writes `text` (a .raw file) or
 * an .npy of `shape` (n values) at `file`. */
struct breakage {
    const char *name, *drop, *file, *text, *shape;
    size_t n;
    int status;
    const char *what;
};

static void test_broken_systems_are_refused(void **state)
{
    static const struct breakage cases[] = {
        {"badtype", NULL, "type.raw", "0\nx\n", NULL, 0, HMD_EDATA,
         "badtype/type.raw:2: 'x' is not an atom type"},
        {"bigtype", NULL, "type.raw", "0 2\n", NULL, 0, HMD_EDATA,
         "atom 2 has type 2, but type_map.raw names 2 types"},
        {"shape", NULL, "set.001/coord.npy", NULL, "(1, 5)", 5, HMD_EDATA,
         "shape/set.001/coord.npy: expected shape (nframes, 6)"},
        {"count", NULL, "set.000/force.npy", NULL, "(2, 5)", 10, HMD_EDATA,
         "count/set.000/force.npy: 10 values, expected 12"},
        {"partial", "set.001/virial.npy", NULL, NULL, NULL, 0, HMD_EDATA,
         "partial/set.001: virial.npy is missing"},
        {"nobox", "set.000/box.npy", NULL, NULL, NULL, 0, HMD_ENOINPUT,
         "nobox/set.000: no box.npy"},
        {"mixed", NULL, "set.000/real_atom_types.npy", NULL, "(2, 2)", 4, HMD_ENOTSUP,
         "mixed-type data"},
        {"nocoord", "set.000/coord.npy", NULL, NULL, NULL, 0, HMD_ENOINPUT,
         "nocoord/set.000: no coord.npy"},
        {"junk", NULL, "set.000/coord.npy", "not numpy", NULL, 0, HMD_EDATA,
         "junk/set.000/coord.npy: not a NumPy .npy file"},
    };
    make_dir("empty");
    expect_refused("empty", HMD_ENOINPUT, "no type.raw");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct breakage *b = &cases[k];
        char rel[256];
        make_system(b->name);
        snprintf(rel, sizeof rel, "%s/%s", b->name, b->drop ? b->drop : b->file);
        if (b->drop) {
            remove(path_of(rel));
        } else if (b->text) {
            write_text(rel, b->text);
        } else {
            write_npy(rel, b->shape, coord, b->n);
        }
        expect_refused(b->name, b->status, b->what);
    }
}

static void test_find_systems(void **state)
{
    make_dir("tree");
    make_dir("tree/b");
    make_dir("tree/a");
    make_dir("tree/a/deep");
    write_text("tree/b/type.raw", "0\n");
    write_text("tree/a/deep/type.raw", "0\n");
    write_text("tree/a/type.raw", "0\n");
    char **paths;
    int n;
    assert_int_equal(hmd_deepmd_find_systems(path_of("tree"), &paths, &n), HMD_OK);
    assert_int_equal(n, 3);
    assert_non_null(strstr(paths[0], "tree/a"));
    assert_non_null(strstr(paths[1], "tree/a/deep"));
    assert_non_null(strstr(paths[2], "tree/b"));
    for (int k = 0; k < n; k++) {
        free(paths[k]);
    }
    free(paths);
    make_dir("none");
    assert_int_equal(hmd_deepmd_find_systems(path_of("none"), &paths, &n), HMD_ENOINPUT);
    assert_non_null(strstr(hmd_error_msg(), "no DeePMD-kit system"));
    assert_int_equal(hmd_deepmd_find_systems(path_of("missing"), &paths, &n), HMD_ENOINPUT);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_read_a_system),
    cmocka_unit_test(test_nopbc_and_no_type_map),
    cmocka_unit_test(test_broken_systems_are_refused),
    cmocka_unit_test(test_find_systems),
};

int main(void)
{
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
