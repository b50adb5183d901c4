/* Hybrid ML/MM (nnp-group): on the flexible water box with the water model, the hybrid's
 * energy, forces and virial equal DP(group alone) + classical(all) - classical(group alone),
 * each part evaluated separately on a system of its own atoms (one rank, ghosts as periodic
 * images, tests/unit/ff_test_util.h). Also the group selections (resname, resid, index file)
 * and their errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/params.h"
#include "ff/classical.h"
#include "ff/dp.h"
#include "ff/nnp_group.h"
#include "ff/subset.h"
#include "ff_test_util.h"
#include "io/model_dp.h"
#include "io/structure.h"
#include "io/topology.h"

#define REPO HMD_TEST_DATA "/../.."

struct water {
    struct hmd_topology top;
    struct hmd_frame *frames;
    int nframes;
    struct hmd_dp_model model;
    struct hmd_ff_settings s;
};

static struct water w;

static int set_up(void **state)
{
    (void)state;
    struct hmd_params p;
    hmd_params_defaults(&p);
    const char *sets[] = {"coulombtype=reaction-field", "epsilon-rf=0", "rcoulomb=6",
                          "vdw-modifier=force-switch",  "rvdw=6",       "rvdw-switch=5",
                          "define=-DFLEXIBLE"};
    for (size_t k = 0; k < sizeof sets / sizeof *sets; k++) {
        if (hmd_params_set(&p, sets[k])) {
            return -1;
        }
    }
    const struct hmd_top_cpp_options cpp = {.defines = p.define};
    if (hmd_topology_read(&w.top, REPO "/examples/water/water_192.top", &cpp) ||
        hmd_structure_read(REPO "/examples/water/water_192.gro", &w.frames, &w.nframes) ||
        hmd_model_read_dp(REPO "/examples/water/water.dp", &w.model) ||
        hmd_ff_settings_from_params(&p, &w.s)) {
        fprintf(stderr, "%s\n", hmd_error_msg());
        return -1;
    }
    return 0;
}

static int tear_down(void **state)
{
    (void)state;
    hmd_topology_free(&w.top);
    hmd_frames_free(w.frames, w.nframes);
    hmd_model_free(&w.model);
    return 0;
}

/* What one evaluation gives: energy, virial, forces by global id. */
struct result {
    double e, vir[9];
    double *f; /* [192][3] */
};

/* The model types of rank r's atoms (by their ids' elements). */
static int *types_of(const struct ff_rank *r)
{
    int *type = calloc((size_t)r->nall, sizeof *type);
    for (int k = 0; k < r->nall; k++) {
        const char *el = w.frames[0].element[r->id[k]];
        for (int t = 0; t < w.model.ntypes; t++) {
            if (!strcasecmp(el, w.model.type_map[t])) {
                type[k] = t;
            }
        }
    }
    return type;
}

/* Providers p[0..np) on the first n atoms of the structure (ids 0..n-1), summed. */
static struct result evaluate(struct hmd_force_provider *p, int np, int n)
{
    const struct hmd_box *box = &w.frames[0].box;
    double rlist = 0;
    for (int k = 0; k < np; k++) {
        rlist = fmax(rlist, hmd_force_provider_cutoff(&p[k]) + 1.0);
    }
    struct ff_rank r;
    struct hmd_nbr_list nl;
    assert_int_equal(ff_rank_one(&r, &nl, box, n, w.frames[0].x, rlist), HMD_OK);
    int *type = types_of(&r);
    double *f = calloc(3 * (size_t)r.nall, sizeof *f);
    double ev[HMD_FORCE_NEV] = {0}, terms[HMD_FORCE_MAX_TERMS] = {0};
    struct hmd_force_io io = ff_rank_io(&r, r.nlocal, box, &nl, f, ev);
    io.type = type;
    io.type0 = type[0];
    io.terms = terms;
    for (int k = 0; k < np; k++) {
        if (hmd_force_provider_prepare(&p[k], &io) || hmd_force_provider_compute(&p[k], &io)) {
            fail_msg("%s", hmd_error_msg());
        }
    }
    struct result res = {.e = ev[HMD_FORCE_EV_ENERGY], .f = calloc(3 * 192, sizeof(double))};
    memcpy(res.vir, ev + HMD_FORCE_EV_VIRIAL, sizeof res.vir);
    for (int k = 0; k < r.nall; k++) {
        for (int c = 0; c < 3; c++) {
            res.f[3 * r.id[k] + c] += f[3 * k + c];
        }
    }
    free(f);
    free(type);
    ff_rank_free(&r);
    hmd_nbr_list_free(&nl);
    return res;
}

static void test_hybrid_is_the_sum_of_its_parts(void **state)
{
    (void)state;
    const int natoms = w.top.natoms, ngroup = 15; /* resid 1-5: atoms 0..14 */
    unsigned char group[192];
    assert_int_equal(hmd_nnp_group_select("resid 1-5", "test", &w.top, NULL, group), HMD_OK);
    assert_int_equal(hmd_nnp_group_count(group, natoms), ngroup);
    for (int i = 0; i < natoms; i++) {
        assert_int_equal(group[i], i < ngroup);
    }

    /* the hybrid on the whole system */
    struct hmd_force_provider hy[2], dp;
    struct hmd_ff_settings sg = w.s;
    sg.nnp_group = group;
    assert_int_equal(hmd_ff_dp_create(&dp, &w.model), HMD_OK);
    assert_int_equal(hmd_ff_subset_create(&hy[0], dp, group, natoms, 0), HMD_OK);
    assert_int_equal(hmd_ff_classical_create(&hy[1], &w.top, &sg), HMD_OK);
    struct result hybrid = evaluate(hy, 2, natoms);

    /* the parts, each a system of its own */
    struct hmd_force_provider mm, dp_alone;
    assert_int_equal(hmd_ff_classical_create(&mm, &w.top, &w.s), HMD_OK);
    assert_int_equal(hmd_ff_dp_create(&dp_alone, &w.model), HMD_OK);
    struct result mm_all = evaluate(&mm, 1, natoms);
    struct result mm_group = evaluate(&mm, 1, ngroup);
    struct result dp_group = evaluate(&dp_alone, 1, ngroup);

    const double sum = dp_group.e + mm_all.e - mm_group.e;
    printf("hybrid %.12f eV, parts %.12f eV (DP %.6f, MM all %.6f, MM group %.6f)\n", hybrid.e, sum,
           dp_group.e, mm_all.e, mm_group.e);
    assert_true(fabs(hybrid.e - sum) <= 1e-10 * fabs(mm_all.e));
    assert_true(fabs(hybrid.e - mm_all.e) > 1e-3); /* the DP's share is not the classical one */
    double fmax_err = 0, fscale = 0, vmax_err = 0;
    for (int k = 0; k < 3 * natoms; k++) {
        const double want = dp_group.f[k] + mm_all.f[k] - mm_group.f[k];
        fmax_err = fmax(fmax_err, fabs(hybrid.f[k] - want));
        fscale = fmax(fscale, fabs(want));
    }
    for (int k = 0; k < 9; k++) {
        vmax_err = fmax(vmax_err,
                        fabs(hybrid.vir[k] - (dp_group.vir[k] + mm_all.vir[k] - mm_group.vir[k])));
    }
    printf("force error %.3g eV/A of %.3g, virial error %.3g eV\n", fmax_err, fscale, vmax_err);
    assert_true(fmax_err <= 1e-10 * fscale);
    assert_true(vmax_err <= 1e-9);

    struct result *all[] = {&hybrid, &mm_all, &mm_group, &dp_group};
    for (int k = 0; k < 4; k++) {
        free(all[k]->f);
    }
    hmd_force_provider_destroy(&hy[0]);
    hmd_force_provider_destroy(&hy[1]);
    hmd_force_provider_destroy(&mm);
    hmd_force_provider_destroy(&dp_alone);
}

static void test_group_selections(void **state)
{
    (void)state;
    unsigned char g[192];
    assert_int_equal(hmd_nnp_group_select("resname SOL", "md.mdp:3", &w.top, NULL, g), HMD_OK);
    assert_int_equal(hmd_nnp_group_count(g, 192), 192);
    assert_int_equal(hmd_nnp_group_select("resid 2 64", "x", &w.top, NULL, g), HMD_OK);
    assert_int_equal(hmd_nnp_group_count(g, 192), 6);
    assert_true(g[3] && g[189] && !g[0]);

    assert_int_equal(hmd_nnp_group_select("resname NA", "md.mdp:3", &w.top, NULL, g), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "md.mdp:3"));
    assert_int_equal(hmd_nnp_group_select("resid 5-2", "md.mdp:3", &w.top, NULL, g), HMD_ECONFIG);
    assert_int_equal(hmd_nnp_group_select("QM", "md.mdp:3", &w.top, NULL, g), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "-n index.ndx"));

    /* an index file, as gmx make_ndx writes one */
    char path[4096];
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(path, sizeof path, "%s/hybrid.ndx", tmp ? tmp : "/tmp");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "[ System ]\n1 2 3 4 5 6\n[ QM ]\n   4    5    6\n 10\n");
    fclose(fp);
    assert_int_equal(hmd_nnp_group_select("qm", "x", &w.top, path, g), HMD_OK);
    assert_int_equal(hmd_nnp_group_count(g, 192), 4);
    assert_true(g[3] && g[4] && g[5] && g[9]);
    assert_int_equal(hmd_nnp_group_select("MM", "x", &w.top, path, g), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "System, QM"));
    fp = fopen(path, "w");
    fprintf(fp, "[ QM ]\n1 2 999\n");
    fclose(fp);
    assert_int_equal(hmd_nnp_group_select("QM", "x", &w.top, path, g), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), ":2:"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hybrid_is_the_sum_of_its_parts),
        cmocka_unit_test(test_group_selections),
    };
    return cmocka_run_group_tests(tests, set_up, tear_down);
}
