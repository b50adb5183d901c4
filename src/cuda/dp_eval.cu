/* Deep Potential energies, forces and virial on the GPU: the twin of nnp/dp_eval.c for se_e2_a
 * (networks or compressed tables; DPA-1's descriptor is dpa1_eval.cu). Per-centre kernels: one
 * thread block per centre atom for the neighbour selection and the descriptor (forward, then
 * backward with the embedding recomputed); networks go over all slots of a chunk instead (the
 * section "se_e2_a over all slots"), compressed tables one warp per centre (the section
 * "compressed tables"). cuBLAS runs the fitting nets over all atoms of a type at
 * once. Forces are summed with atomics, so the last bits of a force depend on the scheduling;
 * energies do not. With precision = mixed the embedding (its layers or its tables) runs in
 * fp32: the descriptor kernels are templates on the embedding's scalar A (double or float),
 * over all slots the fused kernel holds it; everything around it stays in double. */
#include "cuda/cuda_internal.cuh"

#include "cuda/blas.cuh"
#include "cuda/cuda_api.h"
#include "cuda/dpa1_eval.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

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
    double *R;     /* [nnei][4] */
    double *s;     /* [NB] batch inputs */
    double *T;     /* [M][4] */
    double *gamma; /* [4][M] */
    double *vir;   /* [9] */
    double *jac;   /* [nnei][4][3] dR/dd of every slot (the backward pass) */
    void *buf;     /* [4 NB max_width] of the embedding's scalar */
    int *live;     /* [nnei] live slots of each block, back to back from the block start */
    int *nlive;    /* [ntypes] */
    int *filled;   /* [ntypes] occupied slots of each block */
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
        (size_t)nnei * (jac ? 16 : 4) + NB + (size_t)M * 8 + 9 + buf_doubles(max_width, abytes);
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
    s.vir = s.gamma + (size_t)m.M * 4;
    s.jac = s.vir + 9;
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

/* ---- kernels --------------------------------------------------------------------------------- */

/* DeePMD-kit's selection (dp_eval.c format_neighbors): within rcut, not pair-excluded, the
 * nearest nnei by (distance, index), then the nearest sel[t] of each type. Block b works on
 * centre idx[b] and writes row b of slots (as do the descriptor kernels). */
__global__ void format_neighbors(const hmd_cuda_model *mp, const double *x, const int *type,
                                 const int *nl_index, const int *nl_count, int cap, const int *idx,
                                 int *slots, double *dropped)
{
    const hmd_cuda_model &m = *mp;
    extern __shared__ double sh[];
    double *r2 = sh;
    int *jj = (int *)(r2 + cap), *n_in = jj + cap;
    const int i = idx[blockIdx.x], ti = type[i], nnei = m.nnei;
    const double rc2 = m.rcut * m.rcut;
    int *out = slots + (size_t)blockIdx.x * nnei;
    if (threadIdx.x == 0) {
        *n_in = 0;
    }
    for (int j = threadIdx.x; j < nnei; j += blockDim.x) {
        out[j] = -1;
    }
    __syncthreads();
    const int count = nl_count[i];
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        const int j = nl_index[(size_t)i * cap + k];
        if (m.pair_exclude[ti * m.ntypes + type[j]]) {
            continue;
        }
        const double dx = x[3 * j] - x[3 * i], dy = x[3 * j + 1] - x[3 * i + 1],
                     dz = x[3 * j + 2] - x[3 * i + 2];
        const double d2 = dx * dx + dy * dy + dz * dz;
        if (d2 <= rc2) {
            const int p = atomicAdd(n_in, 1);
            r2[p] = d2;
            jj[p] = j;
        }
    }
    __syncthreads();
    const int n = *n_in;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        const double a = r2[k];
        const int ja = jj[k], ta = type[ja];
        int rank = 0, rank_t = 0;
        for (int q = 0; q < n; q++) {
            const bool before = r2[q] < a || (r2[q] == a && jj[q] < ja);
            rank += before;
            rank_t += before && type[jj[q]] == ta;
        }
        if (rank < nnei && rank_t < m.sel[ta]) {
            out[m.sel_offset[ta] + rank_t] = ja;
        } else {
            atomicAdd(dropped, 1.0); /* beyond sel: left out, as on the CPU */
        }
    }
}

/* T (M x 4) and D (M x M2) of every centre (se_e2_a.c hmd_se_e2_a_forward), the embedding in
 * scalar A. */
template <typename A>
__global__ void descriptor_forward(const hmd_cuda_model *mp, const double *x, const int *type,
                                   const int *idx, const int *slots_all, double *T_out,
                                   double *D_out)
{
    const hmd_cuda_model &m = *mp;
    extern __shared__ double sh[];
    smem s = carve(m, sh, false, sizeof(A));
    const int row = blockIdx.x, i = idx[row], ti = type[i], M = m.M;
    const int *slots = slots_all + (size_t)row * m.nnei;
    rows_of_centre(m, i, ti, slots, x, s, false);
    double acc[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
    for (int tau = 0; tau < m.ntypes; tau++) {
        const int j0 = m.sel_offset[tau], k = net_index(m, ti, tau);
        for (int b0 = 0; b0 < s.nlive[tau]; b0 += NB) {
            const A *y, *dy;
            const int rows = embed_batch<false>(m, s, k, j0 + b0, s.nlive[tau] - b0, &y, &dy);
            for (int h = 0; h < 2; h++) {
                const int a = threadIdx.x + h * blockDim.x;
                for (int r = 0; r < rows && a < M; r++) {
                    const double g = y[(size_t)r * M + a];
                    const double *R = s.R + 4 * s.live[j0 + b0 + r];
                    for (int c = 0; c < 4; c++) {
                        acc[h][c] += g * R[c];
                    }
                }
            }
            __syncthreads();
        }
        /* the block's empty slots: a model constant */
        const double *pad =
            m.pad_sum + ((size_t)ti * (m.nnei + m.ntypes) + j0 + tau + s.filled[tau]) * M * 4;
        for (int h = 0; h < 2; h++) {
            const int a = threadIdx.x + h * blockDim.x;
            for (int c = 0; c < 4 && a < M; c++) {
                acc[h][c] += pad[4 * a + c];
            }
        }
    }
    const double inv = 1.0 / m.nnei;
    for (int h = 0; h < 2; h++) {
        const int a = threadIdx.x + h * blockDim.x;
        for (int c = 0; c < 4 && a < M; c++) {
            s.T[4 * a + c] = acc[h][c] * inv;
            T_out[((size_t)row * M + a) * 4 + c] = acc[h][c] * inv;
        }
    }
    __syncthreads();
    const int M2 = m.M2;
    for (int e = threadIdx.x; e < M * M2; e += blockDim.x) {
        const int a = e / M2, b = e % M2;
        const double *Ta = s.T + 4 * a, *Tb = s.T + 4 * b;
        D_out[(size_t)row * M * M2 + e] =
            Ta[0] * Tb[0] + Ta[1] * Tb[1] + Ta[2] * Tb[2] + Ta[3] * Tb[3];
    }
}

__device__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, o);
    }
    return v;
}

/* Forces and virial from dE/dD (se_e2_a.c hmd_se_e2_a_backward, then dp_eval.c scatter_pass),
 * the embedding recomputed in scalar A. */
/* dE/dd of a live slot (d = x_nb - x_i) from px = G gamma and py = dG/ds gamma (dE/dR = px,
 * plus py . R on the s column), through R = (raw - avg) / std and jac = d raw / dd ([4][3]):
 * the force on the neighbour is -gr, on the centre +gr. */
__device__ void slot_grad(const double px[4], const double py[4], const double *R,
                          const double *std, const double *jac, double gr[3])
{
    const double g[4] = {px[0] + (py[0] * R[0] + py[1] * R[1] + py[2] * R[2] + py[3] * R[3]), px[1],
                         px[2], px[3]};
    for (int q = 0; q < 3; q++) {
        double v = 0.0;
        for (int c = 0; c < 4; c++) {
            v += g[c] / std[c] * jac[3 * c + q];
        }
        gr[q] = v;
    }
}

/* Adds a live slot's dE/dd gr (slot_grad) between centre i and neighbour nb: -gr onto the
 * neighbour's force (atomically), +gr into the caller's centre force fi, and -gr (x) d into its
 * virial w (d = x_nb - x_i). */
__device__ void add_slot_force(const double *x, int i, int nb, const double gr[3], double *f,
                               double fi[3], double w[9])
{
    double d[3];
    for (int q = 0; q < 3; q++) {
        d[q] = x[3 * nb + q] - x[3 * i + q];
        atomicAdd(&f[3 * nb + q], -gr[q]);
        fi[q] += gr[q];
    }
    for (int u = 0; u < 3; u++) {
        for (int v = 0; v < 3; v++) {
            w[3 * u + v] -= gr[u] * d[v];
        }
    }
}

/* The M x M2 matrix src (dE/dD of a centre) into shared memory dst with rows ld >= M2 apart
 * (block-wide; the caller synchronises before reading). */
__device__ void stage_rows(const double *src, int M, int M2, int ld, double *dst)
{
    for (int e = threadIdx.x; e < M * M2; e += blockDim.x) {
        dst[(e / M2) * ld + e % M2] = src[e];
    }
}

template <typename A>
__global__ void descriptor_backward(const hmd_cuda_model *mp, int ncount, const double *x,
                                    const int *type, const int *idx, const int *slots_all,
                                    const double *T_in, const double *dD_in, double *f,
                                    double *virial)
{
    const hmd_cuda_model &m = *mp;
    extern __shared__ double sh[];
    smem s = carve(m, sh, true, sizeof(A));
    const int row = blockIdx.x, i = idx[row], ti = type[i], M = m.M, M2 = m.M2;
    const int *slots = slots_all + (size_t)row * m.nnei;
    const double *dD = dD_in + (size_t)row * M * M2;
    for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
        s.T[e] = T_in[(size_t)row * M * 4 + e];
    }
    if (threadIdx.x < 9) {
        s.vir[threadIdx.x] = 0.0;
    }
    __syncthreads();
    const double inv = 1.0 / m.nnei;
    /* dD staged in shared memory when it fits in buf (buf_doubles doubles, free until the
     * embedding), with rows padded to M2 + 1 against bank conflicts (gamma_from_dD) when that
     * fits too, else read from global memory */
    const double *dDs = dD;
    int ld = M2;
    const size_t room = buf_doubles(m.max_width, sizeof(A));
    if ((size_t)M * M2 <= room) {
        double *staged = (double *)s.buf;
        ld = (size_t)M * (M2 + 1) <= room ? M2 + 1 : M2;
        stage_rows(dD, M, M2, ld, staged);
        dDs = staged;
        __syncthreads();
    }
    for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
        const int a = e % M, c = e / M;
        s.gamma[(size_t)c * M + a] = hmd_descriptor_grad_T(dDs, ld, s.T, M, M2, a, c) * inv;
    }
    __syncthreads(); /* buf is the embedding's again */
    rows_of_centre(m, i, ti, slots, x, s, true);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarp = blockDim.x / 32;
    double w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    double fi[3] = {0, 0, 0}; /* lane 0: this warp's share of the force on the centre */
    for (int tau = 0; tau < m.ntypes; tau++) {
        const int j0 = m.sel_offset[tau], k = net_index(m, ti, tau);
        for (int b0 = 0; b0 < s.nlive[tau]; b0 += NB) {
            const A *y, *dy;
            const int rows = embed_batch<true>(m, s, k, j0 + b0, s.nlive[tau] - b0, &y, &dy);
            for (int r = warp; r < rows; r += nwarp) {
                const A *g = y + (size_t)r * M, *dg = dy + (size_t)r * M;
                double px[4] = {0, 0, 0, 0}, py[4] = {0, 0, 0, 0};
                for (int a = lane; a < M; a += 32) {
                    for (int c = 0; c < 4; c++) {
                        px[c] += g[a] * s.gamma[(size_t)c * M + a];
                        py[c] += dg[a] * s.gamma[(size_t)c * M + a];
                    }
                }
                for (int c = 0; c < 4; c++) {
                    px[c] = warp_sum(px[c]);
                    py[c] = warp_sum(py[c]);
                }
                if (lane == 0) {
                    const int j = s.live[j0 + b0 + r];
                    double gr[3];
                    slot_grad(px, py, s.R + 4 * j, m.dstd + ((size_t)ti * m.nnei + j) * 4,
                              s.jac + 12 * j, gr);
                    add_slot_force(x, i, slots[j], gr, f, fi, w);
                }
            }
            __syncthreads();
        }
    }
    if (lane == 0) {
        for (int q = 0; q < 3; q++) {
            atomicAdd(&f[3 * i + q], fi[q]);
        }
    }
    if (i < ncount) {
        if (lane == 0) {
            for (int e = 0; e < 9; e++) {
                atomicAdd(&s.vir[e], w[e]);
            }
        }
        __syncthreads();
        if (threadIdx.x < 9) {
            atomicAdd(&virial[threadIdx.x], s.vir[threadIdx.x]);
        }
    }
}

/* rows of src (width n) picked by order[] into dst, or back with `scatter`. */
__global__ void gather_rows(int rows, int n, const int *order, const double *src, double *dst,
                            bool scatter)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < (size_t)rows * n) {
        const size_t r = e / n, c = e % n, o = (size_t)order[r] * n + c;
        if (scatter) {
            dst[o] = src[e];
        } else {
            dst[e] = src[o];
        }
    }
}

__global__ void fill(size_t n, double v, double *p)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n) {
        p[e] = v;
    }
}

/* Atomic energies e_i = scale[t] y_i + add[t] written over y, and their sum over i < ncount into
 * *energy, in a fixed order (one block) so the energy does not depend on the scheduling. */
__global__ void atomic_energies(const hmd_cuda_model *mp, int nlocal, int ncount, const int *type,
                                double *y, double *energy)
{
    __shared__ double part[256];
    const hmd_cuda_model &m = *mp;
    double sum = 0.0;
    for (int i = threadIdx.x; i < nlocal; i += blockDim.x) {
        const int t = type[i];
        const double e = i < ncount ? m.e_scale[t] * y[i] + m.e_add[t] : 0.0;
        y[i] = e;
        sum += e;
    }
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            part[threadIdx.x] += part[threadIdx.x + w];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *energy = part[0];
    }
}

unsigned blocks_for(size_t n, int threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

/* ---- se_e2_a over all slots of a chunk (the default for networks) -----------------------------
 * Every slot of a chunk, empty ones included, laid out by type block: slot (row, j) of block
 * tau = block_of_slot(j) is entry rows * sel_offset[tau] + row * sel[tau] + (j - sel_offset[tau])
 * (slot_index). Each embedding net then sees a fixed rows x sel[tau] matrix whatever the
 * neighbours, so the layers are DGEMMs of fixed shape (one CUDA graph). Live slots contribute
 * their embedding; empty and excluded slots get R = 0 in the contraction and the padding's
 * share (pad_sum) is added per block, as descriptor_forward does. */

__device__ size_t slot_index(const hmd_cuda_model &m, int rows, int row, int j, int tau)
{
    return (size_t)rows * m.sel_offset[tau] + (size_t)row * m.sel[tau] + (j - m.sel_offset[tau]);
}

/* s, R (0 unless live) and dR/dd of every slot of the chunk, in the block layout. */
__global__ void slots_env(const hmd_cuda_model *mp, int rows, const double *x, const int *type,
                          const int *idx, const int *slots_all, double *s_out, double *R_out,
                          double *jac_out)
{
    const hmd_cuda_model &m = *mp;
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (size_t)rows * m.nnei) {
        return;
    }
    const int row = (int)(e / m.nnei), j = (int)(e % m.nnei);
    const int i = idx[row], ti = type[i], tau = block_of_slot(m, j);
    double R[4], J[4][3];
    const int live = slot_row(m, i, ti, tau, j, slots_all[(size_t)row * m.nnei + j], x, R, J);
    const size_t p = slot_index(m, rows, row, j, tau);
    s_out[p] = R[0];
    for (int c = 0; c < 4; c++) {
        R_out[4 * p + c] = live ? R[c] : 0.0;
    }
    for (int q = 0; q < 12; q++) {
        jac_out[12 * p + q] = live ? J[q / 3][q % 3] : 0.0;
    }
}

/* Unit o of an embedding net's first layer (1 -> n_out) at input x, in scalar A: value a and
 * tangent t = da/dx, the skip included. */
template <typename A>
__device__ void first_layer_unit(const hmd_cuda_layer &L, int o, A x, A &a, A &t)
{
    typedef precision<A> P;
    const A *w = P::w(L), *b = P::b(L);
    layer_unit<true>(L, o, x * w[o] + (b ? b[o] : A(0)), w[o], a, t);
    if (L.resnet != HMD_RESNET_NONE) { /* n_in = 1: the input itself, and dx/dx = 1 */
        a += x;
        t += A(1);
    }
}

/* The first layer (1 -> n_out) of n inputs s in double, layer by layer: values into
 * out[0 .. n) and tangents d/ds into out[n .. 2n) (rows of n_out). */
__global__ void slots_first_layer(size_t n, hmd_cuda_layer L, const double *s, double *out)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n * L.n_out) {
        return;
    }
    double a, t;
    first_layer_unit(L, (int)(e % L.n_out), s[e / L.n_out], a, t);
    out[e] = a;
    out[n * L.n_out + e] = t;
}

/* After the product z = in W over the stacked rows (values [0, n), tangents [n, 2n)), in
 * double, in place: values act(z + b) idt + skip, tangents act'(.) (t W) idt + skip. */
__global__ void slots_layer(size_t n, hmd_cuda_layer L, const double *in, double *z)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n * L.n_out) {
        return;
    }
    const size_t r = e / L.n_out, nt = n * L.n_out;
    const int o = (int)(e % L.n_out);
    double a, t;
    layer_unit<true>(L, o, z[e] + (L.b ? L.b[o] : 0.0), z[nt + e], a, t);
    if (L.resnet != HMD_RESNET_NONE) {
        const int oi = L.resnet == HMD_RESNET_SAME ? o : o % L.n_in;
        a += in[r * L.n_in + oi];
        t += in[n * L.n_in + r * L.n_in + oi];
    }
    z[e] = a;
    z[nt + e] = t;
}

/* ---- precision = mixed: the whole embedding net in one kernel, a tile of slots per block ----
 * The activations of a tile stay in shared memory (fp32) from the first layer to the last, so
 * only s is read and G (values and tangents, in double) written; the products run as fp32 FMAs,
 * at twice the FP64 rate. (In double, layer-by-layer DGEMMs on the FP64 tensor cores are faster:
 * 10.0 against 12.9 ms per step at 12,288 atoms on an H200.) A buffer holds a layer's values
 * [width][ld] then its tangents [width][ld], column q of row r at q ld + r: a thread owns one
 * output column and FUSED_RG rows and reads its rows of each input column as 16-byte vectors. */

constexpr int FUSED_RG = 8; /* rows per thread */
constexpr int FUSED_MAX_THREADS = 512;
constexpr size_t FUSED_MAX_SMEM = 200 << 10;

/* Row stride of a buffer of `tile` rows: 16-byte aligned, and not a multiple of
 * 32 banks, so that the threads of a warp writing different columns spread over banks. */
__host__ __device__ int fused_ld(int tile)
{
    return tile + (int)(16 / sizeof(float));
}

/* Shared memory of slots_embed_fused: two buffers of values and tangents. */
size_t fused_smem_bytes(int tile, int max_width)
{
    return 2 * 2 * (size_t)max_width * fused_ld(tile) * sizeof(float);
}

/* Rows of a block of slots_embed_fused: 32, or 16 or 8 where wide layers leave no room; 0
 * when even 8 do not fit (the per-centre kernels then run the model). */
int fused_tile(int max_width)
{
    for (int tile = 32; tile >= FUSED_RG; tile /= 2) {
        if (fused_smem_bytes(tile, max_width) <= FUSED_MAX_SMEM) {
            return tile;
        }
    }
    return 0;
}

/* Threads of a block of slots_embed_fused: one per column and group of FUSED_RG rows of the
 * widest layer, in whole warps, at most FUSED_MAX_THREADS. */
int fused_threads(int max_width, int tile)
{
    const int want = max_width * (tile / FUSED_RG);
    return std::min(FUSED_MAX_THREADS, (want + 31) / 32 * 32);
}

/* Rows r0 .. r0 + FUSED_RG of column p (16-byte aligned) into v. */
__device__ void load_rows(const float *p, float (&v)[FUSED_RG])
{
    static_assert(FUSED_RG * sizeof(float) % 16 == 0, "rows of a thread: whole 16-byte vectors");
#pragma unroll
    for (int i = 0; i < (int)(FUSED_RG * sizeof(float) / 16); i++) {
        const int4 x = reinterpret_cast<const int4 *>(p)[i];
        memcpy(&v[i * 16 / sizeof(float)], &x, 16);
    }
}

/* One layer (n_in > 1) of the tile: in (values then tangents, n_in columns) to the buffer out,
 * or, when g is not NULL, to G: values at g[(row0 + r) M + o], tangents n M further. */
__device__ void fused_layer(const hmd_cuda_layer &L, int rows, int ld, const float *in, float *out,
                            double *g, size_t n, size_t row0)
{
    typedef precision<float> P;
    const float *w = P::w(L), *b = P::b(L);
    const int n_in = L.n_in, n_out = L.n_out, groups = (rows + FUSED_RG - 1) / FUSED_RG;
    const float *in_t = in + (size_t)n_in * ld;
    for (int e = threadIdx.x; e < n_out * groups; e += blockDim.x) {
        const int o = e % n_out, r0 = (e / n_out) * FUSED_RG;
        float z[FUSED_RG], dz[FUSED_RG];
        const float bias = b ? b[o] : 0.0f;
#pragma unroll
        for (int i = 0; i < FUSED_RG; i++) {
            z[i] = bias;
            dz[i] = 0.0f;
        }
        for (int q = 0; q < n_in; q++) {
            const float wq = w[(size_t)q * n_out + o];
            float v[FUSED_RG], t[FUSED_RG];
            load_rows(in + (size_t)q * ld + r0, v);
            load_rows(in_t + (size_t)q * ld + r0, t);
#pragma unroll
            for (int i = 0; i < FUSED_RG; i++) {
                z[i] += v[i] * wq;
                dz[i] += t[i] * wq;
            }
        }
        const int oi = L.resnet == HMD_RESNET_SAME ? o : o % n_in;
#pragma unroll
        for (int i = 0; i < FUSED_RG; i++) { /* rows up to the group's end stay defined */
            const int r = r0 + i;
            float a, t;
            layer_unit<true>(L, o, z[i], dz[i], a, t);
            if (L.resnet != HMD_RESNET_NONE) {
                a += in[(size_t)oi * ld + r];
                t += in_t[(size_t)oi * ld + r];
            }
            if (g) {
                if (r < rows) {
                    g[(row0 + r) * n_out + o] = a;
                    g[(n + row0 + r) * n_out + o] = t;
                }
            } else {
                out[(size_t)o * ld + r] = a;
                out[((size_t)n_out + o) * ld + r] = t;
            }
        }
    }
}

/* Embedding net k of the model over the n inputs s, `tile` rows per block, in fp32: values
 * into out[0, n M) and tangents into out[n M, 2 n M) (double), as slots_embed. */
__global__ void __launch_bounds__(FUSED_MAX_THREADS)
    slots_embed_fused(const hmd_cuda_model *mp, int k, size_t n, int tile, const double *s,
                      double *out)
{
    extern __shared__ __align__(16) unsigned char fused_raw[];
    const hmd_cuda_net &net = mp->emb[k];
    const int ld = fused_ld(tile);
    float *const buf0 = reinterpret_cast<float *>(fused_raw);
    float *const buf1 = buf0 + 2 * (size_t)mp->max_width * ld;
    const size_t row0 = (size_t)blockIdx.x * tile;
    const int rows = (int)min((size_t)tile, n - row0);
    { /* the first layer (1 -> n_out), elementwise; rows beyond the end get s = 0 */
        const hmd_cuda_layer &L = net.L[0];
        const int n_out = L.n_out;
        for (int e = threadIdx.x; e < n_out * tile; e += blockDim.x) {
            const int o = e / tile, r = e % tile;
            float a, t;
            first_layer_unit(L, o, r < rows ? float(s[row0 + r]) : 0.0f, a, t);
            if (net.nlayers == 1) {
                if (r < rows) {
                    out[(row0 + r) * n_out + o] = a;
                    out[(n + row0 + r) * n_out + o] = t;
                }
            } else {
                buf0[(size_t)o * ld + r] = a;
                buf0[((size_t)n_out + o) * ld + r] = t;
            }
        }
    }
    for (int l = 1; l < net.nlayers; l++) {
        __syncthreads();
        const bool last = l == net.nlayers - 1;
        fused_layer(net.L[l], rows, ld, l & 1 ? buf0 : buf1, l & 1 ? buf1 : buf0, last ? out : NULL,
                    n, row0);
    }
}

/* T of each row += the padding's share of every block (descriptor_forward's pad term), then D
 * from T (one block per row; T [rows][M][4] holds the live slots' sum / nnei on entry). */
__global__ void pad_and_D(const hmd_cuda_model *mp, const int *type, const int *idx,
                          const int *slots_all, double *T, double *D)
{
    const hmd_cuda_model &m = *mp;
    __shared__ int filled[HMD_CUDA_MAX_TYPES];
    const int row = blockIdx.x, ti = type[idx[row]], M = m.M, M2 = m.M2;
    const int *slots = slots_all + (size_t)row * m.nnei;
    for (int tau = 0; tau < m.ntypes; tau++) { /* occupied slots of each block, block-wide */
        const int j1 = m.sel_offset[tau + 1];
        int n = 0;
        for (int j = m.sel_offset[tau] + threadIdx.x; j - threadIdx.x < j1; j += blockDim.x) {
            n += __syncthreads_count(j < j1 && slots[j] >= 0);
        }
        if (threadIdx.x == 0) {
            filled[tau] = n;
        }
    }
    __syncthreads();
    double *Tr = T + (size_t)row * M * 4;
    for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
        double v = Tr[e];
        for (int tau = 0; tau < m.ntypes; tau++) {
            const int j0 = m.sel_offset[tau];
            v +=
                m.pad_sum[((size_t)ti * (m.nnei + m.ntypes) + j0 + tau + filled[tau]) * M * 4 + e] /
                m.nnei;
        }
        Tr[e] = v;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < M * M2; e += blockDim.x) {
        const int a = e / M2, b = e % M2;
        const double *Ta = Tr + 4 * a, *Tb = Tr + 4 * b;
        D[(size_t)row * M * M2 + e] = Ta[0] * Tb[0] + Ta[1] * Tb[1] + Ta[2] * Tb[2] + Ta[3] * Tb[3];
    }
}

/* gamma [rows][4][M] = dE/dT / nnei from dE/dD (descriptor_backward's first part), with the
 * row's dE/dD (rows padded to M2 + 1, against bank conflicts) and T first copied into shared
 * memory when `staged` (gamma_smem_bytes). */
__global__ void gamma_from_dD(const hmd_cuda_model *mp, const double *T, const double *dD,
                              double *gamma, bool staged)
{
    extern __shared__ double stage[];
    const hmd_cuda_model &m = *mp;
    const int row = blockIdx.x, M = m.M, M2 = m.M2;
    const double *Tr = T + (size_t)row * M * 4, *dDr = dD + (size_t)row * M * M2;
    int ld = M2;
    if (staged) {
        ld = M2 + 1;
        stage_rows(dDr, M, M2, ld, stage);
        for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
            stage[M * ld + e] = Tr[e];
        }
        __syncthreads();
        dDr = stage;
        Tr = stage + M * ld;
    }
    for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
        const int a = e % M, c = e / M;
        gamma[(size_t)row * 4 * M + (size_t)c * M + a] =
            hmd_descriptor_grad_T(dDr, ld, Tr, M, M2, a, c) / m.nnei;
    }
}

/* Dynamic shared memory of gamma_from_dD: a row's padded dE/dD and T, or 0 (read where they
 * are) when that exceeds the default 48 kB. */
size_t gamma_smem_bytes(const hmd_cuda_model &g)
{
    const size_t bytes = ((size_t)g.M * (g.M2 + 1) + 4 * (size_t)g.M) * sizeof(double);
    return bytes <= 48 * 1024 ? bytes : 0;
}

/* Forces and virial from px = G gamma and py = dG gamma ([slot][4] each, block layout) of every
 * live slot (descriptor_backward's per-row part). One thread per slot. */
__global__ void slots_forces(const hmd_cuda_model *mp, int rows, int ncount, const double *x,
                             const int *type, const int *idx, const int *slots_all, const double *R,
                             const double *jac, const double *px, const double *py, double *f,
                             double *virial)
{
    const hmd_cuda_model &m = *mp;
    __shared__ double vir[9];
    if (threadIdx.x < 9) {
        vir[threadIdx.x] = 0.0;
    }
    __syncthreads();
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < (size_t)rows * m.nnei) {
        const int row = (int)(e / m.nnei), j = (int)(e % m.nnei);
        const int i = idx[row], ti = type[i], tau = block_of_slot(m, j);
        const int nb = slots_all[(size_t)row * m.nnei + j];
        if (nb >= 0 && !m.exclude[ti * m.ntypes + tau]) {
            const size_t p = slot_index(m, rows, row, j, tau);
            double gr[3], d[3];
            slot_grad(px + 4 * p, py + 4 * p, R + 4 * p, m.dstd + ((size_t)ti * m.nnei + j) * 4,
                      jac + 12 * p, gr);
            for (int q = 0; q < 3; q++) {
                d[q] = x[3 * nb + q] - x[3 * i + q];
                atomicAdd(&f[3 * nb + q], -gr[q]);
                atomicAdd(&f[3 * i + q], gr[q]);
            }
            if (i < ncount) {
                for (int u = 0; u < 3; u++) {
                    for (int w = 0; w < 3; w++) {
                        atomicAdd(&vir[3 * u + w], -gr[u] * d[w]);
                    }
                }
            }
        }
    }
    __syncthreads();
    if (threadIdx.x < 9) {
        atomicAdd(&virial[threadIdx.x], vir[threadIdx.x]);
    }
}

/* ---- compressed tables: warps per centre -------------------------------------------------------
 *
 * The embedding of a compressed model is a quintic per interval of s and output, coefficients
 * [interval][a0..a5][M] as on the host. Both kernels give each lane the outputs
 * a = a0 + lane + 32 h (h < TAB_OUT, in passes a0 of 128) and walk the centre's live slots, so
 * that each load of the warp reads 32 consecutive outputs of one coefficient (a lane per slot
 * would read 32 scattered rows at once). A centre's live slots are split in `split` (1, 2 or 4)
 * consecutive ranges, one per warp of the centre, so that a small system still fills the GPU
 * (slot_warps). The forward kernel sums G (x) R in registers and adds the warps' sums in shared
 * memory, in warp order; the backward kernel sums each slot's G gamma and dG gamma over the warp
 * (warp_sum8) and adds forces with atomics. Neither needs a barrier per slot (the per-centre
 * kernels above take NB slots between two). */

constexpr int TAB_WARPS = 4;         /* warps per block: TAB_WARPS / split centres */
constexpr int TAB_OUT = 4;           /* outputs per lane and pass over the slots: 128 per warp */
constexpr int TAB_BLOCKS_PER_SM = 5; /* compressed_forward, unsplit: 102 registers */

/* The quintic of one output at offset xr into its interval (coefficient k at c[k M]) and its
 * slope, extended linearly by delta beyond the table (hmd_emb_table_eval's arithmetic, in scalar
 * A). */
template <typename A> __device__ void table_unit(const A *c, int M, A xr, A delta, A &g, A &dg)
{
    const A a0 = c[0], a1 = c[M], a2 = c[2 * M], a3 = c[3 * M], a4 = c[4 * M], a5 = c[5 * M];
    const A v = a0 + (a1 + (a2 + (a3 + (a4 + a5 * xr) * xr) * xr) * xr) * xr;
    dg = a1 + (2 * a2 + (3 * a3 + (4 * a4 + 5 * a5 * xr) * xr) * xr) * xr;
    g = v + dg * delta;
}

/* The live slots of a centre (occupied, type pair not excluded) in slot order into list (warp
 * wide, all lanes); returns their count. */
__device__ int warp_live_slots(const hmd_cuda_model &m, int ti, const int *slots, int *list)
{
    const int lane = threadIdx.x % 32;
    int n = 0;
    for (int j0 = 0; j0 < m.nnei; j0 += 32) {
        const int j = j0 + lane;
        const bool live =
            j < m.nnei && slots[j] >= 0 && !m.exclude[ti * m.ntypes + block_of_slot(m, j)];
        const unsigned ballot = __ballot_sync(0xffffffffu, live);
        if (live) {
            list[n + __popc(ballot & ((1u << lane) - 1))] = j;
        }
        n += __popc(ballot);
    }
    __syncwarp();
    return n;
}

/* The warp's share of a centre's live slots: entries [*lo, *hi) of the n in its list, part
 * `part` of `split` consecutive ranges. */
__device__ void slot_range(int n, int part, int split, int *lo, int *hi)
{
    *lo = n * part / split;
    *hi = n * (part + 1) / split;
}

/* acc[h][c] = sum of G_a R_c over the live slots list[lo..hi) of centre i, outputs
 * a = a0 + lane + 32 h (warp wide). */
template <typename A>
__device__ void forward_sum(const hmd_cuda_model &m, int i, int ti, const int *slots,
                            const int *list, int lo, int hi, const double *x, int a0,
                            double acc[TAB_OUT][4])
{
    const int lane = threadIdx.x % 32, M = m.M;
    for (int b0 = lo; b0 < hi; b0 += 32) {
        /* lane q places slot b0 + q; the warp then walks them */
        double R[4] = {0, 0, 0, 0}, xr = 0, delta = 0;
        int iv = 0, k = 0;
        if (b0 + lane < hi) {
            const int j = list[b0 + lane], tau = block_of_slot(m, j);
            slot_row(m, i, ti, tau, j, slots[j], x, R, NULL);
            k = net_index(m, ti, tau);
            iv = hmd_emb_table_locate(&m.table[k], R[0], &xr, &delta);
        }
        const int nq = min(32, hi - b0);
        for (int q = 0; q < nq; q++) {
            double Rq[4];
            for (int c = 0; c < 4; c++) {
                Rq[c] = __shfl_sync(0xffffffffu, R[c], q);
            }
            const A xq = A(__shfl_sync(0xffffffffu, xr, q));
            const A dq = A(__shfl_sync(0xffffffffu, delta, q));
            const int kq = __shfl_sync(0xffffffffu, k, q);
            const A *coef =
                precision<A>::coef(m, kq) + (size_t)__shfl_sync(0xffffffffu, iv, q) * 6 * M;
#pragma unroll
            for (int h = 0; h < TAB_OUT; h++) {
                const int a = a0 + lane + 32 * h;
                if (a < M) {
                    A g, dg;
                    table_unit(coef + a, M, xq, dq, g, dg);
                    for (int c = 0; c < 4; c++) {
                        acc[h][c] += (double)g * Rq[c];
                    }
                }
            }
        }
    }
}

/* T [rows][M][4] = (sum over live slots of G (x) R) / nnei of every centre of the chunk
 * (descriptor_forward without the padding and D, which pad_and_D adds), the table in scalar A.
 * `split` warps per centre (1 unless SPLIT), each walking its range of the slots once per 128
 * outputs; dynamic shared memory: forward_smem_bytes. The split form has fewer blocks than the
 * GPU holds (slot_warps), so it takes the registers of one block less per SM. */
template <typename A, bool SPLIT>
__global__ void __launch_bounds__(32 * TAB_WARPS, TAB_BLOCKS_PER_SM - SPLIT)
    compressed_forward(const hmd_cuda_model *mp, int rows, int split_arg, const double *x,
                       const int *type, const int *idx, const int *slots_all, double *T_out)
{
    const hmd_cuda_model &m = *mp;
    const int split = SPLIT ? split_arg : 1;
    /* [TAB_WARPS][TAB_OUT][4][32] sums of each warp when split > 1, then the slot lists */
    extern __shared__ double tab_part[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, part = warp % split;
    const int row = (blockIdx.x * TAB_WARPS + warp) / split, M = m.M;
    if (split == 1 && row >= rows) {
        return; /* a whole warp, in a kernel without a block barrier */
    }
    const bool active = row < rows; /* the same for the split warps of a centre */
    int i = 0, ti = 0, lo = 0, hi = 0;
    const int *slots = slots_all + (size_t)row * m.nnei;
    int *list = (int *)(tab_part + (split > 1 ? TAB_WARPS * TAB_OUT * 4 * 32 : 0)) + warp * m.nnei;
    if (active) {
        i = idx[row];
        ti = type[i];
        slot_range(warp_live_slots(m, ti, slots, list), part, split, &lo, &hi);
    }
    double *Tr = T_out + (size_t)row * M * 4;
    const double inv = 1.0 / m.nnei;
    for (int a0 = 0; a0 < M; a0 += 32 * TAB_OUT) {
        double acc[TAB_OUT][4] = {};
        if (active) {
            forward_sum<A>(m, i, ti, slots, list, lo, hi, x, a0, acc);
        }
        if (split > 1) { /* warp `part` 0 adds the others' sums, in order */
            double *mine = tab_part + warp * TAB_OUT * 4 * 32 + lane;
#pragma unroll
            for (int h = 0; h < TAB_OUT; h++) {
                for (int c = 0; c < 4; c++) {
                    mine[(4 * h + c) * 32] = acc[h][c];
                }
            }
            __syncthreads();
            for (int p = 1; p < split && part == 0; p++) {
#pragma unroll
                for (int h = 0; h < TAB_OUT; h++) {
                    for (int c = 0; c < 4; c++) {
                        acc[h][c] += mine[(p * TAB_OUT * 4 + 4 * h + c) * 32];
                    }
                }
            }
            __syncthreads(); /* the sums are read before the next pass writes them */
        }
#pragma unroll
        for (int h = 0; h < TAB_OUT; h++) {
            const int a = a0 + lane + 32 * h;
            for (int c = 0; c < 4 && a < M && active && part == 0; c++) {
                Tr[4 * a + c] = acc[h][c] * inv;
            }
        }
    }
}

/* One butterfly step over lanes o apart: the lane with bit o set keeps values HALF.. of p[0..2
 * HALF), its partner the others; each adds the partner's share of what it keeps into p[0..HALF). */
template <int HALF> __device__ void warp_halve(double p[8], int o)
{
    const bool up = (threadIdx.x % 32) & o;
#pragma unroll
    for (int v = 0; v < HALF; v++) {
        const double keep = up ? p[v + HALF] : p[v], send = up ? p[v] : p[v + HALF];
        p[v] = keep + __shfl_xor_sync(0xffffffffu, send, o);
    }
}

/* The warp sums of eight values p[0..7] given by every lane, by a butterfly that halves what
 * each lane carries at each of its first three steps (9 shuffles instead of 40): returns in
 * p[0] the sum of value ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1). */
__device__ int warp_sum8(double p[8])
{
    const int lane = threadIdx.x % 32;
    warp_halve<4>(p, 16);
    warp_halve<2>(p, 8);
    warp_halve<1>(p, 4);
    p[0] += __shfl_xor_sync(0xffffffffu, p[0], 2);
    p[0] += __shfl_xor_sync(0xffffffffu, p[0], 1);
    return ((lane >> 4) & 1) * 4 + ((lane >> 3) & 1) * 2 + ((lane >> 2) & 1);
}

/* Forces and virial of every centre of the chunk from gamma [rows][4][M] (gamma_from_dD), the
 * table recomputed in scalar A (descriptor_backward's per-slot part). `split` warps per centre:
 * each walks its range of the live slots as compressed_forward does (lane: outputs
 * a0 + lane + 32 h), sums px = G gamma and py = dG gamma of each slot over the warp and leaves
 * them with the lane that placed the slot (its place in the range % 32), which then adds that
 * slot's forces. Dynamic shared memory: backward_smem_bytes. */
template <typename A>
__global__ void __launch_bounds__(32 * TAB_WARPS)
    compressed_backward(const hmd_cuda_model *mp, int rows, int split, int ncount, const double *x,
                        const int *type, const int *idx, const int *slots_all, const double *gamma,
                        double *f, double *virial)
{
    const hmd_cuda_model &m = *mp;
    /* [TAB_WARPS][4][M] gamma, [TAB_WARPS][32][8] px and py of a batch, the slot lists */
    extern __shared__ double tab_gamma[];
    __shared__ double vir[9];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row = (blockIdx.x * TAB_WARPS + warp) / split;
    if (threadIdx.x < 9) {
        vir[threadIdx.x] = 0.0;
    }
    __syncthreads();
    if (row < rows) { /* a whole warp */
        const int M = m.M, i = idx[row], ti = type[i];
        const int *slots = slots_all + (size_t)row * m.nnei;
        double *batch = tab_gamma + TAB_WARPS * 4 * M + warp * 32 * 8;
        int *list = (int *)(tab_gamma + TAB_WARPS * (4 * M + 32 * 8)) + warp * m.nnei;
        int lo, hi;
        slot_range(warp_live_slots(m, ti, slots, list), warp % split, split, &lo, &hi);
        double *gl = tab_gamma + warp * 4 * M; /* [4][M]: this centre's gamma */
        for (int e = lane; e < 4 * M; e += 32) {
            gl[e] = gamma[(size_t)row * 4 * M + e];
        }
        __syncwarp();
        double w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, fi[3] = {0, 0, 0};
        for (int b0 = lo; b0 < hi; b0 += 32) {
            const bool mine = b0 + lane < hi; /* lane places slot b0 + lane */
            int j = 0, tau = 0, iv = 0, k = 0;
            double R[4], xr = 0, delta = 0;
            if (mine) {
                j = list[b0 + lane];
                tau = block_of_slot(m, j);
                slot_row(m, i, ti, tau, j, slots[j], x, R, NULL);
                k = net_index(m, ti, tau);
                iv = hmd_emb_table_locate(&m.table[k], R[0], &xr, &delta);
            }
            const int nq = min(32, hi - b0);
            for (int q = 0; q < nq; q++) {
                const A xq = A(__shfl_sync(0xffffffffu, xr, q));
                const A dq = A(__shfl_sync(0xffffffffu, delta, q));
                const int kq = __shfl_sync(0xffffffffu, k, q);
                const A *coef =
                    precision<A>::coef(m, kq) + (size_t)__shfl_sync(0xffffffffu, iv, q) * 6 * M;
                double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                for (int a0 = 0; a0 < M; a0 += 32 * TAB_OUT) {
#pragma unroll
                    for (int h = 0; h < TAB_OUT; h++) {
                        const int a = a0 + lane + 32 * h;
                        if (a < M) {
                            A g, dg;
                            table_unit(coef + a, M, xq, dq, g, dg);
                            for (int c = 0; c < 4; c++) {
                                const double gc = gl[c * M + a];
                                p[c] += (double)g * gc;
                                p[4 + c] += (double)dg * gc;
                            }
                        }
                    }
                }
                const int v = warp_sum8(p);
                if (lane % 4 == 0) {
                    batch[8 * q + v] = p[0];
                }
            }
            __syncwarp();
            if (mine) {
                const double *pxy = batch + 8 * lane; /* px, py of this lane's slot */
                const int nb = slots[j];
                double J[4][3], gr[3];
                slot_row(m, i, ti, tau, j, nb, x, R, J);
                slot_grad(pxy, pxy + 4, R, m.dstd + ((size_t)ti * m.nnei + j) * 4, &J[0][0], gr);
                add_slot_force(x, i, nb, gr, f, fi, w);
            }
            __syncwarp(); /* batch is read before the next batch writes it */
        }
        for (int q = 0; q < 3; q++) {
            fi[q] = warp_sum(fi[q]);
        }
        for (int e = 0; e < 9; e++) {
            w[e] = warp_sum(w[e]);
        }
        if (lane == 0) {
            for (int q = 0; q < 3; q++) {
                atomicAdd(&f[3 * i + q], fi[q]);
            }
            for (int e = 0; e < 9 && i < ncount; e++) {
                atomicAdd(&vir[e], w[e]);
            }
        }
    }
    __syncthreads();
    if (threadIdx.x < 9) {
        atomicAdd(&virial[threadIdx.x], vir[threadIdx.x]);
    }
}

/* Dynamic shared memory of compressed_forward: each warp's sums (when the centres' slots are
 * split) and slot list. */
size_t forward_smem_bytes(const hmd_cuda_model &g, int split)
{
    return (split > 1 ? sizeof(double) * TAB_WARPS * TAB_OUT * 4 * 32 : 0) +
           sizeof(int) * TAB_WARPS * g.nnei;
}

/* Dynamic shared memory of compressed_backward: each warp's gamma, px and py of a batch of
 * slots, and its slot list. */
size_t backward_smem_bytes(const hmd_cuda_model &g)
{
    return sizeof(double) * TAB_WARPS * (4 * (size_t)g.M + 32 * 8) +
           sizeof(int) * TAB_WARPS * g.nnei;
}

} // namespace

/* ---- host side ----------------------------------------------------------------------------- */

struct hmd_cuda_dp {
    const hmd_dp_model *host; /* borrowed for the network layout */
    hmd_cuda_model model;     /* host copy of the device struct */
    hmd_cuda_model *d_model;
    hmd_cuda_weights weights; /* the model's arrays on the device */
    std::vector<hmd_cuda_net> fit;
    int dim; /* fitting input width */
    int fit_width_sum, fit_max_width;
    cudaStream_t stream;
    cublasHandle_t blas;
    void *blas_workspace; /* given to cuBLAS so graph capture never allocates */
    hmd_cuda_nbr nl;
    hmd_cuda_dpa1 *dpa1; /* the DPA-1 descriptor, or NULL for se_e2_a */
    bool mixed;          /* precision = mixed: the descriptor's networks in fp32 */
    int type0;           /* DPA-1: type of the system's atom 0 (empty slots) */
    size_t bytes;
    unsigned long generation;
    /* home atoms grouped by fitting net: order[fit_start[k] .. fit_start[k+1]) use net k */
    std::vector<int> fit_start;
    /* arrays grown at neighbour-list steps: per atom (cap_all, cap_local), and per row of a
     * chunk of centres evaluated together (cap_rows; se_e2_a runs the home atoms in chunks
     * so that its descriptors and fitting states never exist for all atoms at once) */
    int cap_all, cap_local, cap_rows;
    int chunk_rows;              /* se_e2_a: most centres evaluated together (chunk_rows_setting) */
    int sms, slot_warps;         /* the GPU's SMs; compressed: slot_warps_setting (0: by size) */
    double *x, *f, *ev, *atom_y; /* [cap_all][3] twice, [HMD_CUDA_NEV], [cap_local] */
    int *type, *order;           /* [cap_all], [cap_local] */
    double *D, *dD;              /* DPA-1: [cap_local][dim] */
    double *T, *fit_buf;         /* [cap_rows][M][4]; [cap_rows] fitting rows and states */
    int *slots;                  /* [cap_rows][nnei] */
    size_t fit_buf_doubles;
    /* se_e2_a over all slots (slots_setting): per slot of a chunk s, R, dR/dd, the
     * embedding's value and tangent, and px, py; two layer buffers and gamma */
    bool slots_path;
    int fused_tile; /* mixed: rows per block of slots_embed_fused; 0 in double (layer by layer) */
    int cap_slot_rows;
    double *slot_s, *slot_R, *slot_jac, *slot_G, *slot_pxy, *emb_a, *emb_b, *gamma;
};

namespace
{

constexpr size_t BLAS_WORKSPACE_BYTES = 32u << 20;
constexpr int CHUNK_ROWS = 32768; /* se_e2_a centres evaluated together, by default */
/* over all slots a centre of a chunk holds about 820 kB (water, sel 46 + 92, M 100): 4,096 of
 * them cost 2% more time than one chunk of 12,288 on an H200, and 3.4 GB instead of 11 */
constexpr int SLOT_CHUNK_ROWS = 4096;

/* se_e2_a centres per chunk: HALOMD_GPU_CHUNK_ROWS when set to a positive number (below 2^30),
 * else `fallback`. */
int chunk_rows_setting(int fallback)
{
    const char *v = getenv("HALOMD_GPU_CHUNK_ROWS");
    const long n = v ? strtol(v, NULL, 10) : 0;
    return n > 0 && n < (1L << 30) ? (int)n : fallback;
}

/* Warps per centre of the compressed kernels: HALOMD_GPU_SLOT_WARPS when set to 1, 2 or 4,
 * else 0 (slot_warps picks by the size of each launch). */
int slot_warps_setting()
{
    const char *v = getenv("HALOMD_GPU_SLOT_WARPS");
    const long n = v ? strtol(v, NULL, 10) : 0;
    return n == 1 || n == 2 || n == 4 ? (int)n : 0;
}

/* se_e2_a networks go over all slots of a chunk with matrix products (evaluate_se_slots; fp32
 * embedding with precision = mixed) unless HALOMD_SE_SLOTS=0, which keeps them in the
 * per-centre descriptor kernels (evaluate_se, where compressed models always run, in their warp
 * kernels). */
bool slots_setting()
{
    const char *v = getenv("HALOMD_SE_SLOTS");
    return !(v && !strcmp(v, "0"));
}

/* What turns a fitting output into an atomic energy (dp_eval.c atomic_energies). */
void energy_terms(const hmd_dp_model *m, hmd_cuda_model &g)
{
    for (int t = 0; t < m->ntypes; t++) {
        const bool atom_out = m->atom_exclude[t], fit_out = m->fit_exclude[t];
        g.e_scale[t] = atom_out || fit_out ? 0.0 : 1.0;
        g.e_add[t] = atom_out ? 0.0 : (fit_out ? 0.0 : m->bias_atom_e[t]) + m->out_bias[t];
    }
}

/* The fitting nets over dim_descrpt inputs. */
int upload_fitting(hmd_cuda_dp *dp, const hmd_dp_model *m)
{
    int rc = HMD_OK;
    dp->fit.resize(m->nfit);
    dp->dim = m->dim_descrpt;
    dp->fit_width_sum = 0;
    dp->fit_max_width = m->dim_descrpt;
    for (int k = 0; k < m->nfit && !rc; k++) {
        rc = hmd_cuda_upload_net(&dp->weights, &m->fit[k], &dp->fit[k]);
        int sum = 0;
        for (int l = 0; l < m->fit[k].nlayers; l++) {
            sum += m->fit[k].layers[l].n_out;
            dp->fit_max_width = std::max(dp->fit_max_width, m->fit[k].layers[l].n_out);
        }
        dp->fit_width_sum = std::max(dp->fit_width_sum, sum);
    }
    return rc;
}

/* DPA-1: the descriptor is dpa1_eval.cu's; this context keeps the fitting and the energies. */
int upload_dpa1(hmd_cuda_dp *dp, const hmd_dp_model *m)
{
    hmd_cuda_model &g = dp->model;
    if (m->ntypes > HMD_CUDA_MAX_TYPES) {
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda: at most %d types on the GPU",
                             HMD_CUDA_MAX_TYPES);
    }
    g = hmd_cuda_model{};
    g.ntypes = m->ntypes;
    energy_terms(m, g);
    int rc = hmd_cuda_dpa1_create(&dp->dpa1, m, dp->mixed);
    rc = rc ? rc : upload_fitting(dp, m);
    return rc ? rc : hmd_cuda_upload(&dp->weights, &g, sizeof g, (const void **)&dp->d_model);
}

/* Lets the descriptor kernels of embedding scalar A have the shared memory model g needs. */
template <typename A> int allow_shared_memory(const hmd_cuda_model &g)
{
    const size_t fwd = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, false, sizeof(A));
    const size_t bwd = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, true, sizeof(A));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(descriptor_forward<A>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fwd));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(descriptor_backward<A>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bwd));
    return HMD_OK;
}

/* Lets the compressed kernels of table scalar A have the shared memory model g needs. */
template <typename A> int allow_compressed(const hmd_cuda_model &g)
{
    HMD_CUDA_CHECK(cudaFuncSetAttribute(compressed_forward<A, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)forward_smem_bytes(g, 1)));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(compressed_forward<A, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)forward_smem_bytes(g, TAB_WARPS)));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(compressed_backward<A>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)backward_smem_bytes(g)));
    return HMD_OK;
}

/* Lets slots_embed_fused have the shared memory of its tile. */
int allow_fused(int max_width, int tile)
{
    HMD_CUDA_CHECK(cudaFuncSetAttribute(slots_embed_fused,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)fused_smem_bytes(tile, max_width)));
    return HMD_OK;
}

/* The coefficients of table t on the device: *coef, and in mixed precision their fp32 copy
 * *coef_f32. */
int upload_table(hmd_cuda_dp *dp, const hmd_emb_table *t, double **coef, const float **coef_f32)
{
    const size_t n = (size_t)t->nspline * 6 * t->M;
    int rc = hmd_cuda_upload(&dp->weights, t->coef, n * sizeof(double), (const void **)coef);
    if (!rc && dp->mixed) {
        rc = hmd_cuda_upload_f32(&dp->weights, t->coef, n, coef_f32);
    }
    return rc;
}

int upload_model(hmd_cuda_dp *dp, const hmd_dp_model *m)
{
    const hmd_se_e2_a *se = &m->se;
    hmd_cuda_model &g = dp->model;
    const int nt = m->ntypes;
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        return upload_dpa1(dp, m);
    }
    if (nt > HMD_CUDA_MAX_TYPES || se->M > HMD_CUDA_MAX_M) {
        return hmd_error_set(HMD_ENOTSUP,
                             "backend = cuda: at most %d types and an embedding "
                             "width of %d on the GPU",
                             HMD_CUDA_MAX_TYPES, HMD_CUDA_MAX_M);
    }
    g = hmd_cuda_model{};
    g.ntypes = nt;
    g.nnei = se->nnei;
    g.M = se->M;
    g.M2 = se->M2;
    g.nemb = se->nemb;
    g.type_one_side = se->type_one_side;
    g.compressed = se->table != NULL;
    g.rcut = m->rcut;
    g.rcut_smth = m->rcut_smth;
    g.protection = m->env_protection;
    g.max_width = se->M;
    for (int t = 0; t < nt; t++) {
        g.sel[t] = se->sel[t];
        g.sel_offset[t] = se->sel_offset[t];
    }
    g.sel_offset[nt] = se->sel_offset[nt];
    for (int k = 0; k < nt * nt; k++) {
        g.exclude[k] = se->exclude[k];
        g.pair_exclude[k] = m->pair_exclude[k];
    }
    energy_terms(m, g);
    const size_t nstat = (size_t)nt * se->nnei * 4;
    int rc =
        hmd_cuda_upload(&dp->weights, se->davg, nstat * sizeof(double), (const void **)&g.davg);
    if (!rc) {
        rc =
            hmd_cuda_upload(&dp->weights, se->dstd, nstat * sizeof(double), (const void **)&g.dstd);
    }
    if (!rc) {
        rc = hmd_cuda_upload(&dp->weights, se->pad_sum,
                             (size_t)nt * (se->nnei + nt) * se->M * 4 * sizeof(double),
                             (const void **)&g.pad_sum);
    }
    for (int k = 0; k < se->nemb && !rc; k++) {
        if (g.compressed) {
            g.table[k] = se->table[k];
            if (se->table[k].M > 0) {
                rc = upload_table(dp, &se->table[k], &g.table[k].coef, &g.table_coef_f32[k]);
            }
        }
        if (!rc && se->emb[k].nlayers) {
            rc = hmd_cuda_upload_net(&dp->weights, &se->emb[k], &g.emb[k]);
            if (!rc && dp->mixed) {
                rc = hmd_cuda_upload_net_f32(&dp->weights, &se->emb[k], &g.emb[k]);
            }
            for (int l = 0; l < se->emb[k].nlayers; l++) {
                g.max_width = std::max(g.max_width, se->emb[k].layers[l].n_out);
            }
        }
    }
    if (g.compressed) {
        for (int k = 0; k < se->nemb; k++) {
            if (se->emb[k].nlayers && se->table[k].M == 0) {
                return hmd_error_set(HMD_ENOTSUP, "backend = cuda: a compressed model with a "
                                                  "network left untabulated");
            }
        }
    }
    if (!rc) {
        rc = upload_fitting(dp, m);
    }
    if (!rc) {
        rc = hmd_cuda_upload(&dp->weights, &g, sizeof g, (const void **)&dp->d_model);
    }
    if (!rc && !g.compressed) {
        rc = dp->mixed ? allow_shared_memory<float>(g) : allow_shared_memory<double>(g);
    }
    if (!rc && g.compressed) {
        rc = dp->mixed ? allow_compressed<float>(g) : allow_compressed<double>(g);
    }
    return rc;
}

template <typename T> int device_array(hmd_cuda_dp *dp, T **p, size_t old_n, size_t n)
{
    if (*p) {
        cudaFree(*p);
        dp->bytes -= old_n * sizeof(T);
        *p = NULL;
    }
    HMD_CUDA_CHECK(cudaMalloc((void **)p, (n ? n : 1) * sizeof(T)));
    dp->bytes += n * sizeof(T);
    dp->generation++;
    return HMD_OK;
}

int reserve(hmd_cuda_dp *dp, int nlocal, int nall)
{
    const hmd_cuda_model &g = dp->model;
    int rc = HMD_OK;
    if (nall > dp->cap_all) {
        const size_t old = (size_t)dp->cap_all, cap = (size_t)nall + nall / 2 + 16;
        rc = device_array(dp, &dp->x, 3 * old, 3 * cap);
        if (!rc) {
            rc = device_array(dp, &dp->f, 3 * old, 3 * cap);
        }
        if (!rc) {
            rc = device_array(dp, &dp->type, old, cap);
        }
        dp->cap_all = rc ? 0 : (int)cap;
    }
    if (!rc && nlocal > dp->cap_local) {
        const size_t old = (size_t)dp->cap_local, cap = (size_t)nlocal + nlocal / 2 + 16;
        const size_t dpa1_dim = dp->dpa1 ? (size_t)dp->dim : 0;
        rc = device_array(dp, &dp->atom_y, old, cap);
        if (!rc) {
            rc = device_array(dp, &dp->order, old, cap);
        }
        if (!rc) {
            rc = device_array(dp, &dp->D, old * dpa1_dim, cap * dpa1_dim);
        }
        if (!rc) {
            rc = device_array(dp, &dp->dD, old * dpa1_dim, cap * dpa1_dim);
        }
        dp->cap_local = rc ? 0 : (int)cap;
    }
    /* DPA-1 fits all its rows at once; se_e2_a chunks of at most chunk_rows */
    const int rows = dp->dpa1 ? dp->cap_local : std::min(dp->cap_local, dp->chunk_rows);
    if (!rc && rows > dp->cap_rows) {
        const size_t old = (size_t)dp->cap_rows, cap = (size_t)rows;
        const size_t fit =
            (size_t)dp->dim + 1 + (size_t)dp->fit_width_sum * 2 + (size_t)dp->fit_max_width * 2;
        rc = device_array(dp, &dp->slots, old * g.nnei, cap * g.nnei);
        if (!rc) {
            rc = device_array(dp, &dp->T, old * g.M * 4, cap * g.M * 4);
        }
        if (!rc && g.compressed) { /* the slots path keeps its gamma with its slot arrays */
            rc = device_array(dp, &dp->gamma, old * g.M * 4, cap * g.M * 4);
        }
        if (!rc) {
            rc = device_array(dp, &dp->fit_buf, dp->fit_buf_doubles, cap * fit);
            dp->fit_buf_doubles = cap * fit;
        }
        dp->cap_rows = rc ? 0 : (int)cap;
    }
    if (!rc && dp->slots_path && dp->cap_rows > dp->cap_slot_rows) {
        const size_t old = (size_t)dp->cap_slot_rows * g.nnei, n = (size_t)dp->cap_rows * g.nnei;
        int max_sel = 0;
        for (int t = 0; t < g.ntypes; t++) {
            max_sel = std::max(max_sel, g.sel[t]);
        }
        /* the layer buffers of slots_embed, unless the fused kernel keeps them on chip */
        const size_t emb_row = dp->fused_tile ? 0 : 2 * (size_t)max_sel * g.max_width;
        const size_t emb_old = emb_row * dp->cap_slot_rows, emb = emb_row * dp->cap_rows;
        rc = device_array(dp, &dp->slot_s, old, n);
        rc = rc ? rc : device_array(dp, &dp->slot_R, 4 * old, 4 * n);
        rc = rc ? rc : device_array(dp, &dp->slot_jac, 12 * old, 12 * n);
        rc = rc ? rc : device_array(dp, &dp->slot_G, 2 * old * g.M, 2 * n * g.M);
        rc = rc ? rc : device_array(dp, &dp->slot_pxy, 8 * old, 8 * n);
        rc = rc ? rc : device_array(dp, &dp->emb_a, emb_old, emb);
        rc = rc ? rc : device_array(dp, &dp->emb_b, emb_old, emb);
        rc = rc ? rc
                : device_array(dp, &dp->gamma, 4 * (size_t)dp->cap_slot_rows * g.M,
                               4 * (size_t)dp->cap_rows * g.M);
        dp->cap_slot_rows = rc ? 0 : dp->cap_rows;
    }
    if (!rc && !dp->ev) {
        rc = device_array(dp, &dp->ev, 0, HMD_CUDA_NEV);
    }
    return rc;
}

/* Fitting net k over `rows` gathered rows X [rows][dim] (device): y [rows] and dE/dX
 * (written over X). buf holds the layer states. */
int fitting(hmd_cuda_dp *dp, int k, int rows, double *X, double *y_out, double *buf)
{
    const hmd_cuda_net &net = dp->fit[k];
    const int T = 256;
    /* forward: outputs and kept values of every layer, back to back */
    double *outs = buf, *kept = buf + (size_t)rows * dp->fit_width_sum;
    double *g0 = kept + (size_t)rows * dp->fit_width_sum,
           *g1 = g0 + (size_t)rows * dp->fit_max_width;
    std::vector<const double *> in(net.nlayers), out(net.nlayers), kp(net.nlayers);
    const double *x = X;
    size_t off = 0;
    for (int l = 0; l < net.nlayers; l++) {
        const hmd_cuda_layer &L = net.L[l];
        double *o = outs + off, *kv = kept + off;
        off += (size_t)rows * L.n_out;
        if (hmd_blas_gemm(dp->blas, CUBLAS_OP_N, CUBLAS_OP_N, L.n_out, rows, L.n_in, 1.0, L.w,
                          L.n_out, 0, x, L.n_in, 0, 0.0, o, L.n_out, 0,
                          1) != CUBLAS_STATUS_SUCCESS) {
            return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: fitting layer %d forward failed", l);
        }
        hmd_cuda_dense_forward<<<blocks_for((size_t)rows * L.n_out, T), T, 0, dp->stream>>>(
            rows, L, x, o, kv);
        HMD_CUDA_LAUNCHED("hmd_cuda_dense_forward");
        in[l] = x;
        out[l] = o;
        kp[l] = kv;
        x = o;
    }
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(y_out, x, sizeof(double) * rows, cudaMemcpyDeviceToDevice, dp->stream));
    /* backward from dE/dy = 1 */
    fill<<<blocks_for((size_t)rows, T), T, 0, dp->stream>>>((size_t)rows, 1.0, g0);
    HMD_CUDA_LAUNCHED("fill");
    double *g = g0, *dz = g1;
    for (int l = net.nlayers - 1; l >= 0; l--) {
        const hmd_cuda_layer &L = net.L[l];
        hmd_cuda_dense_backward_dz<<<blocks_for((size_t)rows * L.n_out, T), T, 0, dp->stream>>>(
            rows, L, kp[l], g, dz);
        HMD_CUDA_LAUNCHED("hmd_cuda_dense_backward_dz");
        /* dx = dz W^T, over the layer's input (no longer needed): X for layer 0 */
        double *dx = l == 0 ? X : (double *)in[l];
        if (hmd_blas_gemm(dp->blas, CUBLAS_OP_T, CUBLAS_OP_N, L.n_in, rows, L.n_out, 1.0, L.w,
                          L.n_out, 0, dz, L.n_out, 0, 0.0, dx, L.n_in, 0,
                          1) != CUBLAS_STATUS_SUCCESS) {
            return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: fitting layer %d backward failed", l);
        }
        if (L.resnet != HMD_RESNET_NONE) {
            hmd_cuda_dense_backward_skip<<<blocks_for((size_t)rows * L.n_in, T), T, 0,
                                           dp->stream>>>(rows, L, g, dx);
            HMD_CUDA_LAUNCHED("hmd_cuda_dense_backward_skip");
        }
        g = dx; /* the incoming gradient of the layer below */
    }
    return HMD_OK;
}

} // namespace

extern "C" int hmd_cuda_device_info(char *buf, size_t len)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        cudaGetLastError();
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda: no CUDA device is visible");
    }
    int dev = 0;
    HMD_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp p;
    HMD_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    if (buf) {
        snprintf(buf, len, "%s (%d SMs, %.1f GiB, compute capability %d.%d)", p.name,
                 p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.major, p.minor);
    }
    return HMD_OK;
}

extern "C" int hmd_cuda_dp_create(struct hmd_cuda_dp **out, const struct hmd_dp_model *m,
                                  bool mixed)
{
    *out = NULL;
    int rc = hmd_cuda_device_info(NULL, 0);
    if (rc) {
        return rc;
    }
    int dev = 0, sms = 0;
    HMD_CUDA_CHECK(cudaGetDevice(&dev));
    HMD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    hmd_cuda_dp *dp = new hmd_cuda_dp();
    dp->host = m;
    dp->mixed = mixed;
    dp->sms = sms;
    dp->slots_path = slots_setting();
    dp->slot_warps = slot_warps_setting();
    HMD_CUDA_CHECK(cudaStreamCreateWithFlags(&dp->stream, cudaStreamNonBlocking));
    if (cublasCreate(&dp->blas) != CUBLAS_STATUS_SUCCESS) {
        hmd_cuda_dp_destroy(dp);
        return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: cannot create a handle");
    }
    cublasSetStream(dp->blas, dp->stream);
    rc = cudaMalloc(&dp->blas_workspace, BLAS_WORKSPACE_BYTES) == cudaSuccess
             ? HMD_OK
             : hmd_error_set(HMD_ENOMEM, "GPU: no room for the cuBLAS workspace");
    if (!rc) {
        dp->bytes += BLAS_WORKSPACE_BYTES;
        cublasSetWorkspace(dp->blas, dp->blas_workspace, BLAS_WORKSPACE_BYTES);
        rc = upload_model(dp, m);
        dp->slots_path = dp->slots_path && !dp->dpa1 && !dp->model.compressed &&
                         (dp->model.type_one_side || m->nfit == m->ntypes);
        dp->chunk_rows = chunk_rows_setting(dp->slots_path ? SLOT_CHUNK_ROWS : CHUNK_ROWS);
        /* in mixed the embedding over all slots is the fused kernel, which must fit */
        dp->fused_tile = dp->slots_path && mixed ? fused_tile(dp->model.max_width) : 0;
        dp->slots_path = dp->slots_path && (!mixed || dp->fused_tile);
        if (!rc && dp->fused_tile) {
            rc = allow_fused(dp->model.max_width, dp->fused_tile);
        }
    }
    if (rc) {
        hmd_cuda_dp_destroy(dp);
        return rc;
    }
    *out = dp;
    return HMD_OK;
}

int hmd_cuda_dp_prepare(struct hmd_cuda_dp *dp, int nlocal, int nall, const int *type_home,
                        int type0)
{
    const hmd_dp_model *m = dp->host;
    dp->type0 = type0;
    int rc = reserve(dp, nlocal, nall);
    if (rc) {
        return rc;
    }
    /* fitting, one net at a time over its atoms (dp_eval.c: net_of, no_gradient) */
    std::vector<int> order;
    order.reserve(nlocal);
    dp->fit_start.assign(m->nfit + 1, 0);
    for (int k = 0; k < m->nfit; k++) {
        dp->fit_start[k] = (int)order.size();
        for (int i = 0; i < nlocal; i++) {
            const int t = type_home[i];
            const int net = m->nfit == 1 ? 0 : t;
            if (net == k && !m->fit_exclude[t] && !m->atom_exclude[t]) {
                order.push_back(i);
            }
        }
    }
    dp->fit_start[m->nfit] = (int)order.size();
    if (!order.empty()) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(dp->order, order.data(), sizeof(int) * order.size(),
                                       cudaMemcpyHostToDevice, dp->stream));
        HMD_CUDA_CHECK(cudaStreamSynchronize(dp->stream)); /* `order` goes out of scope */
    }
    return HMD_OK;
}

struct hmd_cuda_dp_atoms hmd_cuda_dp_device_atoms(struct hmd_cuda_dp *dp)
{
    return hmd_cuda_dp_atoms{dp->x, dp->f, dp->ev, dp->type, dp->cap_all};
}

cudaStream_t hmd_cuda_dp_stream(const struct hmd_cuda_dp *dp)
{
    return dp->stream;
}

unsigned long hmd_cuda_dp_generation(const struct hmd_cuda_dp *dp)
{
    return dp->generation + (dp->dpa1 ? hmd_cuda_dpa1_generation(dp->dpa1) << 20 : 0);
}

const double *hmd_cuda_dp_atom_energies(const struct hmd_cuda_dp *dp)
{
    return dp->atom_y;
}

int hmd_cuda_dp_build_list(struct hmd_cuda_dp *dp, int nlocal, int nall, const double lo[3],
                           const double hi[3], double rlist)
{
    const size_t before = dp->bytes;
    const int cap_before = dp->nl.cap;
    int rc = hmd_nbr_list_build_cuda(&dp->nl, nlocal, nall, dp->x, lo, hi, rlist, dp->stream,
                                     &dp->bytes);
    if (dp->bytes != before || dp->nl.cap != cap_before) {
        dp->generation++;
    }
    if (!rc && dp->dpa1) {
        return hmd_cuda_dpa1_reserve(dp->dpa1, nlocal, dp->nl.cap);
    }
    if (!rc) {
        const size_t fmt_bytes = (size_t)dp->nl.cap * (sizeof(double) + sizeof(int)) + sizeof(int);
        HMD_CUDA_CHECK(cudaFuncSetAttribute(
            format_neighbors, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fmt_bytes));
    }
    return rc;
}

namespace
{

/* Warps per centre for a launch of the compressed kernels over `rows` centres: the setting, else
 * the most (up to TAB_WARPS, by powers of 2) that keep the launch within about half of what the
 * GPU holds at once, so that small systems split each centre's slots rather than leave SMs idle,
 * and no launch ends in a partial second wave of blocks (on an H200: 4 warps per centre up to
 * 330 centres, 2 up to 660, 1 beyond; 2 warps for 1,536 centres, 1.45 waves, were slower than
 * 1 or 4). */
int slot_warps(const hmd_cuda_dp *dp, int rows)
{
    if (dp->slot_warps) {
        return dp->slot_warps;
    }
    const size_t resident = (size_t)dp->sms * TAB_BLOCKS_PER_SM * TAB_WARPS;
    int split = 1;
    while (split < TAB_WARPS && (size_t)rows * split * 2 <= resident) {
        split *= 2;
    }
    return split;
}

/* The fitting nets over rows [c0, c0 + rows) of dp->order (a chunk, which may hold the centres of
 * several nets): each net k over its part of the chunk's descriptors X, energies into Y. */
int fitting_of_chunk(hmd_cuda_dp *dp, int c0, int rows, double *X, double *Y, double *work)
{
    for (int k = 0; k < dp->host->nfit; k++) {
        const int r0 = std::max(dp->fit_start[k], c0) - c0;
        const int r1 = std::min(dp->fit_start[k + 1], c0 + rows) - c0;
        if (r1 > r0) {
            int rc = fitting(dp, k, r1 - r0, X + (size_t)r0 * dp->dim, Y + r0, work);
            if (rc) {
                return rc;
            }
        }
    }
    return HMD_OK;
}

/* se_e2_a, chunk by chunk of the home atoms in dp->order (grouped by fitting net): neighbour
 * slots and descriptor of every centre of the chunk in one launch each, the fitting nets over
 * their parts, then forces and virial in one launch; the embedding in scalar A, by the
 * per-centre kernels (networks) or the warp kernels (compressed tables). */
template <typename A> int evaluate_se(hmd_cuda_dp *dp, int ncount)
{
    const hmd_cuda_model &g = dp->model;
    const int T = HMD_CUDA_THREADS, nrows = dp->fit_start[dp->host->nfit];
    cudaStream_t st = dp->stream;
    const size_t fmt_bytes = (size_t)dp->nl.cap * (sizeof(double) + sizeof(int)) + sizeof(int);
    const size_t fwd_bytes = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, false, sizeof(A));
    const size_t bwd_bytes = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, true, sizeof(A));
    const size_t gamma_bytes = gamma_smem_bytes(g);
    for (int c0 = 0; c0 < nrows; c0 += dp->cap_rows) {
        const int rows = std::min(dp->cap_rows, nrows - c0);
        const int *idx = dp->order + c0;
        const int split = slot_warps(dp, rows);
        const unsigned tab_blocks = (unsigned)((rows * split + TAB_WARPS - 1) / TAB_WARPS);
        double *X = dp->fit_buf, *Y = X + (size_t)rows * dp->dim, *work = Y + rows;
        format_neighbors<<<rows, T, fmt_bytes, st>>>(dp->d_model, dp->x, dp->type, dp->nl.index,
                                                     dp->nl.count, dp->nl.cap, idx, dp->slots,
                                                     dp->ev + 10);
        HMD_CUDA_LAUNCHED("format_neighbors");
        if (g.compressed) {
            auto forward = split > 1 ? compressed_forward<A, true> : compressed_forward<A, false>;
            forward<<<tab_blocks, 32 * TAB_WARPS, forward_smem_bytes(g, split), st>>>(
                dp->d_model, rows, split, dp->x, dp->type, idx, dp->slots, dp->T);
            HMD_CUDA_LAUNCHED("compressed_forward");
            pad_and_D<<<rows, T, 0, st>>>(dp->d_model, dp->type, idx, dp->slots, dp->T, X);
            HMD_CUDA_LAUNCHED("pad_and_D");
        } else {
            descriptor_forward<A><<<rows, T, fwd_bytes, st>>>(dp->d_model, dp->x, dp->type, idx,
                                                              dp->slots, dp->T, X);
            HMD_CUDA_LAUNCHED("descriptor_forward");
        }
        int rc = fitting_of_chunk(dp, c0, rows, X, Y, work);
        if (rc) {
            return rc;
        }
        gather_rows<<<blocks_for((size_t)rows, 256), 256, 0, st>>>(rows, 1, idx, Y, dp->atom_y,
                                                                   true);
        HMD_CUDA_LAUNCHED("gather_rows");
        if (g.compressed) {
            gamma_from_dD<<<rows, T, gamma_bytes, st>>>(dp->d_model, dp->T, X, dp->gamma,
                                                        gamma_bytes > 0);
            HMD_CUDA_LAUNCHED("gamma_from_dD");
            compressed_backward<A><<<tab_blocks, 32 * TAB_WARPS, backward_smem_bytes(g), st>>>(
                dp->d_model, rows, split, ncount, dp->x, dp->type, idx, dp->slots, dp->gamma, dp->f,
                dp->ev);
            HMD_CUDA_LAUNCHED("compressed_backward");
        } else {
            descriptor_backward<A><<<rows, T, bwd_bytes, st>>>(
                dp->d_model, ncount, dp->x, dp->type, idx, dp->slots, dp->T, X, dp->f, dp->ev);
            HMD_CUDA_LAUNCHED("descriptor_backward");
        }
    }
    return HMD_OK;
}

/* hmd_blas_gemm in double with HMD_ESOFTWARE naming `what` on failure. */
int batched(hmd_cuda_dp *dp, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
            double alpha, const double *A, int lda, long long sa, const double *B, int ldb,
            long long sb, double beta, double *C, int ldc, long long sc, int count,
            const char *what)
{
    if (hmd_blas_gemm(dp->blas, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc,
                      count) != CUBLAS_STATUS_SUCCESS) {
        return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: %s failed", what);
    }
    return HMD_OK;
}

/* Embedding net k over the n inputs s in double, layer by layer (DGEMMs through the layer
 * buffers): values into out[0, n M) and tangents into out[n M, 2 n M). */
int slots_embed_layers(hmd_cuda_dp *dp, int k, size_t n, const double *s, double *out)
{
    const hmd_cuda_net &net = dp->model.emb[k];
    const int T = 256;
    double *in = NULL, *next = dp->emb_a;
    for (int l = 0; l < net.nlayers; l++) {
        const hmd_cuda_layer &L = net.L[l];
        const bool last = l == net.nlayers - 1;
        const unsigned blocks = blocks_for(n * L.n_out, T);
        if (l == 0) {
            slots_first_layer<<<blocks, T, 0, dp->stream>>>(n, L, s, last ? out : next);
            HMD_CUDA_LAUNCHED("slots_first_layer");
        } else {
            /* the last product goes to the output itself */
            double *z = last ? out : next;
            if (hmd_blas_gemm(dp->blas, CUBLAS_OP_N, CUBLAS_OP_N, L.n_out, (int)(2 * n), L.n_in,
                              1.0, L.w, L.n_out, 0, in, L.n_in, 0, 0.0, z, L.n_out, 0,
                              1) != CUBLAS_STATUS_SUCCESS) {
                return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: embedding layer %d failed", l);
            }
            slots_layer<<<blocks, T, 0, dp->stream>>>(n, L, in, z);
            HMD_CUDA_LAUNCHED("slots_layer");
        }
        in = next;
        next = next == dp->emb_a ? dp->emb_b : dp->emb_a;
    }
    return HMD_OK;
}

/* Embedding net k over the n inputs s with the embedding in scalar A: values into
 * out[0, n M) and tangents into out[n M, 2 n M) (double); fp32 in one fused kernel, double
 * layer by layer. */
template <typename A>
int slots_embed(hmd_cuda_dp *dp, int k, size_t n, const double *s, double *out)
{
    if (sizeof(A) == sizeof(double)) {
        return slots_embed_layers(dp, k, n, s, out);
    }
    const int tile = dp->fused_tile, w = dp->model.max_width;
    slots_embed_fused<<<blocks_for(n, tile), fused_threads(w, tile), fused_smem_bytes(tile, w),
                        dp->stream>>>(dp->d_model, k, n, tile, s, out);
    HMD_CUDA_LAUNCHED("slots_embed_fused");
    return HMD_OK;
}

/* se_e2_a as evaluate_se, the embedding (in scalar A) and the contractions (in double) as
 * products over all slots of each chunk (the layout above slot_index). */
template <typename A> int evaluate_se_slots(hmd_cuda_dp *dp, int ncount)
{
    const hmd_dp_model *m = dp->host;
    const hmd_cuda_model &g = dp->model;
    const int T = HMD_CUDA_THREADS, M = g.M;
    cudaStream_t st = dp->stream;
    const size_t fmt_bytes = (size_t)dp->nl.cap * (sizeof(double) + sizeof(int)) + sizeof(int);
    const size_t gamma_bytes = gamma_smem_bytes(g);
    int rc = HMD_OK;
    for (int k = 0; k < m->nfit && !rc; k++) {
        for (int c0 = dp->fit_start[k]; c0 < dp->fit_start[k + 1] && !rc; c0 += dp->cap_rows) {
            const int rows = std::min(dp->cap_rows, dp->fit_start[k + 1] - c0);
            const int *idx = dp->order + c0;
            const size_t nslots = (size_t)rows * g.nnei;
            double *X = dp->fit_buf, *Y = X + (size_t)rows * dp->dim, *work = Y + rows;
            double *px = dp->slot_pxy, *py = px + 4 * nslots;
            format_neighbors<<<rows, T, fmt_bytes, st>>>(dp->d_model, dp->x, dp->type, dp->nl.index,
                                                         dp->nl.count, dp->nl.cap, idx, dp->slots,
                                                         dp->ev + 10);
            HMD_CUDA_LAUNCHED("format_neighbors");
            slots_env<<<blocks_for(nslots, 256), 256, 0, st>>>(dp->d_model, rows, dp->x, dp->type,
                                                               idx, dp->slots, dp->slot_s,
                                                               dp->slot_R, dp->slot_jac);
            HMD_CUDA_LAUNCHED("slots_env");
            for (int tau = 0; tau < g.ntypes && !rc; tau++) { /* T = sum G R / nnei */
                const int sel = g.sel[tau], off = g.sel_offset[tau];
                const size_t n = (size_t)rows * sel;
                double *G = dp->slot_G + 2 * (size_t)rows * off * M;
                rc = slots_embed<A>(dp, g.type_one_side ? tau : k + tau * g.ntypes, n,
                                    dp->slot_s + (size_t)rows * off, G);
                rc = rc ? rc
                        : batched(dp, CUBLAS_OP_N, CUBLAS_OP_T, 4, M, sel, 1.0 / g.nnei,
                                  dp->slot_R + 4 * (size_t)rows * off, 4, 4LL * sel, G, M,
                                  (long long)sel * M, tau == 0 ? 0.0 : 1.0, dp->T, 4, 4LL * M, rows,
                                  "T = G^T R");
            }
            if (rc) {
                break;
            }
            pad_and_D<<<rows, T, 0, st>>>(dp->d_model, dp->type, idx, dp->slots, dp->T, X);
            HMD_CUDA_LAUNCHED("pad_and_D");
            rc = fitting(dp, k, rows, X, Y, work);
            if (rc) {
                break;
            }
            gather_rows<<<blocks_for((size_t)rows, 256), 256, 0, st>>>(rows, 1, idx, Y, dp->atom_y,
                                                                       true);
            HMD_CUDA_LAUNCHED("gather_rows");
            gamma_from_dD<<<rows, T, gamma_bytes, st>>>(dp->d_model, dp->T, X, dp->gamma,
                                                        gamma_bytes > 0);
            HMD_CUDA_LAUNCHED("gamma_from_dD");
            for (int tau = 0; tau < g.ntypes && !rc; tau++) { /* px = G gamma, py = dG gamma */
                const int sel = g.sel[tau], off = g.sel_offset[tau];
                const size_t n = (size_t)rows * sel;
                const double *G = dp->slot_G + 2 * (size_t)rows * off * M;
                for (int part = 0; part < 2 && !rc; part++) {
                    rc = batched(dp, CUBLAS_OP_T, CUBLAS_OP_N, 4, sel, M, 1.0, dp->gamma, M,
                                 4LL * M, G + part * n * M, M, (long long)sel * M, 0.0,
                                 (part ? py : px) + 4 * (size_t)rows * off, 4, 4LL * sel, rows,
                                 "G gamma");
                }
            }
            if (rc) {
                break;
            }
            slots_forces<<<blocks_for(nslots, 256), 256, 0, st>>>(
                dp->d_model, rows, ncount, dp->x, dp->type, idx, dp->slots, dp->slot_R,
                dp->slot_jac, px, py, dp->f, dp->ev);
            HMD_CUDA_LAUNCHED("slots_forces");
        }
    }
    return rc;
}

/* DPA-1: descriptors of all home atoms (dpa1_eval.cu), fitting over the rows of each net,
 * then the reverse pass from dE/dD. */
int evaluate_dpa1(hmd_cuda_dp *dp, int nlocal, int ncount)
{
    const hmd_dp_model *m = dp->host;
    cudaStream_t st = dp->stream;
    int rc = hmd_cuda_dpa1_forward(dp->dpa1, st, dp->blas, nlocal, dp->cap_all, dp->x, dp->type,
                                   dp->type0, &dp->nl, dp->D, dp->ev + 10);
    if (rc) {
        return rc;
    }
    const int nfit_rows = dp->fit_start[m->nfit];
    const size_t dim = (size_t)dp->dim;
    HMD_CUDA_CHECK(cudaMemsetAsync(dp->dD, 0, sizeof(double) * nlocal * dim, st));
    if (nfit_rows > 0) {
        double *X = dp->fit_buf, *Y = X + (size_t)nfit_rows * dim, *work = Y + nfit_rows;
        gather_rows<<<blocks_for((size_t)nfit_rows * dim, 256), 256, 0, st>>>(
            nfit_rows, (int)dim, dp->order, dp->D, X, false);
        HMD_CUDA_LAUNCHED("gather_rows");
        for (int k = 0; k < m->nfit && !rc; k++) {
            const int first = dp->fit_start[k], rows = dp->fit_start[k + 1] - first;
            rc = rows > 0 ? fitting(dp, k, rows, X + first * dim, Y + first, work) : HMD_OK;
        }
        if (rc) {
            return rc;
        }
        gather_rows<<<blocks_for((size_t)nfit_rows * dim, 256), 256, 0, st>>>(
            nfit_rows, (int)dim, dp->order, X, dp->dD, true);
        HMD_CUDA_LAUNCHED("gather_rows");
        gather_rows<<<blocks_for((size_t)nfit_rows, 256), 256, 0, st>>>(nfit_rows, 1, dp->order, Y,
                                                                        dp->atom_y, true);
        HMD_CUDA_LAUNCHED("gather_rows");
    }
    return hmd_cuda_dpa1_backward(dp->dpa1, st, dp->blas, nlocal, dp->cap_all, ncount, dp->x,
                                  dp->type, dp->dD, dp->f, dp->ev);
}

} // namespace

int hmd_cuda_dp_evaluate(struct hmd_cuda_dp *dp, int nlocal, int ncount)
{
    cudaStream_t st = dp->stream;
    HMD_CUDA_CHECK(cudaMemsetAsync(dp->atom_y, 0, sizeof(double) * nlocal, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(dp->f, 0, sizeof(double) * 3 * dp->cap_all, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(dp->ev, 0, sizeof(double) * HMD_CUDA_NEV, st));
    int rc = HMD_OK;
    if (nlocal > 0) {
        rc = dp->dpa1         ? evaluate_dpa1(dp, nlocal, ncount)
             : dp->slots_path ? (dp->mixed ? evaluate_se_slots<float>(dp, ncount)
                                           : evaluate_se_slots<double>(dp, ncount))
             : dp->mixed      ? evaluate_se<float>(dp, ncount)
                              : evaluate_se<double>(dp, ncount);
    }
    if (rc) {
        return rc;
    }
    atomic_energies<<<1, 256, 0, st>>>(dp->d_model, nlocal, ncount, dp->type, dp->atom_y,
                                       dp->ev + 9);
    HMD_CUDA_LAUNCHED("atomic_energies");
    return HMD_OK;
}

extern "C" int hmd_cuda_dp_compute(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *x,
                                   const int *type, int type0, double rlist,
                                   struct hmd_dp_output *out)
{
    if (out->atom_virial) {
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda: atomic virials");
    }
    int rc = hmd_cuda_dp_prepare(dp, nlocal, nall, type, type0);
    if (rc) {
        return rc;
    }
    cudaStream_t st = dp->stream;
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(dp->x, x, sizeof(double) * 3 * nall, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(dp->type, type, sizeof(int) * nall, cudaMemcpyHostToDevice, st));
    double lo[3], hi[3];
    hmd_cuda_bounds(nall, x, lo, hi);
    rc = hmd_cuda_dp_build_list(dp, nlocal, nall, lo, hi, rlist);
    if (!rc) {
        rc = hmd_cuda_dp_evaluate(dp, nlocal, out->ncount > 0 ? out->ncount : nlocal);
    }
    if (rc) {
        return rc;
    }
    double ev[HMD_CUDA_NEV];
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(out->force, dp->f, sizeof(double) * 3 * nall, cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(ev, dp->ev, sizeof ev, cudaMemcpyDeviceToHost, st));
    if (out->atom_energy) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(out->atom_energy, dp->atom_y, sizeof(double) * nlocal,
                                       cudaMemcpyDeviceToHost, st));
    }
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    memcpy(out->virial, ev, sizeof out->virial);
    out->energy = ev[9];
    out->dropped = (long)ev[10];
    return HMD_OK;
}

extern "C" size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp)
{
    return dp ? dp->bytes + dp->weights.bytes + hmd_cuda_dpa1_device_bytes(dp->dpa1) : 0;
}

extern "C" void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp)
{
    if (!dp) {
        return;
    }
    hmd_nbr_list_free_cuda(&dp->nl);
    hmd_cuda_dpa1_destroy(dp->dpa1);
    hmd_cuda_weights_free(&dp->weights);
    void *arrays[] = {dp->x,        dp->f,      dp->T,        dp->D,
                      dp->dD,       dp->ev,     dp->atom_y,   dp->fit_buf,
                      dp->type,     dp->slots,  dp->order,    dp->blas_workspace,
                      dp->slot_s,   dp->slot_R, dp->slot_jac, dp->slot_G,
                      dp->slot_pxy, dp->emb_a,  dp->emb_b,    dp->gamma};
    for (void *p : arrays) {
        cudaFree(p);
    }
    if (dp->blas) {
        cublasDestroy(dp->blas);
    }
    if (dp->stream) {
        cudaStreamDestroy(dp->stream);
    }
    delete dp;
}
