/* Unit tests of src/io/structure.c: frames, format detection by extension and by content,
 * dispatch, type mapping with its messages, and the text helpers the readers share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/structure.h"

#define DATA HMD_TEST_DATA "/structures/readers/"

static const char *tmp_path(const char *name)
{
    static char path[4096];
    const char *dir = getenv("HMD_TEST_TMP");
    snprintf(path, sizeof path, "%s/%s", dir ? dir : ".", name);
    return path;
}

static const char *tmp_file(const char *name, const char *text)
{
    const char *path = tmp_path(name);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    return path;
}

/* Copies a fixture to a temporary file named without an extension. */
static const char *tmp_copy(const char *name, const char *fixture)
{
    char buf[16384];
    FILE *in = fopen(fixture, "r");
    assert_non_null(in);
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[n] = '\0';
    return tmp_file(name, buf);
}

static void test_frame_alloc_free(void **state)
{
    struct hmd_frame f;
    assert_int_equal(hmd_frame_alloc(&f, 3), HMD_OK);
    assert_int_equal(f.natoms, 3);
    assert_non_null(f.x);
    assert_null(f.v);
    assert_null(f.mass);
    assert_null(f.resname);
    assert_null(f.resnr);
    assert_true(f.x[8] == 0.0);
    assert_string_equal(f.element[2], "");
    assert_int_equal(f.line[2], 0);
    assert_false(f.has_box);
    hmd_frame_free(&f);
    assert_null(f.x);
    assert_int_equal(f.natoms, 0);
    hmd_frame_free(&f); /* safe on a zeroed frame */
    hmd_frames_free(NULL, 0);
}

static void test_detect_by_extension(void **state)
{
    assert_int_equal(hmd_structure_detect(DATA "salt.gro"), HMD_FORMAT_GRO);
    assert_int_equal(hmd_structure_detect(DATA "salt.pdb"), HMD_FORMAT_PDB);
    assert_int_equal(hmd_structure_detect(DATA "water.extxyz"), HMD_FORMAT_XYZ);
    assert_int_equal(hmd_structure_detect(DATA "plain.xyz"), HMD_FORMAT_XYZ);
    assert_int_equal(hmd_structure_detect(DATA "handmade.data"), HMD_FORMAT_LAMMPS_DATA);
    /* by name alone, the file need not exist */
    assert_int_equal(hmd_structure_detect("/nowhere/conf.GRO"), HMD_FORMAT_GRO);
    assert_int_equal(hmd_structure_detect("/nowhere/1abc.ent"), HMD_FORMAT_PDB);
    assert_int_equal(hmd_structure_detect("/nowhere/in.lmp"), HMD_FORMAT_LAMMPS_DATA);
    assert_int_equal(hmd_structure_detect("/nowhere/in.lammps"), HMD_FORMAT_LAMMPS_DATA);
    assert_int_equal(hmd_structure_detect("/nowhere.gro/conf"), HMD_FORMAT_UNKNOWN);
    assert_int_equal(hmd_structure_detect("/nowhere/conf.txt"), HMD_FORMAT_UNKNOWN);
}

static void test_detect_by_content(void **state)
{
    assert_int_equal(hmd_structure_detect(tmp_copy("sniff_gro", DATA "salt.gro")), HMD_FORMAT_GRO);
    assert_int_equal(hmd_structure_detect(tmp_copy("sniff_pdb", DATA "salt.pdb")), HMD_FORMAT_PDB);
    assert_int_equal(hmd_structure_detect(tmp_copy("sniff_pdb2", DATA "water_ase.pdb")),
                     HMD_FORMAT_PDB);
    assert_int_equal(hmd_structure_detect(tmp_copy("sniff_xyz", DATA "water.extxyz")),
                     HMD_FORMAT_XYZ);
    assert_int_equal(hmd_structure_detect(tmp_copy("sniff_lmp", DATA "water_ase.data")),
                     HMD_FORMAT_LAMMPS_DATA);
    assert_int_equal(hmd_structure_detect(tmp_copy("sniff_lmp2", DATA "handmade.data")),
                     HMD_FORMAT_LAMMPS_DATA);
    assert_int_equal(hmd_structure_detect(tmp_file("sniff_text", "hello\nworld\n")),
                     HMD_FORMAT_UNKNOWN);
    assert_int_equal(hmd_structure_detect(tmp_file("sniff_empty", "")), HMD_FORMAT_UNKNOWN);
}

static void test_read_dispatch(void **state)
{
    const struct {
        const char *path;
        int natoms;
    } cases[] = {{DATA "salt.gro", 35},
                 {DATA "traj.pdb", 35},
                 {DATA "water.extxyz", 8},
                 {DATA "water_ase.data", 8},
                 {tmp_copy("sniff_read", DATA "handmade.data"), 5}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct hmd_frame *frames;
        int n;
        assert_int_equal(hmd_structure_read(cases[k].path, &frames, &n), HMD_OK);
        assert_true(n >= 1);
        assert_int_equal(frames[0].natoms, cases[k].natoms);
        hmd_frames_free(frames, n);
    }
}

static void test_read_unknown_and_missing(void **state)
{
    struct hmd_frame *frames;
    int n;
    const char *path = tmp_file("unknown_format", "hello\nworld\n");
    assert_int_equal(hmd_structure_read(path, &frames, &n), HMD_EDATA);
    assert_null(frames);
    assert_non_null(strstr(hmd_error_msg(), "unknown_format:1: unknown structure format"));
    assert_non_null(strstr(hmd_error_msg(), "GROMACS .gro, PDB"));
    assert_int_equal(hmd_structure_read(tmp_path("no_such_file"), &frames, &n), HMD_ENOINPUT);
    assert_non_null(strstr(hmd_error_msg(), "no_such_file: cannot open"));
    assert_int_equal(hmd_structure_read(tmp_path("no_such_file.xyz"), &frames, &n), HMD_ENOINPUT);
}

static void test_map_types(void **state)
{
    struct hmd_frame *frames;
    int n;
    assert_int_equal(hmd_structure_read(DATA "salt.gro", &frames, &n), HMD_OK);
    int type[35];
    const char *const full[] = {"H", "O", "Na", "Cl"};
    assert_int_equal(hmd_frame_map_types(&frames[0], "salt.gro", full, 4, type), HMD_OK);
    assert_int_equal(type[0], 1);
    assert_int_equal(type[1], 0);
    assert_int_equal(type[33], 2);
    assert_int_equal(type[34], 3);
    const char *const water[] = {"O", "H"};
    assert_int_equal(hmd_frame_map_types(&frames[0], "salt.gro", water, 2, type), HMD_EDATA);
    assert_string_equal(hmd_error_msg(), "salt.gro:36: atom 34 'NA' (element Na) has no type in "
                                         "the model (type map: O H)");
    hmd_frames_free(frames, n);

    /* a TIP4P virtual site has no element */
    const char *path = tmp_file("map_tip4p.gro", "tip4p\n    2\n"
                                                 "    1SOL     OW    1   0.100   0.200   0.300\n"
                                                 "    1SOL     MW    2   0.101   0.200   0.300\n"
                                                 "   1.00000   1.00000   1.00000\n");
    assert_int_equal(hmd_structure_read(path, &frames, &n), HMD_OK);
    assert_int_equal(hmd_frame_map_types(&frames[0], path, water, 2, type), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "map_tip4p.gro:4: atom 2 'MW': its element could "
                                            "not be guessed"));
    assert_non_null(strstr(hmd_error_msg(), "(type map: O H)"));
    hmd_frames_free(frames, n);
}

static void test_text_helpers(void **state)
{
    double x;
    long long i;
    assert_true(hmd_text_parse_double(" 1.5e3 ", 7, &x) && x == 1500.0);
    assert_true(hmd_text_parse_double("-2.25xyz", 5, &x) && x == -2.25); /* length bounds it */
    assert_false(hmd_text_parse_double("nan", 3, &x));
    assert_false(hmd_text_parse_double("-inf", 4, &x));
    assert_false(hmd_text_parse_double("1.5x", 4, &x));
    assert_false(hmd_text_parse_double("1 2", 3, &x));
    assert_false(hmd_text_parse_double("   ", 3, &x));
    assert_true(hmd_text_parse_int(" 42", 3, &i) && i == 42);
    assert_false(hmd_text_parse_int("4.2", 3, &i));
    assert_false(hmd_text_parse_int("99999999999999999999", 20, &i));

    char line[] = "  a bb\tccc  ";
    char *tok[2];
    assert_int_equal(hmd_text_split(line, tok, 2), 3);
    assert_string_equal(tok[0], "a");
    assert_string_equal(tok[1], "bb");

    char name[4];
    hmd_text_copy_trimmed(name, sizeof name, "  HW12  ", 8);
    assert_string_equal(name, "HW1");

    double t = -1;
    assert_true(hmd_text_title_time("Water t=   12.5 step= 3", &t) && t == 12.5);
    assert_true(hmd_text_title_time("t= 2", &t) && t == 2.0);
    t = -1;
    assert_false(hmd_text_title_time("run with dt=0.002", &t));
    assert_false(hmd_text_title_time("no time here", &t));
    assert_true(t == -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_alloc_free),
        cmocka_unit_test(test_detect_by_extension),
        cmocka_unit_test(test_detect_by_content),
        cmocka_unit_test(test_read_dispatch),
        cmocka_unit_test(test_read_unknown_and_missing),
        cmocka_unit_test(test_map_types),
        cmocka_unit_test(test_text_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
