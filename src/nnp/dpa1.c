#include "nnp/dpa1.h"

#include <math.h>
#include <string.h>

#include "nnp/descriptor_grad.h"
#include "nnp/env_mat.h"
#include "nnp/vmath.h"

enum { ATTN_SHIFT = 20 }; /* DeePMD-kit's attnw_shift of the smooth attention */

/* The scratch of one atom, as pointers into the thread's buffer. Rows are real neighbours. */
struct state {
    /* per real neighbour */
    int *slot;     /* [nnei] slot of each row */
    int *tj;       /* [nnei] neighbour type */
    double *R;     /* [nnei][4] normalised environment row */
    double *jac;   /* [nnei][4][3] Jacobian of the raw row */
    double *dvec;  /* [nnei][3] d_ij (Å) */
    double *sw;    /* [nnei] switch s(r) */
    double *dsw;   /* [nnei] ds/dr (1/Å) */
    double *rhat;  /* [nnei][3] unit direction from R[1:4] */
    double *unorm; /* [nnei] |R[1:4]| */
    /* embedding */
    double *ein;   /* [nnei][k_emb] embedding input */
    double *etan;  /* [nnei][k_emb] tangent seed (d/d R0) */
    double *ework; /* embedding work (tangent forward) */
    double *G0;    /* [nnei][M] embedding output */
    double *dG0;   /* [nnei][M] d G0 / d R0 */
    double *gs;    /* [nnei][M] strip: g_s */
    double *gt;    /* [nnei][M] strip: raw gate */
    /* attention, per layer l (nlayers + 1 X buffers: X[nlayers] is the output G) */
    double *X;     /* [nlayers + 1][nnei][M] layer inputs */
    double *QKV;   /* [nlayers][nnei][3H] raw projections */
    double *qkvn;  /* [nlayers][nnei][3] norms of q, k, v (1 without normalize) */
    double *S;     /* [nlayers][nnei][nnei] scaled scores q.k */
    double *A;     /* [nlayers][nnei][nnei] softmax */
    double *zhat;  /* [nlayers][nnei][M] normalised residual sums */
    double *sigma; /* [nlayers][nnei] sqrt(var + eps) */
    /* temporaries */
    double *O;       /* [nnei][H] */
    double *Ap;      /* [n][n] scratch: A' = A F (forward), its transpose, dS^T (backward) */
    double *P;       /* [nnei][M] */
    double *qkv;     /* [nnei][3H] normalised and scaled q, k, v */
    double *bt;      /* a packed right-hand side of hmd_gemm_strided: [H][nnei padded] or
                        [nnei][H padded] */
    double *dY;      /* [nnei][M] */
    double *dX;      /* [nnei][M] */
    double *dO;      /* [nnei][H] */
    double *dA;      /* [nnei][nnei] */
    double *dQKV;    /* [nnei][3H] */
    double *dR;      /* [nnei][4] */
    double *dsw_acc; /* [nnei] dE/d sw */
    double *drhat;   /* [nnei][3] */
    double *gamma;   /* [M][4] dE/dT / nnei */
    /* padding table evaluation */
    double *pin;   /* [k_emb] embedding input */
    double *pwork; /* embedding work for one row */
    double *pX;    /* [M] */
    double *pz;    /* [M] */
    double *pzhat; /* [M] */
};

static int k_emb(const struct hmd_dpa1 *d)
{
    return d->strip ? 1 : 1 + (d->type_one_side ? 1 : 2) * d->tebd_dim;
}

/* Carves the state from buf (or, with buf == NULL, only counts); returns doubles used. */
static size_t layout(const struct hmd_dp_model *m, double *buf, int *ibuf, struct state *s)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const size_t n = (size_t)d->nnei, M = (size_t)d->M, H = (size_t)d->H, L = (size_t)d->nlayers;
    const size_t ke = (size_t)k_emb(d);
    const size_t ework = hmd_mlp_tangent_work_size(&d->emb, d->nnei);
    const size_t bt_a = H * (size_t)hmd_gemm_padded(d->nnei), bt_b = n * hmd_gemm_padded(d->H);
    const size_t bt_doubles = bt_a > bt_b ? bt_a : bt_b;
    struct {
        double **p;
        size_t count;
    } parts[] = {
        {&s->R, n * 4},
        {&s->jac, n * 12},
        {&s->dvec, n * 3},
        {&s->sw, n},
        {&s->dsw, n},
        {&s->rhat, n * 3},
        {&s->unorm, n},
        {&s->ein, n * ke},
        {&s->etan, n * ke},
        {&s->ework, ework},
        {&s->G0, n * M},
        {&s->dG0, n * M},
        {&s->gs, n * M},
        {&s->gt, n * M},
        {&s->X, (L + 1) * n * M},
        {&s->QKV, L * n * 3 * H},
        {&s->qkvn, L * n * 3},
        {&s->S, L * n * n},
        {&s->A, L * n * n},
        {&s->zhat, L * n * M},
        {&s->sigma, L * n},
        {&s->O, n * H},
        {&s->Ap, n * n},
        {&s->P, n * M},
        {&s->qkv, n * 3 * H},
        {&s->bt, bt_doubles},
        {&s->dY, n * M},
        {&s->dX, n * M},
        {&s->dO, n * H},
        {&s->dA, n * n},
        {&s->dQKV, n * 3 * H},
        {&s->dR, n * 4},
        {&s->dsw_acc, n},
        {&s->drhat, n * 3},
        {&s->gamma, M * 4},
        {&s->pin, ke},
        {&s->pwork, hmd_mlp_work_size(&d->emb, 1)},
        {&s->pX, M},
        {&s->pz, M},
        {&s->pzhat, M},
    };
    size_t used = 0;
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        *parts[k].p = buf ? buf + used : NULL;
        used += (parts[k].count + 7) / 8 * 8; /* keep every array 64-byte aligned */
    }
    if (ibuf) {
        s->slot = ibuf;
        s->tj = ibuf + n;
    }
    return used;
}

size_t hmd_dpa1_scratch_doubles(const struct hmd_dp_model *m)
{
    struct state s;
    return layout(m, NULL, NULL, &s);
}

size_t hmd_dpa1_scratch_ints(const struct hmd_dp_model *m)
{
    return 2 * (size_t)m->dpa1.nnei;
}

size_t hmd_dpa1_pad_table_doubles(const struct hmd_dp_model *m)
{
    return (size_t)m->ntypes * (m->dpa1.nnei + 1) * m->dpa1.M * 4;
}

static const double *gate_row(const struct hmd_dp_model *m, int ti, int tj)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int row = d->type_one_side ? tj : ti * (m->ntypes + 1) + tj;
    return d->strip_table + (size_t)row * d->M;
}

/* Embedding input row [R0, TE[tj], TE[ti]] (concat) or [R0] (strip). */
static void embedding_input(const struct hmd_dp_model *m, int ti, int tj, double R0, double *in)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int T = d->tebd_dim;
    in[0] = R0;
    if (!d->strip) {
        memcpy(in + 1, d->type_embd + (size_t)tj * T, sizeof(double) * T);
        if (!d->type_one_side) {
            memcpy(in + 1 + T, d->type_embd + (size_t)ti * T, sizeof(double) * T);
        }
    }
}

/* y = LayerNorm(z) row by row, keeping zhat and sigma. */
static void layer_norm(int M, const double *z, const double *w, const double *b, double eps,
                       double *zhat, double *sigma, double *y)
{
    double mean = 0.0, var = 0.0;
    for (int a = 0; a < M; a++) {
        mean += z[a];
    }
    mean /= M;
    for (int a = 0; a < M; a++) {
        var += (z[a] - mean) * (z[a] - mean);
    }
    var /= M;
    *sigma = sqrt(var + eps);
    for (int a = 0; a < M; a++) {
        zhat[a] = (z[a] - mean) / *sigma;
        y[a] = zhat[a] * w[a] + b[a];
    }
}

void hmd_dpa1_pad_table(const struct hmd_dp_model *m, int pad_type, struct hmd_dpa1_scratch *sc,
                        double *table)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int M = d->M, nnei = d->nnei;
    const size_t tile = (size_t)M * 4;
    struct state s;
    layout(m, sc->buf, sc->ibuf, &s);
    for (int ti = 0; ti < m->ntypes; ti++) {
        double *base = table + (size_t)ti * (nnei + 1) * tile;
        memset(base + (size_t)nnei * tile, 0, tile * sizeof(double));
        for (int j = nnei - 1; j >= 0; j--) {
            const double *avg = d->davg + ((size_t)ti * nnei + j) * 4;
            const double *std = d->dstd + ((size_t)ti * nnei + j) * 4;
            double R[4];
            for (int c = 0; c < 4; c++) {
                R[c] = -avg[c] / std[c];
            }
            embedding_input(m, ti, pad_type, R[0], s.pin);
            const double *g = s.pwork;
            if (d->table) {
                hmd_emb_table_eval(d->table, 1, s.pin, s.pwork, NULL);
            } else {
                g = hmd_mlp_forward(&d->emb, 1, s.pin, s.pwork, NULL);
            }
            /* strip: the gate is weighted by sw = 0 when smooth */
            const double *gate = d->strip && !d->smooth ? gate_row(m, ti, pad_type) : NULL;
            for (int a = 0; a < M; a++) {
                s.pX[a] = gate ? g[a] * gate[a] + g[a] : g[a];
            }
            /* an empty slot's attention row is zero: each layer adds only b_out */
            for (int l = 0; l < d->nlayers; l++) {
                const struct hmd_attn_layer *L = &d->layers[l];
                double sigma;
                for (int a = 0; a < M; a++) {
                    s.pz[a] = s.pX[a] + (L->out_proj.b ? L->out_proj.b[a] : 0.0);
                }
                layer_norm(M, s.pz, L->ln_w, L->ln_b, L->ln_eps, s.pzhat, &sigma, s.pX);
            }
            double *cur = base + (size_t)j * tile, *next = cur + tile;
            for (int a = 0; a < M; a++) {
                for (int c = 0; c < 4; c++) {
                    cur[4 * a + c] = next[4 * a + c] + s.pX[a] * R[c];
                }
            }
        }
    }
}

/* Environment rows, switch and directions of the real neighbours of centre i; returns their
 * number and sets *filled to the number of occupied slots (real or excluded). */
static int gather_neighbors(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                            const double *x, const int *type, struct state *s, int *filled)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    int n = 0;
    *filled = 0;
    for (int j = 0; j < d->nnei; j++) {
        const int nb = slots[j];
        if (nb < 0) {
            continue;
        }
        (*filled)++;
        const int tj = type[nb];
        if (d->exclude[ti * m->ntypes + tj]) {
            continue; /* R = 0 and masked: contributes nothing */
        }
        double *dv = s->dvec + 3 * n, raw[4];
        for (int k = 0; k < 3; k++) {
            dv[k] = x[3 * nb + k] - x[3 * i + k];
        }
        double(*jac)[3] = (double(*)[3])(s->jac + 12 * n);
        hmd_env_row(dv, m->rcut_smth, m->rcut, m->env_protection, raw, jac);
        const double r = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
        hmd_env_switch(r, m->rcut_smth, m->rcut, &s->sw[n], &s->dsw[n]);
        const double *avg = d->davg + ((size_t)ti * d->nnei + j) * 4;
        const double *std = d->dstd + ((size_t)ti * d->nnei + j) * 4;
        double *R = s->R + 4 * n;
        for (int c = 0; c < 4; c++) {
            R[c] = (raw[c] - avg[c]) / std[c];
        }
        const double un = sqrt(R[1] * R[1] + R[2] * R[2] + R[3] * R[3]);
        s->unorm[n] = un;
        const double den = un > 1e-12 ? un : 1e-12;
        for (int c = 0; c < 3; c++) {
            s->rhat[3 * n + c] = R[1 + c] / den;
        }
        s->slot[n] = j;
        s->tj[n] = tj;
        n++;
    }
    return n;
}

/* G0 and dG0/dR0 of the n real rows. */
static void embed(const struct hmd_dp_model *m, int ti, int n, struct state *s)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int M = d->M, ke = k_emb(d);
    for (int r = 0; r < n; r++) {
        embedding_input(m, ti, s->tj[r], s->R[4 * r], s->ein + (size_t)r * ke);
        memset(s->etan + (size_t)r * ke, 0, sizeof(double) * ke);
        s->etan[(size_t)r * ke] = 1.0;
    }
    const double *y, *dy;
    if (d->table) {
        /* compressed (strip mode): the input row is R0 alone */
        hmd_emb_table_eval(d->table, n, s->ein, s->ework, s->ework + (size_t)n * M);
        y = s->ework;
        dy = s->ework + (size_t)n * M;
    } else {
        hmd_mlp_forward_tangent(&d->emb, n, s->ein, s->etan, s->ework, &y, &dy);
    }
    if (!d->strip) {
        memcpy(s->G0, y, sizeof(double) * n * M);
        memcpy(s->dG0, dy, sizeof(double) * n * M);
        return;
    }
    for (int r = 0; r < n; r++) {
        const double *gate = gate_row(m, ti, s->tj[r]);
        const double w = d->smooth ? s->sw[r] : 1.0;
        for (int a = 0; a < M; a++) {
            const size_t e = (size_t)r * M + a;
            const double g = y[e], geff = gate[a] * w;
            s->gs[e] = g;
            s->gt[e] = gate[a];
            s->G0[e] = g * geff + g;
            s->dG0[e] = dy[e] * (geff + 1.0);
        }
    }
}

/* Normalised (if requested) and scaled q, k, v of layer l into s->qkv, norms into qkvn. */
static void prepare_qkv(const struct hmd_dpa1 *d, int n, const double *QKV, double *qkvn,
                        double *qkv)
{
    const int H = d->H;
    for (int r = 0; r < n; r++) {
        for (int part = 0; part < 3; part++) {
            const double *src = QKV + (size_t)r * 3 * H + (size_t)part * H;
            double *dst = qkv + (size_t)r * 3 * H + (size_t)part * H;
            double norm = 1.0;
            if (d->normalize) {
                double ss = 0.0;
                for (int h = 0; h < H; h++) {
                    ss += src[h] * src[h];
                }
                norm = sqrt(ss);
                norm = norm > 1e-12 ? norm : 1e-12;
            }
            const double scale = (part == 0 ? d->scaling : 1.0) / norm;
            for (int h = 0; h < H; h++) {
                dst[h] = src[h] * scale;
            }
            qkvn[3 * r + part] = norm;
        }
    }
}

/* Multiplier of A: sw_j sw_k (smooth) times rhat_j . rhat_k (dotr). */
static double gate_factor(const struct hmd_dpa1 *d, const struct state *s, int j, int k)
{
    double f = d->smooth ? s->sw[j] * s->sw[k] : 1.0;
    if (d->dotr) {
        const double *a = s->rhat + 3 * j, *b = s->rhat + 3 * k;
        f *= a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    }
    return f;
}

/* Forward of every attention layer for n real rows; X[0] holds G0 on entry, X[nlayers] is G. */
static void attention_forward(const struct hmd_dp_model *m, int n, struct state *s)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int M = d->M, H = d->H, nnei = d->nnei;
    const int nmask = nnei - n; /* empty and excluded slots: constant score -20 (smooth) */
    for (int l = 0; l < d->nlayers; l++) {
        const struct hmd_attn_layer *L = &d->layers[l];
        const double *X = s->X + (size_t)l * nnei * M;
        double *Y = s->X + (size_t)(l + 1) * nnei * M;
        double *QKV = s->QKV + (size_t)l * nnei * 3 * H, *qkvn = s->qkvn + (size_t)l * nnei * 3;
        double *S = s->S + (size_t)l * nnei * nnei, *A = s->A + (size_t)l * nnei * nnei;
        hmd_gemm_bias(n, M, 3 * H, X, NULL, L->in_proj.wp, L->in_proj.bp, QKV, NULL);
        prepare_qkv(d, n, QKV, qkvn, s->qkv);
        hmd_gemm_pack_transposed(n, H, s->qkv + H, 3 * (size_t)H, s->bt);
        hmd_gemm_strided(n, H, n, s->qkv, 3 * (size_t)H, s->bt, S, nnei);
        for (int j = 0; j < n; j++) {
            double mx = -INFINITY;
            for (int k = 0; k < n; k++) {
                const double dot = S[(size_t)j * nnei + k];
                double sp = d->smooth ? (dot + ATTN_SHIFT) * s->sw[j] * s->sw[k] - ATTN_SHIFT : dot;
                A[(size_t)j * nnei + k] = sp;
                mx = sp > mx ? sp : mx;
            }
            if (d->smooth && nmask > 0 && -ATTN_SHIFT > mx) {
                mx = -ATTN_SHIFT;
            }
            double den = (d->smooth && nmask > 0) ? nmask * exp(-ATTN_SHIFT - mx) : 0.0;
            for (int k = 0; k < n; k++) {
                double e = exp(A[(size_t)j * nnei + k] - mx);
                A[(size_t)j * nnei + k] = e;
                den += e;
            }
            for (int k = 0; k < n; k++) {
                A[(size_t)j * nnei + k] /= den;
            }
        }
        /* O = A' V with A' = A F, P = O W_out + b_out, Y = LN(X + P) */
        for (int j = 0; j < n; j++) {
            for (int k = 0; k < n; k++) {
                s->Ap[(size_t)j * n + k] = A[(size_t)j * nnei + k] * gate_factor(d, s, j, k);
            }
        }
        hmd_gemm_pack(n, H, s->qkv + 2 * H, 3 * (size_t)H, s->bt);
        hmd_gemm_strided(n, n, H, s->Ap, n, s->bt, s->O, H);
        hmd_gemm_bias(n, H, M, s->O, NULL, L->out_proj.wp, L->out_proj.bp, s->P, NULL);
        for (int j = 0; j < n; j++) {
            double *z = s->P + (size_t)j * M;
            for (int a = 0; a < M; a++) {
                z[a] += X[(size_t)j * M + a];
            }
            layer_norm(M, z, L->ln_w, L->ln_b, L->ln_eps, s->zhat + ((size_t)l * nnei + j) * M,
                       s->sigma + (size_t)l * nnei + j, Y + (size_t)j * M);
        }
    }
}

/* Forward into the state; returns the number of real rows, writes T and D. */
static int forward(const struct hmd_dp_model *m, int i, int ti, const int *slots, const double *x,
                   const int *type, const double *pad_table, struct state *s, double *T, double *D)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int M = d->M, nnei = d->nnei;
    int filled;
    const int n = gather_neighbors(m, i, ti, slots, x, type, s, &filled);
    embed(m, ti, n, s);
    memcpy(s->X, s->G0, sizeof(double) * n * M);
    attention_forward(m, n, s);
    const double *G = s->X + (size_t)d->nlayers * nnei * M;
    const double *pad = pad_table + ((size_t)ti * (nnei + 1) + filled) * M * 4;
    memcpy(T, pad, sizeof(double) * M * 4);
    for (int r = 0; r < n; r++) {
        const double *R = s->R + 4 * r, *g = G + (size_t)r * M;
        for (int a = 0; a < M; a++) {
            for (int c = 0; c < 4; c++) {
                T[4 * a + c] += g[a] * R[c];
            }
        }
    }
    const double inv = 1.0 / nnei;
    for (int k = 0; k < M * 4; k++) {
        T[k] *= inv;
    }
    for (int a = 0; a < M; a++) {
        for (int b = 0; b < d->M2; b++) {
            D[a * d->M2 + b] = T[4 * a] * T[4 * b] + T[4 * a + 1] * T[4 * b + 1] +
                               T[4 * a + 2] * T[4 * b + 2] + T[4 * a + 3] * T[4 * b + 3];
        }
    }
    if (d->concat_output_tebd) {
        memcpy(D + M * d->M2, d->type_embd + (size_t)ti * d->tebd_dim,
               sizeof(double) * d->tebd_dim);
    }
    return n;
}

void hmd_dpa1_forward(const struct hmd_dp_model *m, int i, int ti, const int *slots,
                      const double *x, const int *type, int pad_type, const double *pad_table,
                      struct hmd_dpa1_scratch *sc, double *T, double *D)
{
    struct state s;
    layout(m, sc->buf, sc->ibuf, &s);
    sc->rows = forward(m, i, ti, slots, x, type, pad_table, &s, T, D);
}

/* Backward through attention layer l for n rows: dY (dE/d output) -> dX (dE/d input);
 * accumulates dE/d sw and dE/d rhat. */
static void attention_backward(const struct hmd_dp_model *m, int l, int n, struct state *s)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const struct hmd_attn_layer *L = &d->layers[l];
    const int M = d->M, H = d->H, nnei = d->nnei;
    const double *QKV = s->QKV + (size_t)l * nnei * 3 * H, *qkvn = s->qkvn + (size_t)l * nnei * 3;
    const double *S = s->S + (size_t)l * nnei * nnei, *A = s->A + (size_t)l * nnei * nnei;
    /* layer norm: dZ = (dzhat - mean(dzhat) - zhat mean(dzhat zhat)) / sigma, dzhat = dY w */
    for (int j = 0; j < n; j++) {
        const double *zh = s->zhat + ((size_t)l * nnei + j) * M;
        const double sig = s->sigma[(size_t)l * nnei + j];
        double *dy = s->dY + (size_t)j * M, *dz = s->dX + (size_t)j * M;
        double m1 = 0.0, m2 = 0.0;
        for (int a = 0; a < M; a++) {
            dz[a] = dy[a] * L->ln_w[a];
            m1 += dz[a];
            m2 += dz[a] * zh[a];
        }
        m1 /= M;
        m2 /= M;
        for (int a = 0; a < M; a++) {
            dz[a] = (dz[a] - m1 - zh[a] * m2) / sig;
        }
    }
    /* dX now holds dZ = dE/dX (residual) = dE/dP; dO = dP W_out^T */
    hmd_gemm_transposed(n, H, M, s->dX, L->out_proj.wtp, s->dO);
    prepare_qkv(d, n, QKV, s->qkvn + (size_t)l * nnei * 3, s->qkv); /* norms rewritten equal */
    /* O = A' V: dA'_jk = dO_j . v_k (into dA first), dv_k += A'_jk dO_j; then through
     * A' = A F */
    hmd_gemm_pack_transposed(n, H, s->qkv + 2 * H, 3 * (size_t)H, s->bt);
    hmd_gemm_strided(n, H, n, s->dO, H, s->bt, s->dA, nnei);
    for (int j = 0; j < n; j++) {
        double rowsum = 0.0;
        for (int k = 0; k < n; k++) {
            const double a = A[(size_t)j * nnei + k], f = gate_factor(d, s, j, k);
            const double dap = s->dA[(size_t)j * nnei + k];
            s->Ap[(size_t)k * n + j] = a * f; /* A'^T, for dV */
            const double da = dap * f;
            s->dA[(size_t)j * nnei + k] = da;
            rowsum += a * da;
            const double fsw = d->smooth ? s->sw[j] * s->sw[k] : 1.0;
            if (d->dotr) {
                const double c = dap * a * fsw;
                for (int q = 0; q < 3; q++) {
                    s->drhat[3 * j + q] += c * s->rhat[3 * k + q];
                    s->drhat[3 * k + q] += c * s->rhat[3 * j + q];
                }
            }
            if (d->smooth) {
                const double *ra = s->rhat + 3 * j, *rb = s->rhat + 3 * k;
                const double fd = d->dotr ? ra[0] * rb[0] + ra[1] * rb[1] + ra[2] * rb[2] : 1.0;
                const double c2 = dap * a * fd;
                s->dsw_acc[j] += c2 * s->sw[k];
                s->dsw_acc[k] += c2 * s->sw[j];
            }
        }
        /* softmax: dS'_jk = A_jk (dA_jk - sum_l A_jl dA_jl); smooth: S' = (S + 20) sw sw - 20 */
        for (int k = 0; k < n; k++) {
            const size_t e = (size_t)j * nnei + k;
            double ds = A[e] * (s->dA[e] - rowsum);
            if (d->smooth) {
                const double c3 = ds * (S[e] + ATTN_SHIFT);
                s->dsw_acc[j] += c3 * s->sw[k];
                s->dsw_acc[k] += c3 * s->sw[j];
                ds *= s->sw[j] * s->sw[k];
            }
            s->dA[e] = ds; /* now dE/dS */
        }
    }
    /* dV = A'^T dO; S = q~ k~^T: dQ~ = dS K~, dK~ = dS^T Q~ */
    double *dQKV = s->dQKV;
    hmd_gemm_pack(n, H, s->dO, H, s->bt);
    hmd_gemm_strided(n, n, H, s->Ap, n, s->bt, dQKV + 2 * H, 3 * (size_t)H);
    hmd_gemm_pack(n, H, s->qkv + H, 3 * (size_t)H, s->bt);
    hmd_gemm_strided(n, n, H, s->dA, nnei, s->bt, dQKV, 3 * (size_t)H);
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < n; k++) {
            s->Ap[(size_t)k * n + j] = s->dA[(size_t)j * nnei + k];
        }
    }
    hmd_gemm_pack(n, H, s->qkv, 3 * (size_t)H, s->bt);
    hmd_gemm_strided(n, n, H, s->Ap, n, s->bt, dQKV + H, 3 * (size_t)H);
    /* back through the scale and the normalisation: x~ = c x / |x| */
    for (int r = 0; r < n; r++) {
        for (int part = 0; part < 3; part++) {
            double *g = s->dQKV + (size_t)r * 3 * H + (size_t)part * H;
            const double norm = qkvn[3 * r + part];
            const double c = part == 0 ? d->scaling : 1.0;
            if (d->normalize && norm > 1e-12) {
                const double *raw = QKV + (size_t)r * 3 * H + (size_t)part * H;
                double dot = 0.0;
                for (int h = 0; h < H; h++) {
                    dot += raw[h] * g[h];
                }
                dot /= norm * norm;
                for (int h = 0; h < H; h++) {
                    g[h] = c * (g[h] - raw[h] * dot) / norm;
                }
            } else {
                for (int h = 0; h < H; h++) {
                    g[h] *= c / norm;
                }
            }
        }
    }
    /* dX (residual, already there) += dQKV W_in^T */
    hmd_gemm_transposed(n, M, 3 * H, s->dQKV, L->in_proj.wtp, s->dY);
    for (size_t e = 0; e < (size_t)n * M; e++) {
        s->dY[e] += s->dX[e];
    }
}

void hmd_dpa1_backward(const struct hmd_dp_model *m, int ti, struct hmd_dpa1_scratch *sc,
                       const double *T, const double *dD, double *grad)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    const int M = d->M, M2 = d->M2, nnei = d->nnei, n = sc->rows;
    struct state s;
    layout(m, sc->buf, sc->ibuf, &s);
    /* gamma[a][c] = dE/dT[a][c] / nnei, with D[a][b] = sum_c T[a][c] T[b][c] (b < M2) */
    for (int a = 0; a < M; a++) {
        for (int c = 0; c < 4; c++) {
            s.gamma[4 * a + c] = hmd_descriptor_grad_T(dD, M2, T, M, M2, a, c) / nnei;
        }
    }
    memset(grad, 0, sizeof(double) * 3 * nnei);
    if (n == 0) {
        return;
    }
    /* dE/dG_j = sum_c gamma[:, c] R_jc; direct dE/dR_j = sum_a G_ja gamma[a, :] */
    const double *G = s.X + (size_t)d->nlayers * nnei * M;
    for (int r = 0; r < n; r++) {
        const double *R = s.R + 4 * r, *g = G + (size_t)r * M;
        double *dy = s.dY + (size_t)r * M, *dR = s.dR + 4 * r;
        dR[0] = dR[1] = dR[2] = dR[3] = 0.0;
        for (int a = 0; a < M; a++) {
            const double *ga = s.gamma + 4 * a;
            dy[a] = ga[0] * R[0] + ga[1] * R[1] + ga[2] * R[2] + ga[3] * R[3];
            for (int c = 0; c < 4; c++) {
                dR[c] += g[a] * ga[c];
            }
        }
    }
    memset(s.dsw_acc, 0, sizeof(double) * n);
    memset(s.drhat, 0, sizeof(double) * 3 * n);
    for (int l = d->nlayers - 1; l >= 0; l--) {
        attention_backward(m, l, n, &s);
    }
    /* s.dY = dE/dG0: through the embedding input R0 and, in smooth strip mode, the gate */
    for (int r = 0; r < n; r++) {
        const double *dg = s.dY + (size_t)r * M, *t = s.dG0 + (size_t)r * M;
        double dr0 = 0.0, dsw = 0.0;
        for (int a = 0; a < M; a++) {
            dr0 += dg[a] * t[a];
            if (d->strip && d->smooth) {
                dsw += dg[a] * s.gs[(size_t)r * M + a] * s.gt[(size_t)r * M + a];
            }
        }
        s.dR[4 * r] += dr0;
        s.dsw_acc[r] += dsw;
    }
    for (int r = 0; r < n; r++) {
        double *dR = s.dR + 4 * r;
        /* rhat = u / max(|u|, eps), u = R[1:4] */
        if (d->dotr) {
            const double *rh = s.rhat + 3 * r, *drh = s.drhat + 3 * r;
            const double un = s.unorm[r];
            if (un > 1e-12) {
                const double dot = rh[0] * drh[0] + rh[1] * drh[1] + rh[2] * drh[2];
                for (int c = 0; c < 3; c++) {
                    dR[1 + c] += (drh[c] - rh[c] * dot) / un;
                }
            } else {
                for (int c = 0; c < 3; c++) {
                    dR[1 + c] += drh[c] / 1e-12;
                }
            }
        }
        const int j = s.slot[r];
        const double *std = d->dstd + ((size_t)ti * nnei + j) * 4;
        const double(*jac)[3] = (const double(*)[3])(s.jac + 12 * r);
        const double *dv = s.dvec + 3 * r;
        const double rr = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
        for (int k = 0; k < 3; k++) {
            double v = s.dsw_acc[r] * s.dsw[r] * dv[k] / rr;
            for (int c = 0; c < 4; c++) {
                v += dR[c] / std[c] * jac[c][k];
            }
            grad[3 * j + k] = v;
        }
    }
}
