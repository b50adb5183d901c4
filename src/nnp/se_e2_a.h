/* se_e2_a descriptor, CPU reference in double: one centre atom at a time.
 *
 * Forward (deepmd/dpmodel/descriptor/se_e2_a.py):
 *     R_ij  = (row(d_ij) - davg[t_i, j]) / dstd[t_i, j]        real slot j
 *           = -davg[t_i, j] / dstd[t_i, j]                    padded slot (NOT zero)
 *           = 0                                               real slot of an excluded pair
 *     g_ij  = N_{net(t_i, tau_j)}(R_ij[0])                    (M values)
 *     T_i   = (1/Nc) sum_j g_ij (x) R_ij                      (M x 4, Nc = sum(sel))
 *     D_i   = T_i T_i[:M2]^T                                  (M x M2, flattened a*M2 + b)
 * Backward: given dE/dD_i, the gradient dE/dd_ij (eV/Å) for each real slot, through both the
 * direct R dependence and the embedding input. The embedding's derivative with respect to its
 * single input is carried along in the forward pass (forward-mode), so the backward pass needs
 * no second evaluation of the networks: per real slot the forward keeps g, dg/ds and R.
 *
 * Slots come from hmd_dp_format_neighbors (nnp/dp_eval.h): slot j of type block tau holds the
 * index of a neighbour (into the nall arrays) or -1.
 */
#ifndef HMD_NNP_SE_E2_A_H
#define HMD_NNP_SE_E2_A_H

#include <stddef.h>

#include "nnp/model.h"

/* Per-thread scratch for the functions below; sizes depend on the model only. */
struct hmd_se_e2_a_scratch {
    double *R;     /* [nnei][4] normalised environment rows */
    double *input; /* [max sel] embedding inputs of one block */
    double *work;  /* embedding forward (value and tangent) */
    double *gamma; /* [M][4] dE/dT / Nc */
    int *rows;     /* [max sel] slot of each embedding row */
};

/* Precomputes the padding's share of T (model->se.pad_sum): an empty slot's row R = -davg/dstd
 * depends only on the centre type and the slot, so its embedding is a model constant. Call
 * once after loading. HMD_ENOMEM on failure. */
int hmd_se_e2_a_prepare(struct hmd_dp_model *m);

/* Doubles the forward pass keeps per atom for the backward pass: per slot g, dg/ds (M each)
 * and R (4). */
size_t hmd_se_e2_a_keep_doubles(const struct hmd_dp_model *m);

/* Doubles and ints a scratch needs. */
size_t hmd_se_e2_a_scratch_doubles(const struct hmd_dp_model *m);
size_t hmd_se_e2_a_scratch_ints(const struct hmd_dp_model *m);

/* Carves a scratch out of `dbuf` (hmd_se_e2_a_scratch_doubles) and `ibuf` (..._ints). */
void hmd_se_e2_a_scratch_init(struct hmd_se_e2_a_scratch *s, const struct hmd_dp_model *m,
                              double *dbuf, int *ibuf);

/* Forward for centre atom i (type ti) with neighbour slots `slots` [nnei] into the positions x
 * [nall][3] (Å): writes T [M][4], the descriptor D [M * M2], and what the backward pass needs
 * into keep (hmd_se_e2_a_keep_doubles). */
void hmd_se_e2_a_forward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                         const double *x, struct hmd_se_e2_a_scratch *s, double *T, double *D,
                         double *keep);

/* Backward for the same atom: given T and keep from the forward pass and dE/dD [M * M2],
 * writes grad[j][3] = dE/dd_ij (eV/Å) for every slot j (zero for padded and excluded slots). */
void hmd_se_e2_a_backward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                          const double *x, struct hmd_se_e2_a_scratch *s, const double *T,
                          const double *dD, const double *keep, double *grad);

#endif /* HMD_NNP_SE_E2_A_H */
