/* Unit tests of the classical force field's CPU provider (ff/classical):
 * - forces against fourth-order finite differences of the energy, for the whole force field
 *   and for each kind of bonded interaction alone (nonbonded off), under every modifier;
 * - the virial against the derivative of the energy under a homogeneous strain;
 * - a domain decomposition (emulated: subdomains of a triclinic cell, each with its home atoms
 *   and every image within the halo, ghost forces summed onto their owners by id) and the
 *   replicated scheme (halo centres that do not count, home forces kept) against one rank
 *   within 1e-12: energies, terms, forces, virial, per-atom energies and virials;
 * - errors: cut-off beyond half the cell, a bonded interaction beyond the list, ids outside the
 *   topology, compute without prepare, a list shorter than the cut-off, bad settings.
 * Inputs are fresh: the test systems' positions are perturbed by a seeded generator whose seed
 * (the clock's unless HMD_TEST_SEED is set) is printed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/params.h"
#include "ff/classical.h"
#include "ff/ff_kernels.h"
#include "ff_test_util.h"
#include "io/structure.h"
#include "io/topology.h"

static uint64_t rng_state;

static double uniform(void) /* [0, 1), xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

struct sys {
    struct hmd_topology top;
    struct hmd_frame *frames;
    int nframes;
    double *x; /* perturbed positions (Å) */
};

static void load(struct sys *s, const char *dir, const char *define, double jitter)
{
    char top[4096], gro[4096];
    snprintf(top, sizeof top, "%s/ff/%s/topol.top", HMD_TEST_DATA, dir);
    snprintf(gro, sizeof gro, "%s/ff/%s/conf.gro", HMD_TEST_DATA, dir);
    struct hmd_top_cpp_options opt = {.defines = define};
    if (hmd_topology_read(&s->top, top, &opt) || hmd_structure_read(gro, &s->frames, &s->nframes)) {
        fail_msg("%s", hmd_error_msg());
    }
    const int n = s->top.natoms;
    s->x = malloc(sizeof *s->x * 3 * (size_t)n);
    for (int k = 0; k < 3 * n; k++) {
        s->x[k] = s->frames[0].x[k] + jitter * (2 * uniform() - 1);
    }
}

static void unload(struct sys *s)
{
    free(s->x);
    hmd_frames_free(s->frames, s->nframes);
    hmd_topology_free(&s->top);
}

static struct hmd_ff_settings settings(int coulomb, double eps_rf, int vdw, double rc, double rsw)
{
    return (struct hmd_ff_settings){.coulomb = coulomb,
                                    .coulomb_shift = true,
                                    .rcoulomb = rc,
                                    .epsilon_r = 1.0,
                                    .epsilon_rf = eps_rf,
                                    .vdw_modifier = vdw,
                                    .rvdw = rc,
                                    .rvdw_switch = rsw};
}

/* Everything one evaluation over the ranks of a grid gives, summed, by global atom. */
struct result {
    double e, terms[HMD_FORCE_MAX_TERMS], w[9];
    double *f, *ae, *av; /* [n][3], [n], [n][9] */
};

static void result_free(struct result *r)
{
    free(r->f);
    free(r->ae);
    free(r->av);
}

/* Evaluates provider p on atoms x (n, Å) in `box` split into grid[0] x grid[1] x grid[2]
 * subdomains; `replicated`: every atom within 2 rlist of a subdomain is a centre, only the home
 * ones count (forces of home atoms kept); per-atom virials unless `replicated` or no_av. Returns
 * the provider's status. */
static bool no_av;

static int evaluate(struct hmd_force_provider *p, const struct hmd_box *box, int n, const double *x,
                    const int grid[3], bool replicated, double skin, struct result *out)
{
    memset(out, 0, sizeof *out);
    out->f = calloc(3 * (size_t)n, sizeof *out->f);
    out->ae = calloc((size_t)n, sizeof *out->ae);
    out->av = calloc(9 * (size_t)n, sizeof *out->av);
    const double rlist = hmd_force_provider_cutoff(p) + skin;
    int rc = HMD_OK;
    for (int c = 0; c < grid[0] * grid[1] * grid[2] && !rc; c++) {
        const int cell[3] = {c % grid[0], c / grid[0] % grid[1], c / (grid[0] * grid[1])};
        double lo[3], hi[3];
        for (int d = 0; d < 3; d++) {
            lo[d] = (double)cell[d] / grid[d];
            hi[d] = (double)(cell[d] + 1) / grid[d];
        }
        struct ff_rank r;
        ff_rank_make(&r, box, n, x, lo, hi, replicated ? 2 * rlist : rlist);
        const int ncentre = replicated ? r.nall : r.nlocal;
        struct hmd_nbr_list nl = {0};
        assert_int_equal(hmd_nbr_list_build(&nl, box, ncentre, r.nall, r.x, rlist), HMD_OK);
        double *f = calloc(3 * (size_t)r.nall + 3, sizeof *f);
        double *ae = calloc((size_t)ncentre + 1, sizeof *ae);
        double *av = calloc(9 * (size_t)r.nall + 9, sizeof *av);
        double ev[HMD_FORCE_NEV] = {0};
        struct hmd_force_io io = ff_rank_io(&r, ncentre, box, &nl, f, ev);
        io.terms = out->terms;
        io.atom_energy = ae;
        io.atom_virial = replicated || no_av ? NULL : av;
        rc = hmd_force_provider_prepare(p, &io);
        if (!rc) {
            rc = hmd_force_provider_compute(p, &io);
        }
        for (int k = 0; k < r.nall && !rc; k++) {
            const int64_t g = r.id[k];
            if (k < r.nlocal || !replicated) { /* the reverse halo, by id */
                for (int q = 0; q < 3; q++) {
                    out->f[3 * g + q] += f[3 * k + q];
                }
            }
            if (k < r.nlocal) {
                out->ae[g] += ae[k];
            }
            for (int q = 0; q < 9 && !replicated; q++) {
                out->av[9 * g + q] += av[9 * k + q];
            }
        }
        out->e += ev[HMD_FORCE_EV_ENERGY];
        for (int q = 0; q < 9; q++) {
            out->w[q] += ev[HMD_FORCE_EV_VIRIAL + q];
        }
        free(f);
        free(ae);
        free(av);
        hmd_nbr_list_free(&nl);
        ff_rank_free(&r);
    }
    return rc;
}

static double energy_at(struct hmd_force_provider *p, const struct hmd_box *box, int n,
                        const double *x)
{
    const int one[3] = {1, 1, 1};
    struct result r;
    if (evaluate(p, box, n, x, one, false, 1.0, &r)) {
        fail_msg("%s", hmd_error_msg());
    }
    result_free(&r);
    return r.e;
}

/* Whether atom i has a neighbour (any image) within `margin` of one of the distances kink[3]
 * (cut-offs, switch), where the energy's second derivative jumps and a difference quotient
 * across it is off by about margin times the jump. */
static bool near_kink(const struct ff_rank *r, int i, const double *kink, double margin)
{
    for (int k = 0; k < r->nall; k++) {
        double d[3];
        hmd_ff_sub3(r->x + 3 * k, r->x + 3 * i, d);
        const double dist = sqrt(hmd_ff_dot3(d, d));
        for (int q = 0; q < 3; q++) {
            if (fabs(dist - kink[q]) < margin) {
                return true;
            }
        }
    }
    return false;
}

/* Forces of `natoms_checked` random atoms (none near a kink of the pair potentials) against
 * -dE/dx (fourth order, step h); the largest difference relative to the largest force. */
static double check_fd(struct hmd_force_provider *p, const struct hmd_ff_settings *st,
                       const struct hmd_box *box, int n, double *x, int natoms_checked, double h)
{
    const int one[3] = {1, 1, 1};
    struct result r;
    assert_int_equal(evaluate(p, box, n, x, one, false, 1.0, &r), HMD_OK);
    struct ff_rank all;
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    const double kink[3] = {st->rcoulomb, st->rvdw, st->rvdw_switch};
    ff_rank_make(&all, box, n, x, lo, hi, st->rcoulomb + 1.0);
    assert_int_equal(all.nlocal, n);
    double worst = 0;
    const double fbig = ff_max_abs(r.f, 3 * (size_t)n);
    for (int k = 0; k < natoms_checked; k++) {
        int i, tries = 0;
        do { /* the stencil moves atom i by 2h: no pair distance may cross a kink */
            i = (int)(uniform() * n);
            assert_true(++tries < 100000);
        } while (near_kink(&all, i, kink, 2.5 * h)); /* home atom i is atom i */
        for (int c = 0; c < 3; c++) {
            double *xi = &x[3 * i + c];
            const double x0 = *xi;
            double e[4];
            const double step[4] = {-2, -1, 1, 2};
            for (int s = 0; s < 4; s++) {
                *xi = x0 + step[s] * h;
                e[s] = energy_at(p, box, n, x);
            }
            *xi = x0;
            const double fd = -(e[0] - 8 * e[1] + 8 * e[2] - e[3]) / (12 * h);
            worst = fmax(worst, fabs(fd - r.f[3 * i + c]));
        }
    }
    ff_rank_free(&all);
    result_free(&r);
    return worst / fbig;
}

/* W_ba = -dE/de_ab under x -> x (1 + e), h -> h (1 + e): the largest difference relative to
 * the largest virial component. */
static double check_virial(struct hmd_force_provider *p, const struct hmd_box *box, int n,
                           const double *x)
{
    const int one[3] = {1, 1, 1};
    struct result r;
    assert_int_equal(evaluate(p, box, n, x, one, false, 1.0, &r), HMD_OK);
    double *xs = malloc(sizeof *xs * 3 * (size_t)n), worst = 0;
    const double d = 1e-6; /* small: a pair crossing a cut-off bends E(strain) */
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            double e[4];
            const double step[4] = {-2, -1, 1, 2};
            for (int s = 0; s < 4; s++) {
                double eps[3][3] = {{0}}, h[3][3];
                eps[a][b] = step[s] * d;
                for (int i = 0; i < 3; i++) {
                    for (int j = 0; j < 3; j++) {
                        h[i][j] = box->h[i][j] + box->h[i][a] * eps[a][j];
                    }
                }
                for (int k = 0; k < n; k++) {
                    for (int j = 0; j < 3; j++) {
                        xs[3 * k + j] = x[3 * k + j] + x[3 * k + a] * eps[a][j];
                    }
                }
                struct hmd_box bs;
                assert_int_equal(hmd_box_init(&bs, h, box->periodic), HMD_OK);
                e[s] = energy_at(p, &bs, n, xs);
            }
            const double de = (e[0] - 8 * e[1] + 8 * e[2] - e[3]) / (12 * d);
            worst = fmax(worst, fabs(-de - r.w[3 * b + a]));
        }
    }
    const double scale = ff_max_abs(r.w, 9);
    free(xs);
    result_free(&r);
    return worst / scale;
}

/* The topology with only interactions of `kind` (all of them for -1), for a provider with the
 * nonbonded interactions off (no charges: epsilon-r 0; no Lennard-Jones). */
static void only_kind(const struct hmd_topology *src, int kind, struct hmd_topology *dst)
{
    *dst = *src;
    dst->inter = malloc(sizeof *dst->inter * (size_t)src->ninter + 1);
    dst->ninter = 0;
    memset(dst->count, 0, sizeof dst->count);
    for (int k = 0; k < src->ninter; k++) {
        if (kind < 0 || src->inter[k].kind == kind) {
            dst->inter[dst->ninter++] = src->inter[k];
            dst->count[src->inter[k].kind]++;
        }
    }
    const size_t nt = (size_t)src->ntypes * (size_t)src->ntypes;
    dst->c6 = calloc(nt, sizeof *dst->c6);
    dst->c12 = calloc(nt, sizeof *dst->c12);
}

static void free_only_kind(struct hmd_topology *t)
{
    free(t->inter);
    free(t->c6);
    free(t->c12);
}

static void test_finite_differences(void **state)
{
    struct {
        const char *dir, *define;
        struct hmd_ff_settings s;
    } cases[] = {
        {"sink3", "-DALT -DKPAIR=0.4",
         settings(HMD_FF_COULOMB_REACTION_FIELD, 0, HMD_FF_VDW_FORCE_SWITCH, 8.0, 6.0)},
        {"sink3", "-DKPAIR=0.2",
         settings(HMD_FF_COULOMB_REACTION_FIELD, 0, HMD_FF_VDW_POTENTIAL_SWITCH, 8.0, 6.5)},
        {"sink1", "",
         settings(HMD_FF_COULOMB_REACTION_FIELD, 0, HMD_FF_VDW_POTENTIAL_SWITCH, 7.0, 5.0)},
        {"charmm_peptide", "-DFLEXIBLE -DCHARMM_TIP3P",
         settings(HMD_FF_COULOMB_REACTION_FIELD, 0, HMD_FF_VDW_FORCE_SWITCH, 9.0, 7.0)},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct sys s;
        load(&s, cases[c].dir, cases[c].define, 0.05);
        const struct hmd_box *box = &s.frames[0].box;
        struct hmd_force_provider p;
        assert_int_equal(hmd_ff_classical_create(&p, &s.top, &cases[c].s), HMD_OK);
        const double err = check_fd(&p, &cases[c].s, box, s.top.natoms, s.x, 6, 1e-3);
        const double errw = check_virial(&p, box, s.top.natoms, s.x);
        printf("  %s (case %zu): forces within %.1e of the largest, virial %.1e\n", cases[c].dir, c,
               err, errw);
        assert_true(err < 1e-7);
        assert_true(errw < 1e-7);
        hmd_force_provider_destroy(&p);
        if (c < 3) {
            /* each bonded kind alone (the pairs' Coulomb is off with epsilon-r = 0) */
            for (int kind = 0; kind < HMD_TOP_NKINDS; kind++) {
                if (s.top.count[kind] == 0) {
                    continue;
                }
                struct hmd_topology t;
                only_kind(&s.top, kind, &t);
                struct hmd_ff_settings off = cases[c].s;
                off.epsilon_r = 0;
                assert_int_equal(hmd_ff_classical_create(&p, &t, &off), HMD_OK);
                const double e1 = check_fd(&p, &off, box, s.top.natoms, s.x, 8, 1e-4);
                const double e2 = check_virial(&p, box, s.top.natoms, s.x);
                printf("    %s alone: forces %.1e, virial %.1e\n", hmd_top_kind_name(kind), e1, e2);
                assert_true(e1 < 1e-7);
                assert_true(e2 < 1e-7);
                hmd_force_provider_destroy(&p);
                free_only_kind(&t);
            }
        }
        unload(&s);
    }
}

static void compare_results(const struct result *a, const struct result *b, int n, int nterms,
                            bool atomic_virial, const char *what)
{
    const double ef = ff_max_diff(a->f, b->f, 3 * (size_t)n) / ff_max_abs(b->f, 3 * (size_t)n);
    const double ew = ff_max_diff(a->w, b->w, 9) / ff_max_abs(b->w, 9);
    const double ee = fabs(a->e - b->e) / fabs(b->e);
    double et = 0, sum = 0;
    for (int t = 0; t < nterms; t++) {
        et = fmax(et, fabs(a->terms[t] - b->terms[t]));
        sum += fabs(b->terms[t]);
    }
    et /= sum;
    const double ea = ff_max_diff(a->ae, b->ae, (size_t)n) / ff_max_abs(b->ae, (size_t)n);
    const double ev =
        atomic_virial ? ff_max_diff(a->av, b->av, 9 * (size_t)n) / ff_max_abs(b->av, 9 * (size_t)n)
                      : 0;
    printf("  %s: energy %.1e, terms %.1e, forces %.1e, virial %.1e, atom energies %.1e, atom "
           "virials %.1e\n",
           what, ee, et, ef, ew, ea, ev);
    assert_true(ee < 1e-12 && et < 1e-12 && ef < 1e-12 && ew < 1e-12 && ea < 1e-12 && ev < 1e-12);
}

/* A sheared copy of a system's cell (the test is about counting, not GROMACS's numbers). */
static void shear(struct sys *s, struct hmd_box *box)
{
    const struct hmd_box *b0 = &s->frames[0].box;
    double h[3][3] = {{b0->h[0][0], 0, 0},
                      {0.21 * b0->h[0][0], b0->h[1][1], 0},
                      {-0.13 * b0->h[0][0], 0.17 * b0->h[1][1], b0->h[2][2]}};
    assert_int_equal(hmd_box_init(box, h, b0->periodic), HMD_OK);
    for (int i = 0; i < s->top.natoms; i++) {
        double f[3];
        hmd_box_to_frac(b0, s->x + 3 * i, f);
        hmd_box_to_cart(box, f, s->x + 3 * i);
    }
}

static void test_decomposition(void **state)
{
    struct {
        const char *dir, *define;
        struct hmd_ff_settings s;
        int grid[3];
    } cases[] = {
        {"charmm_peptide",
         "-DFLEXIBLE -DCHARMM_TIP3P",
         settings(HMD_FF_COULOMB_REACTION_FIELD, 78, HMD_FF_VDW_FORCE_SWITCH, 9.0, 7.0),
         {2, 2, 1}},
        {"sink1",
         "",
         settings(HMD_FF_COULOMB_CUTOFF, 0, HMD_FF_VDW_POTENTIAL_SHIFT, 7.0, 0),
         {3, 1, 2}},
        {"sink3",
         "-DKPAIR=0.3",
         settings(HMD_FF_COULOMB_REACTION_FIELD, 0, HMD_FF_VDW_POTENTIAL_SWITCH, 6.0, 5.0),
         {2, 3, 2}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct sys s;
        load(&s, cases[c].dir, cases[c].define, 0.1);
        struct hmd_box box;
        shear(&s, &box);
        struct hmd_force_provider p;
        assert_int_equal(hmd_ff_classical_create(&p, &s.top, &cases[c].s), HMD_OK);
        const char *names[HMD_FORCE_MAX_TERMS];
        const int nterms = hmd_force_provider_terms(&p, names);
        const int one[3] = {1, 1, 1};
        struct result ref, dd, rep;
        const int n = s.top.natoms;
        assert_int_equal(evaluate(&p, &box, n, s.x, one, false, 1.0, &ref), HMD_OK);
        if (evaluate(&p, &box, n, s.x, cases[c].grid, false, 1.0, &dd) ||
            evaluate(&p, &box, n, s.x, cases[c].grid, true, 1.0, &rep)) {
            fail_msg("%s", hmd_error_msg());
        }
        /* per-atom energies and virials add up to the totals */
        double sum_ae = 0, sum_av[9] = {0};
        for (int i = 0; i < n; i++) {
            sum_ae += ref.ae[i];
            for (int q = 0; q < 9; q++) {
                sum_av[q] += ref.av[9 * i + q];
            }
        }
        assert_true(fabs(sum_ae - ref.e) < 1e-12 * fabs(ref.e));
        assert_true(ff_max_diff(sum_av, ref.w, 9) < 1e-12 * ff_max_abs(ref.w, 9));
        double sum_terms = 0;
        for (int t = 0; t < nterms; t++) {
            sum_terms += ref.terms[t];
        }
        assert_true(fabs(sum_terms - ref.e) < 1e-12 * fabs(ref.e));
        char what[128];
        snprintf(what, sizeof what, "%s, %d x %d x %d subdomains", cases[c].dir, cases[c].grid[0],
                 cases[c].grid[1], cases[c].grid[2]);
        compare_results(&dd, &ref, n, nterms, true, what);
        strcat(what, ", replicated");
        compare_results(&rep, &ref, n, nterms, false, what);
        /* the GPU's algorithm replayed on the host, the same layouts */
        struct hmd_force_provider twin;
        assert_int_equal(hmd_ff_classical_create_twin(&twin, &s.top, &cases[c].s), HMD_OK);
        for (int k = 0; k < 3; k++) {
            struct result tw;
            no_av = true;
            const int rc = evaluate(&twin, &box, n, s.x, k ? cases[c].grid : one, k == 2, 1.0, &tw);
            no_av = false;
            if (rc) {
                fail_msg("%s", hmd_error_msg());
            }
            snprintf(what, sizeof what, "%s, the GPU's algorithm on the host, %s", cases[c].dir,
                     k == 0   ? "one rank"
                     : k == 1 ? "subdomains"
                              : "replicated");
            compare_results(&tw, &ref, n, nterms, false, what);
            result_free(&tw);
        }
        hmd_force_provider_destroy(&twin);
        result_free(&ref);
        result_free(&dd);
        result_free(&rep);
        hmd_force_provider_destroy(&p);
        unload(&s);
    }
}

static void test_errors(void **state)
{
    struct sys s;
    load(&s, "sink1", "", 0.0);
    const int n = s.top.natoms, one[3] = {1, 1, 1};
    const struct hmd_box *box = &s.frames[0].box; /* 20 Å */
    struct hmd_force_provider p;
    struct result r;
    /* twice the cut-off does not fit in the cell */
    struct hmd_ff_settings st = settings(HMD_FF_COULOMB_CUTOFF, 0, HMD_FF_VDW_NONE, 10.0, 0);
    assert_int_equal(hmd_ff_classical_create(&p, &s.top, &st), HMD_OK);
    assert_int_equal(evaluate(&p, box, n, s.x, one, false, 1.0, &r), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "the cut-off (10 Å) is longer than half the cell's"));
    result_free(&r);
    hmd_force_provider_destroy(&p);
    /* a bond stretched beyond the list (atom 1 moved by 10 Å) */
    st.rcoulomb = st.rvdw = 8.0;
    assert_int_equal(hmd_ff_classical_create(&p, &s.top, &st), HMD_OK);
    s.x[0] += 10.0;
    assert_int_equal(evaluate(&p, box, n, s.x, one, false, 0.5, &r), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "the bond of atoms 1 2 spans"));
    assert_non_null(strstr(hmd_error_msg(), "more than the neighbour-list cut-off (8.5 Å)"));
    result_free(&r);
    s.x[0] -= 10.0;
    /* ids outside the topology, compute without prepare, a list shorter than the cut-off */
    struct ff_rank rk;
    struct hmd_nbr_list nl;
    assert_int_equal(ff_rank_one(&rk, &nl, box, n, s.x, 9.0), HMD_OK);
    double *f = calloc(3 * (size_t)rk.nall, sizeof *f), ev[HMD_FORCE_NEV] = {0};
    struct hmd_force_io io = ff_rank_io(&rk, n, box, &nl, f, ev);
    assert_int_equal(hmd_force_provider_compute(&p, &io), HMD_ESOFTWARE);
    assert_non_null(strstr(hmd_error_msg(), "compute on"));
    rk.id[5] = n;
    assert_int_equal(hmd_force_provider_prepare(&p, &io), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "atom id 186 is outside the topology's 186 atoms"));
    rk.id[5] = 5;
    io.id = NULL;
    assert_int_equal(hmd_force_provider_prepare(&p, &io), HMD_ESOFTWARE);
    io.id = rk.id;
    nl.rlist = 7.5;
    assert_int_equal(hmd_force_provider_prepare(&p, &io), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "shorter than the classical force field's (8 Å)"));
    nl.rlist = 9.0;
    assert_int_equal(hmd_force_provider_prepare(&p, &io), HMD_OK);
    assert_int_equal(hmd_force_provider_compute(&p, &io), HMD_OK);
    const char *names[HMD_FORCE_MAX_TERMS];
    assert_int_equal(hmd_force_provider_terms(&p, names), 9); /* no Urey-Bradley */
    assert_string_equal(names[0], "Bond");
    assert_string_equal(names[4], "Per. Imp. Dih.");
    assert_string_equal(names[8], "Coulomb (SR)");
    assert_string_equal(hmd_force_provider_name(&p), "classical");
    assert_false(hmd_force_provider_on_device(&p));
    free(f);
    hmd_nbr_list_free(&nl);
    ff_rank_free(&rk);
    hmd_force_provider_destroy(&p);
    /* settings: a switch at the cut-off, named with where its values came from */
    struct hmd_params prm;
    hmd_params_defaults(&prm);
    assert_int_equal(hmd_params_set(&prm, "vdw-modifier=force-switch"), HMD_OK);
    assert_int_equal(hmd_params_set(&prm, "rvdw-switch=10"), HMD_OK);
    struct hmd_ff_settings fs;
    assert_int_equal(hmd_ff_settings_from_params(&prm, &fs), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "rvdw-switch from -set, rvdw from default"));
    assert_non_null(strstr(hmd_error_msg(), "rvdw-switch = 10 Å must be >= 0 and below rvdw"));
    assert_int_equal(hmd_params_set(&prm, "coulombtype=pme"), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "PME is not implemented"));
    assert_int_equal(hmd_params_set(&prm, "rcoulomb=1.2"), HMD_ECONFIG);
    assert_non_null(strstr(hmd_error_msg(), "rcoulomb = 1.2 is out of range"));
    unload(&s);
}

int main(void)
{
    const char *seed = getenv("HMD_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    rng_state = rng_state ? rng_state : 1;
    printf("test_ff_classical: seed %llu (set HMD_TEST_SEED to repeat)\n",
           (unsigned long long)rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finite_differences),
        cmocka_unit_test(test_decomposition),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
