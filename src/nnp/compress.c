#include "nnp/compress.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "nnp/env_mat.h"
#include "nnp/se_e2_a.h"

/* One table per se_e2_a embedding net, over the range DeePMD-kit gives that net. */
static int compress_se_e2_a(struct hmd_dp_model *m, const struct hmd_compress_opts *o,
                            const double *lower, const double *upper)
{
    struct hmd_se_e2_a *se = &m->se;
    const int nt = m->ntypes;
    se->table = hmd_arena_alloc(&m->arena, (size_t)se->nemb * sizeof *se->table);
    if (!se->table) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the compression tables");
    }
    for (int k = 0; k < se->nemb; k++) {
        se->table[k] = (struct hmd_emb_table){0};
        if (se->emb[k].nlayers == 0) {
            continue; /* an excluded pair's absent net */
        }
        double lo = INFINITY, up = -INFINITY;
        if (se->type_one_side) {
            /* DeePMD-kit: over the centre types with sel > 0, sel indexed by the centre type */
            for (int t = 0; t < nt; t++) {
                if (se->sel[t] > 0) {
                    lo = lower[t] < lo ? lower[t] : lo;
                    up = upper[t] > up ? upper[t] : up;
                }
            }
        } else {
            const int ti = k % nt; /* net k = ti + tau * ntypes */
            lo = lower[ti];
            up = upper[ti];
        }
        int rc = hmd_emb_table_build(&se->table[k], &se->emb[k], lo, up, o->extrapolate, o->stride0,
                                     o->stride1, &m->arena);
        if (rc) {
            se->table = NULL;
            return rc;
        }
    }
    /* the padding's share of T follows the tables */
    return hmd_se_e2_a_prepare(m);
}

/* The DPA-1 geometric net over the smallest lower and largest upper of all centre types. */
static int compress_dpa1(struct hmd_dp_model *m, const struct hmd_compress_opts *o,
                         const double *lower, const double *upper)
{
    struct hmd_dpa1 *d = &m->dpa1;
    if (!d->strip) {
        return hmd_error_set(HMD_ENOTSUP,
                             "model-compress: DPA-1 in concat mode (tebd_input_mode = concat) "
                             "cannot be tabulated; DeePMD-kit compresses strip mode "
                             "(se_atten_v2) only");
    }
    m->compression.geometric = d->nlayers == 0;
    if (!m->compression.geometric) {
        return HMD_OK; /* the type part is the strip table halomd always precomputes */
    }
    double lo = INFINITY, up = -INFINITY;
    for (int t = 0; t < m->ntypes; t++) {
        lo = lower[t] < lo ? lower[t] : lo;
        up = upper[t] > up ? upper[t] : up;
    }
    struct hmd_emb_table *table = hmd_arena_alloc(&m->arena, sizeof *table);
    if (!table) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the compression table");
    }
    int rc = hmd_emb_table_build(table, &d->emb, lo, up, o->extrapolate, o->stride0, o->stride1,
                                 &m->arena);
    d->table = rc ? NULL : table;
    return rc;
}

int hmd_model_compress(struct hmd_dp_model *m, const struct hmd_compress_opts *opts)
{
    if (m->compression.on) {
        return HMD_OK;
    }
    const double dmin = opts->min_nbor_dist > 0 ? opts->min_nbor_dist : m->min_nbor_dist;
    if (!(dmin > 0)) {
        return hmd_error_set(HMD_ECONFIG,
                             "model-compress: the model does not record min_nbor_dist (the "
                             "closest neighbour distance of its training data); set "
                             "compress-min-nbor-dist");
    }
    if (!(opts->extrapolate > 1) || !(opts->stride0 > 0) || !(opts->stride1 > 0)) {
        return hmd_error_set(HMD_ECONFIG,
                             "model-compress: extrapolate %g must exceed 1 and the strides %g, "
                             "%g must be positive",
                             opts->extrapolate, opts->stride0, opts->stride1);
    }
    const bool se = m->kind == HMD_DESCRIPTOR_SE_E2_A;
    const double *davg = se ? m->se.davg : m->dpa1.davg, *dstd = se ? m->se.dstd : m->dpa1.dstd;
    const int nnei = se ? m->se.nnei : m->dpa1.nnei;
    double *lower = malloc(2 * (size_t)m->ntypes * sizeof *lower);
    if (!lower) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the compression range");
    }
    double *upper = lower + m->ntypes;
    int rc =
        hmd_emb_table_range(davg, dstd, m->ntypes, nnei, m->rcut, m->rcut_smth, dmin, lower, upper);
    if (!rc) {
        rc = se ? compress_se_e2_a(m, opts, lower, upper) : compress_dpa1(m, opts, lower, upper);
    }
    free(lower);
    if (rc) {
        return rc;
    }
    m->compression = (struct hmd_compression){
        .on = true,
        .from_file = false,
        .geometric = se || m->compression.geometric,
        .extrapolate = opts->extrapolate,
        .stride0 = opts->stride0,
        .stride1 = opts->stride1,
        .min_nbor_dist = dmin,
    };
    return HMD_OK;
}

/* The table an (i, j) pair's input goes through, or NULL. */
static const struct hmd_emb_table *pair_table(const struct hmd_dp_model *m, int ti, int tj)
{
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        return m->dpa1.table;
    }
    if (!m->se.table) {
        return NULL;
    }
    const struct hmd_emb_table *t = &m->se.table[m->se.type_one_side ? tj : ti + tj * m->ntypes];
    return t->M > 0 ? t : NULL;
}

void hmd_compress_overflow(const struct hmd_dp_model *m, int nlocal, const double *x,
                           const int *type, const struct hmd_nbr_list *nl, long counts[2])
{
    const bool se = m->kind == HMD_DESCRIPTOR_SE_E2_A;
    const double *davg = se ? m->se.davg : m->dpa1.davg, *dstd = se ? m->se.dstd : m->dpa1.dstd;
    const int nnei = se ? m->se.nnei : m->dpa1.nnei;
    for (int i = 0; i < nlocal; i++) {
        const int ti = type[i];
        const double avg = davg[(size_t)ti * nnei * 4], std = dstd[(size_t)ti * nnei * 4];
        for (int k = nl->offset[i]; k < nl->offset[i + 1]; k++) {
            const int j = nl->index[k];
            const struct hmd_emb_table *t = pair_table(m, ti, type[j]);
            double d[3], row[4];
            for (int c = 0; c < 3; c++) {
                d[c] = x[3 * j + c] - x[3 * i + c];
            }
            if (!t || d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > m->rcut * m->rcut) {
                continue;
            }
            hmd_env_row(d, m->rcut_smth, m->rcut, m->env_protection, row, NULL);
            const double in = (row[0] - avg) / std;
            counts[0] += in >= t->upper;
            counts[1] += in >= t->max;
        }
    }
}
