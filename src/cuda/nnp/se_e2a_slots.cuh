/* se_e2_a on the GPU over all neighbour slots of a chunk (the default for networks): slot rows,
 * the embedding layer by layer (double with HALOMD_GPU_DMMA=0, or where se_e2a_dmma.cuh's kernel
 * does not run) or (precision = mixed) in one fused kernel, the padding and D, dE/dT and the
 * forces. Part of dp_eval.cu's translation unit (only it includes this file), in an
 * anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_SE_E2A_SLOTS_CUH
#define HMD_CUDA_SE_E2A_SLOTS_CUH

#include "cuda/nnp/se_e2a_centre.cuh"

namespace
{

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
 * at twice the FP64 rate. (In double, as FMAs, it lost to the layer-by-layer DGEMMs on the FP64
 * tensor cores, 12.9 against 10.0 ms per step at 12,288 atoms on an H200; double now runs the
 * same scheme on the tensor cores, se_e2a_dmma.cuh.) A buffer holds a layer's values
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

/* Shared memory a block may take on the current device, at most `most` bytes (the opt-in
 * limit: 227 kB on compute capability 9.0, 163 kB on 8.0, 99 kB on 8.6 and 8.9); 0 when the
 * device does not say. */
size_t smem_budget(size_t most)
{
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return std::min(most, (size_t)optin);
}

/* Rows of a block of slots_embed_fused within `budget` bytes of shared memory: 32, or 16 or 8
 * where wide layers leave no room; 0 when even 8 do not fit (the per-centre kernels then run
 * the model). */
int fused_tile(int max_width, size_t budget)
{
    for (int tile = 32; tile >= FUSED_RG; tile /= 2) {
        if (fused_smem_bytes(tile, max_width) <= budget) {
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

/* Sum of v over the lanes from this one to the end of its run of equal `key` (consecutive lanes
 * with the same key, as the slots of one row are): the run's first lane gets the whole run.
 * Every lane of the warp calls it. */
__device__ double run_sum(double v, int key)
{
    const int lane = threadIdx.x % 32;
    for (int o = 1; o < 32; o <<= 1) {
        const double u = __shfl_down_sync(0xffffffffu, v, o);
        const int k = __shfl_down_sync(0xffffffffu, key, o);
        if (lane + o < 32 && k == key) {
            v += u;
        }
    }
    return v;
}

/* Forces and virial from px = G gamma and py = dG gamma ([slot][4] each, block layout) of every
 * live slot (descriptor_backward's per-row part). One thread per slot; the force on each centre
 * is summed over its slots in the warp (run_sum) and the virial over the warp before their
 * exact adds (cuda/exact_sum.cuh; an atomic add of every thread on the same addresses queued
 * them one behind another). Launched with a multiple of 32 threads a block. */
__global__ void slots_forces(const hmd_cuda_model *mp, int rows, int ncount, const double *x,
                             const int *type, const int *idx, const int *slots_all, const double *R,
                             const double *jac, const double *px, const double *py, hmd_exact *f,
                             hmd_exact *virial)
{
    const hmd_cuda_model &m = *mp;
    __shared__ hmd_exact vir[9];
    if (threadIdx.x < 9) {
        vir[threadIdx.x] = hmd_exact{0, 0};
    }
    __syncthreads();
    double w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, fi[3] = {0, 0, 0};
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool in = e < (size_t)rows * m.nnei;
    const int row = (int)(e / m.nnei), i = in ? idx[row] : -1;
    if (in) {
        const int j = (int)(e % m.nnei), ti = type[i], tau = block_of_slot(m, j);
        const int nb = slots_all[(size_t)row * m.nnei + j];
        if (nb >= 0 && !m.exclude[ti * m.ntypes + tau]) {
            const size_t p = slot_index(m, rows, row, j, tau);
            double gr[3], d[3];
            slot_grad(px + 4 * p, py + 4 * p, R + 4 * p, m.dstd + ((size_t)ti * m.nnei + j) * 4,
                      jac + 12 * p, gr);
            for (int q = 0; q < 3; q++) {
                d[q] = x[3 * nb + q] - x[3 * i + q];
                hmd_exact_add(&f[3 * nb + q], -gr[q]);
                fi[q] = gr[q];
            }
            if (i < ncount) {
                for (int u = 0; u < 3; u++) {
                    for (int v = 0; v < 3; v++) {
                        w[3 * u + v] = -gr[u] * d[v];
                    }
                }
            }
        }
    }
    for (int q = 0; q < 3; q++) {
        fi[q] = run_sum(fi[q], row);
    }
    const int lane = threadIdx.x % 32, before = __shfl_up_sync(0xffffffffu, row, 1);
    if (in && (lane == 0 || before != row)) { /* the first of the row's slots in this warp */
        for (int q = 0; q < 3; q++) {
            hmd_exact_add(&f[3 * i + q], fi[q]);
        }
    }
    for (int q = 0; q < 9; q++) {
        w[q] = warp_sum(w[q]); /* (lane 0's) */
    }
    if (lane == 0) {
        for (int q = 0; q < 9; q++) {
            hmd_exact_add(&vir[q], w[q]);
        }
    }
    __syncthreads();
    if (threadIdx.x < 9) {
        hmd_exact_add_exact(&virial[threadIdx.x], vir[threadIdx.x]);
    }
}

} // namespace

#endif /* HMD_CUDA_SE_E2A_SLOTS_CUH */
