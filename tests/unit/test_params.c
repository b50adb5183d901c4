/* Unit tests of src/core/params: reading .mdp-style files, -set overrides, every error with
 * its message, the cross-parameter check, the echo read back, and docs/parameters.md kept in
 * step with the key table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "core/params.h"

/* Writes `text` to $HMD_TEST_TMP/<name> and returns the path (static storage, one at a time). */
static const char *write_file(const char *name, const char *text)
{
    static char path[1024];
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(path, sizeof path, "%s/%s", tmp ? tmp : ".", name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* Reads `text` as a parameter file over defaults; returns the status. */
static int read_text(struct hmd_params *p, const char *text)
{
    hmd_params_defaults(p);
    hmd_error_clear();
    return hmd_params_read(p, write_file("test_params_input.mdp", text));
}

/* Asserts that the last error message contains `part`. */
static void assert_msg_has(const char *part)
{
    if (!strstr(hmd_error_msg(), part)) {
        fail_msg("message \"%s\" lacks \"%s\"", hmd_error_msg(), part);
    }
}

/* Asserts that reading `text` fails with HMD_ECONFIG and a message containing both parts. */
static void assert_rejected(const char *text, const char *part1, const char *part2)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, text), HMD_ECONFIG);
    assert_msg_has(part1);
    assert_msg_has(part2);
}

static void assert_same_values(const struct hmd_params *a, const struct hmd_params *b)
{
    assert_string_equal(a->integrator, b->integrator);
    assert_true(a->dt == b->dt);
    assert_true(a->nsteps == b->nsteps);
    assert_int_equal(a->nstlist, b->nstlist);
    assert_true(a->verlet_buffer == b->verlet_buffer);
    assert_true(a->rlist == b->rlist);
    assert_int_equal(a->tcoupl, b->tcoupl);
    assert_true(a->tau_t == b->tau_t);
    assert_true(a->ref_t == b->ref_t);
    assert_true(a->ld_seed == b->ld_seed);
    assert_int_equal(a->com_mode, b->com_mode);
    assert_int_equal(a->nstcomm, b->nstcomm);
    assert_int_equal(a->gen_vel, b->gen_vel);
    assert_true(a->gen_temp == b->gen_temp);
    assert_true(a->gen_seed == b->gen_seed);
    assert_int_equal(a->nstxout, b->nstxout);
    assert_int_equal(a->nstvout, b->nstvout);
    assert_int_equal(a->nstfout, b->nstfout);
    assert_int_equal(a->nstenergy, b->nstenergy);
    assert_int_equal(a->nstlog, b->nstlog);
    assert_int_equal(a->nstcalcenergy, b->nstcalcenergy);
    assert_string_equal(a->model, b->model);
    assert_int_equal(a->precision, b->precision);
    assert_string_equal(a->backend, b->backend);
}

static void test_defaults(void **state)
{
    struct hmd_params p;
    hmd_params_defaults(&p);
    assert_string_equal(p.integrator, "md-vv");
    assert_true(p.dt == 0.0005);
    assert_true(p.nsteps == 0);
    assert_int_equal(p.nstlist, 0);
    assert_true(p.verlet_buffer == 2.0);
    assert_true(p.rlist == 0);
    assert_int_equal(p.tcoupl, HMD_TCOUPL_NO);
    assert_true(p.tau_t == 0.1);
    assert_true(p.ld_seed == -1);
    assert_int_equal(p.com_mode, HMD_COM_LINEAR);
    assert_int_equal(p.nstcomm, 100);
    assert_false(p.gen_vel);
    assert_true(p.gen_temp == 300);
    assert_true(p.gen_seed == -1);
    assert_int_equal(p.nstxout + p.nstvout + p.nstfout, 0);
    assert_int_equal(p.nstenergy, 100);
    assert_int_equal(p.nstlog, 100);
    assert_int_equal(p.nstcalcenergy, 100);
    assert_string_equal(p.model, "");
    assert_int_equal(p.precision, HMD_PRECISION_DOUBLE);
    assert_string_equal(p.backend, "auto");
    assert_null(hmd_params_origin(&p, "dt").file);
}

static void test_read_syntax_and_spellings(void **state)
{
    /* comments anywhere, blank lines, tabs, CRLF, any case, '_' for '-', lines over 200 chars */
    char text[8192];
    char longpath[600];
    memset(longpath, 'm', sizeof longpath - 4);
    memcpy(longpath + sizeof longpath - 4, ".dp", 4);
    char longcomment[1000];
    memset(longcomment, 'c', sizeof longcomment - 1);
    longcomment[sizeof longcomment - 1] = '\0';
    snprintf(text, sizeof text,
             "; a comment line\n"
             "\n"
             "  DT\t=  0.001   ; fs would be 1\n"
             "Tau_T = 0.5\r\n"
             "tcoupl = V-Rescale\n"
             "ref_t=330;no spaces\n"
             "integrator = md\n"
             "gen-vel = On\n"
             "nsteps = -1\n"
             "ld-seed = 9000000000\n"
             "precision = mixed\n"
             "backend = CUDA\n"
             "model = %s ; %s\n"
             "   ; indented comment\n",
             longpath, longcomment);
    struct hmd_params p;
    assert_int_equal(read_text(&p, text), HMD_OK);
    assert_true(p.dt == 0.001);
    assert_true(p.tau_t == 0.5);
    assert_int_equal(p.tcoupl, HMD_TCOUPL_VRESCALE);
    assert_true(p.ref_t == 330);
    assert_string_equal(p.integrator, "md-vv"); /* md is an alias */
    assert_true(p.gen_vel);
    assert_true(p.nsteps == -1);
    assert_true(p.ld_seed == 9000000000LL);
    assert_int_equal(p.precision, HMD_PRECISION_MIXED);
    assert_string_equal(p.backend, "cuda");
    assert_string_equal(p.model, longpath);
    struct hmd_param_origin o = hmd_params_origin(&p, "TAU_T");
    assert_non_null(o.file);
    assert_non_null(strstr(o.file, "test_params_input.mdp"));
    assert_int_equal(o.line, 4);
    assert_int_equal(hmd_params_origin(&p, "ref-t").line, 6);
    assert_null(hmd_params_origin(&p, "nstlog").file);
    assert_null(hmd_params_origin(&p, "no-such-key").file);
}

static void test_bool_words(void **state)
{
    const char *yes[] = {"yes", "true", "on", "YES"}, *no[] = {"no", "false", "off"};
    struct hmd_params p;
    char line[64];
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        snprintf(line, sizeof line, "gen-vel = %s\n", yes[i]);
        assert_int_equal(read_text(&p, line), HMD_OK);
        assert_true(p.gen_vel);
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        assert_int_equal(read_text(&p, "gen-vel = on\n"), HMD_OK);
        snprintf(line, sizeof line, "gen-vel=%s", no[i]);
        assert_int_equal(hmd_params_set(&p, line), HMD_OK);
        assert_false(p.gen_vel);
    }
    assert_rejected("gen-vel = 1\n", ":1: gen-vel = 1 is not one of:", "yes, no, true, false");
}

static void test_unknown_key(void **state)
{
    assert_rejected("dt = 0.001\nnstep = 10\n",
                    "test_params_input.mdp:2: unknown parameter 'nstep'", "did you mean 'nsteps'?");
    assert_rejected("tcouple = v-rescale\n", "'tcouple'", "did you mean 'tcoupl'?");
    assert_rejected("NST_CALC_ENERGY = 10\n", "'NST_CALC_ENERGY'", "'nstcalcenergy'");
    assert_rejected("cutoff-scheme = Verlet\n", "unknown parameter 'cutoff-scheme'",
                    "docs/parameters.md");
    struct hmd_params p;
    assert_int_equal(read_text(&p, "xy = 1\n"), HMD_ECONFIG);
    assert_null(strstr(hmd_error_msg(), "did you mean"));
}

static void test_repeated_key(void **state)
{
    assert_rejected("tau-t = 0.1\ndt = 0.001\n\ntau_t = 0.2\n",
                    "test_params_input.mdp:4: tau-t is given twice", "first at line 1");
}

static void test_malformed_lines(void **state)
{
    assert_rejected("dt 0.001\n", "test_params_input.mdp:1: 'dt 0.001' is not a 'key = value' line",
                    "';'");
    assert_rejected("dt = 0.001\n = 5\n", "test_params_input.mdp:2: no key before '='",
                    "key = value");
    assert_rejected("dt = ; later\n", "test_params_input.mdp:1: dt has no value", "default");
}

static void test_bad_numbers(void **state)
{
    assert_rejected("nsteps = 10x\n", ":1: nsteps = 10x is not an integer", "");
    assert_rejected("nstxout = 1.5\n", "nstxout = 1.5 is not an integer", "");
    assert_rejected("nstxout = 3000000000\n", "nstxout = 3000000000", "32-bit");
    assert_rejected("nsteps = 99999999999999999999\n", "nsteps", "64-bit");
    assert_rejected("dt = 0.001x\n", "dt = 0.001x is not a number", "");
    assert_rejected("dt = \n", "dt has no value", "");
    assert_rejected("tau-t = 1e999\n", "tau-t = 1e999", "finite");
    assert_rejected("gen-temp = nan\n", "gen-temp = nan", "finite");
    assert_rejected("gen-temp = inf\n", "gen-temp = inf", "finite");
}

static void test_out_of_range(void **state)
{
    assert_rejected("dt = 0.02\n", "dt = 0.02 is out of range", "must be > 0 and <= 0.01");
    assert_rejected("dt = 0\n", "dt = 0 is out of range", "> 0");
    assert_rejected("nsteps = -2\n", "nsteps = -2 is out of range", "must be >= -1");
    assert_rejected("nstcalcenergy = 0\n", "nstcalcenergy = 0", ">= 1");
    assert_rejected("ref-t = -1\n", "ref-t = -1", ">= 0");
    struct hmd_params p;
    assert_int_equal(read_text(&p, "dt = 0.01\nnsteps = 9223372036854775807\n"), HMD_OK);
    assert_true(p.nsteps == INT64_MAX);
}

static void test_enum_words(void **state)
{
    assert_rejected("tcoupl = berendsen\n", "tcoupl = berendsen is not supported",
                    "no, v-rescale, langevin");
    assert_rejected("tcoupl = Nose-Hoover\n", "not supported", "no, v-rescale, langevin");
    assert_rejected("tcoupl = vrescale\n",
                    "tcoupl = vrescale is not one of:", "no, v-rescale, langevin");
    assert_rejected("integrator = sd\n", "not supported", "tcoupl = langevin");
    assert_rejected("comm-mode = angular\n", "not supported", "linear, none");
    assert_rejected("precision = single\n", "precision = single", "double, mixed");
    assert_rejected("backend = gpu\n", "backend = gpu", "auto, cpu, cuda");
}

static void test_unreadable_file(void **state)
{
    struct hmd_params p;
    hmd_params_defaults(&p);
    assert_int_equal(hmd_params_read(&p, "/nonexistent/md.mdp"), HMD_ENOINPUT);
    assert_msg_has("/nonexistent/md.mdp");
    const char *tmp = getenv("HMD_TEST_TMP");
    assert_int_equal(hmd_params_read(&p, tmp ? tmp : "."), HMD_ENOINPUT); /* a directory */
}

static void test_set_overrides(void **state)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, "dt = 0.001\n"), HMD_OK);
    assert_int_equal(hmd_params_set(&p, "dt=0.002"), HMD_OK);
    assert_true(p.dt == 0.002);
    assert_string_equal(hmd_params_origin(&p, "dt").file, "-set");
    assert_int_equal(hmd_params_set(&p, " Tau_T = 0.3 "), HMD_OK);
    assert_true(p.tau_t == 0.3);

    assert_int_equal(hmd_params_set(&p, "dt=0.003"), HMD_ECONFIG);
    assert_msg_has("-set dt=0.003: dt is given twice with -set");
    assert_true(p.dt == 0.002);
    assert_int_equal(hmd_params_set(&p, "nstep=5"), HMD_ECONFIG);
    assert_msg_has("-set nstep=5: unknown parameter 'nstep'; did you mean 'nsteps'?");
    assert_int_equal(hmd_params_set(&p, "nsteps"), HMD_ECONFIG);
    assert_msg_has("-set nsteps: expected -set key=value");
    assert_int_equal(hmd_params_set(&p, "nsteps="), HMD_ECONFIG);
    assert_msg_has("-set nsteps=: nsteps has no value");
    assert_int_equal(hmd_params_set(&p, "=5"), HMD_ECONFIG);
    assert_msg_has("-set =5: no key");
    assert_int_equal(hmd_params_set(&p, "nstlog=-5"), HMD_ECONFIG);
    assert_msg_has("-set nstlog=-5: nstlog = -5 is out of range; it must be >= 0");
    assert_int_equal(hmd_params_set(&p, "model=a;b.dp"), HMD_ECONFIG);
    assert_msg_has("';'");
    assert_int_equal(hmd_params_set(&p, "model=dir/a=b.dp"), HMD_OK);
    assert_string_equal(p.model, "dir/a=b.dp");
}

/* nstcalcenergy is lowered to fit nstenergy and nstlog, with a note, as grompp does. */
static void test_check_multiples(void **state)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, "nstcalcenergy = 10\nnstenergy = 25\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_int_equal(p.nstcalcenergy, 5);
    assert_non_null(strstr(p.notes, "nstcalcenergy = 10 ("));
    assert_non_null(strstr(p.notes, "test_params_input.mdp:1) changed to 5, so that nstenergy = "
                                    "25 and nstlog = 100 are multiples of it"));
    assert_string_equal(hmd_params_origin(&p, "nstcalcenergy").file, "derived");
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK); /* again: the same, one note */
    assert_int_equal(p.nstcalcenergy, 5);
    assert_null(strchr(p.notes, '\n'));
    /* the default 100 against nstlog = 75 from -set; nstenergy = 0 does not count */
    assert_int_equal(read_text(&p, "nstenergy = 0\n"), HMD_OK);
    assert_int_equal(hmd_params_set(&p, "nstlog=75"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_int_equal(p.nstcalcenergy, 25);
    assert_non_null(strstr(p.notes, "nstcalcenergy = 100 (default) changed to 25"));
    assert_int_equal(read_text(&p, "nstcalcenergy = 50\nnstenergy = 0\nnstlog = 150\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_int_equal(p.nstcalcenergy, 50);
    assert_string_equal(p.notes, "");
}

/* Every bad line of a file in one message, in line order; "did you mean" never names a key the
 * file sets (even on a later line). */
static void test_all_errors_at_once(void **state)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, "cutoff-scheme = Verlet\ndt = 0.001\ntcouple = v-rescale\n"
                                   "integrator = sd\nnstlist = ten\ntcoupl = no\n"
                                   "epsilon-surface = 0\n"),
                     HMD_ECONFIG);
    assert_msg_has("test_params_input.mdp:1: unknown parameter 'cutoff-scheme'");
    /* pcoupl, not set, may be suggested; tcoupl, set on line 6, may not */
    assert_msg_has("params_input.mdp:3: unknown parameter 'tcouple';");
    assert_msg_has("params_input.mdp:4: integrator = sd is not supported");
    assert_msg_has("params_input.mdp:5: nstlist = ten is not an integer");
    assert_msg_has("params_input.mdp:7: unknown parameter 'epsilon-surface'");
    assert_null(strstr(hmd_error_msg(), "did you mean 'tcoupl'"));
    int lines = 1;
    for (const char *c = hmd_error_msg(); *c; c++) {
        lines += *c == '\n';
    }
    assert_int_equal(lines, 5); /* one line per bad line */
    assert_null(strstr(hmd_error_msg(), ":2:"));
    assert_null(strstr(hmd_error_msg(), ":6:"));
    /* without tcoupl set, the suggestion stays */
    assert_rejected("tcouple = v-rescale\n", ":1: unknown parameter 'tcouple'",
                    "did you mean 'tcoupl'?");
    /* and -set does not suggest a key the file or an earlier -set gave */
    assert_int_equal(read_text(&p, "nsteps = 10\n"), HMD_OK);
    assert_int_equal(hmd_params_set(&p, "nstep=5"), HMD_ECONFIG);
    assert_null(strstr(hmd_error_msg(), "did you mean 'nsteps'"));
}

/* A UTF-8 byte-order mark before the first key is skipped; elsewhere it is part of the text. */
static void test_byte_order_mark(void **state)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, "\xEF\xBB\xBFnsteps = 12\ndt = 0.001\n"), HMD_OK);
    assert_int_equal(p.nsteps, 12);
    assert_int_equal(read_text(&p, "dt = 0.001\n\xEF\xBB\xBFnsteps = 12\n"), HMD_ECONFIG);
    assert_msg_has(":2: unknown parameter");
}

/* The output-group keys: text, default System; the XTC precision must be positive. */
static void test_output_keys(void **state)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, "compressed-x-grps = Water NA\nnstxout_compressed = 50\n"
                                   "h5md = yes\n"),
                     HMD_OK);
    assert_string_equal(p.compressed_x_grps, "Water NA");
    assert_string_equal(p.h5md_grps, "System");
    assert_int_equal(p.nstxout_compressed, 50);
    assert_true(p.h5md);
    assert_true(p.compressed_x_precision == 1000);
    assert_rejected("compressed-x-precision = 0\n", "compressed-x-precision = 0", "> 0");
}

static void test_check_ref_t_required(void **state)
{
    struct hmd_params p;
    assert_int_equal(read_text(&p, "tcoupl = langevin\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_ECONFIG);
    assert_msg_has("tcoupl = langevin (");
    assert_msg_has("test_params_input.mdp:1) needs ref-t");
    assert_int_equal(hmd_params_set(&p, "ref-t=0"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
}

static void test_check_rlist(void **state)
{
    struct hmd_params p;
    /* neither given: rlist derived from the cut-off and the default buffer */
    assert_int_equal(read_text(&p, "dt = 0.001\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_true(p.rlist == 8.0);
    assert_string_equal(hmd_params_origin(&p, "rlist").file, "derived");
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK); /* idempotent */
    assert_true(p.rlist == 8.0);

    /* rlist given: the buffer follows */
    assert_int_equal(read_text(&p, "rlist = 7.5\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_true(p.verlet_buffer == 1.5);
    assert_true(p.rlist == 7.5);
    assert_string_equal(hmd_params_origin(&p, "verlet-buffer").file, "derived");
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_true(p.verlet_buffer == 1.5);

    assert_int_equal(read_text(&p, "rlist = 5\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_ECONFIG);
    assert_msg_has("rlist = 5 Å (");
    assert_msg_has("test_params_input.mdp:1) is shorter than the model cut-off (6 Å)");

    assert_int_equal(read_text(&p, "verlet-buffer = 1\nrlist = 8\n"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_ECONFIG);
    assert_msg_has("rlist (");
    assert_msg_has("test_params_input.mdp:2) and verlet-buffer (");
    assert_msg_has("test_params_input.mdp:1) are both given");
}

static void test_check_revalidates_struct(void **state)
{
    /* values written by code rather than parsed get the same range checks */
    struct hmd_params p;
    hmd_params_defaults(&p);
    p.gen_vel = true;
    p.gen_temp = -5;
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_ECONFIG);
    assert_msg_has("gen-temp = -5 is out of range; it must be >= 0");
    hmd_params_defaults(&p);
    p.nstcalcenergy = 0;
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_ECONFIG);
    assert_msg_has("nstcalcenergy = 0 is out of range; it must be >= 1");
    hmd_params_defaults(&p);
    p.tcoupl = (enum hmd_tcoupl)7;
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_ECONFIG);
    assert_msg_has("tcoupl = 7 is not one of");
    /* the other accepted values: availability is decided elsewhere */
    hmd_params_defaults(&p);
    assert_int_equal(hmd_params_set(&p, "precision=mixed"), HMD_OK);
    assert_int_equal(hmd_params_set(&p, "backend=cuda"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
}

static void test_example_file(void **state)
{
    struct hmd_params p;
    hmd_params_defaults(&p);
    assert_int_equal(hmd_params_read(&p, HMD_TEST_DATA "/params/nvt.mdp"), HMD_OK);
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    assert_int_equal(p.tcoupl, HMD_TCOUPL_VRESCALE);
    assert_true(p.ref_t == 300 && p.gen_vel && p.gen_seed == 2024 && p.nsteps == 20000);
    assert_string_equal(p.model, "water.dp");
    assert_true(p.rlist == 8.0);
}

/* Writes `p`, reads the echo back into `back` and returns the echo text (caller frees). */
static char *echo_and_read_back(const struct hmd_params *p, struct hmd_params *back)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    char path[1024];
    snprintf(path, sizeof path, "%s/test_params_echo.mdp", tmp ? tmp : ".");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(hmd_params_write(p, f), HMD_OK);
    fclose(f);
    hmd_params_defaults(back);
    assert_int_equal(hmd_params_read(back, path), HMD_OK);
    f = fopen(path, "r");
    assert_non_null(f);
    char *text = calloc(1 << 16, 1);
    assert_non_null(text);
    fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    return text;
}

static void test_write_reads_back(void **state)
{
    struct hmd_params p, back;
    assert_int_equal(read_text(&p, "integrator = md\n"
                                   "dt = 0.00075\n"
                                   "nsteps = 123456789012\n"
                                   "nstlist = 10\n"
                                   "tcoupl = v-rescale\n"
                                   "ref-t = 298.15\n"
                                   "ld-seed = 42\n"
                                   "comm-mode = none\n"
                                   "gen-vel = yes\n"
                                   "gen-seed = 7\n"
                                   "nstxout = 500\n"
                                   "model = water model.dp\n"
                                   "backend = cpu\n"),
                     HMD_OK);
    assert_int_equal(hmd_params_set(&p, "tau-t=0.30000000000000004"), HMD_OK);
    assert_int_equal(hmd_params_set(&p, "gen-temp=1e-300"), HMD_OK);
    assert_int_equal(hmd_params_set(&p, "verlet-buffer=0.1"), HMD_OK);
    char *text = echo_and_read_back(&p, &back);
    assert_same_values(&p, &back);
    assert_non_null(strstr(text, "\ndt              = 0.00075      ; "));
    assert_non_null(strstr(text, "test_params_input.mdp:2\n"));
    assert_non_null(strstr(text, "tau-t           = 0.30000000000000004 ; -set\n"));
    assert_non_null(strstr(text, "nstlog          = 100          ; default\n"));
    assert_non_null(strstr(text, "; rlist         =              ; not set\n"));
    free(text);

    /* after the check the derived rlist is a comment, and the check re-derives it */
    assert_int_equal(hmd_params_check(&p, 6.0), HMD_OK);
    text = echo_and_read_back(&p, &back);
    assert_non_null(strstr(text, "; rlist         = 6.1          ; derived\n"));
    assert_int_equal(hmd_params_check(&back, 6.0), HMD_OK);
    assert_same_values(&p, &back);
    free(text);

    /* defaults only: the echo reads back to the defaults */
    hmd_params_defaults(&p);
    text = echo_and_read_back(&p, &back);
    assert_same_values(&p, &back);
    assert_int_equal(hmd_params_check(&back, 6.0), HMD_OK);
    free(text);
}

/* docs/parameters.md carries the table hmd_params_write_reference() prints. */
static void test_docs_match_table(void **state)
{
    char *table = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&table, &size);
    assert_non_null(mem);
    assert_int_equal(hmd_params_write_reference(mem), HMD_OK);
    fclose(mem);

    FILE *f = fopen(HMD_TEST_DATA "/../../docs/parameters.md", "r");
    assert_non_null(f);
    char *docs = calloc(1 << 17, 1);
    assert_non_null(docs);
    fread(docs, 1, (1 << 17) - 1, f);
    fclose(f);
    bool found = strstr(docs, table) != NULL;
    const char *out = found ? "" : write_file("test_params_table.md", table);
    free(docs);
    free(table);
    if (!found) {
        fail_msg("docs/parameters.md does not contain the key table; replace it with %s", out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),           cmocka_unit_test(test_read_syntax_and_spellings),
        cmocka_unit_test(test_bool_words),         cmocka_unit_test(test_unknown_key),
        cmocka_unit_test(test_repeated_key),       cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_bad_numbers),        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_enum_words),         cmocka_unit_test(test_unreadable_file),
        cmocka_unit_test(test_set_overrides),      cmocka_unit_test(test_check_multiples),
        cmocka_unit_test(test_all_errors_at_once), cmocka_unit_test(test_byte_order_mark),
        cmocka_unit_test(test_output_keys),        cmocka_unit_test(test_check_ref_t_required),
        cmocka_unit_test(test_check_rlist),        cmocka_unit_test(test_check_revalidates_struct),
        cmocka_unit_test(test_example_file),       cmocka_unit_test(test_write_reads_back),
        cmocka_unit_test(test_docs_match_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
