/* Unit tests of io/topology and io/top_cpp: the preprocessor (defines, conditionals, includes,
 * continuation lines), grompp's include search order, grompp's lookup rules for bonded types
 * (wildcards, type-9 blocks, replaced types, two-atom dihedral types), the combination rules,
 * exclusions from nrexcl, the check against a structure, and every class of bad input: the
 * status, and a message naming the file and line. What grompp itself makes of real topologies
 * is checked against gmx_d by test_ff_golden. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/units.h"
#include "io/structure.h"
#include "io/topology.h"
#include "test_util.h"

static const char *tmpdir(void)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    return tmp ? tmp : ".";
}

static const double DEG = 3.14159265358979323846 / 180.0;
static const double E = HMD_KJ_PER_MOL_TO_EV;

/* $HMD_TEST_TMP/topology/<rel> with `text` (folders made); returns the path (static: the
 * last 8 stay valid). */
static const char *put(const char *rel, const char *text)
{
    static char paths[8][2048];
    static int next;
    char *path = paths[next++ % 8];
    snprintf(path, sizeof paths[0], "%s/topology/%s", tmpdir(), rel);
    for (char *p = path + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Options without GMXLIB and without an installed share folder, so tests see only their files. */
static const struct hmd_top_cpp_options bare = {.defines = NULL, .gmxlib = "", .share_top = ""};

/* A minimal force field for the tests' molecules: one atom type per element-like letter. */
static const char *FF = "[ defaults ]\n"
                        "1 2 yes 0.5 0.8333\n"
                        "[ atomtypes ]\n"
                        "; name btype at.num mass charge ptype sigma epsilon\n"
                        "A A 6 12.0 0.0 A 0.30 0.40\n"
                        "B B 8 16.0 -0.2 A 0.32 0.50\n"
                        "H H 1 1.0 0.1 A 0.10 0.05\n";

static void test_preprocessor(void **state)
{
    put("pp/ff.itp", FF);
    put("pp/sub/mol.itp", "[ moleculetype ]\n"
                          "M 3\n"
                          "[ atoms ]\n"
                          "1 A 1 RES C1 1 QA\n"
                          "2 B 1 RES O2 1 -QA 16.5\n"
                          "#include \"inner.itp\"\n");
    put("pp/sub/inner.itp", "[ bonds ]\n"
                            "1 2 1 B0 \\\n"
                            "   KB ; continued\n");
    const char *top = put("pp/topol.top", "; a comment line\n"
                                          "#define B0 0.15\n"
                                          "#define KB 2e5\n"
                                          "#define FLAG\n"
                                          "#include \"ff.itp\"\n"
                                          "#ifdef FLAG\n"
                                          "#ifndef NOPE\n"
                                          "#include \"sub/mol.itp\"\n"
                                          "#else\n"
                                          "[ not read ]\n"
                                          "#endif\n"
                                          "#endif\n"
                                          "#undef FLAG\n"
                                          "#ifdef FLAG\n"
                                          "[ not read either ]\n"
                                          "#include \"missing.itp\"\n"
                                          "#endif\n"
                                          "  #  ifndef FLAG\n"
                                          "[ system ]\n"
                                          "two \\\n"
                                          "lines\n"
                                          "#endif\n"
                                          "[ molecules ]\n"
                                          "M 2\n");
    struct hmd_top_cpp_options opt = bare;
    opt.defines = "-DQA=0.25 -DUNUSED";
    struct hmd_topology t;
    if (hmd_topology_read(&t, top, &opt)) {
        fail_msg("%s", hmd_error_msg());
    }
    assert_int_equal(t.natoms, 4);
    assert_string_equal(t.system, "two lines");
    assert_near(t.charge[0], 0.25, 0);
    assert_near(t.charge[1], -0.25, 0);
    assert_near(t.mass[0], 12.0, 0);
    assert_near(t.mass[1], 16.5, 0);
    assert_int_equal(t.count[HMD_TOP_BOND], 2);
    assert_near(t.inter[1].p[0], 1.5, 1e-15);           /* nm -> Å */
    assert_near(t.inter[1].p[1], 2e5 * E / 100, 1e-15); /* kJ/mol/nm^2 -> eV/Å^2 */
    assert_int_equal(t.inter[1].atom[0], 2);            /* second molecule */
    assert_string_equal(t.name[3], "O2");
    assert_string_equal(t.origin[3].file + strlen(t.origin[3].file) - 11, "sub/mol.itp");
    assert_int_equal(t.origin[3].line, 5);
    hmd_topology_free(&t);
    /* without the -D, QA stays a word where a number is needed */
    assert_int_equal(hmd_topology_read(&t, top, &bare), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "sub/mol.itp:4: the charge and mass of atom 1"));
}

/* grompp's order: the including file's folder, GMXLIB (in order), the installed folder. */
static void test_include_search(void **state)
{
    put("search/gmxlib1/x.txt", "");
    put("search/gmxlib2/lib.itp", "[ defaults ]\n1 1\n");
    put("search/share/lib.itp", "[ defaults ]\n1 3\n");
    put("search/share/mol.itp",
        "[ atomtypes ]\nA 12.0 0.0 A 1e-3 1e-6\n[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n");
    const char *rest = "#include \"mol.itp\"\n[ molecules ]\nM 1\n";
    char text[256];
    snprintf(text, sizeof text, "#include \"lib.itp\"\n%s", rest);
    const char *top = put("search/top/topol.top", text);
    char gmxlib[4096], share[4096], own[4096];
    snprintf(own, sizeof own, "%s/topology/search/top/lib.itp", tmpdir());
    remove(own); /* made below: not there yet on a second run */
    snprintf(gmxlib, sizeof gmxlib,
             "%s/topology/search/none:%s/topology/search/gmxlib1:%s/"
             "topology/search/gmxlib2",
             tmpdir(), tmpdir(), tmpdir());
    snprintf(share, sizeof share, "%s/topology/search/share", tmpdir());
    struct hmd_topology t;
    struct hmd_top_cpp_options opt = {.gmxlib = gmxlib, .share_top = share};
    assert_int_equal(hmd_topology_read(&t, top, &opt), HMD_OK);
    assert_int_equal(t.comb_rule, 1); /* GMXLIB before the installed folder */
    hmd_topology_free(&t);
    opt.gmxlib = "";
    assert_int_equal(hmd_topology_read(&t, top, &opt), HMD_OK);
    assert_int_equal(t.comb_rule, 3);
    hmd_topology_free(&t);
    put("search/top/lib.itp", "[ defaults ]\n1 2\n");
    opt.gmxlib = gmxlib;
    assert_int_equal(hmd_topology_read(&t, top, &opt), HMD_OK);
    assert_int_equal(t.comb_rule, 2); /* the topology's own folder first */
    hmd_topology_free(&t);
    opt.share_top = "";
    opt.gmxlib = "";
    assert_int_equal(hmd_topology_read(&t, top, &opt), HMD_ENOINPUT);
    assert_non_null(strstr(hmd_error_msg(), "topol.top:2: #include \"mol.itp\" not found"));
    assert_non_null(strstr(hmd_error_msg(), "gromacs-data"));
}

/* Lookups: the most specific dihedral type wins, a type-9 block gives all its terms, a later
 * type line replaces an earlier one, two-atom dihedral types, pairs generated with fudgeLJ. */
static void test_type_lookups(void **state)
{
    const char *top = put("lookup/topol.top",
                          "[ defaults ]\n1 2 yes 0.5 0.8\n"
                          "[ atomtypes ]\n"
                          "A1 A 12.0 0.0 A 0.30 0.40\n"
                          "B1 B 16.0 0.0 A 0.34 0.90\n"
                          "[ pairtypes ]\nB1 B1 1 0.2 0.3\n"
                          "[ bondtypes ]\nA B 1 0.1 1000\nB A 1 0.2 2000\n"
                          "[ angletypes ]\nA B A 5 100 10 0.25 300\n"
                          "[ dihedraltypes ]\n"
                          "X A A X 9 0 1 3\n"
                          "B A A B 9 10 2 1\n"
                          "B A A B 9 20 3 2\n"
                          "B A 1 30 4 2\n"
                          "A B 2 40 5\n"
                          "X B B X 4 50 6 2\n"
                          "[ moleculetype ]\nM 3\n[ atoms ]\n"
                          "1 B1 1 R B 1 0.1\n2 A1 1 R A 1 0\n3 A1 1 R A 1 0\n4 B1 1 R B 1 -0.1\n"
                          "5 A1 1 R A 1 0\n6 A1 1 R A 1 0\n"
                          "[ bonds ]\n1 2 1\n"
                          "[ angles ]\n2 1 5 5\n"
                          "[ dihedrals ]\n"
                          "1 2 3 4 9\n" /* B A A B: the block of two */
                          "5 2 3 6 9\n" /* A A A A: the wildcard line */
                          "4 3 2 1 1\n" /* backwards, type 1: the same block */
                          "3 1 2 5 1\n" /* A B A A: two-atom proper B A = X B A X */
                          "1 3 2 5 2\n" /* B A A A: two-atom improper A B = A X X B, reversed */
                          "3 1 4 2 4\n" /* A B B A: wildcard periodic improper */
                          "[ pairs ]\n1 4 1\n1 5 1\n"
                          "[ molecules ]\nM 1\n");
    struct hmd_topology t;
    if (hmd_topology_read(&t, top, &bare)) {
        fail_msg("%s", hmd_error_msg());
    }
    const struct hmd_top_interaction *in = t.inter;
    assert_int_equal(t.ninter, 12);
    /* bond A-B: the second line (B A, same types backwards) replaced the first */
    assert_near(in[0].p[0], 2.0, 1e-15);
    assert_near(in[0].p[1], 2000 * E / 100, 1e-16);
    assert_int_equal(in[1].kind, HMD_TOP_UREY_BRADLEY);
    assert_near(in[1].p[2], 2.5, 1e-15);
    const double want[][3] = {{10, 2, 1}, {20, 3, 2}, {0, 1, 3},
                              {10, 2, 1}, {20, 3, 2}, {30, 4, 2}};
    for (int k = 0; k < 6; k++) {
        assert_int_equal(in[2 + k].kind, HMD_TOP_PROPER);
        assert_near(in[2 + k].p[0], want[k][0] * DEG, 1e-15);
        assert_near(in[2 + k].p[1], want[k][1] * E, 1e-16);
        assert_near(in[2 + k].p[2], want[k][2], 0);
    }
    assert_int_equal(in[8].kind, HMD_TOP_IMPROPER);
    assert_near(in[8].p[1], 5 * E, 1e-16);
    assert_int_equal(in[9].kind, HMD_TOP_PERIODIC_IMPROPER);
    assert_near(in[9].p[0], 50 * DEG, 1e-15);
    /* pairs: B1-B1 from [ pairtypes ], A1-B1 generated (sigma mean, epsilon scaled by 0.5) */
    const double s2 = 0.2 * 0.2 * 0.2 * 0.2 * 0.2 * 0.2;
    assert_near(in[10].p[0], 4 * 0.3 * s2 * E * 1e6, 1e-12 * in[10].p[0]);
    const double s = 0.32, s6 = s * s * s * s * s * s, eps = 0.5 * sqrt(0.4 * 0.9);
    assert_near(in[11].p[0], 4 * eps * s6 * E * 1e6, 1e-12 * in[11].p[0]);
    assert_near(in[11].p[1], 4 * eps * s6 * s6 * E * 1e12, 1e-12 * in[11].p[1]);
    /* Lennard-Jones by type pair: comb-rule 2 */
    assert_int_equal(t.ntypes, 2);
    assert_near(t.c6[1], 4 * sqrt(0.4 * 0.9) * s6 * E * 1e6, 1e-12 * t.c6[1]);
    assert_near(t.c6[1], t.c6[2], 0);
    hmd_topology_free(&t);
}

static void test_combination_rules(void **state)
{
    for (int comb = 1; comb <= 3; comb++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[ defaults ]\n1 %d\n[ atomtypes ]\nA 12 0 A 0.3 0.4\nB 12 0 A 0.5 0.6\n"
                 "[ nonbond_params ]\nB B 1 0.7 0.8\n"
                 "[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 B 1 R B 1\n"
                 "[ molecules ]\nM 1\n",
                 comb);
        struct hmd_topology t;
        assert_int_equal(hmd_topology_read(&t, put("comb/topol.top", text), &bare), HMD_OK);
        double v = comb == 1 ? sqrt(0.3 * 0.5) : comb == 2 ? 0.4 : sqrt(0.3 * 0.5);
        double w = sqrt(0.4 * 0.6);
        double c6 = comb == 1 ? v : 4 * w * pow(v, 6), c12 = comb == 1 ? w : 4 * w * pow(v, 12);
        assert_near(t.c6[1], c6 * E * 1e6, 1e-12 * fabs(c6 * E * 1e6));
        assert_near(t.c12[1], c12 * E * 1e12, 1e-12 * fabs(c12 * E * 1e12));
        c6 = comb == 1 ? 0.7 : 4 * 0.8 * pow(0.7, 6); /* [ nonbond_params ] */
        assert_near(t.c6[3], c6 * E * 1e6, 1e-12 * c6 * E * 1e6);
        hmd_topology_free(&t);
    }
}

static void test_exclusions(void **state)
{
    /* a chain 0-1-2-3-4 and a branch 2-5, nrexcl 2, plus [ exclusions ] 0 4 */
    const int bonds[][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {2, 5}};
    const int extra[][2] = {{0, 4}};
    int *start, *list;
    assert_int_equal(hmd_topology_exclusions(6, 5, bonds, 2, 1, extra, &start, &list), HMD_OK);
    const int want_start[] = {0, 3, 7, 12, 16, 19, 22};
    const int want[] = {1, 2, 4, 0, 2, 3, 5, 0, 1, 3, 4, 5, 1, 2, 4, 5, 0, 2, 3, 1, 2, 3};
    assert_memory_equal(start, want_start, sizeof want_start);
    assert_memory_equal(list, want, sizeof want);
    free(start);
    free(list);
}

static void test_check_frame(void **state)
{
    put("frame/ff.itp", FF);
    const char *top = put("frame/topol.top", "#include \"ff.itp\"\n[ moleculetype ]\nW 2\n"
                                             "[ atoms ]\n1 B 1 W O 1\n2 H 1 W H1 1\n3 H 1 W H2 1\n"
                                             "[ molecules ]\nW 2\n");
    const char *gro = put("frame/conf.gro", "two\n    6\n"
                                            "    1W        O    1   0.100   0.100   0.100\n"
                                            "    1W       H1    2   0.200   0.100   0.100\n"
                                            "    1W       H2    3   0.100   0.200   0.100\n"
                                            "    2W        O    4   0.500   0.500   0.500\n"
                                            "    2W       H2    5   0.600   0.500   0.500\n"
                                            "    2W       H1    6   0.500   0.600   0.500\n"
                                            "   1.00000   1.00000   1.00000\n");
    struct hmd_topology t;
    assert_int_equal(hmd_topology_read(&t, top, &bare), HMD_OK);
    struct hmd_frame *fr;
    int nf;
    assert_int_equal(hmd_structure_read(gro, &fr, &nf), HMD_OK);
    assert_int_equal(hmd_topology_check_frame(&t, &fr[0], "conf.gro"), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "conf.gro:7: atom 5 is H2 in the structure but H1 in "
                                            "the topology (atom 2 of molecule W number 2, "
                                            "declared at"));
    assert_non_null(strstr(hmd_error_msg(), "topol.top:6)"));
    fr[0].natoms = 5;
    assert_int_equal(hmd_topology_check_frame(&t, &fr[0], "conf.gro"), HMD_EDATA);
    assert_non_null(
        strstr(hmd_error_msg(), "conf.gro has 5 atoms, the topology's [ molecules ] 6"));
    fr[0].natoms = 6;
    strcpy(fr[0].name[4], "H1");
    strcpy(fr[0].name[5], "H2");
    assert_int_equal(hmd_topology_check_frame(&t, &fr[0], "conf.gro"), HMD_OK);
    hmd_frames_free(fr, nf);
    hmd_topology_free(&t);
}

/* Every class of bad input: the status and the message (file:line). */
static void test_bad_input(void **state)
{
    static const struct {
        const char *text; /* appended to FF unless it starts with '!' (then alone) */
        int status;
        const char *msg;
    } cases[] = {
        {"[ foo ]\n", HMD_EDATA, "bad.top:9: unknown section [ foo ]"},
        {"[ moleculetype ]\nW 2\n[ settles ]\n", HMD_ENOTSUP,
         "bad.top:11: [ settles ]: rigid water"},
        {"[ constraints ]\n", HMD_ENOTSUP, "bad.top:9: [ constraints ]: constraints are not"},
        {"[ virtual_sites3 ]\n", HMD_ENOTSUP, "virtual sites are not supported"},
        {"[ cmap ]\n", HMD_ENOTSUP, "[ cmap ]: CMAP corrections are not supported"},
        {"[ position_restraints ]\n", HMD_ENOTSUP, "position restraints are not supported"},
        {"#if X\n", HMD_EDATA, "bad.top:9: #if is not a topology directive"},
        {"#endif\n", HMD_EDATA, "bad.top:9: #endif without #ifdef"},
        {"#else\n", HMD_EDATA, "bad.top:9: #else without #ifdef"},
        {"#ifdef X\n#else\n#else\n#endif\n", HMD_EDATA, "bad.top:11: a second #else"},
        {"#ifndef X\n", HMD_EDATA, "bad.top:9: #ifndef X has no #endif"},
        {"#ifdef\n", HMD_EDATA, "bad.top:9: #ifdef needs a name"},
        {"#define 3X 1\n", HMD_EDATA, "bad.top:9: #define needs a name"},
        {"#include foo.itp\n", HMD_EDATA, "bad.top:9: #include needs \"file\""},
        {"!#include \"bad.top\"\n", HMD_EDATA, "bad.top:1: #include \"bad.top\" nests deeper"},
        {"[ defaults ]\n1 2\n", HMD_EDATA, "bad.top:10: a second [ defaults ]"},
        {"![ defaults ]\n2 1\n", HMD_ENOTSUP, "bad.top:2: [ defaults ] nbfunc 2 is not supported"},
        {"![ defaults ]\n1 4\n", HMD_EDATA, "comb-rule 4 is not 1, 2 or 3"},
        {"![ defaults ]\n1 2 no 0.5 0.5 10\n", HMD_ENOTSUP, "repulsion power 10"},
        {"![ atomtypes ]\nA 12 0 A 0.3 0.4\n", HMD_EDATA, "bad.top:2: force-field tables before"},
        {"[ atomtypes ]\nC 12 0 A 0.3\n", HMD_EDATA, "bad.top:10: an atom type needs"},
        {"[ atomtypes ]\nC 12 0 Q1 0.3 0.4\n", HMD_EDATA, "bad.top:10: cannot read the atom type"},
        {"[ atomtypes ]\nC 12 0 A 0.3 -0.4\n", HMD_EDATA, "has a negative epsilon"},
        {"[ atomtypes ]\nC 1x 0 A 0.3 0.4\n", HMD_EDATA, "has a field that is not a number"},
        {"[ atomtypes ]\nMW 0 0 D 0 0\n[ moleculetype ]\nM 1\n[ atoms ]\n1 MW 1 R M 1\n",
         HMD_ENOTSUP, "bad.top:14: atom type MW is a virtual site"},
        {"[ atoms ]\n1 A 1 R A 1\n", HMD_EDATA, "bad.top:10: molecule data before any"},
        {"[ moleculetype ]\nM\n", HMD_EDATA,
         "bad.top:10: [ moleculetype ] needs a name and nrexcl"},
        {"[ moleculetype ]\nM 1\n[ moleculetype ]\nm 2\n", HMD_EDATA, "defined twice"},
        {"[ moleculetype ]\nM 1\n[ bonds ]\n1 2 1\n", HMD_EDATA,
         "interactions before the [ atoms ]"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n2 A 1 R A 1\n", HMD_EDATA,
         "bad.top:12: atom number 2 where 1 comes next"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 Z 1 R A 1\n", HMD_EDATA, "unknown atom type Z"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A x R A 1\n", HMD_EDATA, "residue number 'x'"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1 0 0\n", HMD_EDATA, "has mass 0"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R AVERYLONGNAME 1\n", HMD_EDATA,
         "atom name 'AVERYLONGNAME' is longer"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n[ bonds ]\n1 3 1\n", HMD_EDATA,
         "bad.top:14: atom '3' is not one of the 1 atoms of molecule type M"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ bonds ]\n1 1 1\n",
         HMD_EDATA, "atom 1 appears twice"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ bonds ]\n1 2 3\n",
         HMD_ENOTSUP, "bad.top:15: [ bonds ] function 3 (Morse) is not supported"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n3 A 1 R A 1\n"
         "[ angles ]\n1 2 3 2\n",
         HMD_ENOTSUP, "[ angles ] function 2 (G96) is not supported"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n3 A 1 R A 1\n4 A 1 R A 1\n"
         "[ dihedrals ]\n1 2 3 4 3\n",
         HMD_ENOTSUP, "function 3 (Ryckaert-Bellemans) is not supported"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ pairs ]\n1 2 2\n",
         HMD_ENOTSUP, "[ pairs ] function 2 is not supported"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ bonds ]\n1 2 1\n",
         HMD_EDATA, "bad.top:15: no parameters for the bond of atoms 1 2"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ bonds ]\n1 2 1 0.1\n",
         HMD_EDATA, "bond: 1 parameters; expected 2 (or 4 with the B state)"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ bonds ]\n1 2 1 0.1 k\n",
         HMD_EDATA, "parameter 'k' is not a number"},
        {"![ defaults ]\n1 2 no\n[ atomtypes ]\nA 12 0 A 0.3 0.4\n[ moleculetype ]\nM 1\n"
         "[ atoms ]\n1 A 1 R A 1\n2 A 1 R A 1\n[ pairs ]\n1 2 1\n",
         HMD_EDATA, "bad.top:11: no parameters for the pair of atom types A A: gen-pairs = no"},
        {"[ dihedraltypes ]\nA A A A 9 0 1 1\nA A A A 9 0 2 2\nB B B B 9 0 1 1\nA A A A 9 0 3 3\n",
         HMD_EDATA, "bad.top:13: a second block of [ dihedraltypes ] 9"},
        {"[ bondtypes ]\nA Q 1 0.1 1000\n", HMD_EDATA, "unknown bonded atom type Q"},
        {"[ pairtypes ]\nA Q 1 0.1 1000\n", HMD_EDATA, "unknown atom type Q"},
        {"[ nonbond_params ]\nA B 2 0.1 1000\n", HMD_ENOTSUP, "[ nonbond_params ] function 2"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n[ molecules ]\nN 1\n", HMD_EDATA,
         "bad.top:14: no molecule type N"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n[ molecules ]\nM -1\n", HMD_EDATA,
         "molecule-type count"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n", HMD_EDATA, "no [ molecules ] section"},
        {"[ moleculetype ]\nM 1\n[ atoms ]\n1 A 1 R A 1\n[ molecules ]\nM 0\n", HMD_EDATA,
         "the topology has no atoms"},
        {"[ molecules ]\n[ moleculetype ]\nM 1\n", HMD_EDATA,
         "[ moleculetype ] after [ molecules ]"},
        {"[ system\n", HMD_EDATA, "bad.top:9: a section header needs a closing ']'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[4096];
        if (cases[k].text[0] == '!') {
            snprintf(text, sizeof text, "%s", cases[k].text + 1);
        } else {
            snprintf(text, sizeof text, "%s; line 8\n%s", FF, cases[k].text);
        }
        const char *path = put("bad/bad.top", text);
        struct hmd_topology t;
        hmd_error_clear();
        int rc = hmd_topology_read(&t, path, &bare);
        if (rc != cases[k].status || !strstr(hmd_error_msg(), cases[k].msg)) {
            fail_msg("case %zu (%s): status %d, message '%s'; expected %d with '%s'", k,
                     cases[k].text, rc, hmd_error_msg(), cases[k].status, cases[k].msg);
        }
        assert_int_equal(t.natoms, 0); /* zeroed on failure */
    }
    struct hmd_topology t;
    struct hmd_top_cpp_options opt = bare;
    opt.defines = "-DA -Ifolder";
    assert_int_equal(hmd_topology_read(&t, put("bad/ok.top", FF), &opt), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "'-Ifolder' is not -DNAME or -DNAME=value"));
    assert_int_equal(hmd_topology_read(&t, "/nonexistent/topol.top", &bare), HMD_ENOINPUT);
    assert_non_null(strstr(hmd_error_msg(), "/nonexistent/topol.top: cannot open"));
}

/* The example protein: rigid water is refused, -DFLEXIBLE reads it whole (needs the installed
 * force fields, Debian's gromacs-data). */
static void test_example_protein(void **state)
{
    const char *path = HMD_TEST_DATA "/../../examples/protein/topol.top";
    struct hmd_topology t;
    assert_int_equal(hmd_topology_read(&t, path, NULL), HMD_ENOTSUP);
    assert_non_null(strstr(hmd_error_msg(), "tip3p.itp:13: [ settles ]: rigid water"));
    struct hmd_top_cpp_options opt = {.defines = "-DFLEXIBLE"};
    if (hmd_topology_read(&t, path, &opt)) {
        fail_msg("%s", hmd_error_msg());
    }
    assert_int_equal(t.natoms, 15668);
    assert_int_equal(t.nblocks, 4);
    assert_string_equal(t.block[1].name, "SOL");
    assert_int_equal(t.block[1].count, 4852);
    assert_string_equal(t.system, "Protein in water");
    double q = 0;
    for (int i = 0; i < t.natoms; i++) {
        q += t.charge[i];
    }
    assert_true(fabs(q) < 1e-9);
    hmd_topology_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preprocessor), cmocka_unit_test(test_include_search),
        cmocka_unit_test(test_type_lookups), cmocka_unit_test(test_combination_rules),
        cmocka_unit_test(test_exclusions),   cmocka_unit_test(test_check_frame),
        cmocka_unit_test(test_bad_input),    cmocka_unit_test(test_example_protein),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
