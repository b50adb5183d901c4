#include "nnp/mlp.h"

#include <string.h>

#include "core/error.h"
#include "nnp/vmath.h"

int hmd_mlp_pack(struct hmd_mlp *net, struct hmd_arena *arena)
{
    for (int l = 0; l < net->nlayers; l++) {
        struct hmd_dense *L = &net->layers[l];
        const int k = L->n_in, n = L->n_out;
        const int n_pad = hmd_gemm_padded(n), k_pad = hmd_gemm_padded(k);
        L->wp = hmd_arena_alloc(arena, (size_t)k * n_pad * sizeof(double));
        L->wtp = hmd_arena_alloc(arena, (size_t)n * k_pad * sizeof(double));
        L->bp = hmd_arena_alloc(arena, (size_t)n_pad * sizeof(double));
        if (!L->wp || !L->wtp || !L->bp) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for network weights");
        }
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < n; j++) {
                L->wp[(size_t)i * n_pad + j] = L->w[(size_t)i * n + j];
                L->wtp[(size_t)j * k_pad + i] = L->w[(size_t)i * n + j];
            }
        }
        for (int j = 0; j < n && L->b; j++) {
            L->bp[j] = L->b[j];
        }
    }
    return HMD_OK;
}

size_t hmd_mlp_work_size(const struct hmd_mlp *net, int rows)
{
    return (size_t)rows * (size_t)net->width_sum;
}

static int max_width(const struct hmd_mlp *net)
{
    int m = net->n_in;
    for (int l = 0; l < net->nlayers; l++) {
        if (net->layers[l].n_out > m) {
            m = net->layers[l].n_out;
        }
    }
    return m;
}

size_t hmd_mlp_backward_work_size(const struct hmd_mlp *net, int rows)
{
    return 3 * (size_t)rows * (size_t)max_width(net);
}

/* phi = act(z) over n values; tanh takes the vectorised path. */
static void activate(const struct hmd_dense *L, size_t n, const double *z, double *phi)
{
    if (L->act == HMD_ACT_TANH) {
        hmd_vtanh((int)n, z, phi);
    } else {
        for (size_t e = 0; e < n; e++) {
            phi[e] = hmd_act(L->act, &L->silut, z[e]);
        }
    }
}

/* d phi / d z over n values, from what hmd_act_keeps_output says was kept. */
static void activation_grad(const struct hmd_dense *L, size_t n, const double *kept, double *g)
{
    if (L->act == HMD_ACT_TANH) {
        for (size_t e = 0; e < n; e++) {
            g[e] = 1.0 - kept[e] * kept[e];
        }
    } else {
        for (size_t e = 0; e < n; e++) {
            g[e] = hmd_act_grad(L->act, &L->silut, kept[e]);
        }
    }
}

/* y = phi * idt + skip(x), row by row (y holds phi on entry). */
static void scale_and_skip(const struct hmd_dense *L, int rows, const double *x, double *y)
{
    const int n = L->n_out, k = L->n_in;
    for (int r = 0; r < rows; r++) {
        double *yr = y + (size_t)r * n;
        const double *xr = x + (size_t)r * k;
        if (L->idt) {
            for (int j = 0; j < n; j++) {
                yr[j] *= L->idt[j];
            }
        }
        if (L->resnet == HMD_RESNET_SAME) {
            for (int j = 0; j < n; j++) {
                yr[j] += xr[j];
            }
        } else if (L->resnet == HMD_RESNET_DOUBLE) {
            for (int j = 0; j < k; j++) {
                yr[j] += xr[j];
                yr[j + k] += xr[j];
            }
        }
    }
}

static void dense_forward(const struct hmd_dense *L, int rows, const double *x, double *y,
                          double *saved)
{
    const size_t n = (size_t)rows * L->n_out;
    hmd_gemm_bias(rows, L->n_in, L->n_out, x, NULL, L->wp, L->bp, y, NULL);
    if (saved && !hmd_act_keeps_output(L->act)) {
        memcpy(saved, y, n * sizeof(double));
    }
    activate(L, n, y, y);
    if (saved && hmd_act_keeps_output(L->act)) {
        memcpy(saved, y, n * sizeof(double));
    }
    scale_and_skip(L, rows, x, y);
}

const double *hmd_mlp_forward(const struct hmd_mlp *net, int rows, const double *x, double *work,
                              double *saved)
{
    const double *in = x;
    double *out = work;
    for (int l = 0; l < net->nlayers; l++) {
        const struct hmd_dense *L = &net->layers[l];
        dense_forward(L, rows, in, out, saved);
        in = out;
        out += (size_t)rows * L->n_out;
        if (saved) {
            saved += (size_t)rows * L->n_out;
        }
    }
    return in;
}

void hmd_mlp_backward(const struct hmd_mlp *net, int rows, const double *saved, const double *dy,
                      double *dx, double *work)
{
    /* Three rotating buffers: the incoming gradient g (read again for the skip connection
     * after dz has been multiplied out), dz, and the layer's input gradient. */
    const size_t stride = (size_t)rows * (size_t)max_width(net);
    double *buf[3] = {work, work + stride, work + 2 * stride};
    int g_buf = -1; /* -1: g is the caller's dy */
    size_t saved_off = (size_t)rows * (size_t)net->width_sum;
    const double *g = dy;
    for (int l = net->nlayers - 1; l >= 0; l--) {
        const struct hmd_dense *L = &net->layers[l];
        const int n = L->n_out, k = L->n_in;
        saved_off -= (size_t)rows * n;
        const double *s = saved + saved_off;
        const int dz_buf = (g_buf + 1) % 3, out_buf = (g_buf + 2) % 3;
        double *dz = buf[dz_buf];
        activation_grad(L, (size_t)rows * n, s, dz);
        for (int r = 0; r < rows; r++) {
            double *dzr = dz + (size_t)r * n;
            const double *gr = g + (size_t)r * n;
            for (int j = 0; j < n; j++) {
                dzr[j] *= L->idt ? gr[j] * L->idt[j] : gr[j];
            }
        }
        double *out = (l == 0) ? dx : buf[out_buf];
        hmd_gemm_transposed(rows, k, n, dz, L->wtp, out);
        if (L->resnet != HMD_RESNET_NONE) {
            for (int r = 0; r < rows; r++) {
                const double *gr = g + (size_t)r * n;
                double *outr = out + (size_t)r * k;
                for (int i = 0; i < k; i++) {
                    outr[i] += (L->resnet == HMD_RESNET_DOUBLE) ? gr[i] + gr[i + k] : gr[i];
                }
            }
        }
        g = out;
        g_buf = out_buf;
    }
}

size_t hmd_mlp_tangent_work_size(const struct hmd_mlp *net, int rows)
{
    return 4 * (size_t)rows * (size_t)max_width(net);
}

void hmd_mlp_forward_tangent(const struct hmd_mlp *net, int rows, const double *x, const double *dx,
                             double *work, const double **y, const double **dy)
{
    /* (value, tangent) of the current layer's input and output, ping-ponged */
    const size_t stride = (size_t)rows * (size_t)max_width(net);
    double *val[2] = {work, work + stride}, *tan[2] = {work + 2 * stride, work + 3 * stride};
    const double *in = x, *din = dx;
    if (!din) {
        for (int r = 0; r < rows; r++) {
            tan[1][r] = 1.0; /* d x / d x of a one-input net */
        }
        din = tan[1];
    }
    for (int l = 0; l < net->nlayers; l++) {
        const struct hmd_dense *L = &net->layers[l];
        const int n = L->n_out, k = L->n_in;
        double *out = val[l % 2], *dout = tan[l % 2];
        hmd_gemm_bias(rows, k, n, in, din, L->wp, L->bp, out, dout);
        const size_t count = (size_t)rows * n;
        if (L->act == HMD_ACT_TANH) {
            hmd_vtanh((int)count, out, out);
            for (size_t e = 0; e < count; e++) {
                dout[e] *= 1.0 - out[e] * out[e];
            }
        } else {
            for (size_t e = 0; e < count; e++) {
                double z = out[e];
                out[e] = hmd_act(L->act, &L->silut, z);
                dout[e] *=
                    hmd_act_grad(L->act, &L->silut, hmd_act_keeps_output(L->act) ? out[e] : z);
            }
        }
        scale_and_skip(L, rows, in, out);
        scale_and_skip(L, rows, din, dout);
        in = out;
        din = dout;
    }
    *y = in;
    *dy = din;
}

long hmd_mlp_param_count(const struct hmd_mlp *net)
{
    long n = 0;
    for (int l = 0; l < net->nlayers; l++) {
        const struct hmd_dense *L = &net->layers[l];
        n += (long)L->n_in * L->n_out + (L->b ? L->n_out : 0) + (L->idt ? L->n_out : 0);
    }
    return n;
}
