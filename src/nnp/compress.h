/* Model compression: the embedding nets of a loaded model replaced by quintic tables
 * (nnp/tabulate.h), as DeePMD-kit's `dp compress` does, either built here from the networks or
 * taken from a compressed .dp file (src/io/model_dp.c).
 *
 * se_e2_a: one table per embedding net. DPA-1 (se_atten_v2 / strip mode): the geometric
 * embedding net is tabulated when there are no attention layers; with attention layers only the
 * type part is compressed in DeePMD-kit, and halomd precomputes that part for every model.
 * DPA-1 in concat mode cannot be compressed (DeePMD-kit refuses it as well).
 */
#ifndef HMD_NNP_COMPRESS_H
#define HMD_NNP_COMPRESS_H

#include "nbr/nbr_list.h"
#include "nnp/model.h"

/* What `dp compress` takes: -e extrapolate, -s stride (the second part uses 10 x stride). */
struct hmd_compress_opts {
    double extrapolate;   /* table end = upper * extrapolate (DeePMD-kit default 5) */
    double stride0;       /* knot spacing of the first part (default 0.01) */
    double stride1;       /* knot spacing of the second part (default 0.1) */
    double min_nbor_dist; /* Å; 0: the model's own (model->min_nbor_dist) */
};

/* Tabulates the embedding nets of `m` in place and records the settings in m->compression.
 * The range of each table follows DeePMD-kit (hmd_emb_table_range; DPA-1: the smallest lower
 * and largest upper over all centre types). A model that is already compressed (tables from
 * its file) is left as it is.
 *
 * Returns HMD_OK, HMD_ENOMEM, HMD_ECONFIG (no min_nbor_dist in the model nor in `opts`; bad
 * strides or extrapolate) or HMD_ENOTSUP (DPA-1 concat mode; an activation DeePMD-kit cannot
 * tabulate), with a message naming the parameter. */
int hmd_model_compress(struct hmd_dp_model *m, const struct hmd_compress_opts *opts);

/* DeePMD-kit's overflow check (dp compress -f, check_frequency): over every neighbour j within
 * rcut of the home atoms 0..nlocal-1 of the list `nl`, the embedding input
 * x = (s(r)/r - davg[t_i][0][0]) / dstd[t_i][0][0] against the table of its net:
 * counts[0] += inputs with x >= upper (a neighbour closer than the min_nbor_dist the table was
 * made for: served by the coarse second part), counts[1] += inputs with x >= max (beyond the
 * table: extrapolated linearly). x [nall][3] (Å), type [nall] model types. Adds nothing when the
 * model has no geometric tables. */
void hmd_compress_overflow(const struct hmd_dp_model *m, int nlocal, const double *x,
                           const int *type, const struct hmd_nbr_list *nl, long counts[2]);

#endif /* HMD_NNP_COMPRESS_H */
