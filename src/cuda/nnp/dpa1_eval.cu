/* DPA-1 (se_atten, se_atten_v2) descriptor on the GPU: the twin of nnp/dpa1.c (read its header
 * comment for the mathematics; the names here follow it).
 *
 * Precision. The network's arrays (embedding activations, q, k, v, scores, attention weights,
 * layer-norm state and their gradients) are stored in a scalar V: double, or float with
 * precision = mixed, whose products are then cuBLAS SGEMMs (plain fp32) on fp32 copies of the
 * weights, but for the input projection, forward and backward, 3xTF32 products on the tensor
 * cores (tf32x3.cuh; HALOMD_GPU_TF32X3=0 or a GPU before compute capability 8.0 keeps SGEMMs).
 * Every kernel computes in double whatever it stores; the geometry (R, switch, directions), the
 * contractions T = G^T R and their gradients (kernels that read G and write dE/dG in V and sum in
 * double), forces and virial stay in double.
 *
 * Layout. A neighbour is `live` when it is real and not excluded. Like the CPU, each centre
 * atom keeps its live neighbours first, in the CPU's slot order (nearest first), and the arrays
 * come in two layouts:
 * - padded: nnei rows per centre (row i * nnei + k for its k-th live neighbour, the rest not
 *   live): the geometry (R, switch, directions and their gradients), q, k, v and the
 *   per-centre attention matrices (strided batched GEMMs, as cuBLAS runs them fastest), the
 *   attention output O with the output projection, and the layer norms' kept state;
 * - compacted: only the live rows, centre after centre (row off[i] + k; `crow` maps it back to
 *   the padded row): the embedding net, the input projection and its gradient, the attention
 *   layers' outputs G and their gradients. A quarter of the rows of a typical system are empty
 *   slots, which these products thus leave out.
 * The number of live rows is known only on the device, so the products over the compacted rows
 * are sized through live_rows.cuh (read by the host when eager, switch nodes over size buckets
 * inside a CUDA graph); the elementwise kernels between the layouts (q, k, v preparation, layer
 * norms) move the rows from one to the other. T = G^T R and its gradients are summed by one block
 * per centre over the centre's compacted rows (k_descriptor, k_grad_T). Rows the kernels never
 * write are read by products whose results there are never used or are multiplied by exact zeros,
 * so they must be finite: the scratch is zeroed when allocated, and from then on such rows only
 * ever receive products and sums of finite values. Masked slots are treated exactly as the CPU
 * leaves them out: no share of T, no attention row or column (A = A' = 0 there), and in smooth mode
 * the CPU's nmask * exp(-20 - max) term in the softmax denominator. Empty slots get their share of
 * T from the padding table (hmd_dpa1_pad_table), made on the host for every possible type of atom 0
 * at create time.
 *
 * Forward keeps, per row, what the reverse pass needs (R, switch, directions, the embedding's
 * activation state, every attention layer's q, k, v, scores, weights and layer-norm state);
 * backward is the CPU's reverse pass on all live rows at once, with the embedding net
 * differentiated in reverse mode (the CPU uses the forward tangent; same derivative). Forces are
 * summed with atomics, so their last bits depend on the scheduling.
 */
#include "cuda/nnp/dpa1_eval.cuh"

#include "cuda/nnp/blas.cuh"
#include "cuda/nnp/dpa1_backward.cuh"
#include "cuda/nnp/dpa1_forward.cuh"
#include "cuda/nnp/live_rows.cuh"
#include "cuda/nnp/tf32x3.cuh"

#include <algorithm>
#include <type_traits>
#include <vector>

extern "C" {
#include "nnp/dpa1.h"
}

namespace
{

/* Under capture, the products over the live rows go into switch nodes (live_rows.cuh) unless
 * HALOMD_GPU_SWITCHES=0, which runs them over every row (to tell the two apart). */
bool switches_setting()
{
    return !hmd_cuda_setting_off("HALOMD_GPU_SWITCHES");
}

/* In mixed precision the input projection, forward and backward, runs as 3xTF32 products
 * (tf32x3.cuh) on GPUs with TF32 tensor cores (compute capability 8.0 on) unless
 * HALOMD_GPU_TF32X3=0, which keeps SGEMMs. */
bool tf32x3_setting()
{
    int dev = 0, major = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return major >= 8 && !hmd_cuda_setting_off("HALOMD_GPU_TF32X3");
}

constexpr size_t SELECT_SMEM = 49152; /* dynamic shared memory a kernel gets without opting in */

/* What the forward keeps of attention layer l, per row (rows of atom i at i * nnei); network
 * arrays in scalar V. */
template <typename V> struct layer_keep {
    V *qkv;        /* padded [rows][3H] q, k, v normalised (if `normalize`) and scaled (q) */
    double *qkvn;  /* compacted [rows][3] norms of the raw q, k, v (1 without normalize) */
    V *S;          /* [atoms][nnei][nnei] scores q . k */
    V *A;          /* [atoms][nnei][nnei] softmax weights, 0 outside live x live */
    V *zhat;       /* padded [rows][M] normalised residual sums */
    double *sigma; /* padded [rows] sqrt(var + eps) */
};

/* Device scratch for `cap` atoms, carved from one allocation (carve()); network arrays in
 * scalar V. */
template <typename V> struct scratch {
    /* kept from forward to backward; [rows]: padded, [crows]: compacted */
    int *slots;    /* [cap][nnei] neighbour index by distance rank, or -1 for an empty slot */
    int *livej;    /* [rows] rank (slot) of the k-th live neighbour */
    int *nbr;      /* [rows] neighbour index; -1 if not live */
    int *filled;   /* [cap] occupied slots (real or excluded) */
    int *nlive;    /* [cap] live rows */
    int *off;      /* [cap] first compacted row of each centre */
    int *count;    /* [1] compacted rows */
    int *crow;     /* [crows] padded row of each compacted row */
    int *tj;       /* [crows] neighbour type */
    double *R;     /* [rows][4] normalised environment row, 0 if not live */
    double *sw;    /* [rows] switch s(r), 0 if not live */
    double *rhat;  /* [rows][3] R[1:4] / max(|R[1:4]|, 1e-12) */
    double *unorm; /* [rows] |R[1:4]| */
    V *emb_kept;   /* [layers][rows][n_out] activation state (network), or [rows][M] dg/dx
                      (table); compacted rows, rows apart */
    V *gs;         /* strip: [crows][M] embedding output g_s */
    V *G;          /* [crows][M] attention input, then the descriptor's G */
    layer_keep<V> layer[HMD_CUDA_MAX_LAYERS];
    double *T;     /* [cap][M][4] */
    double *dR;    /* [rows][4] dE/dR through T (then the force kernel adds the rest) */
    double *dsw;   /* [rows] dE/d sw */
    double *drhat; /* [rows][3] dE/d rhat */
    /* temporaries of one phase */
    V *dY, *dX; /* [crows][M] */
    V *dO;      /* [rows][H] O (forward), dE/dO (backward) */
    V *dA;      /* [cap][nnei][nnei] dE/dA', then dE/dS */
    V *Ap;      /* [cap][nnei][nnei] A' = A F */
    V *dQKV;    /* [rows][3H] dE/d(q, k, v); [rows][3 max(H, M)] with 3xTF32 */
    V *x3;      /* 3xTF32: [crows][3M] in_proj's input split (over dQKV: forward only) */
    V *work;    /* [crows][max(3H, M)], [crows][max(6H, M)] with 3xTF32: forward, the raw
                   projections (compacted); backward, dE/dP (padded), then dE/d(raw q, k, v)
                   (compacted; with 3xTF32 as [hi | lo], 6H wide) */
    V *e[3];    /* [crows][wmax] embedding work (over dO .. work) */
};

} // namespace

struct hmd_cuda_dpa1 {
    dpa1_model g;                   /* kernel argument; arrays in `weights` */
    bool mixed;                     /* precision = mixed: network arrays in fp32 (sf) */
    bool switches;                  /* products over the live rows in switch nodes under capture */
    bool tf32x3;                    /* mixed: in_proj in 3xTF32 (tf32x3.cuh) rather than SGEMM */
    hmd_cuda_net emb;               /* the embedding net (unless compressed) */
    std::vector<attn_layer> layers; /* [nlayers] */
    int nlayers;
    int emb_width_sum;        /* sum of the embedding layers' widths */
    int wmax;                 /* widest embedding input or output */
    hmd_cuda_weights weights; /* the model's arrays on the device */
    int cap;                  /* atoms the scratch holds */
    double *buf;              /* scratch */
    size_t buf_bytes;
    hmd_live_rows lr; /* the live rows of the latest forward or backward */
    void *blas_ws;    /* the caller's cuBLAS workspace, kept on the handle */
    size_t blas_ws_bytes;
    cudaStream_t side;        /* captures the bodies of the switch nodes */
    int *pinned;              /* host: the live-row count, eagerly */
    unsigned long generation; /* scratch allocations so far */
    scratch<double> sd;       /* the scratch in double, */
    scratch<float> sf;        /* or in mixed precision */
    size_t select_smem;       /* dynamic shared memory k_select may use */
};

namespace
{

/* ---- host helpers -------------------------------------------------------------------------- */

/* Blocks for one thread per element (at least one: the kernels check their bounds). */
unsigned blocks_for(size_t n)
{
    return (unsigned)std::max<size_t>(1, (n + THREADS - 1) / THREADS);
}

/* Blocks for one warp per row (at least one). */
unsigned warp_blocks(size_t rows)
{
    return (unsigned)std::max<size_t>(1, (rows + WARPS - 1) / WARPS);
}

/* A row-major operand of gemm() in scalar V: `stride` scalars between the matrices of a batch. */
template <typename V> struct operand {
    const V *p;
    int ld;
    long long stride;
};

/* HMD_OK, or the error of a failed cuBLAS call `what` (status st). */
int blas_result(cublasStatus_t st, const char *what)
{
    return st == CUBLAS_STATUS_SUCCESS
               ? HMD_OK
               : hmd_error_set(HMD_ESOFTWARE, "cuBLAS: DPA-1 %s failed (status %d)", what, (int)st);
}

/* Row-major C = op(A) op(B) + beta C for `batch` matrices in scalar V: op(A) m x k (A stored
 * k x m when ta), op(B) k x n (B stored n x k when tb), leading dimensions as row strides.
 * cuBLAS is column-major, so it is asked for C^T = op(B)^T op(A)^T. */
template <typename V>
int gemm(cublasHandle_t blas, const char *what, int batch, int m, int n, int k, bool ta,
         operand<V> A, bool tb, operand<V> B, V beta, V *C, int ldc, long long stride_c)
{
    const cublasStatus_t st = hmd_blas_gemm(
        blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, V(1), B.p,
        B.ld, B.stride, A.p, A.ld, A.stride, beta, C, ldc, stride_c, batch);
    return blas_result(st, what);
}

/* A matrix not in a batch. */
template <typename V> operand<V> single(const V *p, int ld)
{
    return operand<V>{p, ld, 0};
}

/* The weights of a product in scalar V: the double array, or its fp32 copy. */
template <typename V> const V *weights(const double *d, const float *f);
template <> const double *weights<double>(const double *d, const float *)
{
    return d;
}
template <> const float *weights<float>(const double *, const float *f)
{
    return f;
}

/* The scratch in scalar V. */
scratch<double> &scratch_of(hmd_cuda_dpa1 *a, double)
{
    return a->sd;
}
scratch<float> &scratch_of(hmd_cuda_dpa1 *a, float)
{
    return a->sf;
}

/* Takes 256-byte aligned arrays off a base pointer, or only counts them when base is NULL. */
struct carver {
    double *base;
    size_t used; /* doubles */
    template <typename X> X *take(size_t n)
    {
        X *p = base ? (X *)(base + used) : NULL;
        used += (n * sizeof(X) + 255) / 256 * (256 / sizeof(double));
        return p;
    }
};

/* Carves the scratch of `cap` atoms from base (NULL: counts only); returns the doubles used. */
template <typename V> size_t carve(const hmd_cuda_dpa1 *a, size_t cap, double *base, scratch<V> *s)
{
    const dpa1_model &g = a->g;
    const size_t n = (size_t)g.nnei, rows = cap * n, crows = rows, M = (size_t)g.M, H = (size_t)g.H;
    carver c{base, 0};
    s->slots = c.take<int>(rows);
    s->livej = c.take<int>(rows);
    s->nbr = c.take<int>(rows);
    s->filled = c.take<int>(cap);
    s->nlive = c.take<int>(cap);
    s->off = c.take<int>(cap);
    s->count = c.take<int>(1);
    s->crow = c.take<int>(crows);
    s->tj = c.take<int>(crows);
    s->R = c.take<double>(rows * 4);
    s->sw = c.take<double>(rows);
    s->rhat = c.take<double>(rows * 3);
    s->unorm = c.take<double>(rows);
    s->emb_kept = c.take<V>(rows * (g.compressed ? M : (size_t)a->emb_width_sum));
    s->gs = g.strip ? c.take<V>(crows * M) : NULL;
    s->G = c.take<V>(crows * M);
    for (int l = 0; l < a->nlayers; l++) {
        layer_keep<V> &k = s->layer[l];
        k.qkv = c.take<V>(rows * 3 * H);
        k.qkvn = c.take<double>(crows * 3);
        k.S = c.take<V>(rows * n);
        k.A = c.take<V>(rows * n);
        k.zhat = c.take<V>(rows * M);
        k.sigma = c.take<double>(rows);
    }
    s->T = c.take<double>(cap * M * 4);
    s->dR = c.take<double>(rows * 4);
    s->dsw = c.take<double>(rows);
    s->drhat = c.take<double>(rows * 3);
    s->dY = c.take<V>(crows * M);
    s->dX = c.take<V>(crows * M);
    /* the attention temporaries and the embedding work are never live together */
    const size_t shared = c.used;
    s->dO = c.take<V>(rows * H);
    s->dA = c.take<V>(rows * n);
    s->Ap = c.take<V>(rows * n);
    s->dQKV = c.take<V>(rows * 3 * (a->tf32x3 ? std::max(H, M) : H));
    s->x3 = s->dQKV;
    s->work = c.take<V>(crows * std::max(3 * H * (a->tf32x3 ? 2 : 1), M));
    const size_t attention_end = c.used;
    c.used = shared;
    for (V *&e : s->e) {
        e = c.take<V>(crows * (size_t)a->wmax);
    }
    return std::max(attention_end, c.used);
}

/* Scratch for nlocal atoms (with room to spare); kept when large enough. */
int reserve_scratch(hmd_cuda_dpa1 *a, int nlocal)
{
    if (nlocal <= a->cap) {
        return HMD_OK;
    }
    const size_t cap = (size_t)nlocal + nlocal / 8 + 16;
    const size_t bytes =
        (a->mixed ? carve(a, cap, NULL, &a->sf) : carve(a, cap, NULL, &a->sd)) * sizeof(double);
    cudaFree(a->buf);
    a->buf = NULL;
    a->buf_bytes = 0;
    a->cap = 0;
    a->generation++; /* the old pointers are gone, whatever happens next */
    if (cudaMalloc((void **)&a->buf, bytes) != cudaSuccess) {
        cudaGetLastError();
        a->buf = NULL;
        return hmd_error_set(HMD_ENOMEM,
                             "GPU: out of device memory for the DPA-1 scratch of %d atoms (%.2f "
                             "GiB, %.1f MB per atom); use more GPUs or fewer atoms per GPU",
                             nlocal, bytes / 1073741824.0, bytes / (double)cap / 1e6);
    }
    /* finite values everywhere, for the rows the products compute or read past the live ones;
     * the wait orders the memset (legacy stream) before the kernels of the caller's stream */
    HMD_CUDA_CHECK(cudaMemset(a->buf, 0, bytes));
    HMD_CUDA_CHECK(cudaDeviceSynchronize());
    a->buf_bytes = bytes;
    a->cap = (int)cap;
    if (a->mixed) {
        carve(a, cap, a->buf, &a->sf);
    } else {
        carve(a, cap, a->buf, &a->sd);
    }
    return HMD_OK;
}

/* hmd_cuda_upload into a's weights, typed for the model's double arrays. */
int upload(hmd_cuda_dpa1 *a, const void *src, size_t bytes, const double **dst)
{
    return hmd_cuda_upload(&a->weights, src, bytes, (const void **)dst);
}

/* The embedding net into a->emb, with its widths (emb_width_sum, wmax). */
int upload_embedding(hmd_cuda_dpa1 *a, const hmd_mlp *net)
{
    if (net->nlayers > HMD_CUDA_MAX_LAYERS) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: DPA-1 embedding nets of more than %d layers",
                             HMD_CUDA_MAX_LAYERS);
    }
    if (net->nlayers == 0) {
        return hmd_error_set(HMD_EDATA, "GPU: DPA-1 model without an embedding net");
    }
    int rc = hmd_cuda_upload_net(&a->weights, net, &a->emb);
    if (!rc && a->mixed) {
        rc = hmd_cuda_upload_net_f32(&a->weights, net, &a->emb);
    }
    for (int l = 0; l < net->nlayers && !rc; l++) {
        a->emb_width_sum += net->layers[l].n_out;
        a->wmax = std::max(a->wmax, net->layers[l].n_out);
    }
    return rc;
}

/* The attention layers into a->layers. */
int upload_attention(hmd_cuda_dpa1 *a, const hmd_dpa1 *d)
{
    if (d->nlayers > HMD_CUDA_MAX_LAYERS) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: DPA-1 with more than %d attention layers",
                             HMD_CUDA_MAX_LAYERS);
    }
    a->nlayers = d->nlayers;
    a->layers.resize(d->nlayers);
    for (int l = 0; l < d->nlayers; l++) {
        const hmd_attn_layer *L = &d->layers[l];
        attn_layer &D = a->layers[l];
        D.ln_eps = L->ln_eps;
        int rc = hmd_cuda_upload_dense(&a->weights, &L->in_proj, &D.w_in, &D.b_in, NULL);
        if (!rc) {
            rc = hmd_cuda_upload_dense(&a->weights, &L->out_proj, &D.w_out, &D.b_out, NULL);
        }
        D.w_in_f = D.w_out_f = D.w_in_x3 = D.w_in_x3t = NULL;
        if (!rc && a->mixed && !a->tf32x3) {
            rc = hmd_cuda_upload_f32(&a->weights, L->in_proj.w,
                                     (size_t)L->in_proj.n_in * L->in_proj.n_out, &D.w_in_f);
        }
        if (!rc && a->mixed) {
            rc = hmd_cuda_upload_f32(&a->weights, L->out_proj.w,
                                     (size_t)L->out_proj.n_in * L->out_proj.n_out, &D.w_out_f);
        }
        if (!rc && a->tf32x3) {
            const std::vector<float> b3 =
                hmd_tf32x3_weights(L->in_proj.w, L->in_proj.n_in, L->in_proj.n_out);
            rc = hmd_cuda_upload(&a->weights, b3.data(), b3.size() * sizeof(float),
                                 (const void **)&D.w_in_x3);
        }
        if (!rc && a->tf32x3) {
            const std::vector<float> b3t =
                hmd_tf32x3_weights(L->in_proj.w, L->in_proj.n_out, L->in_proj.n_in, true);
            rc = hmd_cuda_upload(&a->weights, b3t.data(), b3t.size() * sizeof(float),
                                 (const void **)&D.w_in_x3t);
        }
        if (!rc) {
            rc = upload(a, L->ln_w, sizeof(double) * d->M, &D.ln_w);
        }
        if (!rc) {
            rc = upload(a, L->ln_b, sizeof(double) * d->M, &D.ln_b);
        }
        if (rc) {
            return rc;
        }
    }
    return HMD_OK;
}

/* The padding tables of every possible type of atom 0, made by the CPU reference. */
int upload_pad_tables(hmd_cuda_dpa1 *a, const hmd_dp_model *m)
{
    const size_t per = hmd_dpa1_pad_table_doubles(m);
    std::vector<double> table(per * m->ntypes), buf(hmd_dpa1_scratch_doubles(m));
    std::vector<int> ibuf(hmd_dpa1_scratch_ints(m));
    hmd_dpa1_scratch sc = {m, buf.data(), ibuf.data(), 0};
    for (int t0 = 0; t0 < m->ntypes; t0++) {
        hmd_dpa1_pad_table(m, t0, &sc, table.data() + per * t0);
    }
    return upload(a, table.data(), table.size() * sizeof(double), &a->g.pad);
}

/* Everything the kernels read of the DPA-1 model m into a->g and a->weights; refuses
 * what this path lacks. */
int upload_model(hmd_cuda_dpa1 *a, const hmd_dp_model *m)
{
    const hmd_dpa1 *d = &m->dpa1;
    const int nt = m->ntypes;
    if (m->kind != HMD_DESCRIPTOR_DPA1) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: not a DPA-1 model");
    }
    if (nt > HMD_CUDA_MAX_TYPES) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: DPA-1 models of at most %d types",
                             HMD_CUDA_MAX_TYPES);
    }
    if (d->table && !d->strip) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: a DPA-1 compression table in concat mode");
    }
    if (softmax_backward_smem(d->nnei) > SELECT_SMEM) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: DPA-1 with sel %d (at most %d)", d->nnei,
                             (int)(SELECT_SMEM / softmax_backward_smem(1)));
    }
    if (grad_T_smem(d->M) > SELECT_SMEM) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: DPA-1 embedding width %d (at most %d)", d->M,
                             (int)(SELECT_SMEM / grad_T_smem(1)));
    }
    dpa1_model &g = a->g;
    g = dpa1_model{};
    g.ntypes = nt;
    g.nnei = d->nnei;
    g.M = d->M;
    g.M2 = d->M2;
    g.H = d->H;
    g.tebd_dim = d->tebd_dim;
    g.ke = d->strip ? 1 : 1 + (d->type_one_side ? 1 : 2) * d->tebd_dim;
    g.dim = m->dim_descrpt;
    g.strip = d->strip;
    g.type_one_side = d->type_one_side;
    g.smooth = d->smooth;
    g.dotr = d->dotr;
    g.normalize = d->normalize;
    g.concat_output_tebd = d->concat_output_tebd;
    g.compressed = d->table != NULL;
    g.scaling = d->scaling;
    g.rcut = m->rcut;
    g.rcut_smth = m->rcut_smth;
    g.protection = m->env_protection;
    for (int k = 0; k < nt * nt; k++) {
        g.exclude[k] = d->exclude[k];
        g.pair_exclude[k] = m->pair_exclude[k];
    }
    const size_t nstat = (size_t)nt * d->nnei * 4;
    const size_t nstrip = (size_t)(d->type_one_side ? nt + 1 : (nt + 1) * (nt + 1)) * d->M;
    int rc = upload(a, d->davg, nstat * sizeof(double), &g.davg);
    if (!rc) {
        rc = upload(a, d->dstd, nstat * sizeof(double), &g.dstd);
    }
    if (!rc) {
        rc = upload(a, d->type_embd, (size_t)(nt + 1) * d->tebd_dim * sizeof(double), &g.type_embd);
    }
    if (!rc && d->strip) {
        rc = upload(a, d->strip_table, nstrip * sizeof(double), &g.strip_table);
    }
    if (!rc && g.compressed) {
        g.table = *d->table;
        const double *coef = NULL;
        rc =
            upload(a, d->table->coef, (size_t)d->table->nspline * 6 * d->M * sizeof(double), &coef);
        g.table.coef = (double *)coef;
    }
    a->wmax = std::max(g.ke, g.M);
    if (!rc && !g.compressed) {
        rc = upload_embedding(a, &d->emb);
    }
    if (!rc) {
        rc = upload_attention(a, d);
    }
    if (!rc) {
        rc = upload_pad_tables(a, m);
    }
    return rc;
}

/* Dynamic shared memory of k_select for a neighbour list of `cap` entries per atom. */
size_t select_bytes(int cap)
{
    return (size_t)cap * (sizeof(double) + sizeof(int)) + 2 * sizeof(int);
}

/* A product over the live rows (live_rows.cuh) through the context's side stream. */
template <typename F> int live_product(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, F f)
{
    return hmd_live_product(&a->lr, st, a->side, blas, a->blas_ws, a->blas_ws_bytes, f);
}

/* G0 of every live row: the embedding net on the inputs in s.e[0] (or the table at R0), then the
 * strip gate; into s.G. `rows` (nlocal nnei) sets the stride of the kept activations. */
template <typename V>
int embedding_forward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, size_t rows,
                      const int *d_type)
{
    const dpa1_model &g = a->g;
    const scratch<V> &s = scratch_of(a, V());
    const hmd_live_rows &lr = a->lr;
    V *out = g.strip ? s.gs : s.G;
    if (g.compressed) {
        k_table_forward<<<blocks_for(lr.grid * g.M), THREADS, 0, st>>>(g, lr.count, s.crow, s.R,
                                                                       out, s.emb_kept);
        HMD_CUDA_LAUNCHED("k_table_forward");
    } else {
        const V *in = s.e[0];
        V *kept = s.emb_kept;
        for (int l = 0; l < a->emb.nlayers; l++) {
            const hmd_cuda_layer &L = a->emb.L[l];
            V *y = l == a->emb.nlayers - 1 ? out : s.e[1 + l % 2];
            int rc = live_product(a, st, blas, [&](int m) {
                return gemm<V>(blas, "embedding layer", 1, m, L.n_out, L.n_in, false,
                               single(in, L.n_in), false, single(weights<V>(L.w, L.wf), L.n_out),
                               V(0), y, L.n_out, 0);
            });
            if (rc) {
                return rc;
            }
            hmd_cuda_dense_forward<<<blocks_for(lr.grid * L.n_out), THREADS, 0, st>>>(
                lr.grid, lr.count, L, in, y, kept);
            HMD_CUDA_LAUNCHED("hmd_cuda_dense_forward");
            kept += rows * L.n_out;
            in = y;
        }
    }
    if (g.strip) {
        k_strip_gate<<<blocks_for(lr.grid * g.M), THREADS, 0, st>>>(g, lr.count, s.crow, d_type,
                                                                    s.tj, s.sw, s.gs, s.G);
        HMD_CUDA_LAUNCHED("k_strip_gate");
    }
    return HMD_OK;
}

/* The input projection of the live rows, work = G W_in (compacted): a DGEMM or an SGEMM; with
 * 3xTF32 (mixed precision), G split into x3 and one TF32 product with the split weights. */
template <typename V>
int in_proj_forward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, const attn_layer &L,
                    const scratch<V> &s, const V *w_in)
{
    const int M = a->g.M, H = a->g.H;
    if constexpr (std::is_same<V, float>::value) {
        if (a->tf32x3) {
            hmd_tf32x3_split<<<blocks_for(a->lr.grid * M), THREADS, 0, st>>>(a->lr.count, M, s.G,
                                                                             s.x3);
            HMD_CUDA_LAUNCHED("hmd_tf32x3_split");
            return live_product(a, st, blas, [&](int m) {
                return blas_result(
                    hmd_tf32x3_gemm(blas, m, 3 * H, M, s.x3, L.w_in_x3, s.work, 3 * H),
                    "in_proj (3xTF32)");
            });
        }
    }
    return live_product(a, st, blas, [&](int m) {
        return gemm<V>(blas, "in_proj", 1, m, 3 * H, M, false, single(s.G, M), false,
                       single(w_in, 3 * H), V(0), s.work, 3 * H, 0);
    });
}

/* dx += dQKV W_in^T over the live rows, from the compacted gradient of the raw projections in
 * s.work: a DGEMM or an SGEMM; with 3xTF32, two TF32 products from s.work = [dQKV_hi | dQKV_lo]
 * (k_qkv_backward writes the parts) and the split W_in^T. */
template <typename V>
int in_proj_backward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, const attn_layer &L,
                     const scratch<V> &s, const V *w_in, V *dx)
{
    const int M = a->g.M, H = a->g.H;
    if constexpr (std::is_same<V, float>::value) {
        if (a->tf32x3) {
            return live_product(a, st, blas, [&](int m) {
                return blas_result(
                    hmd_tf32x3_gemm2_add(blas, m, M, 3 * H, s.work, L.w_in_x3t, dx, M),
                    "in_proj backward (3xTF32)");
            });
        }
    }
    return live_product(a, st, blas, [&](int m) {
        return gemm<V>(blas, "in_proj backward", 1, m, M, 3 * H, false, single(s.work, 3 * H), true,
                       single(w_in, 3 * H), V(1), dx, M, 0);
    });
}

/* Attention layer l over s.G in place (dpa1.c attention_forward). */
template <typename V>
int attention_forward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal, int l)
{
    const dpa1_model &g = a->g;
    const scratch<V> &s = scratch_of(a, V());
    const hmd_live_rows &lr = a->lr;
    const attn_layer &L = a->layers[l];
    const layer_keep<V> &k = s.layer[l];
    const V *w_in = weights<V>(L.w_in, L.w_in_f), *w_out = weights<V>(L.w_out, L.w_out_f);
    const int n = g.nnei, M = g.M, H = g.H;
    const size_t rows = (size_t)nlocal * n;
    const long long sq = (long long)n * 3 * H, sn = (long long)n * n, sh = (long long)n * H;
    /* [Q | K | V] = G W_in (compacted), then + b_in, normalised and scaled (padded) */
    int rc = in_proj_forward(a, st, blas, L, s, w_in);
    if (rc) {
        return rc;
    }
    k_qkv_prepare<<<warp_blocks(lr.grid * 3), THREADS, 0, st>>>(g, lr.count, s.crow, L.b_in, s.work,
                                                                k.qkv, k.qkvn);
    HMD_CUDA_LAUNCHED("k_qkv_prepare");
    /* per atom: S = Q K^T */
    rc = gemm<V>(blas, "Q K^T", nlocal, n, n, H, false, {k.qkv, 3 * H, sq}, true,
                 {k.qkv + H, 3 * H, sq}, V(0), k.S, n, sn);
    if (rc) {
        return rc;
    }
    k_softmax<<<warp_blocks(rows), THREADS, 0, st>>>(g, rows, s.nlive, s.sw, s.rhat, k.S, k.A,
                                                     s.Ap);
    HMD_CUDA_LAUNCHED("k_softmax");
    /* per atom: O = A' V; then P = O W_out into zhat over every row, and the layer norm */
    rc = gemm<V>(blas, "A' V", nlocal, n, H, n, false, {s.Ap, n, sn}, false,
                 {k.qkv + 2 * H, 3 * H, sq}, V(0), s.dO, H, sh);
    if (!rc) {
        rc = gemm<V>(blas, "out_proj", 1, (int)rows, M, H, false, single(s.dO, H), false,
                     single(w_out, M), V(0), k.zhat, M, 0);
    }
    if (rc) {
        return rc;
    }
    k_layer_norm<<<warp_blocks(lr.grid), THREADS, 0, st>>>(lr.count, s.crow, M, L, k.zhat, k.sigma,
                                                           s.G);
    HMD_CUDA_LAUNCHED("k_layer_norm");
    return HMD_OK;
}

/* Reverse of attention layer l: dE/dY in dy -> dE/dX in dx (compacted); accumulates dE/d sw and
 * dE/d rhat (dpa1.c attention_backward). */
template <typename V>
int attention_backward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal, int l,
                       const V *dy, V *dx)
{
    const dpa1_model &g = a->g;
    const scratch<V> &s = scratch_of(a, V());
    const hmd_live_rows &lr = a->lr;
    const attn_layer &L = a->layers[l];
    const layer_keep<V> &k = s.layer[l];
    const V *w_in = weights<V>(L.w_in, L.w_in_f), *w_out = weights<V>(L.w_out, L.w_out_f);
    const int n = g.nnei, M = g.M, H = g.H;
    const size_t rows = (size_t)nlocal * n;
    const long long sq = (long long)n * 3 * H, sn = (long long)n * n, sh = (long long)n * H;
    k_layer_norm_backward<<<warp_blocks(lr.grid), THREADS, 0, st>>>(lr.count, s.crow, M, L, k.zhat,
                                                                    k.sigma, dy, dx, s.work);
    HMD_CUDA_LAUNCHED("k_layer_norm_backward");
    /* dx = dE/dP (and the residual's share), also padded in work; dO = dP W_out^T; per atom
     * dA' = dO V^T */
    int rc = gemm<V>(blas, "out_proj backward", 1, (int)rows, H, M, false, single<V>(s.work, M),
                     true, single(w_out, M), V(0), s.dO, H, 0);
    if (!rc) {
        rc = gemm<V>(blas, "dO V^T", nlocal, n, n, H, false, {s.dO, H, sh}, true,
                     {k.qkv + 2 * H, 3 * H, sq}, V(0), s.dA, n, sn);
    }
    if (rc) {
        return rc;
    }
    k_softmax_backward<<<nlocal, THREADS, softmax_backward_smem(n), st>>>(
        g, s.nlive, s.sw, s.rhat, k.S, k.A, s.dA, s.Ap, s.dsw, s.drhat);
    HMD_CUDA_LAUNCHED("k_softmax_backward");
    /* per atom: dV = A'^T dO, dQ = dS K, dK = dS^T Q */
    rc = gemm<V>(blas, "A'^T dO", nlocal, n, H, n, true, {s.Ap, n, sn}, false, {s.dO, H, sh}, V(0),
                 s.dQKV + 2 * H, 3 * H, sq);
    if (!rc) {
        rc = gemm<V>(blas, "dS K", nlocal, n, H, n, false, {s.dA, n, sn}, false,
                     {k.qkv + H, 3 * H, sq}, V(0), s.dQKV, 3 * H, sq);
    }
    if (!rc) {
        rc = gemm<V>(blas, "dS^T Q", nlocal, n, H, n, true, {s.dA, n, sn}, false,
                     {k.qkv, 3 * H, sq}, V(0), s.dQKV + H, 3 * H, sq);
    }
    if (rc) {
        return rc;
    }
    k_qkv_backward<<<warp_blocks(lr.grid * 3), THREADS, 0, st>>>(g, lr.count, s.crow, k.qkv, k.qkvn,
                                                                 s.dQKV, a->tf32x3, s.work);
    HMD_CUDA_LAUNCHED("k_qkv_backward");
    return in_proj_backward(a, st, blas, L, s, w_in, dx);
}

/* Reverse of the embedding from dg = dE/dg [crows][M] (the net's output; read only): points
 * *dr0 at dE/dR0 of each compacted row, *stride scalars apart, in the embedding work arrays.
 * `rows` (nlocal nnei) is the stride of the kept activations. */
template <typename V>
int embedding_backward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, size_t rows,
                       const V *dg, const V **dr0, int *stride)
{
    const dpa1_model &g = a->g;
    const scratch<V> &s = scratch_of(a, V());
    const hmd_live_rows &lr = a->lr;
    if (g.compressed) {
        k_table_backward<<<warp_blocks(lr.grid), THREADS, 0, st>>>(lr.count, g.M, dg, s.emb_kept,
                                                                   s.e[0]);
        HMD_CUDA_LAUNCHED("k_table_backward");
        *dr0 = s.e[0];
        *stride = 1;
        return HMD_OK;
    }
    const hmd_cuda_net &net = a->emb;
    size_t off = rows * a->emb_width_sum;
    const V *grad = dg;
    for (int l = net.nlayers - 1; l >= 0; l--) {
        const hmd_cuda_layer &L = net.L[l];
        off -= rows * L.n_out;
        V *dz = s.e[0], *dx = s.e[1 + l % 2]; /* never the buffer grad points into */
        hmd_cuda_dense_backward_dz<<<blocks_for(lr.grid * L.n_out), THREADS, 0, st>>>(
            lr.grid, lr.count, L, s.emb_kept + off, grad, dz);
        HMD_CUDA_LAUNCHED("hmd_cuda_dense_backward_dz");
        int rc = live_product(a, st, blas, [&](int m) {
            return gemm<V>(blas, "embedding backward", 1, m, L.n_in, L.n_out, false,
                           single<V>(dz, L.n_out), true, single(weights<V>(L.w, L.wf), L.n_out),
                           V(0), dx, L.n_in, 0);
        });
        if (rc) {
            return rc;
        }
        if (L.resnet != HMD_RESNET_NONE) {
            hmd_cuda_dense_backward_skip<<<blocks_for(lr.grid * L.n_in), THREADS, 0, st>>>(
                lr.grid, lr.count, L, grad, dx);
            HMD_CUDA_LAUNCHED("hmd_cuda_dense_backward_skip");
        }
        grad = dx;
    }
    *dr0 = grad;
    *stride = g.ke;
    return HMD_OK;
}

/* hmd_cuda_dpa1_forward after its checks, with the network in scalar V. */
template <typename V>
int forward_in(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal,
               const double *d_x, const int *d_type, int type0, const hmd_cuda_nbr *nl, double *d_D,
               double *d_dropped)
{
    const dpa1_model &g = a->g;
    const scratch<V> &s = scratch_of(a, V());
    const int n = g.nnei;
    const size_t rows = (size_t)nlocal * n;
    k_select<<<nlocal, THREADS, select_bytes(nl->cap), st>>>(g, d_x, d_type, nl->index, nl->count,
                                                             nl->cap, s.slots, s.livej, s.filled,
                                                             s.nlive, d_dropped);
    HMD_CUDA_LAUNCHED("k_select");
    k_offsets<<<1, OFFSET_THREADS, 0, st>>>(nlocal, s.nlive, s.off, s.count);
    HMD_CUDA_LAUNCHED("k_offsets");
    k_env<<<blocks_for(rows), THREADS, 0, st>>>(g, rows, d_x, d_type, s.slots, s.livej, s.nlive,
                                                s.off, s.nbr, s.crow, s.tj, s.R, s.sw, s.rhat,
                                                s.unorm, s.e[0]);
    HMD_CUDA_LAUNCHED("k_env");
    int rc = hmd_live_rows_begin(&a->lr, st, s.count, rows, a->switches, a->pinned);
    rc = rc ? rc : embedding_forward<V>(a, st, blas, rows, d_type);
    for (int l = 0; l < a->nlayers && !rc; l++) {
        rc = attention_forward<V>(a, st, blas, nlocal, l);
    }
    if (rc) {
        return rc;
    }
    k_descriptor<<<nlocal, THREADS, 0, st>>>(g, type0, d_type, s.filled, s.off, s.nlive, s.G, s.R,
                                             s.T, d_D);
    HMD_CUDA_LAUNCHED("k_descriptor");
    return HMD_OK;
}

/* hmd_cuda_dpa1_backward after its checks, with the network in scalar V. */
template <typename V>
int backward_in(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal, int ncount,
                const double *d_x, const int *d_type, const double *d_dD, hmd_exact *d_f,
                hmd_exact *d_virial)
{
    const dpa1_model &g = a->g;
    const scratch<V> &s = scratch_of(a, V());
    const int n = g.nnei, M = g.M;
    const size_t rows = (size_t)nlocal * n;
    int rc = hmd_live_rows_resume(&a->lr, st, a->pinned);
    if (rc) {
        return rc;
    }
    const hmd_live_rows &lr = a->lr;
    /* per live row, in double: dE/dG = R gamma^T (into dY, in V), dE/dR (through T) = G gamma */
    k_grad_T<<<nlocal, THREADS, grad_T_smem(M), st>>>(g, s.T, d_dD, s.off, s.nlive, s.R, s.G, s.dY,
                                                      s.dR);
    HMD_CUDA_LAUNCHED("k_grad_T");
    HMD_CUDA_CHECK(cudaMemsetAsync(s.dsw, 0, sizeof(double) * rows, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(s.drhat, 0, sizeof(double) * rows * 3, st));
    V *dy = s.dY, *dx = s.dX;
    for (int l = a->nlayers - 1; l >= 0; l--) {
        rc = attention_backward<V>(a, st, blas, nlocal, l, dy, dx);
        if (rc) {
            return rc;
        }
        std::swap(dy, dx);
    }
    /* dy = dE/dG0 */
    if (g.strip) {
        k_strip_backward<<<warp_blocks(lr.grid), THREADS, 0, st>>>(g, lr.count, s.crow, d_type,
                                                                   s.tj, s.sw, s.gs, dy, s.dsw);
        HMD_CUDA_LAUNCHED("k_strip_backward");
    }
    const V *dr0;
    int stride;
    rc = embedding_backward<V>(a, st, blas, rows, dy, &dr0, &stride);
    if (rc) {
        return rc;
    }
    k_force<<<nlocal, THREADS, 0, st>>>(g, ncount, d_x, d_type, s.nlive, s.off, s.livej, s.nbr,
                                        s.dR, dr0, stride, s.rhat, s.unorm, s.drhat, s.dsw, d_f,
                                        d_virial);
    HMD_CUDA_LAUNCHED("k_force");
    return HMD_OK;
}

} // namespace

int hmd_cuda_dpa1_create(hmd_cuda_dpa1 **out, const hmd_dp_model *m, bool mixed, void *blas_ws,
                         size_t blas_ws_bytes)
{
    *out = NULL;
    hmd_cuda_dpa1 *a = new hmd_cuda_dpa1();
    a->select_smem = SELECT_SMEM;
    a->mixed = mixed;
    a->switches = switches_setting();
    a->tf32x3 = mixed && tf32x3_setting();
    a->blas_ws = blas_ws;
    a->blas_ws_bytes = blas_ws_bytes;
    int rc = upload_model(a, m);
    if (!rc && (cudaStreamCreateWithFlags(&a->side, cudaStreamNonBlocking) != cudaSuccess ||
                cudaMallocHost((void **)&a->pinned, sizeof(int)) != cudaSuccess)) {
        cudaGetLastError();
        rc = hmd_error_set(HMD_ESOFTWARE, "CUDA: cannot make the DPA-1 side stream");
    }
    if (rc) {
        hmd_cuda_dpa1_destroy(a);
        return rc;
    }
    *out = a;
    return HMD_OK;
}

int hmd_cuda_dpa1_reserve(hmd_cuda_dpa1 *a, int nlocal, int nbr_cap)
{
    const size_t smem = select_bytes(nbr_cap);
    if (smem > a->select_smem) {
        HMD_CUDA_CHECK(
            cudaFuncSetAttribute(k_select, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        a->select_smem = smem;
    }
    return reserve_scratch(a, nlocal);
}

int hmd_cuda_dpa1_forward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal,
                          int nall, const double *d_x, const int *d_type, int type0,
                          const hmd_cuda_nbr *nl, double *d_D, double *d_dropped)
{
    if (nlocal <= 0) {
        return HMD_OK;
    }
    if (type0 < 0 || type0 >= a->g.ntypes) {
        return hmd_error_set(HMD_EDATA, "DPA-1: type %d of atom 0 is not a model type", type0);
    }
    int rc = hmd_cuda_dpa1_reserve(a, nlocal, nl->cap);
    rc = rc ? rc : hmd_live_use_stream(blas, st, a->blas_ws, a->blas_ws_bytes);
    if (rc) {
        return rc;
    }
    return a->mixed
               ? forward_in<float>(a, st, blas, nlocal, d_x, d_type, type0, nl, d_D, d_dropped)
               : forward_in<double>(a, st, blas, nlocal, d_x, d_type, type0, nl, d_D, d_dropped);
}

int hmd_cuda_dpa1_backward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal,
                           int nall, int ncount, const double *d_x, const int *d_type,
                           const double *d_dD, hmd_exact *d_f, hmd_exact *d_virial)
{
    if (nlocal <= 0) {
        return HMD_OK;
    }
    if (nlocal > a->cap) {
        return hmd_error_set(HMD_ESOFTWARE, "DPA-1 backward of %d atoms without their forward",
                             nlocal);
    }
    const int rc = hmd_live_use_stream(blas, st, a->blas_ws, a->blas_ws_bytes);
    if (rc) {
        return rc;
    }
    ncount = ncount > 0 ? ncount : nlocal;
    return a->mixed
               ? backward_in<float>(a, st, blas, nlocal, ncount, d_x, d_type, d_dD, d_f, d_virial)
               : backward_in<double>(a, st, blas, nlocal, ncount, d_x, d_type, d_dD, d_f, d_virial);
}

unsigned long hmd_cuda_dpa1_generation(const hmd_cuda_dpa1 *a)
{
    return a->generation;
}

size_t hmd_cuda_dpa1_device_bytes(const hmd_cuda_dpa1 *a)
{
    return a ? a->weights.bytes + a->buf_bytes : 0;
}

void hmd_cuda_dpa1_destroy(hmd_cuda_dpa1 *a)
{
    if (!a) {
        return;
    }
    hmd_cuda_weights_free(&a->weights);
    cudaFree(a->buf);
    if (a->side) {
        cudaStreamDestroy(a->side);
    }
    cudaFreeHost(a->pinned);
    delete a;
}
