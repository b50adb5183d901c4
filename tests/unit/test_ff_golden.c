/* The classical force field against GROMACS: every golden of tests/data/ff/golden (made by
 * python/halomd/make_ff_golden.py with gmx_d) read, its topology and structure evaluated by the
 * CPU provider on one rank (ghosts as periodic images), and compared term by term, force by
 * force and in the virial, within the tolerances the golden stores. Also the topology reader's
 * interaction counts and excluded pairs against grompp's. Prints the errors measured. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/params.h"
#include "core/units.h"
#include "ff/classical.h"
#include "ff_test_util.h"
#include "io/structure.h"
#include "io/topology.h"

#define REPO HMD_TEST_DATA "/../.."

static const char *kind_gmx_name[HMD_TOP_NKINDS] = {
    "Bond", "Angle", "U-B", "Proper Dih.", "Improper Dih.", "Per. Imp. Dih.", "LJ-14",
};

static double num(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_number(v)) {
        fail_msg("golden: '%s' is not a number", key);
    }
    return json_number_value(v);
}

static void check_counts(const json_t *counts, const struct hmd_topology *top)
{
    for (int k = 0; k < HMD_TOP_NKINDS; k++) {
        int want = (int)num(counts, kind_gmx_name[k]);
        if (top->count[k] != want) {
            fail_msg("%s: halomd reads %d, grompp %d", kind_gmx_name[k], top->count[k], want);
        }
    }
    assert_int_equal(top->natoms, (int)num(counts, "natoms"));
    assert_int_equal(top->excl_start[top->natoms], (int)num(counts, "excluded pairs"));
}

static void run_golden(void **state)
{
    const char *path = *state;
    json_error_t jerr;
    json_t *g = json_load_file(path, 0, &jerr);
    if (!g) {
        fail_msg("%s:%d: %s", path, jerr.line, jerr.text);
    }
    const json_t *tol = json_object_get(g, "tolerance");
    const double tol_e = num(tol, "energy"), tol_f = num(tol, "force"), tol_v = num(tol, "virial");
    assert_true(tol_e <= 1e-8 && tol_f <= 1e-8 && tol_v <= 1e-8);

    /* the run parameters as -set options */
    struct hmd_params p;
    hmd_params_defaults(&p);
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(g, "halomd_params"), key, val)
    {
        char set[1200];
        snprintf(set, sizeof set, "%s=%s", key, json_string_value(val));
        if (hmd_params_set(&p, set)) {
            fail_msg("%s", hmd_error_msg());
        }
    }
    struct hmd_ff_settings s;
    assert_int_equal(hmd_ff_settings_from_params(&p, &s), HMD_OK);

    char top_path[4096], gro_path[4096];
    snprintf(top_path, sizeof top_path, "%s/%s", REPO,
             json_string_value(json_object_get(g, "topology")));
    snprintf(gro_path, sizeof gro_path, "%s/%s", REPO,
             json_string_value(json_object_get(g, "structure")));
    struct hmd_topology top;
    struct hmd_top_cpp_options opt = {.defines = p.define};
    if (hmd_topology_read(&top, top_path, &opt)) {
        fail_msg("%s", hmd_error_msg());
    }
    check_counts(json_object_get(g, "counts"), &top);
    struct hmd_frame *frames;
    int nframes;
    if (hmd_structure_read(gro_path, &frames, &nframes) ||
        hmd_topology_check_frame(&top, &frames[0], gro_path)) {
        fail_msg("%s", hmd_error_msg());
    }
    struct hmd_force_provider prov;
    assert_int_equal(hmd_ff_classical_create(&prov, &top, &s), HMD_OK);

    /* one rank: home atoms and their periodic images */
    const int n = top.natoms;
    const struct hmd_box *box = &frames[0].box;
    const double rlist = hmd_force_provider_cutoff(&prov) + 1.0;
    struct ff_rank r;
    struct hmd_nbr_list nl;
    assert_int_equal(ff_rank_one(&r, &nl, box, n, frames[0].x, rlist), HMD_OK);
    assert_int_equal(r.nlocal, n);
    double *f = calloc(3 * (size_t)r.nall, sizeof *f), *ae = calloc((size_t)n, sizeof *ae);
    double ev[HMD_FORCE_NEV] = {0}, terms[HMD_FORCE_MAX_TERMS] = {0};
    struct hmd_force_io io = ff_rank_io(&r, n, box, &nl, f, ev);
    io.terms = terms;
    io.atom_energy = ae;
    if (hmd_force_provider_prepare(&prov, &io) || hmd_force_provider_compute(&prov, &io)) {
        fail_msg("%s", hmd_error_msg());
    }
    /* the reverse halo of one rank: ghost forces onto their home atoms (home atom i is id i) */
    double *force = calloc(3 * (size_t)n, sizeof *force);
    for (int k = 0; k < r.nall; k++) {
        for (int c = 0; c < 3; c++) {
            force[3 * r.id[k] + c] += f[3 * k + c];
        }
    }

    /* energies, term by term, with GROMACS's names (kJ/mol) */
    const json_t *energies = json_object_get(g, "energies");
    const char *names[HMD_FORCE_MAX_TERMS];
    const int nterms = hmd_force_provider_terms(&prov, names);
    assert_int_equal(nterms + 1, (int)json_object_size(energies)); /* + Potential */
    double worst_e = 0;
    for (int t = 0; t <= nterms; t++) {
        const char *name = t < nterms ? names[t] : "Potential";
        const double ours =
            (t < nterms ? terms[t] : ev[HMD_FORCE_EV_ENERGY]) / HMD_KJ_PER_MOL_TO_EV;
        const json_t *want = json_object_get(energies, name);
        if (!want) {
            fail_msg("%s: halomd reports %s, GROMACS does not", path, name);
        }
        const double err = fabs(ours - json_number_value(want)) / fabs(json_number_value(want));
        worst_e = fmax(worst_e, err);
        if (!(err <= tol_e)) {
            fail_msg("%s: %s = %.15g kJ/mol, GROMACS %.15g (relative %.2e)", path, name, ours,
                     json_number_value(want), err);
        }
    }
    double sum_ae = 0;
    for (int i = 0; i < n; i++) {
        sum_ae += ae[i];
    }
    assert_true(fabs(sum_ae - ev[HMD_FORCE_EV_ENERGY]) <= 1e-12 * fabs(ev[HMD_FORCE_EV_ENERGY]));

    /* virial: GROMACS's Xi = -W^T / 2 */
    const json_t *vir = json_object_get(g, "virial");
    double xi[9], want_vir[9];
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            xi[3 * a + b] = -0.5 * ev[HMD_FORCE_EV_VIRIAL + 3 * b + a] / HMD_KJ_PER_MOL_TO_EV;
            want_vir[3 * a + b] = json_number_value(json_array_get(vir, (size_t)(3 * a + b)));
        }
    }
    const double err_v = ff_max_diff(xi, want_vir, 9) / ff_max_abs(want_vir, 9);
    if (!(err_v <= tol_v)) {
        fail_msg("%s: virial off by %.2e", path, err_v);
    }

    /* forces (kJ/mol/nm) of the atoms stored, and the projections over all atoms */
    const double to_gmx = HMD_NM_TO_A / HMD_KJ_PER_MOL_TO_EV;
    const json_t *fg = json_object_get(g, "forces");
    const json_t *atoms = json_object_get(fg, "atoms"), *values = json_object_get(fg, "values");
    const size_t nstored = json_array_size(values);
    double dmax = 0, fbig = 0;
    for (size_t k = 0; k < nstored; k++) {
        const int i =
            json_is_null(atoms) ? (int)k : (int)json_integer_value(json_array_get(atoms, k));
        for (int c = 0; c < 3; c++) {
            const double want = json_number_value(json_array_get(json_array_get(values, k), c));
            dmax = fmax(dmax, fabs(force[3 * i + c] * to_gmx - want));
            fbig = fmax(fbig, fabs(want));
        }
    }
    assert_true(json_is_null(atoms) ? nstored == (size_t)n : nstored == json_array_size(atoms));
    const double err_f = dmax / fbig;
    if (!(err_f <= tol_f)) {
        fail_msg("%s: forces off by %.2e of the largest", path, err_f);
    }
    const json_t *proj = json_object_get(json_object_get(g, "force_projections"), "projections");
    double err_p = 0;
    for (size_t k = 0; k < json_array_size(proj); k++) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < 3; c++) {
                sum += cos(0.7 * i + 1.3 * c + 2.1 * (double)k) * force[3 * i + c] * to_gmx;
            }
        }
        const json_t *pk = json_array_get(proj, k);
        err_p = fmax(err_p, fabs(sum - num(pk, "value")) / num(pk, "scale"));
    }
    if (!(err_p <= tol_f)) {
        fail_msg("%s: force projections off by %.2e", path, err_p);
    }
    printf("  %s: %d atoms, energies within %.1e, forces %.1e (projections %.1e), virial %.1e\n",
           json_string_value(json_object_get(g, "name")), n, worst_e, err_f, err_p, err_v);

    free(force);
    free(f);
    free(ae);
    hmd_nbr_list_free(&nl);
    ff_rank_free(&r);
    hmd_force_provider_destroy(&prov);
    hmd_frames_free(frames, nframes);
    hmd_topology_free(&top);
    json_decref(g);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    const char *dir = HMD_TEST_DATA "/ff/golden";
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "no goldens in %s\n", dir);
        return 1;
    }
    char *paths[256];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".json")) {
            paths[n] = malloc(strlen(dir) + len + 2);
            sprintf(paths[n++], "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    qsort(paths, (size_t)n, sizeof *paths, by_name);
    struct CMUnitTest tests[256];
    for (int k = 0; k < n; k++) {
        tests[k] =
            (struct CMUnitTest){strrchr(paths[k], '/') + 1, run_golden, NULL, NULL, paths[k]};
    }
    if (n < 10) {
        fprintf(stderr, "only %d goldens in %s\n", n, dir);
        return 1;
    }
    int rc = _cmocka_run_group_tests("ff_golden", tests, (size_t)n, NULL, NULL);
    for (int k = 0; k < n; k++) {
        free(paths[k]);
    }
    return rc;
}
