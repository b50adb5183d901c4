/* Tabulated embedding nets: range, construction and evaluation as in DeePMD-kit 3.2.0.
 *
 * Construction goes knot by knot: the network's value G and derivatives G', G'' at one knot are
 * carried forward through the layers (deepmd/utils/tabulate_math.py: unaggregated_dy_dx_s,
 * unaggregated_dy2_dx_s for the first layer, unaggregated_dy_dx, unaggregated_dy2_dx after), and
 * interval i gets its coefficients as soon as knots i and i + 1 are known
 * (deepmd/utils/tabulate.py: BaseTabulate._build_lower). Arithmetic is written in DeePMD-kit's
 * order where it matters for agreement to round-off: knot positions, the quintic coefficients and
 * the evaluation. The matrix products sum in plain order; numpy/torch may block them differently,
 * which moves values by an ulp or so.
 */
#include "nnp/tabulate.h"

#include "nnp/vmath.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Above this many intervals a table is certainly a parameter mistake (10^8 intervals of M = 100
 * outputs would take 480 GB). */
#define MAX_INTERVALS 100000000.0

/* DeePMD-kit's quintic switch (BaseTabulate._spline5_switch), same operation order. */
static double spline5_switch(double xx, double rmin, double rmax)
{
    if (xx < rmin) {
        return 1.0;
    }
    if (xx < rmax) {
        double uu = (xx - rmin) / (rmax - rmin);
        return uu * uu * uu * (-6 * uu * uu + 15 * uu - 10) + 1;
    }
    return 0.0;
}

int hmd_emb_table_range(const double *davg, const double *dstd, int ntypes, int nnei, double rcut,
                        double rcut_smth, double min_nbor_dist, double *lower, double *upper)
{
    if (ntypes < 1 || nnei < 1) {
        return hmd_error_set(HMD_ECONFIG, "table range: %d types and %d neighbour slots", ntypes,
                             nnei);
    }
    if (!(min_nbor_dist > 0) || !isfinite(min_nbor_dist)) {
        return hmd_error_set(HMD_ECONFIG,
                             "table range: min_nbor_dist %g Å is not a positive distance; give "
                             "the smallest neighbour distance of the training data",
                             min_nbor_dist);
    }
    const double sw = spline5_switch(min_nbor_dist, rcut_smth, rcut);
    for (int t = 0; t < ntypes; t++) {
        /* neighbour slot 0 of centre type t: davg[t][0][c] */
        const double *avg = davg + (size_t)t * nnei * 4, *std = dstd + (size_t)t * nnei * 4;
        double lo = INFINITY, up = -INFINITY;
        for (int c = 0; c < 4; c++) {
            if (!isfinite(avg[c]) || !isfinite(std[c]) || std[c] == 0) {
                return hmd_error_set(HMD_EDATA,
                                     "table range: descriptor statistics of type %d, column %d: "
                                     "davg %g, dstd %g cannot normalise",
                                     t, c, avg[c], std[c]);
            }
            const double l = -avg[c] / std[c];
            const double u = ((1 / min_nbor_dist) * sw - avg[c]) / std[c];
            lo = l < lo ? l : lo;
            up = u > up ? u : up;
        }
        lower[t] = floor(lo);
        upper[t] = ceil(up);
    }
    return HMD_OK;
}

/* ---- construction ---------------------------------------------------------------------------- */

/* Activation value and its first and second derivatives as DeePMD-kit's tabulation uses them:
 * the value from deepmd/dpmodel/utils/network.py::get_activation_fn, the derivatives from
 * deepmd/utils/tabulate_math.py::grad and grad_grad, expression for expression. */
static void act_d012(enum hmd_activation act, double x, double *y, double *d1, double *d2)
{
    /* numpy's np.sqrt(2 / np.pi), to the last bit */
    const double sqrt_2_pi = sqrt(2 / 3.14159265358979323846);
    const double ggelu = 0.044715;
    switch (act) {
    case HMD_ACT_NONE:
    case HMD_ACT_SILUT: /* refused by the caller */
        *y = x;
        *d1 = 1;
        *d2 = 0;
        return;
    case HMD_ACT_TANH: {
        const double t = tanh(x);
        *y = t;
        *d1 = 1 - t * t;
        *d2 = -2 * t * (1 - t * t);
        return;
    }
    case HMD_ACT_GELU: {
        const double var = tanh(sqrt_2_pi * (x + ggelu * (x * x * x)));
        const double var2 = sqrt_2_pi * (1 - var * var) * (3 * ggelu * (x * x) + 1);
        *y = 0.5 * x * (1 + var);
        *d1 = 0.5 * sqrt_2_pi * x * (1 - var * var) * (3 * ggelu * (x * x) + 1) + 0.5 * var + 0.5;
        *d2 = 3 * ggelu * sqrt_2_pi * (x * x) * (1 - var * var) -
              sqrt_2_pi * x * var2 * (3 * ggelu * (x * x) + 1) * var + var2;
        return;
    }
    case HMD_ACT_RELU:
        *y = x > 0 ? x : 0;
        *d1 = x > 0 ? 1 : 0;
        *d2 = 0;
        return;
    case HMD_ACT_RELU6:
        *y = x < 0 ? 0 : (x > 6 ? 6 : x);
        *d1 = (x > 0 && x < 6) ? 1 : 0;
        *d2 = 0;
        return;
    case HMD_ACT_SOFTPLUS: {
        /* DeePMD-kit's overflow-safe forms (softplus_t, _stable_sigmoid), no threshold */
        const double e = exp(x >= 0 ? -x : x);
        const double sig = x >= 0 ? 1 / (1 + e) : e / (1 + e);
        *y = x > 0 ? x + log(1 + exp(-x)) : log(1 + exp(x));
        *d1 = sig;
        *d2 = sig * (1 - sig);
        return;
    }
    case HMD_ACT_SIGMOID: {
        const double s = hmd_sigmoid(x);
        *y = s;
        *d1 = s * (1 - s);
        *d2 = s * (1 - s) * (1 - 2 * s);
        return;
    }
    case HMD_ACT_SILU: {
        const double e = exp(x >= 0 ? -x : x);
        const double sig = x >= 0 ? 1 / (1 + e) : e / (1 + e);
        const double dsig = sig * (1 - sig);
        *y = x * hmd_sigmoid(x);
        *d1 = sig + x * sig * (1 - sig);
        *d2 = 2 * dsig + x * dsig * (1 - 2 * sig);
        return;
    }
    }
    *y = x;
    *d1 = 1;
    *d2 = 0;
}

/* The skip connection DeePMD-kit's tabulation assumes for a layer (widths only). */
static enum hmd_resnet tabulate_skip(const struct hmd_dense *L)
{
    if (L->n_out == L->n_in) {
        return HMD_RESNET_SAME;
    }
    if (L->n_out == 2 * L->n_in) {
        return HMD_RESNET_DOUBLE;
    }
    return HMD_RESNET_NONE;
}

/* Value, first and second derivative of every output at x, through all layers. buf holds
 * 6 * max width doubles; the results point into it (each [net->n_out]). */
static void net_d012(const struct hmd_mlp *net, double x, double *buf, int width, const double **v,
                     const double **d1, const double **d2)
{
    double *y = buf, *dy = buf + width, *ddy = buf + 2 * width;
    double *z = buf + 3 * width, *dz = buf + 4 * width, *ddz = buf + 5 * width;
    /* first layer, one input: xbar = x w + b (tabulate_math: unaggregated_dy_dx_s) */
    const struct hmd_dense *L0 = &net->layers[0];
    for (int j = 0; j < L0->n_out; j++) {
        const double w = L0->w[j];
        double a, g1, g2;
        act_d012(L0->act, x * w + (L0->b ? L0->b[j] : 0), &a, &g1, &g2);
        double dj = g1 * w, ddj = g2 * w * w;
        if (L0->idt) {
            a *= L0->idt[j];
            dj *= L0->idt[j];
            ddj *= L0->idt[j];
        }
        y[j] = a;
        dy[j] = dj;
        ddy[j] = ddj;
        if (L0->resnet != HMD_RESNET_NONE) {
            /* n_out is 1 (y + x) or 2 (y + [x, x]): d/dx adds 1, d2/dx2 nothing */
            y[j] += x;
            dy[j] += 1;
        }
    }
    for (int l = 1; l < net->nlayers; l++) {
        const struct hmd_dense *L = &net->layers[l];
        const int k = L->n_in, n = L->n_out;
        for (int j = 0; j < n; j++) {
            double ybar = 0, acc1 = 0, acc2 = 0;
            for (int i = 0; i < k; i++) {
                const double w = L->w[(size_t)i * n + j];
                ybar += y[i] * w;
                acc2 += dy[i] * w;
                acc1 += ddy[i] * w;
            }
            double a, g1, g2;
            act_d012(L->act, ybar + (L->b ? L->b[j] : 0), &a, &g1, &g2);
            /* unaggregated_dy_dx / unaggregated_dy2_dx: dz = act' (dy W),
             * d2z = act' (d2y W) + act'' (dy W)^2 */
            double dj = g1 * acc2, ddj = g1 * acc1 + g2 * acc2 * acc2;
            if (L->idt) {
                a *= L->idt[j];
                dj *= L->idt[j];
                ddj *= L->idt[j];
            }
            z[j] = a;
            dz[j] = dj;
            ddz[j] = ddj;
        }
        if (L->resnet == HMD_RESNET_SAME) {
            for (int j = 0; j < n; j++) {
                z[j] += y[j];
                dz[j] += dy[j];
                ddz[j] += ddy[j];
            }
        } else if (L->resnet == HMD_RESNET_DOUBLE) {
            for (int j = 0; j < n; j++) {
                z[j] += y[j % k];
                dz[j] += dy[j % k];
                ddz[j] += ddy[j % k];
            }
        }
        /* the output becomes the next layer's input */
        double *t;
        t = y, y = z, z = t;
        t = dy, dy = dz, dz = t;
        t = ddy, ddy = ddz, ddz = t;
    }
    *v = y;
    *d1 = dy;
    *d2 = ddy;
}

/* Element i of numpy.arange(start, stop, step) in float64: numpy stores start and start + step,
 * then fills element i >= 2 with start + i * ((start + step) - start). */
static double arange_at(double start, double step, long i)
{
    const double second = start + step;
    if (i == 0) {
        return start;
    }
    if (i == 1) {
        return second;
    }
    return start + (double)i * (second - start);
}

/* Length of numpy.arange(start, stop, step): ceil((stop - start) / step), at least 0. */
static long arange_len(double start, double stop, double step)
{
    const double len = ceil((stop - start) / step);
    return len > 0 ? (long)len : 0;
}

/* DeePMD-kit's quintic coefficients of one interval of width tt from the values (v), first (d)
 * and second (s) derivatives at its ends 0 and 1 (BaseTabulate._build_lower, same expressions).
 */
static void quintic(double tt, double v0, double v1, double d0, double d1, double s0, double s1,
                    double a[6])
{
    const double hh = v1 - v0;
    a[0] = v0;
    a[1] = d0;
    a[2] = 0.5 * s0;
    a[3] = (1 / (2 * tt * tt * tt)) * (20 * hh - (8 * d1 + 12 * d0) * tt - (3 * s0 - s1) * tt * tt);
    a[4] = (1 / (2 * tt * tt * tt * tt)) *
           (-30 * hh + (14 * d1 + 16 * d0) * tt + (3 * s0 - 2 * s1) * tt * tt);
    a[5] =
        (1 / (2 * tt * tt * tt * tt * tt)) * (12 * hh - 6 * (d1 + d0) * tt + (s1 - s0) * tt * tt);
}

/* Fills the derived fields of a table whose lower, upper, max, strides and nspline are set. */
static void set_tail(struct hmd_emb_table *t)
{
    t->n0 = (int)((t->upper - t->lower) / t->stride0);
    /* the C++ kernel's locate_high_tail_xx: the interval holding the double just below max */
    const double edge = nextafter(t->max, t->lower);
    int last = t->n0 + (int)((edge - t->upper) / t->stride1);
    t->last = last < t->nspline - 1 ? last : t->nspline - 1;
    t->last_x = t->max - ((t->last - t->n0) * t->stride1 + t->upper);
}

static int check_net(const struct hmd_mlp *net)
{
    if (net->nlayers < 1 || net->layers[0].n_in != 1) {
        return hmd_error_set(HMD_ECONFIG, "embedding table: the network must have one input");
    }
    for (int l = 0; l < net->nlayers; l++) {
        const struct hmd_dense *L = &net->layers[l];
        if (L->act == HMD_ACT_SILUT) {
            return hmd_error_set(HMD_ENOTSUP,
                                 "embedding table: layer %d: silut cannot be tabulated "
                                 "(DeePMD-kit's compression does not support it either); run "
                                 "the network uncompressed",
                                 l);
        }
        if (L->resnet != tabulate_skip(L)) {
            return hmd_error_set(HMD_ENOTSUP,
                                 "embedding table: layer %d (%d -> %d): its skip connection is "
                                 "not the one DeePMD-kit's tabulation assumes from the widths",
                                 l, L->n_in, L->n_out);
        }
    }
    return HMD_OK;
}

int hmd_emb_table_build(struct hmd_emb_table *table, const struct hmd_mlp *net, double lower,
                        double upper, double extrapolate, double stride0, double stride1,
                        struct hmd_arena *arena)
{
    int rc = check_net(net);
    if (rc) {
        return rc;
    }
    if (!(lower < upper) || !(upper > 0) || !(stride0 > 0) || !(stride1 > 0) ||
        !(extrapolate > 1) || !isfinite(lower) || !isfinite(upper * extrapolate)) {
        return hmd_error_set(HMD_ECONFIG,
                             "embedding table: bad parameters lower %g, upper %g, extrapolate "
                             "%g, strides %g and %g (need lower < upper, upper > 0, "
                             "extrapolate > 1, positive strides)",
                             lower, upper, extrapolate, stride0, stride1);
    }
    const double tmax = extrapolate * upper;
    /* BaseTabulate.build: nspline = ((uu - ll) / stride0 + (extrapolate * uu - uu) / stride1)
     * .astype(int), and the knots are arange(ll, uu, stride0), arange(uu, max, stride1), max */
    const double count = (upper - lower) / stride0 + (tmax - upper) / stride1;
    if (!(count < MAX_INTERVALS)) {
        return hmd_error_set(HMD_ECONFIG,
                             "embedding table: %.3g intervals; use larger strides or a "
                             "narrower range",
                             count);
    }
    const int nspline = (int)count;
    const long nk0 = arange_len(lower, upper, stride0), nk1 = arange_len(upper, tmax, stride1);
    if (nspline < 1 || nk0 + nk1 < nspline) {
        return hmd_error_set(HMD_ECONFIG,
                             "embedding table: %d intervals but %ld knots from lower %g, upper "
                             "%g, max %g, strides %g and %g",
                             nspline, nk0 + nk1 + 1, lower, upper, tmax, stride0, stride1);
    }
    const int M = net->layers[net->nlayers - 1].n_out;
    int width = 1;
    for (int l = 0; l < net->nlayers; l++) {
        width = net->layers[l].n_out > width ? net->layers[l].n_out : width;
    }
    *table = (struct hmd_emb_table){.M = M,
                                    .nspline = nspline,
                                    .lower = lower,
                                    .upper = upper,
                                    .max = tmax,
                                    .stride0 = stride0,
                                    .stride1 = stride1};
    set_tail(table);
    table->coef = hmd_arena_alloc(arena, (size_t)nspline * 6 * (size_t)M * sizeof(double));
    /* scratch: the layer buffers, and the previous knot's value and derivatives */
    double *buf = malloc((6 * (size_t)width + 3 * (size_t)M) * sizeof(double));
    if (!table->coef || !buf) {
        free(buf);
        return hmd_error_set(HMD_ENOMEM, "out of memory for an embedding table (%d x %d)", nspline,
                             M);
    }
    double *pv = buf + 6 * (size_t)width, *pd = pv + M, *ps = pd + M;
    for (long i = 0; i <= nspline; i++) {
        const double x = i < nk0 ? arange_at(lower, stride0, i)
                                 : (i < nk0 + nk1 ? arange_at(upper, stride1, i - nk0) : tmax);
        const double *v, *d, *s;
        net_d012(net, x, buf, width, &v, &d, &s);
        if (i > 0) {
            /* interval i - 1 from knots i - 1 and i; its width as _build_lower's tt */
            const double tt = (i - 1 < table->n0) ? stride0 : stride1;
            double *row = table->coef + (size_t)(i - 1) * 6 * M;
            for (int m = 0; m < M; m++) {
                double a[6];
                quintic(tt, pv[m], v[m], pd[m], d[m], ps[m], s[m], a);
                for (int k = 0; k < 6; k++) {
                    row[(size_t)k * M + m] = a[k];
                }
            }
        }
        memcpy(pv, v, (size_t)M * sizeof(double));
        memcpy(pd, d, (size_t)M * sizeof(double));
        memcpy(ps, s, (size_t)M * sizeof(double));
    }
    free(buf);
    return HMD_OK;
}

/* ---- stored tables --------------------------------------------------------------------------- */

int hmd_emb_table_from_data(struct hmd_emb_table *table, int M, const double *data, int nrows,
                            const double *info, struct hmd_arena *arena)
{
    for (int k = 0; k < 5; k++) {
        if (!isfinite(info[k])) {
            return hmd_error_set(HMD_EDATA, "compress_info[%d] is %g", k, info[k]);
        }
    }
    if (M < 1 || !(info[3] > 0) || !(info[4] > 0) || !(info[0] < info[1]) || !(info[1] < info[2])) {
        return hmd_error_set(HMD_EDATA,
                             "compress_info [%g, %g, %g, %g, %g] (lower, upper, max, stride0, "
                             "stride1) for %d outputs is not a table: need lower < upper < max "
                             "and positive strides; recompress the model",
                             info[0], info[1], info[2], info[3], info[4], M);
    }
    const double count = (info[1] - info[0]) / info[3] + (info[2] - info[1]) / info[4];
    if (!(count < MAX_INTERVALS) || nrows < 1) {
        return hmd_error_set(HMD_EDATA,
                             "compress_data has %d rows for compress_info that implies "
                             "%.3g; recompress the model",
                             nrows, count);
    }
    *table = (struct hmd_emb_table){.M = M,
                                    .nspline = nrows,
                                    .lower = info[0],
                                    .upper = info[1],
                                    .max = info[2],
                                    .stride0 = info[3],
                                    .stride1 = info[4]};
    /* where the kernel would look without the clamp to the rows present */
    const int need = (int)((info[1] - info[0]) / info[3]) +
                     (int)((nextafter(info[2], info[0]) - info[1]) / info[4]) + 1;
    if (nrows != need && nrows != need - 1) {
        return hmd_error_set(HMD_EDATA,
                             "compress_data has %d rows, but compress_info [%g, %g, %g, %g, %g] "
                             "needs %d (lower, upper, max, stride0, stride1); the table and its "
                             "info do not belong together, recompress the model",
                             nrows, info[0], info[1], info[2], info[3], info[4], need);
    }
    set_tail(table);
    if (table->n0 >= nrows) {
        return hmd_error_set(HMD_EDATA,
                             "compress_data has %d rows, fewer than the %d of the "
                             "first stride; recompress the model",
                             nrows, table->n0 + 1);
    }
    table->coef = hmd_arena_alloc(arena, (size_t)nrows * 6 * (size_t)M * sizeof(double));
    if (!table->coef) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for an embedding table (%d x %d)", nrows,
                             M);
    }
    for (int i = 0; i < nrows; i++) {
        const double *src = data + (size_t)i * 6 * M;
        double *row = table->coef + (size_t)i * 6 * M;
        for (int m = 0; m < M; m++) {
            for (int k = 0; k < 6; k++) {
                const double a = src[6 * m + k];
                if (!isfinite(a)) {
                    return hmd_error_set(HMD_EDATA,
                                         "compress_data[%d][%d] (output %d, a%d) is %g; "
                                         "recompress the model",
                                         i, 6 * m + k, m, k, a);
                }
                row[(size_t)k * M + m] = a;
            }
        }
    }
    return HMD_OK;
}

/* ---- the layout in passes of the GPU's compressed kernels ----------------------------------- */

void hmd_emb_table_in_passes(const struct hmd_emb_table *t, int pass, double *out)
{
    const size_t W = (size_t)hmd_emb_table_pass_width(t->M, pass);
    memset(out, 0, sizeof(double) * (size_t)t->nspline * 6 * W);
    for (size_t i = 0; i < (size_t)t->nspline; i++) {
        for (int k = 0; k < 6; k++) {
            const double *a = t->coef + (i * 6 + k) * t->M;
            for (int m = 0; m < t->M; m++) {
                out[(i * W + (size_t)(m / pass * pass)) * 6 + (size_t)k * pass + m % pass] = a[m];
            }
        }
    }
}

/* ---- evaluation ------------------------------------------------------------------------------ */

HMD_CPU_CLONES
void hmd_emb_table_eval(const struct hmd_emb_table *table, int rows, const double *x, double *g,
                        double *dg)
{
    const int M = table->M;
    for (int r = 0; r < rows; r++) {
        double xr, delta;
        const int i = hmd_emb_table_locate(table, x[r], &xr, &delta);
        const double *a0 = table->coef + (size_t)i * 6 * M;
        const double *a1 = a0 + M, *a2 = a1 + M, *a3 = a2 + M, *a4 = a3 + M, *a5 = a4 + M;
        double *gr = g + (size_t)r * M;
        /* tabulate.cc: polynomial5 + polynomial5_grad * extrapolate_delta, Horner in its order */
        double *dgr = dg ? dg + (size_t)r * M : NULL;
        for (int m = 0; m < M; m++) {
            const double p =
                a0[m] + (a1[m] + (a2[m] + (a3[m] + (a4[m] + a5[m] * xr) * xr) * xr) * xr) * xr;
            const double dp =
                a1[m] + (2 * a2[m] + (3 * a3[m] + (4 * a4[m] + 5 * a5[m] * xr) * xr) * xr) * xr;
            gr[m] = p + dp * delta;
            if (dgr) {
                dgr[m] = dp;
            }
        }
    }
}
