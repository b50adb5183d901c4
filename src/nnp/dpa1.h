/* DPA-1 (se_atten) descriptor, CPU reference in double: one centre atom at a time.
 *
 * Forward (deepmd/pt/model/descriptor/se_atten.py, which wrote our goldens), for the nnei
 * slots of centre i (nearest neighbours of any type within rcut, padding -1 at the end):
 *   R_j   = (row(d_ij) - davg[t_i, j]) / dstd[t_i, j]; padding: -davg/dstd; an excluded type
 *           pair: 0. sw_j = s(r_ij) for real neighbours, 0 otherwise.
 *   G_j   = N_emb([R_j0, TE[t_j], TE[t_i]])         concat (one side: without TE[t_i])
 *         = g_s (1 + gate(t_i, t_j) (sw_j if smooth)) strip, g_s = N_emb(R_j0)
 *           padding and excluded slots take t_j = the type of atom 0 (DeePMD-kit's quirk)
 *   per attention layer: [Q | K | V] = G W_in + b_in (rows normalised if `normalize`),
 *           S = scaling Q K^T, smooth: S' = (S + 20) sw_j sw_k - 20, else masked columns -inf,
 *           A = softmax_k(S'), rows of masked slots zeroed, A *= sw_j sw_k (smooth),
 *           A *= rhat_j . rhat_k (dotr, rhat = R[1:4] / max(|R[1:4]|, 1e-12)),
 *           G <- LayerNorm(G + (A V) W_out + b_out)
 *   T     = (1/nnei) sum_j G_j (x) R_j,  D = T T[:M2]^T,  descriptor = [D, TE[t_i]]
 * Padding and excluded slots do not see the real ones (their attention rows are zero), so
 * only real neighbours enter the attention; the padding's share of T is a table computed per
 * run (hmd_dpa1_pad_table). Backward: the analytic reverse pass, through the layer norms, the
 * projections, the softmax, the switch and the dotr gate, to dE/dd_ij (see docs/models.md).
 */
#ifndef HMD_NNP_DPA1_H
#define HMD_NNP_DPA1_H

#include <stddef.h>

#include "nnp/model.h"

/* The state of one atom (forward tensors of every layer and backward buffers), carved from one
 * buffer; sizes depend on the model only. hmd_dpa1_forward leaves the atom's state in it for
 * hmd_dpa1_backward. */
struct hmd_dpa1_scratch {
    const struct hmd_dp_model *m;
    double *buf; /* hmd_dpa1_scratch_doubles() doubles, borrowed */
    int *ibuf;   /* hmd_dpa1_scratch_ints() ints, borrowed */
    int rows;    /* real neighbours of the latest forward */
};

size_t hmd_dpa1_scratch_doubles(const struct hmd_dp_model *m);
size_t hmd_dpa1_scratch_ints(const struct hmd_dp_model *m);

/* Doubles of the padding table: ntypes * (nnei + 1) * M * 4. */
size_t hmd_dpa1_pad_table_doubles(const struct hmd_dp_model *m);

/* Fills `table` with the padding's share of T (not yet divided by nnei): for centre type ti
 * and n filled slots, the M x 4 sum over the empty slots n..nnei-1 of G_pad (x) R_pad, at
 * ((ti * (nnei + 1) + n) * M * 4). `pad_type` is the type of the system's atom 0, which
 * DeePMD-kit gives to empty slots. `s` is a scratch for the evaluation. */
void hmd_dpa1_pad_table(const struct hmd_dp_model *m, int pad_type, struct hmd_dpa1_scratch *s,
                        double *table);

/* Forward for centre atom i (type ti) with neighbour slots `slots` [nnei] into positions x
 * [nall][3] (Å) and types [nall]: writes T [M][4] and the descriptor D [dim_descrpt] (the
 * type embedding of ti at the end when concat_output_tebd), and keeps every layer's tensors in
 * `s` for hmd_dpa1_backward. */
void hmd_dpa1_forward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                      const double *x, const int *type, int pad_type, const double *pad_table,
                      struct hmd_dpa1_scratch *s, double *T, double *D);

/* Backward for the atom (type ti) whose hmd_dpa1_forward ran last into `s`, from its T [M][4]:
 * writes grad[j][3] = dE/dd_ij (eV/Å) for every slot (zero for padding and excluded pairs),
 * given dE/dD [dim_descrpt] (the type-embedding part is a constant and is ignored). */
void hmd_dpa1_backward(const struct hmd_dp_model *m, int ti, struct hmd_dpa1_scratch *s,
                       const double *T, const double *dD, double *grad);

#endif /* HMD_NNP_DPA1_H */
