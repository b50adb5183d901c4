#include "nnp/se_e2_a.h"

#include <string.h>

#include "nnp/env_mat.h"

static int max_sel(const struct hmd_dp_model *m)
{
    int ms = 1;
    for (int t = 0; t < m->ntypes; t++) {
        ms = m->se.sel[t] > ms ? m->se.sel[t] : ms;
    }
    return ms;
}

/* Any present embedding net: all share the widths given by `neuron`. */
static const struct hmd_mlp *any_net(const struct hmd_dp_model *m)
{
    for (int k = 0; k < m->se.nemb; k++) {
        if (m->se.emb[k].nlayers) {
            return &m->se.emb[k];
        }
    }
    return NULL;
}

/* Embedding scratch: the tangent forward of real rows, or the plain forward of padded rows. */
static size_t embedding_work(const struct hmd_dp_model *m)
{
    const int rows = max_sel(m);
    size_t a = hmd_mlp_tangent_work_size(any_net(m), rows), b = hmd_mlp_work_size(any_net(m), rows);
    return a > b ? a : b;
}

size_t hmd_se_e2_a_scratch_doubles(const struct hmd_dp_model *m)
{
    const struct hmd_se_e2_a *se = &m->se;
    return (size_t)se->nnei * 4 + (size_t)max_sel(m) + embedding_work(m) + (size_t)se->M * 4;
}

size_t hmd_se_e2_a_scratch_ints(const struct hmd_dp_model *m)
{
    return (size_t)max_sel(m);
}

size_t hmd_se_e2_a_keep_doubles(const struct hmd_dp_model *m)
{
    return (size_t)m->se.nnei * (2 * (size_t)m->se.M + 4);
}

void hmd_se_e2_a_scratch_init(struct hmd_se_e2_a_scratch *s, const struct hmd_dp_model *m,
                              double *dbuf, int *ibuf)
{
    const struct hmd_se_e2_a *se = &m->se;
    const int rows = max_sel(m);
    s->R = dbuf;
    s->input = s->R + (size_t)se->nnei * 4;
    s->work = s->input + rows;
    s->gamma = s->work + embedding_work(m);
    s->rows = ibuf;
}

static const struct hmd_mlp *block_net(const struct hmd_dp_model *m, int ti, int tau)
{
    return m->se.type_one_side ? &m->se.emb[tau] : &m->se.emb[ti + tau * m->ntypes];
}

/* Normalised row R of slot j of centre i, and the raw Jacobian when jac != NULL. Returns 1 for
 * a real slot whose R depends on coordinates, 0 for padding or an excluded pair. */
static int slot_row(const struct hmd_dp_model *m, int i, int ti, int tau, int j, int nb,
                    const double *x, double R[4], double jac[4][3])
{
    const struct hmd_se_e2_a *se = &m->se;
    const double *avg = se->davg + ((size_t)ti * se->nnei + j) * 4;
    const double *std = se->dstd + ((size_t)ti * se->nnei + j) * 4;
    if (nb < 0) {
        for (int c = 0; c < 4; c++) {
            R[c] = -avg[c] / std[c];
        }
        return 0;
    }
    if (se->exclude[ti * m->ntypes + tau]) {
        R[0] = R[1] = R[2] = R[3] = 0.0;
        return 0;
    }
    double d[3], raw[4];
    for (int k = 0; k < 3; k++) {
        d[k] = x[3 * nb + k] - x[3 * i + k];
    }
    hmd_env_row(d, m->rcut_smth, m->rcut, m->env_protection, raw, jac);
    for (int c = 0; c < 4; c++) {
        R[c] = (raw[c] - avg[c]) / std[c];
    }
    return 1;
}

/* T += sum over rows of g_row (x) R_row. */
static void accumulate_T(int M, int rows, const int *slot, const double *g, size_t g_stride,
                         const double *Rs, double *T)
{
    for (int r = 0; r < rows; r++) {
        const double *R = Rs + 4 * (size_t)slot[r];
        const double *gr = g + (size_t)r * g_stride;
        for (int a = 0; a < M; a++) {
            const double ga = gr[a];
            T[4 * a + 0] += ga * R[0];
            T[4 * a + 1] += ga * R[1];
            T[4 * a + 2] += ga * R[2];
            T[4 * a + 3] += ga * R[3];
        }
    }
}

void hmd_se_e2_a_forward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                         const double *x, struct hmd_se_e2_a_scratch *s, double *T, double *D,
                         double *keep)
{
    const struct hmd_se_e2_a *se = &m->se;
    const int M = se->M;
    const size_t per_slot = 2 * (size_t)M + 4;
    memset(T, 0, sizeof(double) * M * 4);
    for (int tau = 0; tau < m->ntypes; tau++) {
        const int j0 = se->sel_offset[tau], j1 = se->sel_offset[tau + 1];
        const struct hmd_mlp *net = block_net(m, ti, tau);
        /* real neighbours: value and d/ds, kept for the backward pass */
        int live = 0;
        for (int j = j0; j < j1; j++) {
            if (slot_row(m, i, ti, tau, j, slots[j], x, s->R + 4 * j, NULL)) {
                s->input[live] = s->R[4 * j];
                s->rows[live++] = j;
            }
        }
        if (live) {
            const double *g, *dg;
            hmd_mlp_forward_tangent(net, live, s->input, s->work, &g, &dg);
            for (int r = 0; r < live; r++) {
                double *k = keep + per_slot * s->rows[r];
                memcpy(k, g + (size_t)r * M, sizeof(double) * M);
                memcpy(k + M, dg + (size_t)r * M, sizeof(double) * M);
                memcpy(k + 2 * M, s->R + 4 * s->rows[r], sizeof(double) * 4);
            }
            accumulate_T(M, live, s->rows, g, M, s->R, T);
        }
        /* padding (R = -davg/dstd, not zero); excluded real neighbours have R = 0 and add
         * nothing */
        int pad = 0;
        for (int j = j0; j < j1; j++) {
            if (slots[j] < 0) {
                s->input[pad] = s->R[4 * j];
                s->rows[pad++] = j;
            }
        }
        if (pad) {
            const double *g = hmd_mlp_forward(net, pad, s->input, s->work, NULL);
            accumulate_T(M, pad, s->rows, g, M, s->R, T);
        }
    }
    const double inv_nnei = 1.0 / se->nnei;
    for (int k = 0; k < M * 4; k++) {
        T[k] *= inv_nnei;
    }
    for (int a = 0; a < M; a++) {
        for (int b = 0; b < se->M2; b++) {
            D[a * se->M2 + b] = T[4 * a] * T[4 * b] + T[4 * a + 1] * T[4 * b + 1] +
                                T[4 * a + 2] * T[4 * b + 2] + T[4 * a + 3] * T[4 * b + 3];
        }
    }
}

void hmd_se_e2_a_backward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                          const double *x, struct hmd_se_e2_a_scratch *s, const double *T,
                          const double *dD, const double *keep, double *grad)
{
    const struct hmd_se_e2_a *se = &m->se;
    const int M = se->M, M2 = se->M2;
    const size_t per_slot = 2 * (size_t)M + 4;
    /* gamma[a][c] = dE/dT[a][c] / Nc, with D[a][b] = sum_c T[a][c] T[b][c] (b < M2) */
    const double inv_nnei = 1.0 / se->nnei;
    for (int a = 0; a < M; a++) {
        for (int c = 0; c < 4; c++) {
            double v = 0.0;
            for (int b = 0; b < M2; b++) {
                v += dD[a * M2 + b] * T[4 * b + c];
            }
            if (a < M2) {
                for (int a2 = 0; a2 < M; a2++) {
                    v += dD[a2 * M2 + a] * T[4 * a2 + c];
                }
            }
            s->gamma[4 * a + c] = v * inv_nnei;
        }
    }
    memset(grad, 0, sizeof(double) * 3 * se->nnei);
    for (int tau = 0; tau < m->ntypes; tau++) {
        if (se->exclude[ti * m->ntypes + tau]) {
            continue;
        }
        for (int j = se->sel_offset[tau]; j < se->sel_offset[tau + 1]; j++) {
            if (slots[j] < 0) {
                continue;
            }
            const double *g = keep + per_slot * j, *dg = g + M, *R = dg + M;
            /* dE/dR_c = sum_a g_a gamma_ac, plus the embedding input s = R_0:
             * dE/ds = sum_a (dg_a/ds) sum_c gamma_ac R_c */
            double dR[4] = {0.0, 0.0, 0.0, 0.0}, ds = 0.0;
            for (int a = 0; a < M; a++) {
                const double *ga = s->gamma + 4 * a;
                dR[0] += g[a] * ga[0];
                dR[1] += g[a] * ga[1];
                dR[2] += g[a] * ga[2];
                dR[3] += g[a] * ga[3];
                ds += dg[a] * (ga[0] * R[0] + ga[1] * R[1] + ga[2] * R[2] + ga[3] * R[3]);
            }
            dR[0] += ds;
            double Rj[4], jac[4][3];
            slot_row(m, i, ti, tau, j, slots[j], x, Rj, jac);
            const double *std = se->dstd + ((size_t)ti * se->nnei + j) * 4;
            for (int k = 0; k < 3; k++) {
                double v = 0.0;
                for (int c = 0; c < 4; c++) {
                    v += dR[c] / std[c] * jac[c][k];
                }
                grad[3 * j + k] = v;
            }
        }
    }
}
