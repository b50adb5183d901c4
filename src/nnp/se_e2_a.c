#include "nnp/se_e2_a.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#include "nnp/descriptor_grad.h"
#include "nnp/env_mat.h"
#include "nnp/vmath.h"

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

/* Embedding scratch: the tangent forward of real rows, the plain forward of padded rows, or
 * the table's values and derivatives. */
static size_t embedding_work(const struct hmd_dp_model *m)
{
    const int rows = max_sel(m);
    size_t a = hmd_mlp_tangent_work_size(any_net(m), rows), b = hmd_mlp_work_size(any_net(m), rows);
    size_t c = 2 * (size_t)rows * (size_t)m->se.M;
    a = a > b ? a : b;
    return a > c ? a : c;
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

/* Index of the embedding net (and table) of centre type ti and neighbour type tau. */
static int block_index(const struct hmd_dp_model *m, int ti, int tau)
{
    return m->se.type_one_side ? tau : ti + tau * m->ntypes;
}

static const struct hmd_mlp *block_net(const struct hmd_dp_model *m, int ti, int tau)
{
    return &m->se.emb[block_index(m, ti, tau)];
}

/* g[rows][M] and, when dg is not NULL, dg/ds of the embedding of block (ti, tau) at the inputs
 * s[rows]: by the table when the model is compressed and has one for the block, else by the
 * network (results in work). */
static void embed(const struct hmd_dp_model *m, int ti, int tau, int rows, const double *s,
                  double *work, const double **g, const double **dg)
{
    const struct hmd_emb_table *t = m->se.table ? &m->se.table[block_index(m, ti, tau)] : NULL;
    if (t && t->M > 0) {
        double *gv = work, *dgv = dg ? work + (size_t)rows * m->se.M : NULL;
        hmd_emb_table_eval(t, rows, s, gv, dgv);
        *g = gv;
        if (dg) {
            *dg = dgv;
        }
    } else if (dg) {
        hmd_mlp_forward_tangent(block_net(m, ti, tau), rows, s, NULL, work, g, dg);
    } else {
        *g = hmd_mlp_forward(block_net(m, ti, tau), rows, s, work, NULL);
    }
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

int hmd_se_e2_a_prepare(struct hmd_dp_model *m)
{
    struct hmd_se_e2_a *se = &m->se;
    const int nt = m->ntypes, M = se->M, stride = se->nnei + nt;
    const size_t tile = (size_t)M * 4;
    se->pad_sum = hmd_arena_alloc(&m->arena, (size_t)nt * stride * tile * sizeof(double));
    double *work = malloc((hmd_mlp_work_size(any_net(m), 1) + 2 * (size_t)M) * sizeof(double));
    if (!se->pad_sum || !work) {
        free(work);
        return hmd_error_set(HMD_ENOMEM, "out of memory for the padding tables");
    }
    for (int ti = 0; ti < nt; ti++) {
        for (int tau = 0; tau < nt; tau++) {
            const int j0 = se->sel_offset[tau], j1 = se->sel_offset[tau + 1];
            double *base = se->pad_sum + ((size_t)ti * stride + j0 + tau) * tile;
            /* base[n] = sum of the slots j0 + n .. j1 - 1, built from the block's end; a net
             * absent from the file (an excluded pair) contributes nothing */
            memset(base, 0, (size_t)(j1 - j0 + 1) * tile * sizeof(double));
            for (int j = j1 - 1; j >= j0 && block_net(m, ti, tau)->nlayers > 0; j--) {
                double R[4];
                slot_row(m, 0, ti, tau, j, -1, NULL, R, NULL);
                const double *g;
                embed(m, ti, tau, 1, R, work, &g, NULL);
                double *cur = base + (size_t)(j - j0) * tile, *next = cur + tile;
                for (int a = 0; a < M; a++) {
                    for (int c = 0; c < 4; c++) {
                        cur[4 * a + c] = next[4 * a + c] + g[a] * R[c];
                    }
                }
            }
        }
    }
    free(work);
    return HMD_OK;
}

/* T += sum over rows of g_row (x) R_row. */
static inline __attribute__((always_inline)) void accumulate_T(int M, int rows, const int *slot,
                                                               const double *g, size_t g_stride,
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

HMD_CPU_CLONES
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
            embed(m, ti, tau, live, s->input, s->work, &g, &dg);
            for (int r = 0; r < live; r++) {
                double *k = keep + per_slot * s->rows[r];
                memcpy(k, g + (size_t)r * M, sizeof(double) * M);
                memcpy(k + M, dg + (size_t)r * M, sizeof(double) * M);
                memcpy(k + 2 * M, s->R + 4 * s->rows[r], sizeof(double) * 4);
            }
            accumulate_T(M, live, s->rows, g, M, s->R, T);
        }
        /* empty slots (R = -davg/dstd, not zero) come after the filled ones; their share is a
         * model constant. Excluded real neighbours have R = 0 and add nothing. */
        int filled = 0;
        while (j0 + filled < j1 && slots[j0 + filled] >= 0) {
            filled++;
        }
        const double *pad =
            se->pad_sum + (((size_t)ti * (se->nnei + m->ntypes) + j0 + tau + filled) * M * 4);
        for (int k = 0; k < M * 4; k++) {
            T[k] += pad[k];
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

/* x[c] = sum_a g_a gt[c][a] and y[c] = sum_a dg_a gt[c][a] for c < 4, with eight explicit
 * partial sums per result so the compiler vectorises the loop without reassociating. */
static inline __attribute__((always_inline)) void dot4(int M, const double *g, const double *dg,
                                                       const double *gt, double x[4], double y[4])
{
    enum { L = 8 };
    double px[4][L] = {{0}}, py[4][L] = {{0}};
    int a = 0;
    for (; a + L <= M; a += L) {
        for (int c = 0; c < 4; c++) {
            const double *col = gt + (size_t)c * M + a;
            for (int l = 0; l < L; l++) {
                px[c][l] += g[a + l] * col[l];
                py[c][l] += dg[a + l] * col[l];
            }
        }
    }
    for (int c = 0; c < 4; c++) {
        double sx = 0.0, sy = 0.0;
        for (int l = 0; l < L; l++) {
            sx += px[c][l];
            sy += py[c][l];
        }
        for (int t = a; t < M; t++) {
            sx += g[t] * gt[(size_t)c * M + t];
            sy += dg[t] * gt[(size_t)c * M + t];
        }
        x[c] = sx;
        y[c] = sy;
    }
}

HMD_CPU_CLONES
void hmd_se_e2_a_backward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                          const double *x, struct hmd_se_e2_a_scratch *s, const double *T,
                          const double *dD, const double *keep, double *grad)
{
    const struct hmd_se_e2_a *se = &m->se;
    const int M = se->M, M2 = se->M2;
    const size_t per_slot = 2 * (size_t)M + 4;
    /* gamma[c][a] = dE/dT[a][c] / Nc, with D[a][b] = sum_c T[a][c] T[b][c] (b < M2); stored
     * by column so the per-slot dot products below run over contiguous memory */
    const double inv_nnei = 1.0 / se->nnei;
    for (int a = 0; a < M; a++) {
        for (int c = 0; c < 4; c++) {
            s->gamma[(size_t)c * M + a] = hmd_descriptor_grad_T(dD, M2, T, M, M2, a, c) * inv_nnei;
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
             * dE/ds = sum_a (dg_a/ds) sum_c gamma_ac R_c = sum_c R_c (sum_a dg_a gamma_ac) */
            double dR[4], dgg[4];
            dot4(M, g, dg, s->gamma, dR, dgg);
            const double ds = dgg[0] * R[0] + dgg[1] * R[1] + dgg[2] * R[2] + dgg[3] * R[3];
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
