#include "nnp/mlp.h"

#include <string.h>

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

/* z[rows][n] = x[rows][k] w[k][n] (+ b). Four rows at a time so each row of w is loaded once
 * per four rows; the inner loop over n is contiguous and vectorises. */
static void affine(int rows, int k, int n, const double *x, const double *w, const double *b,
                   double *z)
{
    int r = 0;
    for (; r + 4 <= rows; r += 4) {
        double *z0 = z + (size_t)r * n, *z1 = z0 + n, *z2 = z1 + n, *z3 = z2 + n;
        const double *x0 = x + (size_t)r * k, *x1 = x0 + k, *x2 = x1 + k, *x3 = x2 + k;
        for (int j = 0; j < n; j++) {
            double bj = b ? b[j] : 0.0;
            z0[j] = z1[j] = z2[j] = z3[j] = bj;
        }
        for (int i = 0; i < k; i++) {
            const double *wi = w + (size_t)i * n;
            double a0 = x0[i], a1 = x1[i], a2 = x2[i], a3 = x3[i];
            for (int j = 0; j < n; j++) {
                z0[j] += a0 * wi[j];
                z1[j] += a1 * wi[j];
                z2[j] += a2 * wi[j];
                z3[j] += a3 * wi[j];
            }
        }
    }
    for (; r < rows; r++) {
        double *zr = z + (size_t)r * n;
        const double *xr = x + (size_t)r * k;
        for (int j = 0; j < n; j++) {
            zr[j] = b ? b[j] : 0.0;
        }
        for (int i = 0; i < k; i++) {
            const double *wi = w + (size_t)i * n;
            double a = xr[i];
            for (int j = 0; j < n; j++) {
                zr[j] += a * wi[j];
            }
        }
    }
}

static void dense_forward(const struct hmd_dense *L, int rows, const double *x, double *y,
                          double *saved)
{
    const int n = L->n_out, k = L->n_in;
    const bool keep_out = hmd_act_keeps_output(L->act);
    affine(rows, k, n, x, L->w, L->b, y);
    for (int r = 0; r < rows; r++) {
        double *yr = y + (size_t)r * n;
        const double *xr = x + (size_t)r * k;
        double *sr = saved ? saved + (size_t)r * n : NULL;
        for (int j = 0; j < n; j++) {
            double z = yr[j];
            double phi = hmd_act(L->act, &L->silut, z);
            if (sr) {
                sr[j] = keep_out ? phi : z;
            }
            if (L->idt) {
                phi *= L->idt[j];
            }
            if (L->resnet == HMD_RESNET_SAME) {
                phi += xr[j];
            } else if (L->resnet == HMD_RESNET_DOUBLE) {
                phi += xr[j < k ? j : j - k];
            }
            yr[j] = phi;
        }
    }
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

/* dx[rows][k] = dz[rows][n] w^T, i.e. dx[r][i] = sum_j dz[r][j] w[i][j]. */
static void affine_transpose(int rows, int k, int n, const double *dz, const double *w,
                             double *dx)
{
    for (int r = 0; r < rows; r++) {
        const double *dzr = dz + (size_t)r * n;
        double *dxr = dx + (size_t)r * k;
        for (int i = 0; i < k; i++) {
            const double *wi = w + (size_t)i * n;
            double s = 0.0;
            for (int j = 0; j < n; j++) {
                s += dzr[j] * wi[j];
            }
            dxr[i] = s;
        }
    }
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
        for (int r = 0; r < rows; r++) {
            for (int j = 0; j < n; j++) {
                size_t e = (size_t)r * n + j;
                double d = L->idt ? g[e] * L->idt[j] : g[e];
                dz[e] = d * hmd_act_grad(L->act, &L->silut, s[e]);
            }
        }
        double *out = (l == 0) ? dx : buf[out_buf];
        affine_transpose(rows, k, n, dz, L->w, out);
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

long hmd_mlp_param_count(const struct hmd_mlp *net)
{
    long n = 0;
    for (int l = 0; l < net->nlayers; l++) {
        const struct hmd_dense *L = &net->layers[l];
        n += (long)L->n_in * L->n_out + (L->b ? L->n_out : 0) + (L->idt ? L->n_out : 0);
    }
    return n;
}
