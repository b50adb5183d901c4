/* se_e2_a on the GPU, device helpers: slot rows and their gradient, the embedding's arithmetic
 * in double or fp32 (precision<A>), the per-centre kernels' shared memory and the batched
 * embedding of a centre's live slots. Part of dp_eval.cu's translation unit (only it includes this
 * file), in an anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_SE_E2A_DEVICE_CUH
#define HMD_CUDA_SE_E2A_DEVICE_CUH

#include "cuda/cuda_internal.cuh"
#include "cuda/exact_sum.cuh"

namespace
{

constexpr int NB = 8; /* embedding rows per batch */

/* ---- device helpers ------------------------------------------------------------------------ */

__device__ int block_of_slot(const hmd_cuda_model &m, int j)
{
    int tau = 0;
    while (j >= m.sel_offset[tau + 1]) {
        tau++;
    }
    return tau;
}

__device__ int net_index(const hmd_cuda_model &m, int ti, int tau)
{
    return m.type_one_side ? tau : ti + tau * m.ntypes;
}

/* Normalised row R of slot j of centre i (CPU: se_e2_a.c slot_row); 1 for a live slot. */
__device__ int slot_row(const hmd_cuda_model &m, int i, int ti, int tau, int j, int nb,
                        const double *x, double R[4], double jac[4][3])
{
    const double *avg = m.davg + ((size_t)ti * m.nnei + j) * 4;
    const double *std = m.dstd + ((size_t)ti * m.nnei + j) * 4;
    if (nb < 0) {
        for (int c = 0; c < 4; c++) {
            R[c] = -avg[c] / std[c];
        }
        return 0;
    }
    if (m.exclude[ti * m.ntypes + tau]) {
        R[0] = R[1] = R[2] = R[3] = 0.0;
        return 0;
    }
    double d[3], raw[4];
    for (int k = 0; k < 3; k++) {
        d[k] = x[3 * nb + k] - x[3 * i + k];
    }
    hmd_env_row(d, m.rcut_smth, m.rcut, m.protection, raw, jac);
    for (int c = 0; c < 4; c++) {
        R[c] = (raw[c] - avg[c]) / std[c];
    }
    return 1;
}

/* The embedding's arithmetic in scalar A: the layer's weights (also read on the host, for
 * cuBLAS: nvcc compiles a host call of a __device__ function in a template, silently, into
 * exit(1)), and the activation and its derivative (precision::act_grad takes what
 * hmd_act_keeps_output says). fp32 evaluates tanh in fp32 and the other activations in double. */
template <typename A> struct precision;

template <> struct precision<double> {
    __host__ __device__ static const double *w(const hmd_cuda_layer &L)
    {
        return L.w;
    }
    __host__ __device__ static const double *b(const hmd_cuda_layer &L)
    {
        return L.b;
    }
    __host__ __device__ static const double *idt(const hmd_cuda_layer &L)
    {
        return L.idt;
    }
    /* net k's table in the compressed kernels' layout (table_device_layout), not tabulate.h's */
    __host__ __device__ static const double *coef(const hmd_cuda_model &m, int k)
    {
        return m.table[k].coef;
    }
    __device__ static double act(const hmd_cuda_layer &L, double z)
    {
        return hmd_act(L.act, &L.silut, z);
    }
    __device__ static double act_grad(const hmd_cuda_layer &L, double kept)
    {
        return hmd_act_grad(L.act, &L.silut, kept);
    }
};

template <> struct precision<float> {
    __host__ __device__ static const float *w(const hmd_cuda_layer &L)
    {
        return L.wf;
    }
    __host__ __device__ static const float *b(const hmd_cuda_layer &L)
    {
        return L.bf;
    }
    __host__ __device__ static const float *idt(const hmd_cuda_layer &L)
    {
        return L.idtf;
    }
    __host__ __device__ static const float *coef(const hmd_cuda_model &m, int k)
    {
        return m.table_coef_f32[k];
    }
    __device__ static float act(const hmd_cuda_layer &L, float z)
    {
        return L.act == HMD_ACT_TANH ? tanhf(z) : (float)hmd_act(L.act, &L.silut, z);
    }
    __device__ static float act_grad(const hmd_cuda_layer &L, float kept)
    {
        return L.act == HMD_ACT_TANH ? 1.0f - kept * kept
                                     : (float)hmd_act_grad(L.act, &L.silut, kept);
    }
};

/* Unit o of a layer at z (bias included) with tangent dz, in scalar A: a = act(z) idt and, with
 * GRAD, t = act'(z) dz idt (else 0); the skip is the caller's. */
template <bool GRAD, typename A>
__device__ void layer_unit(const hmd_cuda_layer &L, int o, A z, A dz, A &a, A &t)
{
    typedef precision<A> P;
    const A *idt = P::idt(L);
    a = P::act(L, z);
    t = GRAD ? P::act_grad(L, hmd_act_keeps_output(L.act) ? a : z) * dz : A(0);
    if (idt) {
        a *= idt[o];
        t *= idt[o];
    }
}

/* One dense layer of an embedding net over `rows` (<= NB) rows, block-wide: vin [rows][n_in]
 * (and with GRAD, tin = d vin / ds, NULL meaning 1) to va [rows][n_out] (and ta), in scalar A
 * (the input In is double for the first layer). Each thread owns one output column for a group
 * of rows, so every weight it loads serves all of them. */
template <bool GRAD, typename A, typename In>
__device__ void embed_layer(const hmd_cuda_layer &L, int rows, int n_in, const In *vin,
                            const A *tin, A *va, A *ta)
{
    typedef precision<A> P;
    const A *Lw = P::w(L), *Lb = P::b(L);
    const int n = L.n_out;
    const int groups = max(1, min(NB, (int)blockDim.x / n));
    const int per = (rows + groups - 1) / groups;
    for (int e = threadIdx.x; e < n * groups; e += blockDim.x) {
        const int o = e % n, r0 = (e / n) * per, nr = min(per, rows - r0);
        A z[NB], dz[NB];
        const A b = Lb ? Lb[o] : A(0);
#pragma unroll
        for (int r = 0; r < NB; r++) {
            z[r] = b;
            dz[r] = A(0);
        }
        for (int q = 0; q < n_in; q++) {
            const A w = Lw[(size_t)q * n + o];
#pragma unroll
            for (int r = 0; r < NB; r++) {
                if (r < nr) {
                    z[r] += A(vin[(size_t)(r0 + r) * n_in + q]) * w;
                    if (GRAD) {
                        dz[r] += (tin ? tin[(size_t)(r0 + r) * n_in + q] : A(1)) * w;
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < NB; r++) { /* unrolled, so z and dz stay in registers */
            if (r >= nr) {
                break;
            }
            const size_t row = (size_t)(r0 + r);
            A a, da;
            layer_unit<GRAD>(L, o, z[r], dz[r], a, da);
            if (L.resnet != HMD_RESNET_NONE) {
                const int oi = L.resnet == HMD_RESNET_SAME ? o : o % n_in;
                a += A(vin[row * n_in + oi]);
                if (GRAD) {
                    da += tin ? tin[row * n_in + oi] : A(1);
                }
            }
            va[row * n + o] = a;
            if (GRAD) {
                ta[row * n + o] = da;
            }
        }
    }
}

/* Shared-memory layout of the descriptor kernels: doubles, then the embedding buffer of the
 * scalar the embedding runs in, then ints. */
struct smem {
    double *R;      /* [nnei][4] */
    double *s;      /* [NB] batch inputs */
    double *T;      /* [M][4] */
    double *gamma;  /* [4][M] */
    hmd_exact *vir; /* [9] the block's virial */
    double *jac;    /* [nnei][4][3] dR/dd of every slot (the backward pass) */
    void *buf;      /* [4 NB max_width] of the embedding's scalar */
    int *live;      /* [nnei] live slots of each block, back to back from the block start */
    int *nlive;     /* [ntypes] */
    int *filled;    /* [ntypes] occupied slots of each block */
};

/* Doubles the embedding buffer of scalar size `abytes` takes: 4 NB max_width scalars (the
 * values and tangents of two layers), rounded up to whole doubles. */
__host__ __device__ size_t buf_doubles(int max_width, size_t abytes)
{
    return (4 * (size_t)NB * max_width * abytes + sizeof(double) - 1) / sizeof(double);
}

/* Bytes of shared memory the descriptor kernels take: exactly the extent carve lays out (the two
 * must change together). */
__host__ __device__ size_t smem_bytes(int nnei, int M, int max_width, int ntypes, bool jac,
                                      size_t abytes)
{
    const size_t doubles =
        (size_t)nnei * (jac ? 16 : 4) + NB + (size_t)M * 8 + 18 + buf_doubles(max_width, abytes);
    return doubles * sizeof(double) + sizeof(int) * ((size_t)nnei + 2 * ntypes);
}

/* The regions of smem in the dynamic shared memory at base (smem_bytes of it). */
__device__ smem carve(const hmd_cuda_model &m, double *base, bool jac, size_t abytes)
{
    smem s;
    s.R = base;
    s.s = s.R + (size_t)m.nnei * 4;
    s.T = s.s + NB;
    s.gamma = s.T + (size_t)m.M * 4;
    s.vir = (hmd_exact *)(s.gamma + (size_t)m.M * 4);
    s.jac = (double *)(s.vir + 9);
    double *buf = s.jac + (jac ? (size_t)m.nnei * 12 : 0);
    s.buf = buf;
    s.live = (int *)(buf + buf_doubles(m.max_width, abytes));
    s.nlive = s.live + m.nnei;
    s.filled = s.nlive + m.ntypes;
    return s;
}

/* Embedding of `rows` (<= NB) inputs s.s through net k, in scalar A: y[rows][M] and, with GRAD,
 * dy/ds; block-wide, results in shared memory (y, dy point into s.buf). */
template <bool GRAD, typename A>
__device__ void embed(const hmd_cuda_model &m, int k, int rows, smem &sm, const A **y, const A **dy)
{
    const int W = NB * m.max_width;
    A *va = (A *)sm.buf, *vb = va + W, *ta = vb + W, *tb = ta + W;
    const hmd_cuda_net &net = m.emb[k];
    const A *vin = NULL, *tin = NULL;
    for (int l = 0; l < net.nlayers; l++) {
        if (l == 0) { /* from the double inputs, one each */
            embed_layer<GRAD>(net.L[0], rows, 1, sm.s, (const A *)NULL, va, ta);
        } else {
            embed_layer<GRAD>(net.L[l], rows, net.L[l - 1].n_out, vin, tin, va, ta);
        }
        __syncthreads();
        vin = va;
        tin = ta;
        A *sw = va;
        va = vb;
        vb = sw;
        sw = ta;
        ta = tb;
        tb = sw;
    }
    *y = vin;
    *dy = tin;
}

/* R of every slot of centre i (with `jac`, dR/dd too), and the live slots of each type block
 * (in slot order). */
__device__ void rows_of_centre(const hmd_cuda_model &m, int i, int ti, const int *slots,
                               const double *x, smem &s, bool jac)
{
    for (int j = threadIdx.x; j < m.nnei; j += blockDim.x) {
        const int tau = block_of_slot(m, j);
        double J[4][3];
        slot_row(m, i, ti, tau, j, slots[j], x, s.R + 4 * j, jac ? J : NULL);
        for (int e = 0; e < 12 && jac; e++) {
            s.jac[12 * j + e] = J[e / 3][e % 3];
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int tau = 0; tau < m.ntypes; tau++) {
            int n = 0, filled = 0;
            const int j0 = m.sel_offset[tau], j1 = m.sel_offset[tau + 1];
            for (int j = j0; j < j1; j++) {
                if (slots[j] >= 0) {
                    filled++;
                    if (!m.exclude[ti * m.ntypes + tau]) {
                        s.live[j0 + n++] = j;
                    }
                }
            }
            s.nlive[tau] = n;
            s.filled[tau] = filled;
        }
    }
    __syncthreads();
}

/* The embedding (embed<GRAD, A>) of the next batch of live slots, s.live[first ..] (`left` of
 * them remain; at most NB are taken), from their s(r) in column 0 of s.R. Returns the rows. */
template <bool GRAD, typename A>
__device__ int embed_batch(const hmd_cuda_model &m, smem &s, int k, int first, int left,
                           const A **y, const A **dy)
{
    const int rows = min(NB, left);
    if (threadIdx.x < rows) {
        s.s[threadIdx.x] = s.R[4 * s.live[first + threadIdx.x]];
    }
    __syncthreads();
    embed<GRAD, A>(m, k, rows, s, y, dy);
    return rows;
}

} // namespace

#endif /* HMD_CUDA_SE_E2A_DEVICE_CUH */
