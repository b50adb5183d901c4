/* Unit tests of src/nnp/tabulate: tables of random nets against the nets, exactness at the
 * knots, interval location on a synthetic table, the range function, stored tables, errors, and
 * a golden comparison with DeePMD-kit's own table (tests/data/derived/table_golden.json, written
 * by python/halomd/make_table_golden.py).
 *
 * Accuracy bounds. On an interval of width h the quintic Hermite interpolant p of G (value, G'
 * and G'' matched at both ends) has the error G(x) - p(x) = G^(6)(xi) / 6! (x - a)^3 (x - b)^3,
 * so |G - p| <= M6 h^6 / 46080 (the product peaks at (h/2)^6) and, to leading order,
 * |G' - p'| <= M6 h^5 / 13416 (max |d/du u^3 (u - 1)^3| = 0.05367), with M6 = max |G^(6)| on the
 * interval. The tests estimate M6 per table part from sixth central differences of the network
 * and allow 4x that bound (the estimate samples a grid; the derivative bound neglects a G^(7) h^6
 * term), plus round-off: the coefficient formulas divide value differences by h^k, so a_k
 * carries about eps |G| / h^k, which adds ~10 eps |G| to g and ~100 eps |G| / h to dg; the
 * tests allow 64 eps max|G| and 200 eps max|G| / h.
 */
#include <float.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/error.h"
#include "io/model_dp.h"
#include "nnp/tabulate.h"

static struct hmd_arena arena; /* test nets and tables, freed at exit */

static double urand(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (*state >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* A random one-input net with widths w[0] = 1 .. w[nl], DeePMD-kit's skip rule, optional idt;
 * weights uniform in [-1, 1] / sqrt(n_in) (the first layer: [-1, 1]), biases in [-1, 1]. */
struct test_net {
    struct hmd_mlp net;
    struct hmd_dense L[4];
};

static void make_net(struct test_net *t, const int *w, int nl, enum hmd_activation act, bool idt,
                     unsigned seed)
{
    int sum = 0;
    for (int l = 0; l < nl; l++) {
        struct hmd_dense *L = &t->L[l];
        const int k = w[l], n = w[l + 1];
        *L = (struct hmd_dense){.n_in = k, .n_out = n, .act = act};
        L->w = hmd_arena_alloc(&arena, sizeof(double) * k * n);
        L->b = hmd_arena_alloc(&arena, sizeof(double) * n);
        assert_non_null(L->w);
        assert_non_null(L->b);
        const double scale = 1.0 / sqrt((double)k);
        for (int e = 0; e < k * n; e++) {
            L->w[e] = scale * urand(&seed);
        }
        for (int j = 0; j < n; j++) {
            L->b[j] = urand(&seed);
        }
        if (idt) {
            L->idt = hmd_arena_alloc(&arena, sizeof(double) * n);
            assert_non_null(L->idt);
            for (int j = 0; j < n; j++) {
                L->idt[j] = 0.1 + 0.05 * urand(&seed);
            }
        }
        L->resnet = (n == k) ? HMD_RESNET_SAME : (n == 2 * k ? HMD_RESNET_DOUBLE : HMD_RESNET_NONE);
        sum += n;
    }
    t->net = (struct hmd_mlp){
        .nlayers = nl, .layers = t->L, .n_in = 1, .n_out = w[nl], .width_sum = sum};
    assert_int_equal(hmd_mlp_pack(&t->net, &arena), HMD_OK);
}

/* The net's values and derivatives at x[rows] into y, dy ([rows][M]). */
static void net_eval(const struct hmd_mlp *net, int rows, const double *x, double *y, double *dy)
{
    double *work = malloc(sizeof(double) * hmd_mlp_tangent_work_size(net, rows));
    assert_non_null(work);
    const double *v, *d;
    hmd_mlp_forward_tangent(net, rows, x, NULL, work, &v, &d);
    memcpy(y, v, sizeof(double) * rows * net->n_out);
    memcpy(dy, d, sizeof(double) * rows * net->n_out);
    free(work);
}

/* Largest |G^(6)| over [a, b] and the M outputs, from sixth central differences (step s) on
 * npts points. */
static double estimate_m6(const struct hmd_mlp *net, double a, double b, int npts)
{
    const double s = 0.02, c[7] = {1, -6, 15, -20, 15, -6, 1};
    const int M = net->n_out;
    double x[7], *y = malloc(sizeof(double) * 7 * M), *dy = malloc(sizeof(double) * 7 * M);
    double m6 = 0;
    for (int p = 0; p < npts; p++) {
        const double xc = a + (b - a) * (p + 0.5) / npts;
        for (int j = 0; j < 7; j++) {
            x[j] = xc + (j - 3) * s;
        }
        net_eval(net, 7, x, y, dy);
        for (int m = 0; m < M; m++) {
            double d6 = 0;
            for (int j = 0; j < 7; j++) {
                d6 += c[j] * y[j * M + m];
            }
            m6 = fmax(m6, fabs(d6) / pow(s, 6));
        }
    }
    free(y);
    free(dy);
    return m6;
}

struct part_error {
    double g, dg;     /* largest |error| of g and dg */
    double g_b, dg_b; /* the bounds */
    double gmax;      /* largest |G| */
};

/* Table against net at npts fresh random points of [a, b), interval width h. */
static struct part_error check_part(const struct hmd_emb_table *tab, const struct hmd_mlp *net,
                                    double a, double b, double h, int npts, unsigned *seed)
{
    const int M = net->n_out;
    double *x = malloc(sizeof(double) * npts), *y = malloc(sizeof(double) * npts * M);
    double *dy = malloc(sizeof(double) * npts * M), *g = malloc(sizeof(double) * npts * M);
    double *dg = malloc(sizeof(double) * npts * M);
    for (int p = 0; p < npts; p++) {
        x[p] = a + (b - a) * 0.5 * (1 + urand(seed));
    }
    net_eval(net, npts, x, y, dy);
    hmd_emb_table_eval(tab, npts, x, g, dg);
    struct part_error e = {0};
    for (int i = 0; i < npts * M; i++) {
        e.g = fmax(e.g, fabs(g[i] - y[i]));
        e.dg = fmax(e.dg, fabs(dg[i] - dy[i]));
        e.gmax = fmax(e.gmax, fabs(y[i]));
    }
    const double m6 = estimate_m6(net, a, b, (int)((b - a) / h) + 1);
    e.g_b = 4 * m6 * pow(h, 6) / 46080 + 64 * DBL_EPSILON * e.gmax;
    e.dg_b = 4 * m6 * pow(h, 5) / 13416 + 200 * DBL_EPSILON * e.gmax / h;
    free(x);
    free(y);
    free(dy);
    free(g);
    free(dg);
    return e;
}

static void check_random_net(const int *w, int nl, enum hmd_activation act, bool idt, unsigned seed)
{
    struct test_net t;
    make_net(&t, w, nl, act, idt, seed);
    const double lower = -1, upper = 3, ext = 3, s0 = 0.01, s1 = 0.1;
    struct hmd_emb_table tab;
    int rc = hmd_emb_table_build(&tab, &t.net, lower, upper, ext, s0, s1, &arena);
    if (rc) {
        fail_msg("%s", hmd_error_msg());
    }
    assert_int_equal(tab.M, w[nl]);
    assert_int_equal(tab.nspline, 400 + 60);
    assert_int_equal(tab.n0, 400);
    assert_int_equal(tab.last, 459);
    unsigned s = seed * 7u + 1u;
    struct part_error p1 = check_part(&tab, &t.net, lower, upper, s0, 400, &s);
    struct part_error p2 = check_part(&tab, &t.net, upper, upper * ext, s1, 400, &s);
    print_message("act %d idt %d: stride %.2g: g %.2e (bound %.2e), dg %.2e (bound %.2e), "
                  "max|G| %.2g; stride %.2g: %.2e (%.2e), %.2e (%.2e), max|G| %.2g\n",
                  (int)act, (int)idt, s0, p1.g, p1.g_b, p1.dg, p1.dg_b, p1.gmax, s1, p2.g, p2.g_b,
                  p2.dg, p2.dg_b, p2.gmax);
    assert_true(p1.g <= p1.g_b);
    assert_true(p1.dg <= p1.dg_b);
    assert_true(p2.g <= p2.g_b);
    assert_true(p2.dg <= p2.dg_b);
}

static void test_random_nets_against_network(void **state)
{
    const int wide[4] = {1, 8, 16, 32}, narrow[4] = {1, 2, 4, 4};
    const enum hmd_activation acts[] = {HMD_ACT_TANH, HMD_ACT_GELU, HMD_ACT_SOFTPLUS,
                                        HMD_ACT_SIGMOID, HMD_ACT_SILU};
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        for (int idt = 0; idt < 2; idt++) {
            check_random_net(wide, 3, acts[a], idt, 11u + 5u * (unsigned)a + (unsigned)idt);
        }
    }
    /* first layer 1 -> 2 with the [x, x] skip, then 2 -> 4 doubled and 4 -> 4 kept */
    check_random_net(narrow, 3, HMD_ACT_TANH, false, 3u);
    check_random_net(narrow, 3, HMD_ACT_GELU, true, 4u);
}

/* p and p' of interval i of a table, output m, at offset xr (straight from the coefficients). */
static void poly(const struct hmd_emb_table *t, int i, int m, double xr, double *p, double *dp)
{
    const double *a = t->coef + (size_t)i * 6 * t->M + m;
    const int M = t->M;
    *p = a[0] + (a[M] + (a[2 * M] + (a[3 * M] + (a[4 * M] + a[5 * M] * xr) * xr) * xr) * xr) * xr;
    *dp =
        a[M] + (2 * a[2 * M] + (3 * a[3 * M] + (4 * a[4 * M] + 5 * a[5 * M] * xr) * xr) * xr) * xr;
}

/* Every interval matches the net's value and slope at both of its ends, to round-off. */
static void test_exact_at_knots(void **state)
{
    const int w[4] = {1, 8, 16, 32};
    struct test_net t;
    make_net(&t, w, 3, HMD_ACT_TANH, false, 77u);
    struct hmd_emb_table tab;
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 3, 0.01, 0.1, &arena), HMD_OK);
    const int M = tab.M, nk = tab.nspline + 1;
    double *x = malloc(sizeof(double) * nk), *y = malloc(sizeof(double) * nk * M);
    double *dy = malloc(sizeof(double) * nk * M);
    for (int i = 0; i < nk; i++) {
        x[i] = i <= tab.n0 ? tab.lower + i * tab.stride0 : tab.upper + (i - tab.n0) * tab.stride1;
    }
    net_eval(&t.net, nk, x, y, dy);
    double ev = 0, ed = 0;
    for (int i = 0; i < tab.nspline; i++) {
        const double h = i < tab.n0 ? tab.stride0 : tab.stride1;
        for (int m = 0; m < M; m++) {
            double p, dp;
            poly(&tab, i, m, 0, &p, &dp);
            ev = fmax(ev, fabs(p - y[i * M + m]) / fmax(1, fabs(y[i * M + m])));
            ed = fmax(ed, fabs(dp - dy[i * M + m]) / fmax(1, fabs(dy[i * M + m])));
            poly(&tab, i, m, h, &p, &dp);
            ev = fmax(ev, fabs(p - y[(i + 1) * M + m]) / fmax(1, fabs(y[(i + 1) * M + m])));
            /* at the far end p' gathers the round-off of a5 h^4 ~ eps |G| / h */
            ed = fmax(ed, fabs(dp - dy[(i + 1) * M + m]) * h / fmax(1, fabs(y[(i + 1) * M + m])));
        }
    }
    print_message("knots: value %.2e, slope %.2e (relative)\n", ev, ed);
    assert_true(ev < 1e-13);
    assert_true(ed < 1e-13);
    /* and hmd_emb_table_eval at the knots themselves */
    double *g = malloc(sizeof(double) * nk * M), *dg = malloc(sizeof(double) * nk * M);
    hmd_emb_table_eval(&tab, nk, x, g, dg);
    for (int e = 0; e < nk * M; e++) {
        assert_true(fabs(g[e] - y[e]) < 1e-13 * fmax(1, fabs(y[e])));
        assert_true(fabs(dg[e] - dy[e]) < 1e-11 * fmax(1, fabs(y[e])));
    }
    free(x);
    free(y);
    free(dy);
    free(g);
    free(dg);
}

/* A synthetic stored table that reveals where the evaluation looked: output 0 has a0 = the
 * interval's index, output 1 is x' (a1 = 1), output 2 is x'^2 (a2 = 1). Knots: lower -1, upper 2
 * with stride 0.5 (6 intervals), then to max 10 with stride 1 (8 intervals). */
static void make_probe(struct hmd_emb_table *tab, int nrows, int *rc)
{
    const int M = 3;
    const double info[6] = {-1, 2, 10, 0.5, 1, -1};
    double *data = calloc((size_t)nrows * 6 * M, sizeof(double));
    for (int i = 0; i < nrows; i++) {
        data[(size_t)i * 6 * M + 0] = i;      /* output 0, a0 */
        data[(size_t)i * 6 * M + 6 + 1] = 1;  /* output 1, a1 */
        data[(size_t)i * 6 * M + 12 + 2] = 1; /* output 2, a2 */
    }
    *rc = hmd_emb_table_from_data(tab, M, data, nrows, info, &arena);
    free(data);
}

static void expect_at(const struct hmd_emb_table *tab, double x, int row, double xr, double delta)
{
    double g[3], dg[3];
    hmd_emb_table_eval(tab, 1, &x, g, dg);
    if (g[0] != row || fabs(dg[2] / 2 - xr) > 1e-15 || fabs(g[1] - (xr + delta)) > 1e-15 ||
        dg[1] != 1 || fabs(g[2] - (xr * xr + 2 * xr * delta)) > 1e-14) {
        fail_msg("x = %.17g: interval %g, x' %.17g, g1 %.17g; expected %d, %.17g, %.17g", x, g[0],
                 dg[2] / 2, g[1], row, xr, xr + delta);
    }
}

static void test_locate_edge_cases(void **state)
{
    struct hmd_emb_table tab;
    int rc;
    make_probe(&tab, 14, &rc);
    assert_int_equal(rc, HMD_OK);
    assert_int_equal(tab.n0, 6);
    assert_int_equal(tab.last, 13);
    assert_true(tab.last_x == 1.0);
    expect_at(&tab, -3.0, 0, 0, -2.0);  /* below lower: interval 0 at x' = 0, C1 tail */
    expect_at(&tab, -1.0, 0, 0, 0);     /* exactly lower */
    expect_at(&tab, -0.75, 0, 0.25, 0); /* first part */
    expect_at(&tab, 0.75, 3, 0.25, 0);  /* first part */
    expect_at(&tab, 1.5, 5, 0, 0);      /* a knot of the first part */
    /* just below upper, x - lower rounds to 3 = 6 strides: interval 6 at x' = -1 ulp, as in
     * DeePMD-kit (the polynomial is smooth there, so this is harmless) */
    expect_at(&tab, nextafter(2.0, 0), 6, nextafter(2.0, 0) - 2.0, 0);
    expect_at(&tab, nextafter(2.0, 0) - 1e-15, 5, nextafter(2.0, 0) - 1e-15 - 1.5, 0);
    expect_at(&tab, 2.0, 6, 0, 0);      /* exactly upper: second part starts */
    expect_at(&tab, 5.5, 9, 0.5, 0);    /* inside the extrapolated part */
    expect_at(&tab, 9.25, 13, 0.25, 0); /* its last interval */
    expect_at(&tab, nextafter(10.0, 0), 13, nextafter(10.0, 0) - 9, 0); /* just below max */
    expect_at(&tab, 10.0, 13, 1.0, 0);   /* exactly max: end of the last interval */
    expect_at(&tab, 12.0, 13, 1.0, 2.0); /* beyond max: C1 tail from the end */
    /* NaN propagates */
    double x = NAN, g[3], dg[3];
    hmd_emb_table_eval(&tab, 1, &x, g, dg);
    assert_true(isnan(g[1]));
    /* dg may be omitted */
    double xs[2] = {0.3, 7.1}, g2[6], gd[6], dgd[6];
    hmd_emb_table_eval(&tab, 2, xs, g2, NULL);
    hmd_emb_table_eval(&tab, 2, xs, gd, dgd);
    assert_memory_equal(g2, gd, sizeof g2);
}

/* A table one row short (DeePMD-kit's count when (max - upper) / stride1 is not whole) serves
 * the final partial interval from the row before; other counts are refused. */
static void test_stored_table_rows(void **state)
{
    struct hmd_emb_table tab;
    int rc;
    make_probe(&tab, 13, &rc);
    assert_int_equal(rc, HMD_OK);
    assert_int_equal(tab.last, 12);
    expect_at(&tab, 9.5, 12, 1.5, 0);
    expect_at(&tab, 11.0, 12, 2.0, 1.0);
    make_probe(&tab, 15, &rc);
    assert_int_equal(rc, HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "15 rows"));
    make_probe(&tab, 6, &rc);
    assert_int_equal(rc, HMD_EDATA);
    const double bad[6] = {2, -1, 10, 0.5, 1, -1}, coef[6] = {0};
    assert_int_equal(hmd_emb_table_from_data(&tab, 1, coef, 1, bad, &arena), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "lower < upper < max"));
    const double info[6] = {0, 1, 2, 1, 1, -1}, nan_coef[12] = {0, 0, NAN};
    assert_int_equal(hmd_emb_table_from_data(&tab, 1, nan_coef, 2, info, &arena), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "a2"));
}

/* The layout in passes: every coefficient where the GPU's kernels read it, zeros beyond M, for M
 * below, at and above a multiple of the pass. */
static void test_in_passes(void **state)
{
    (void)state;
    const int widths[] = {1, 3, 4, 5, 8, 9};
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        const int M = widths[w], pass = 4, nspline = 3;
        const int W = hmd_emb_table_pass_width(M, pass);
        assert_int_equal(W, (M + 3) / 4 * 4);
        double coef[3 * 6 * 9], out[3 * 6 * 12];
        for (int e = 0; e < nspline * 6 * M; e++) {
            coef[e] = 1.0 + e;
        }
        struct hmd_emb_table t = {.M = M, .nspline = nspline, .coef = coef};
        for (int e = 0; e < nspline * 6 * W; e++) {
            out[e] = NAN;
        }
        hmd_emb_table_in_passes(&t, pass, out);
        int nonzero = 0;
        for (int e = 0; e < nspline * 6 * W; e++) {
            assert_false(isnan(out[e]));
            nonzero += out[e] != 0.0;
        }
        assert_int_equal(nonzero, nspline * 6 * M); /* all coefficients, each once */
        for (int i = 0; i < nspline; i++) {
            for (int k = 0; k < 6; k++) {
                for (int m = 0; m < M; m++) {
                    const int p = m / pass, r = m % pass;
                    assert_true(out[(i * W + p * pass) * 6 + k * pass + r] ==
                                coef[(i * 6 + k) * M + m]);
                }
            }
        }
    }
}

/* Build, write out in DeePMD-kit's [nspline][6 M] layout, read back: same evaluations. */
static void test_stored_table_round_trip(void **state)
{
    const int w[4] = {1, 8, 16, 32};
    struct test_net t;
    make_net(&t, w, 3, HMD_ACT_GELU, false, 5u);
    struct hmd_emb_table a, b;
    assert_int_equal(hmd_emb_table_build(&a, &t.net, -2, 7, 5, 0.01, 0.1, &arena), HMD_OK);
    const int M = a.M;
    double *data = malloc(sizeof(double) * a.nspline * 6 * M);
    for (int i = 0; i < a.nspline; i++) {
        for (int m = 0; m < M; m++) {
            for (int k = 0; k < 6; k++) {
                data[((size_t)i * M + m) * 6 + k] = a.coef[((size_t)i * 6 + k) * M + m];
            }
        }
    }
    const double info[6] = {a.lower, a.upper, a.max, a.stride0, a.stride1, -1};
    assert_int_equal(hmd_emb_table_from_data(&b, M, data, a.nspline, info, &arena), HMD_OK);
    assert_int_equal(b.nspline, a.nspline);
    assert_int_equal(b.n0, a.n0);
    assert_int_equal(b.last, a.last);
    const double xs[6] = {-3.0, -2.0, 0.123, 7.0, 20.5, 40.0};
    double ga[6 * 32], dga[6 * 32], gb[6 * 32], dgb[6 * 32];
    hmd_emb_table_eval(&a, 6, xs, ga, dga);
    hmd_emb_table_eval(&b, 6, xs, gb, dgb);
    assert_memory_equal(ga, gb, sizeof ga);
    assert_memory_equal(dga, dgb, sizeof dga);
    free(data);
}

static void test_range(void **state)
{
    /* 2 centre types, 3 neighbour slots; only slot 0 counts (slots 1, 2 are decoys) */
    double davg[2][3][4], dstd[2][3][4];
    for (int t = 0; t < 2; t++) {
        for (int j = 0; j < 3; j++) {
            for (int c = 0; c < 4; c++) {
                davg[t][j][c] = 50.0;
                dstd[t][j][c] = 1e-3;
            }
        }
    }
    const double a0[2][4] = {{1.0, 0, 0, 0}, {0.3, 0, 0, 0}};
    const double s0[2][4] = {{0.5, 0.25, 2, 2}, {0.7, 1, 1, 1}};
    memcpy(davg[0][0], a0[0], sizeof a0[0]);
    memcpy(davg[1][0], a0[1], sizeof a0[1]);
    memcpy(dstd[0][0], s0[0], sizeof s0[0]);
    memcpy(dstd[1][0], s0[1], sizeof s0[1]);
    double lo[2], up[2];
    /* min_nbor_dist below rcut_smth: sw = 1, 1/d = 4 */
    assert_int_equal(
        hmd_emb_table_range(&davg[0][0][0], &dstd[0][0][0], 2, 3, 6.0, 0.5, 0.25, lo, up), HMD_OK);
    /* type 0: lower floor(min(-1/0.5, -0)) = -2; upper ceil(max((4-1)/0.5, 4/0.25, 2, 2)) = 16
     * type 1: lower floor(-0.3/0.7) = -1; upper ceil(max(3.7/0.7 = 5.29, 4)) = 6 */
    assert_true(lo[0] == -2 && up[0] == 16);
    assert_true(lo[1] == -1 && up[1] == 6);
    /* inside the switch: d = 3.25 between 0.5 and 6 is u = 0.5, sw = 0.5, sw/d = 0.1538 */
    const double a1[4] = {0.125, 0, 0, 0}, s1[4] = {0x1p-10, 0x1p-7, 0x1p-6, 0x1p-5};
    memcpy(davg[1][0], a1, sizeof a1);
    memcpy(dstd[1][0], s1, sizeof s1);
    assert_int_equal(
        hmd_emb_table_range(&davg[0][0][0], &dstd[0][0][0], 2, 3, 6.0, 0.5, 3.25, lo, up), HMD_OK);
    /* type 1: lower -0.125 * 1024 = -128; upper ceil(max(29.5, 19.7, 9.8, 4.9)) = 30 */
    assert_true(lo[1] == -128 && up[1] == 30);
    /* type 0: sw/d - 1 < 0: upper ceil(max(-1.69, 0.615, 0.077, 0.077)) = 1 */
    assert_true(lo[0] == -2 && up[0] == 1);
    /* beyond rcut: sw = 0 */
    assert_int_equal(
        hmd_emb_table_range(&davg[0][0][0], &dstd[0][0][0], 2, 3, 6.0, 0.5, 7.0, lo, up), HMD_OK);
    assert_true(up[0] == 0 && up[1] == 0);
    assert_int_equal(
        hmd_emb_table_range(&davg[0][0][0], &dstd[0][0][0], 2, 3, 6.0, 0.5, 0.0, lo, up),
        HMD_ECONFIG);
    dstd[1][0][2] = 0;
    assert_int_equal(
        hmd_emb_table_range(&davg[0][0][0], &dstd[0][0][0], 2, 3, 6.0, 0.5, 0.9, lo, up),
        HMD_EDATA);
}

static void test_build_errors(void **state)
{
    const int w[4] = {1, 8, 16, 32};
    struct test_net t;
    make_net(&t, w, 3, HMD_ACT_TANH, false, 9u);
    struct hmd_emb_table tab;
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, 3, 3, 5, 0.01, 0.1, &arena), HMD_ECONFIG);
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 1, 0.01, 0.1, &arena), HMD_ECONFIG);
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 5, 0, 0.1, &arena), HMD_ECONFIG);
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 5, 1e-9, 0.1, &arena), HMD_ECONFIG);
    t.L[1].resnet = HMD_RESNET_NONE;
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 5, 0.01, 0.1, &arena), HMD_ENOTSUP);
    t.L[1].resnet = HMD_RESNET_DOUBLE;
    t.L[2].act = HMD_ACT_SILUT;
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 5, 0.01, 0.1, &arena), HMD_ENOTSUP);
    t.L[2].act = HMD_ACT_TANH;
    t.L[0].n_in = 2;
    assert_int_equal(hmd_emb_table_build(&tab, &t.net, -1, 3, 5, 0.01, 0.1, &arena), HMD_ECONFIG);
}

/* ---- golden: DeePMD-kit's table of one embedding net of se_e2_a_water_one_side.dp ---------- */

static double jnum(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) {
        fail_msg("golden: '%s' is not a number", key);
    }
    return json_number_value(v);
}

static json_t *jget(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        fail_msg("golden: no '%s'", key);
    }
    return v;
}

static void test_golden_deepmd(void **state)
{
    json_error_t jerr;
    json_t *doc = json_load_file(HMD_TEST_DATA "/derived/table_golden.json", 0, &jerr);
    if (!doc) {
        fail_msg("table_golden.json: %s (line %d)", jerr.text, jerr.line);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", HMD_TEST_DATA, json_string_value(jget(doc, "model")));
    struct hmd_dp_model model = {0};
    if (hmd_model_read_dp(path, &model)) {
        fail_msg("%s", hmd_error_msg());
    }
    const struct hmd_se_e2_a *se = &model.se;
    const int net = (int)json_integer_value(jget(doc, "net"));
    json_t *par = jget(doc, "parameters"), *tol = jget(doc, "tolerance");
    assert_true(se->type_one_side && net < se->nemb);

    /* range per centre type, then DeePMD-kit's one-side merge over centre types (all sel > 0) */
    double lo[8], up[8];
    assert_true(model.ntypes <= 8);
    assert_int_equal(hmd_emb_table_range(se->davg, se->dstd, model.ntypes, se->nnei, model.rcut,
                                         model.rcut_smth, jnum(par, "min_nbor_dist"), lo, up),
                     HMD_OK);
    json_t *rng = jget(doc, "range_per_centre_type");
    double lower = INFINITY, upper = -INFINITY;
    for (int t = 0; t < model.ntypes; t++) {
        assert_true(lo[t] == json_number_value(json_array_get(jget(rng, "lower"), t)));
        assert_true(up[t] == json_number_value(json_array_get(jget(rng, "upper"), t)));
        lower = fmin(lower, lo[t]);
        upper = fmax(upper, up[t]);
    }
    json_t *info = jget(doc, "table_info");
    assert_true(lower == json_number_value(json_array_get(info, 0)));
    assert_true(upper == json_number_value(json_array_get(info, 1)));

    struct hmd_emb_table tab;
    if (hmd_emb_table_build(&tab, &se->emb[net], lower, upper, jnum(par, "extrapolate"),
                            jnum(par, "stride0"), jnum(par, "stride1"), &arena)) {
        fail_msg("%s", hmd_error_msg());
    }
    const double tinfo[5] = {tab.lower, tab.upper, tab.max, tab.stride0, tab.stride1};
    for (int k = 0; k < 5; k++) {
        assert_true(tinfo[k] == json_number_value(json_array_get(info, k)));
    }
    assert_int_equal(tab.nspline, (int)json_integer_value(jget(doc, "nspline")));
    assert_int_equal(tab.M, (int)json_integer_value(jget(doc, "last_layer_size")));
    const int M = tab.M;

    /* coefficient rows: |a_k - ref| h^k against the row's scale */
    const double tol_c = jnum(tol, "coefficients");
    json_t *coef = jget(doc, "coefficients"), *chans = jget(coef, "channels");
    double worst = 0;
    size_t ri;
    json_t *row;
    json_array_foreach(jget(coef, "rows"), ri, row)
    {
        const int i = (int)json_integer_value(jget(row, "interval"));
        const double h = jnum(row, "width");
        assert_true(h == (i < tab.n0 ? tab.stride0 : tab.stride1));
        json_t *a = jget(row, "a");
        double scale = 1;
        for (size_t c = 0; c < json_array_size(a); c++) {
            scale = fmax(scale, fabs(json_number_value(json_array_get(json_array_get(a, c), 0))));
        }
        for (size_t c = 0; c < json_array_size(a); c++) {
            const int m = (int)json_integer_value(json_array_get(chans, c));
            for (int k = 0; k < 6; k++) {
                const double ref = json_number_value(json_array_get(json_array_get(a, c), k));
                const double got = tab.coef[((size_t)i * 6 + k) * M + m];
                worst = fmax(worst, fabs(got - ref) * pow(h, k) / scale);
            }
        }
    }
    print_message("golden coefficients: %.2e (tolerance %.0e)\n", worst, tol_c);
    assert_true(worst <= tol_c);

    /* whole-table sums of a_k h^k, against the size of a sum of independent round-offs */
    json_t *sums = jget(doc, "sums");
    double worst_sum = 0;
    for (int k = 0; k < 6; k++) {
        double s = 0, comp = 0; /* Neumaier's compensated sum: the reference is math.fsum */
        for (int i = 0; i < tab.nspline; i++) {
            const double hk = pow(i < tab.n0 ? tab.stride0 : tab.stride1, k);
            for (int m = 0; m < M; m++) {
                const double v = tab.coef[((size_t)i * 6 + k) * M + m] * hk, t = s + v;
                comp += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
                s = t;
            }
        }
        s += comp;
        const double ref = json_number_value(json_array_get(jget(sums, "sum"), k));
        if (!(fabs(s - ref) <= jnum(tol, "sums") * jnum(sums, "scale"))) {
            fail_msg("sum of a%d h^%d: %.17g, DeePMD-kit %.17g", k, k, s, ref);
        }
        worst_sum = fmax(worst_sum, fabs(s - ref) / jnum(sums, "scale"));
    }

    print_message("golden sums: %.2e (tolerance %.0e)\n", worst_sum, jnum(tol, "sums"));

    /* evaluations through DeePMD-kit's kernel */
    const double tol_e = jnum(tol, "evaluations");
    json_t *ev = jget(doc, "evaluations"), *echans = jget(ev, "channels"), *pt;
    double *g = malloc(sizeof(double) * M), *dg = malloc(sizeof(double) * M);
    double worst_g = 0, worst_dg = 0;
    json_array_foreach(jget(ev, "points"), ri, pt)
    {
        const double x = jnum(pt, "x");
        hmd_emb_table_eval(&tab, 1, &x, g, dg);
        json_t *rg = jget(pt, "g"), *rdg = jget(pt, "dg");
        double sg = 1, sdg = 1, eg = 0, edg = 0;
        for (size_t c = 0; c < json_array_size(echans); c++) {
            sg = fmax(sg, fabs(json_number_value(json_array_get(rg, c))));
            sdg = fmax(sdg, fabs(json_number_value(json_array_get(rdg, c))));
        }
        for (size_t c = 0; c < json_array_size(echans); c++) {
            const int m = (int)json_integer_value(json_array_get(echans, c));
            eg = fmax(eg, fabs(g[m] - json_number_value(json_array_get(rg, c))) / sg);
            edg = fmax(edg, fabs(dg[m] - json_number_value(json_array_get(rdg, c))) / sdg);
        }
        if (!(eg <= tol_e && edg <= tol_e)) {
            fail_msg("x = %.17g (%s): g %.3g, dg %.3g beyond %g", x,
                     json_string_value(jget(pt, "branch")), eg, edg, tol_e);
        }
        worst_g = fmax(worst_g, eg);
        worst_dg = fmax(worst_dg, edg);
    }
    print_message("golden evaluations: g %.2e, dg %.2e (tolerance %.0e)\n", worst_g, worst_dg,
                  tol_e);
    free(g);
    free(dg);
    hmd_model_free(&model);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_nets_against_network),
        cmocka_unit_test(test_exact_at_knots),
        cmocka_unit_test(test_locate_edge_cases),
        cmocka_unit_test(test_stored_table_rows),
        cmocka_unit_test(test_stored_table_round_trip),
        cmocka_unit_test(test_in_passes),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_build_errors),
        cmocka_unit_test(test_golden_deepmd),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    hmd_arena_free(&arena);
    return failed;
}
