/* Unit tests of src/io/npy: every data type and version the reader takes, values bit for bit,
 * and every class of broken file refused with a message naming it (nothing allocated first). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/npy.h"

static char scratch[512];

static int make_scratch(void **state)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(scratch, sizeof scratch, "%s/test_npy.XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(scratch) ? 0 : -1;
}

/* Writes an .npy file: version major, header dict text (padded with blanks to a multiple of
 * 64 bytes and a newline, as numpy does), then nbytes of data; returns its path. */
static const char *write_npy(const char *name, int major, const char *dict, const void *data,
                             size_t nbytes)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    const size_t pre = major == 1 ? 10 : 12;
    size_t hlen = strlen(dict) + 1;
    while ((pre + hlen) % 64) {
        hlen++;
    }
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
    head[8] = hlen & 0xff;
    head[9] = (hlen >> 8) & 0xff;
    head[10] = (hlen >> 16) & 0xff;
    head[11] = (hlen >> 24) & 0xff;
    fwrite(head, 1, pre, fp);
    fputs(dict, fp);
    for (size_t k = strlen(dict) + 1; k < hlen; k++) {
        fputc(' ', fp);
    }
    fputc('\n', fp);
    fwrite(data, 1, nbytes, fp);
    fclose(fp);
    return path;
}

static void test_float64_c_order(void **state)
{
    const double v[6] = {1.5, -2.25, 1e-300, 3.0e200, -0.0, 7.0};
    const char *p = write_npy("a.npy", 1,
                              "{'descr': '<f8', 'fortran_order': False, 'shape': "
                              "(2, 3), }",
                              v, sizeof v);
    struct hmd_npy a;
    assert_int_equal(hmd_npy_read(p, &a), HMD_OK);
    assert_int_equal(a.ndim, 2);
    assert_int_equal(a.shape[0], 2);
    assert_int_equal(a.shape[1], 3);
    assert_int_equal(a.count, 6);
    assert_string_equal(a.descr, "<f8");
    assert_memory_equal(a.data, v, sizeof v);
    hmd_npy_free(&a);
}

static void test_other_types_and_versions(void **state)
{
    const float f[3] = {0.1f, -3.5f, 1e30f};
    struct hmd_npy a;
    /* version 2 (4-byte header length), keys in another order, double quotes */
    const char *p = write_npy("f4.npy", 2,
                              "{\"shape\": (3,), \"fortran_order\": False, "
                              "\"descr\": \"<f4\"}",
                              f, sizeof f);
    assert_int_equal(hmd_npy_read(p, &a), HMD_OK);
    for (int k = 0; k < 3; k++) {
        assert_true(a.data[k] == (double)f[k]);
    }
    hmd_npy_free(&a);
    const int32_t i[4] = {0, -1, 2147483647, -7};
    p = write_npy("i4.npy", 3, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,)}", i,
                  sizeof i);
    assert_int_equal(hmd_npy_read(p, &a), HMD_OK);
    assert_true(a.data[1] == -1.0 && a.data[2] == 2147483647.0 && a.data[3] == -7.0);
    hmd_npy_free(&a);
    /* big-endian doubles */
    const unsigned char be[8] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0}; /* 1.5 */
    p = write_npy("be.npy", 1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", be,
                  sizeof be);
    assert_int_equal(hmd_npy_read(p, &a), HMD_OK);
    assert_true(a.data[0] == 1.5);
    hmd_npy_free(&a);
    /* a scalar, and an empty array */
    const double one = 42.0;
    p = write_npy("s.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", &one,
                  sizeof one);
    assert_int_equal(hmd_npy_read(p, &a), HMD_OK);
    assert_int_equal(a.ndim, 0);
    assert_int_equal(a.count, 1);
    assert_true(a.data[0] == 42.0);
    hmd_npy_free(&a);
    p = write_npy("e.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 9), }", NULL,
                  0);
    assert_int_equal(hmd_npy_read(p, &a), HMD_OK);
    assert_int_equal(a.count, 0);
    assert_null(a.data);
    hmd_npy_free(&a);
}

/* Each broken file: status and a message naming the file and the problem. */
static void expect_refused(const char *path, int status, const char *what)
{
    struct hmd_npy a;
    assert_int_equal(hmd_npy_read(path, &a), status);
    if (!strstr(hmd_error_msg(), what) || !strstr(hmd_error_msg(), path)) {
        fail_msg("message '%s' should name %s and say '%s'", hmd_error_msg(), path, what);
    }
    assert_null(a.data);
}

static void test_broken_files_are_refused(void **state)
{
    const double v[4] = {1, 2, 3, 4};
    /* file name, format version, header, bytes of data, what the message must say */
    static const struct {
        const char *name;
        int major;
        const char *dict;
        size_t nbytes;
        const char *what;
    } cases[] = {
        {"short.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 24,
         "the header says shape (2, 2)"},
        {"ver.npy", 4, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 32,
         "version 4"},
        {"obj.npy", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2, 2), }", 32,
         "unsupported data type '|O'"},
        {"struct.npy", 1, "{'descr': [('x', '<f8')], 'fortran_order': False, 'shape': (4,), }", 32,
         "structured"},
        {"fort.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", 32,
         "Fortran-ordered"},
        {"neg.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 2), }", 32, "shape"},
        {"huge.npy", 1,
         "{'descr': '<f8', 'fortran_order': False, 'shape': (4000000000, 4000000000), }", 32,
         "too large"},
        {"nodict.npy", 1, "descr", 32, "not a Python dict"},
        {"nokey.npy", 1, "{'descr': '<f8', 'shape': (2, 2), }", 32, "lacks"},
        {"twice.npy", 1,
         "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", 32, "twice"},
        {"extra.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), 'x': 1}", 32,
         "unexpected key 'x'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        expect_refused(write_npy(cases[k].name, cases[k].major, cases[k].dict, v, cases[k].nbytes),
                       HMD_EDATA, cases[k].what);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/missing.npy", scratch);
    expect_refused(path, HMD_ENOINPUT, "cannot open");
    /* not an .npy file at all */
    snprintf(path, sizeof path, "%s/text.npy", scratch);
    FILE *fp = fopen(path, "w");
    fputs("1 2 3\n", fp);
    fclose(fp);
    expect_refused(path, HMD_EDATA, "magic");
    /* a file cut inside the header */
    snprintf(path, sizeof path, "%s/cut.npy", scratch);
    fp = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00\x76\x00{'descr'", 1, 19, fp);
    fclose(fp);
    expect_refused(path, HMD_EDATA, "truncated");
}

/* Extra bytes after the data are refused as well as missing ones. */
static void test_trailing_bytes_are_refused(void **state)
{
    const double v[5] = {1, 2, 3, 4, 5};
    expect_refused(write_npy("trail.npy", 1,
                             "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", v,
                             sizeof v),
                   HMD_EDATA, "40 bytes after the header");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_float64_c_order),
    cmocka_unit_test(test_other_types_and_versions),
    cmocka_unit_test(test_broken_files_are_refused),
    cmocka_unit_test(test_trailing_bytes_are_refused),
};

int main(void)
{
    return cmocka_run_group_tests(tests, make_scratch, NULL);
}
