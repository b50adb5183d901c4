/* Dense networks of DeePMD-kit (embedding, fitting and type-embedding nets), CPU reference in
 * double, batched over rows (neighbours or atoms).
 *
 * One layer (deepmd/dpmodel/utils/network.py::NativeLayer):
 *     y = act(x W + b) * idt  (+ x when n_out == n_in, + [x, x] when n_out == 2 n_in, if resnet)
 * with b and idt optional. The backward pass returns dE/dx given dE/dy; weight gradients are
 * never needed for inference.
 */
#ifndef HMD_NNP_MLP_H
#define HMD_NNP_MLP_H

#include <stddef.h>

#include "core/arena.h"
#include "nnp/activation.h"

enum hmd_resnet {
    HMD_RESNET_NONE,   /* no skip connection */
    HMD_RESNET_SAME,   /* y += x            (n_out == n_in) */
    HMD_RESNET_DOUBLE, /* y += [x, x]       (n_out == 2 n_in) */
};

struct hmd_dense {
    int n_in, n_out;
    double *w;   /* weights [n_in][n_out], row-major (borrowed from the model's storage) */
    double *b;   /* bias [n_out], or NULL */
    double *idt; /* timestep scale [n_out], or NULL */
    enum hmd_activation act;
    struct hmd_act_silut silut; /* parameters when act == HMD_ACT_SILUT */
    enum hmd_resnet resnet;     /* skip connection actually applied (resolved from widths) */
    /* copies laid out for the kernels of nnp/vmath.h, made by hmd_mlp_pack */
    double *wp;  /* w as [n_in][hmd_gemm_padded(n_out)], zero columns at the end */
    double *wtp; /* w^T as [n_out][hmd_gemm_padded(n_in)] */
    double *bp;  /* b padded to hmd_gemm_padded(n_out) (zeros when there is no bias) */
};

struct hmd_mlp {
    int nlayers;
    struct hmd_dense *layers; /* [nlayers], owned by the model */
    int n_in, n_out;          /* widths of the first input and the last output */
    int width_sum;            /* sum of n_out over layers: per-row doubles of saved state */
};

/* Makes the packed weight copies (wp, wtp, bp) of every layer in `arena`; call once after the
 * weights are set. HMD_ENOMEM on failure. */
int hmd_mlp_pack(struct hmd_mlp *net, struct hmd_arena *arena);

/* Doubles of scratch hmd_mlp_forward() needs for `rows` rows (layer outputs). */
size_t hmd_mlp_work_size(const struct hmd_mlp *net, int rows);

/* Evaluates the network on x[rows][n_in]. Layer outputs go to work (hmd_mlp_work_size doubles);
 * when `saved` (rows * width_sum doubles) is not NULL it receives what hmd_mlp_backward()
 * needs. Returns a pointer into work holding y[rows][n_out]. */
const double *hmd_mlp_forward(const struct hmd_mlp *net, int rows, const double *x, double *work,
                              double *saved);

/* Forward pass together with the directional derivative of every output along the input
 * tangent dx[rows][n_in] (forward-mode differentiation); dx NULL means 1 for a one-input net
 * (an embedding net's derivative with respect to its input). `work` needs
 * hmd_mlp_tangent_work_size() doubles; *y and *dy point into it on return (y[rows][n_out],
 * dy[rows][n_out]). */
void hmd_mlp_forward_tangent(const struct hmd_mlp *net, int rows, const double *x, const double *dx,
                             double *work, const double **y, const double **dy);

/* Doubles of `work` hmd_mlp_forward_tangent() needs. */
size_t hmd_mlp_tangent_work_size(const struct hmd_mlp *net, int rows);

/* Given dE/dy[rows][n_out] and the `saved` state of the forward pass on the same rows, writes
 * dE/dx[rows][n_in] to dx. `work` needs hmd_mlp_backward_work_size() doubles. dy is not
 * modified. */
void hmd_mlp_backward(const struct hmd_mlp *net, int rows, const double *saved, const double *dy,
                      double *dx, double *work);

/* Doubles of `work` hmd_mlp_backward() needs. */
size_t hmd_mlp_backward_work_size(const struct hmd_mlp *net, int rows);

/* Number of parameters (w, b, idt) of the network. */
long hmd_mlp_param_count(const struct hmd_mlp *net);

#endif /* HMD_NNP_MLP_H */
