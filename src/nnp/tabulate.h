/* Tabulated ("compressed") embedding nets, built and evaluated as DeePMD-kit's model
 * compression does (`dp compress`; DeePMD-kit 3.2.0: deepmd/utils/tabulate.py,
 * deepmd/utils/tabulate_math.py, deepmd/dpmodel/utils/tabulate.py and the C++ kernel
 * source/lib/src/tabulate.cc).
 *
 * An embedding net G: x -> R^M of one input (x = the normalised s(r)/r of a neighbour,
 * dimensionless) is replaced by a piecewise quintic polynomial. The table has two parts with
 * uniform knots: [lower, upper) with stride0 and [upper, max) with stride1, max = upper *
 * extrapolate. On interval i (start x_i, width h_i) and for output m,
 *     g_m(x) = a0 + a1 x' + a2 x'^2 + a3 x'^3 + a4 x'^4 + a5 x'^5,   x' = x - x_i,
 * the quintic Hermite interpolant that matches G, G' and G'' at both ends of the interval.
 * Outside [lower, max) DeePMD-kit 3.2.0 extrapolates linearly (C1) from the nearest end:
 *     g = p(x') + p'(x') (x - edge),  dg/dx = p'(x'),
 * with x' = 0 in interval 0 below lower, and x' = the offset of max in the last interval at and
 * beyond max. (Releases before 3.2.0, which brought PR #5601, returned p(0) of the first or the
 * last interval there instead: constant outside, and a jump at max.)
 */
#ifndef HMD_NNP_TABULATE_H
#define HMD_NNP_TABULATE_H

#include "core/arena.h"
#include "nnp/activation.h"
#include "nnp/mlp.h"

struct hmd_emb_table {
    int M;          /* outputs per input (the embedding width, neuron[-1]) */
    int nspline;    /* intervals of the table (rows of coef) */
    int n0;         /* intervals in the first part, int((upper - lower) / stride0) */
    int last;       /* interval evaluated at and beyond max */
    double lower;   /* start of the table (dimensionless, like x) */
    double upper;   /* end of the first part, start of the second */
    double max;     /* end of the table, upper * extrapolate */
    double stride0; /* interval width in the first part */
    double stride1; /* interval width in the second part */
    double last_x;  /* offset x' of max inside interval `last` */
    double *coef;   /* [nspline][6][M]: a_k of output m on interval i at coef[(6 i + k) M + m];
                       owned by the arena given to the build or from_data call */
};

/* Range [lower, upper] of the embedding input, per centre type, as DeePMD-kit's
 * BaseTabulate._get_env_mat_range (descriptor kind "A", se_e2_a) computes it:
 *     lower[t] = floor(min_c(-davg[t][0][c] / dstd[t][0][c])),
 *     upper[t] = ceil(max_c((sw(d) / d - davg[t][0][c]) / dstd[t][0][c])),
 * over the 4 columns c of neighbour slot 0, with d = min_nbor_dist (Å) and sw DeePMD-kit's
 * quintic switch between rcut_smth and rcut (Å). davg, dstd: [ntypes][nnei][4] (the descriptor's
 * statistics, borrowed); lower, upper: [ntypes], written.
 *
 * This is what the PyTorch and numpy backends (`dp --pt compress`) do with their
 * [ntypes][nnei][4] statistics; the TensorFlow backend, whose statistics are [ntypes][4 nnei],
 * uses the first column only. With DeePMD-kit's statistics the three angular columns have mean
 * 0 and a smaller deviation, so they usually set `upper`.
 *
 * One table per embedding net: with type_one_side, DeePMD-kit gives the table of neighbour type
 * tau the smallest lower and the largest upper over the centre types t with sel[t] > 0 (sic:
 * sel indexed by the centre type); with two-side nets, the table (t_i, tau) uses lower[t_i] and
 * upper[t_i]. (DeePMD-kit 3.2.0 also means to skip excluded pairs there, but compares tuples
 * with the lists it stores, so in effect it never does.)
 *
 * Returns HMD_OK, HMD_ECONFIG (min_nbor_dist not positive, ntypes or nnei < 1) or HMD_EDATA (a
 * zero or non-finite dstd, a non-finite davg). */
int hmd_emb_table_range(const double *davg, const double *dstd, int ntypes, int nnei, double rcut,
                        double rcut_smth, double min_nbor_dist, double *lower, double *upper);

/* Tabulates the one-input network `net` (borrowed; read only during the call) as DeePMD-kit's
 * DPTabulate does: knots at numpy.arange(lower, upper, stride0), then numpy.arange(upper, max,
 * stride1), then max = upper * extrapolate, with numpy's own arange arithmetic; nspline =
 * int((upper - lower) / stride0 + (max - upper) / stride1) intervals; G, G' and G'' at every knot
 * by forward propagation of the derivatives through each layer (activation derivatives as
 * DeePMD-kit writes them); DeePMD-kit's quintic coefficients. DeePMD-kit's default parameters
 * are extrapolate 5, stride0 0.01, stride1 0.1; lower and upper come from hmd_emb_table_range.
 *
 * Skip connections follow DeePMD-kit's rule, y += x when a layer keeps the width and y += [x, x]
 * when it doubles it (the layers must say the same in `resnet`). The idt scale of resnet_dt
 * layers multiplies the activation's value and derivatives, so the table follows the network;
 * DeePMD-kit 3.2.0 ignores idt here (its TensorFlow backend refuses such models, the others
 * silently tabulate the network without idt).
 *
 * On success `table` describes a table whose coefficients live in `arena`. Returns HMD_OK,
 * HMD_ENOMEM, HMD_ECONFIG (net input width not 1; lower >= upper; upper <= 0; stride0, stride1
 * not positive; extrapolate <= 1; more than 10^8 intervals) or HMD_ENOTSUP (silut, which
 * DeePMD-kit cannot tabulate either; skip connections other than DeePMD-kit's rule). */
int hmd_emb_table_build(struct hmd_emb_table *table, const struct hmd_mlp *net, double lower,
                        double upper, double extrapolate, double stride0, double stride1,
                        struct hmd_arena *arena);

/* Fills `table` from a table stored by DeePMD-kit (a compressed model's compress_data and
 * compress_info of one embedding net). data: [nrows][6 M], for output m the coefficients a0..a5
 * at columns 6 m .. 6 m + 5 (borrowed; copied into the arena, transposed to the layout above);
 * info: [lower, upper, max, stride0, stride1, check_frequency] (check_frequency unused).
 *
 * Returns HMD_OK, HMD_ENOMEM or HMD_EDATA (M < 1; non-finite or inconsistent info: strides not
 * positive, lower >= upper or upper >= max; nrows not what info implies; a non-finite
 * coefficient), with a message that names the mismatch. nrows must be `last` + 1, `last` being
 * the interval DeePMD-kit's kernel locates just below max, or `last` when (max - upper) /
 * stride1 is not a whole number and DeePMD-kit's row count falls one short (then the final
 * partial interval is served by the row before it, as DeePMD-kit's numpy evaluation does). */
int hmd_emb_table_from_data(struct hmd_emb_table *table, int M, const double *data, int nrows,
                            const double *info, struct hmd_arena *arena);

/* The table's width in passes of `pass` outputs: M rounded up to a multiple of pass. */
HMD_HD static inline int hmd_emb_table_pass_width(int M, int pass)
{
    return (M + pass - 1) / pass * pass;
}

/* The coefficients of table t laid out in passes of `pass` outputs, as the GPU's compressed
 * kernels read them (a coefficient's stride a constant): with W = hmd_emb_table_pass_width(M,
 * pass), out[(i W + p pass) 6 + k pass + r] = a_k of output p pass + r on interval i, zero for
 * outputs at and beyond M. out holds nspline 6 W doubles. */
void hmd_emb_table_in_passes(const struct hmd_emb_table *t, int pass, double *out);

/* Evaluates the table at x[rows] (dimensionless): g[rows][M] and, when dg is not NULL,
 * dg[rows][M] = d g / d x, exactly as DeePMD-kit's tabulate_fusion_se_a kernel forms them
 * (interval location by hmd_emb_table_locate, Horner's rule, C1 extrapolation). A NaN x gives
 * NaN outputs. */
void hmd_emb_table_eval(const struct hmd_emb_table *table, int rows, const double *x, double *g,
                        double *dg);

/* DeePMD-kit's locate_xx (tabulate.cc): the interval of x, with *xr the offset from its start
 * and *delta the distance beyond the table that is extrapolated linearly (0 inside):
 *   x < lower:          interval 0, x' = 0, delta = x - lower;
 *   lower <= x < upper: i = (int)((x - lower) / stride0), x' = x - (i stride0 + lower);
 *   upper <= x < max:   i = n0 + (int)((x - upper) / stride1), x' = x - ((i - n0) stride1 +
 *                       upper);
 *   x >= max (or NaN):  interval `last`, x' = last_x, delta = x - max.
 * The second-part index is clamped to `last`, as DeePMD-kit's numpy evaluation does (the C++
 * kernel needs no clamp on the tables DeePMD-kit builds). */
HMD_HD static inline int hmd_emb_table_locate(const struct hmd_emb_table *t, double x, double *xr,
                                              double *delta)
{
    *delta = 0.0;
    if (x < t->lower) {
        *xr = 0.0;
        *delta = x - t->lower;
        return 0;
    }
    if (x < t->upper) {
        int i = (int)((x - t->lower) / t->stride0);
        *xr = x - (i * t->stride0 + t->lower);
        return i;
    }
    if (x < t->max) {
        int i = t->n0 + (int)((x - t->upper) / t->stride1);
        i = i < t->last ? i : t->last;
        *xr = x - ((i - t->n0) * t->stride1 + t->upper);
        return i;
    }
    *xr = t->last_x;
    *delta = x - t->max;
    return t->last;
}

#endif /* HMD_NNP_TABULATE_H */
