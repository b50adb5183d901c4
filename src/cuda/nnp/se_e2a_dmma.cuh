/* se_e2_a over all slots in double: the whole embedding net in one kernel on the FP64 tensor
 * cores (mma.sync m16n8k8 f64, DMMA). Part of dp_eval.cu's translation unit (only it includes
 * this file), in an anonymous namespace as the rest of it.
 *
 * Layer by layer, each layer's values and tangents cross memory twice (the DGEMM writes them, the
 * elementwise pass reads and writes them again): 5.9 of the 9.3 ms of an evaluation of the
 * v2-paper model at 12,288 water atoms on an H200. Here a warp takes 8 slots through every layer.
 * A layer's product is a 16 x n_out matrix: the 8 slots' values in rows 0-7, their tangents d/ds
 * in rows 8-15. The accumulator fragment a lane holds (rows g and g + 8, columns 2t and 2t + 1)
 * thus has the value and the tangent of one slot and two units, so the bias, activation, timestep
 * and skip run on it in registers. Hidden layers go to two buffers of the warp in shared memory
 * (16 rows each, the padding columns zero), the last layer straight to G. The weights of
 * the layers after the first are staged once per block (persistent blocks) in fragment order, so
 * that a lane's two B values are one 16-byte load. */
#ifndef HMD_CUDA_SE_E2A_DMMA_CUH
#define HMD_CUDA_SE_E2A_DMMA_CUH

#include "cuda/nnp/se_e2a_slots.cuh"
#include "cuda/nnp/tanh_branchless.cuh"

namespace
{

constexpr int DMMA_NT = 7; /* column tiles of 8 a warp accumulates at once */
constexpr int DMMA_MIN_WARPS = 4, DMMA_MAX_WARPS = 12;
constexpr size_t DMMA_MAX_SMEM = 220 << 10;

/* How slots_embed_dmma lays out one embedding net in shared memory. */
struct dmma_plan {
    int ld[2];   /* row stride of the buffers of even and of odd layers' outputs (doubles) */
    int wtotal;  /* the staged weights of layers 1 .. nlayers - 1, one after another (double2) */
    int warps;   /* warps of a block */
    bool tanh;   /* every layer's activation is tanh (slots_embed_dmma<true>) */
    size_t smem; /* bytes; 0 when the net does not fit (layer by layer) */
};

__host__ __device__ int round8(int n)
{
    return (n + 7) / 8 * 8;
}

/* double2 entries of layer L's weights in fragment order: 32 for each 8 x 8 tile. */
__host__ __device__ int dmma_weight_frags(const hmd_cuda_layer &L)
{
    return round8(L.n_in) / 8 * (round8(L.n_out) / 8) * 32;
}

/* The plan of net within `budget` bytes of shared memory: a warp's two buffers hold the outputs
 * of the even and of the odd hidden layers, each as wide as the widest of them (padded to 8) plus
 * 4 doubles, so that the 8 rows of a fragment load fall in different banks; as many warps as the
 * budget holds, up to DMMA_MAX_WARPS; smem 0 below DMMA_MIN_WARPS. */
dmma_plan make_dmma_plan(const hmd_cuda_net &net, size_t budget)
{
    dmma_plan p = {};
    int hidden[2] = {0, 0};
    p.tanh = true;
    for (int l = 0; l < net.nlayers; l++) {
        const hmd_cuda_layer &L = net.L[l];
        p.tanh = p.tanh && L.act == HMD_ACT_TANH;
        if (l + 1 < net.nlayers) {
            hidden[l % 2] = std::max(hidden[l % 2], round8(L.n_out));
        }
        if (l > 0) {
            p.wtotal += dmma_weight_frags(L);
        }
    }
    p.ld[0] = hidden[0] + 4;
    p.ld[1] = hidden[1] + 4;
    const size_t wbytes = (size_t)p.wtotal * sizeof(double2);
    const size_t warp_bytes = 16 * (size_t)(p.ld[0] + p.ld[1]) * sizeof(double);
    const size_t room = wbytes < budget ? (budget - wbytes) / warp_bytes : 0;
    p.warps = (int)std::min<size_t>(DMMA_MAX_WARPS, room);
    p.smem = p.warps >= DMMA_MIN_WARPS ? wbytes + p.warps * warp_bytes : 0;
    return p;
}

/* c += a b for one m16n8k8 tile in double (a: the lane's fragment of the 16 x 8 left operand,
 * rows g and g + 8, columns t and t + 4; b: of the 8 x 8 right one, rows t and t + 4, column g).
 * Compute capability 8.x has only m8n8k4, four of which make the tile. */
__device__ inline void dmma_m16n8k8(double (&c)[4], const double (&a)[4], double2 b)
{
#if __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};"
        : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b.x), "d"(b.y));
#elif __CUDA_ARCH__ >= 800
    const double bk[2] = {b.x, b.y};
    for (int h = 0; h < 2; h++) {     /* inner columns 4h .. 4h + 3 */
        for (int r = 0; r < 2; r++) { /* rows 8r .. 8r + 7 */
            asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                : "+d"(c[2 * r]), "+d"(c[2 * r + 1])
                : "d"(a[2 * h + r]), "d"(bk[h]));
        }
    }
#else
    __trap(); /* the host does not choose this kernel below compute capability 8.0 */
#endif
}

/* Weight (q, o) of layer L, 0 in the padding. */
__device__ double padded_weight(const hmd_cuda_layer &L, int q, int o)
{
    return q < L.n_in && o < L.n_out ? L.w[(size_t)q * L.n_out + o] : 0.0;
}

/* Value a and tangent t of unit u of layer L at z (bias included) with tangent dz, as
 * layer_unit; TANH: L.act is tanh, without branches so that the units of a tile interleave. */
template <bool TANH>
__device__ void dmma_unit(const hmd_cuda_layer &L, int u, double z, double dz, double &a, double &t)
{
    if (TANH) {
        a = tanh_branchless(z);
        t = (1 - a * a) * dz;
        if (L.idt) {
            a *= L.idt[u];
            t *= L.idt[u];
        }
    } else {
        layer_unit<true>(L, u, z, dz, a, t);
    }
}

/* The units of column tiles j0 .. j0 + DMMA_NT (below nt) of layer L for the lane's slot from
 * the accumulators c (tile j: values c[j][0, 1], tangents c[j][2, 3] of units 8 (j0 + j) + 2t
 * and the next), with the layer's input in (a buffer of the warp, row stride ld, for the skip):
 * into the buffer next (row stride ldn), 0 beyond n_out, or, when next is NULL, into G for a slot
 * below n (values at G[slot n_out + u], tangents n n_out further). Every unit is evaluated (the
 * padding's z is 0) and masked afterwards, so the activations run without branches. */
template <bool TANH>
__device__ void dmma_units(const hmd_cuda_layer &L, int j0, int nt, double (&c)[DMMA_NT][4],
                           const double *in, int ld, double *next, int ldn, double *G, size_t n,
                           size_t slot)
{
    const int g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
#pragma unroll
    for (int j = 0; j < DMMA_NT; j++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int u = 8 * (j0 + j) + 2 * t + h;
            const bool real = j0 + j < nt && u < L.n_out;
            double a, d;
            dmma_unit<TANH>(L, real ? u : 0, c[j][h] + (real && L.b ? L.b[u] : 0.0), c[j][2 + h], a,
                            d);
            if (real && L.resnet != HMD_RESNET_NONE) { /* DOUBLE: n_out = 2 n_in */
                const int ui = L.resnet == HMD_RESNET_DOUBLE && u >= L.n_in ? u - L.n_in : u;
                a += in[g * ld + ui];
                d += in[(8 + g) * ld + ui];
            }
            c[j][h] = real ? a : 0.0;
            c[j][2 + h] = real ? d : 0.0;
        }
    }
#pragma unroll
    for (int j = 0; j < DMMA_NT; j++) {
        const int o = 8 * (j0 + j) + 2 * t;
        if (j0 + j >= nt) {
            break;
        }
        if (next) {
            *reinterpret_cast<double2 *>(next + g * ldn + o) = make_double2(c[j][0], c[j][1]);
            *reinterpret_cast<double2 *>(next + (8 + g) * ldn + o) = make_double2(c[j][2], c[j][3]);
        } else if (slot < n && o < L.n_out) {
            double *gv = G + slot * L.n_out + o, *gt = G + (n + slot) * L.n_out + o;
            if (L.n_out % 2 == 0) { /* o even: 16-byte aligned, and o + 1 < n_out */
                *reinterpret_cast<double2 *>(gv) = make_double2(c[j][0], c[j][1]);
                *reinterpret_cast<double2 *>(gt) = make_double2(c[j][2], c[j][3]);
            } else {
                gv[0] = c[j][0];
                gt[0] = c[j][2];
                if (o + 1 < L.n_out) {
                    gv[1] = c[j][1];
                    gt[1] = c[j][3];
                }
            }
        }
    }
}

/* Layer L (n_in > 1) of the warp's 8 slots: the product of the buffer in (row stride ld,
 * round8(n_in) columns, the padding zero) with the staged weights wf, DMMA_NT column tiles at a
 * time, then dmma_units into next (row stride ldn) or G. */
template <bool TANH>
__device__ void dmma_layer(const hmd_cuda_layer &L, const double2 *wf, const double *in, int ld,
                           double *next, int ldn, double *G, size_t n, size_t slot)
{
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int kt = round8(L.n_in) / 8, nt = round8(L.n_out) / 8;
    const double *vin = in + g * ld + t, *tin = in + (8 + g) * ld + t;
    for (int j0 = 0; j0 < nt; j0 += DMMA_NT) {
        double c[DMMA_NT][4] = {};
        for (int ks = 0; ks < kt; ks++) {
            const double a[4] = {vin[8 * ks], tin[8 * ks], vin[8 * ks + 4], tin[8 * ks + 4]};
            const double2 *b = wf + ((size_t)ks * nt + j0) * 32 + lane;
#pragma unroll
            for (int j = 0; j < DMMA_NT; j++) {
                if (j0 + j < nt) {
                    dmma_m16n8k8(c[j], a, b[32 * j]);
                }
            }
        }
        dmma_units<TANH>(L, j0, nt, c, in, ld, next, ldn, G, n, slot);
    }
}

/* Embedding net k of the model over the n inputs s in double, as slots_embed: values into
 * out[0, n M) and tangents into out[n M, 2 n M). Blocks of p.warps warps and p.smem bytes,
 * at most one per 8 slots; each warp takes groups of 8 slots until none is left. TANH: every
 * layer's activation is tanh (p.tanh). */
template <bool TANH>
__global__ void __launch_bounds__(DMMA_MAX_WARPS * 32)
    slots_embed_dmma(const hmd_cuda_model *mp, int k, dmma_plan p, size_t n, const double *s,
                     double *out)
{
    extern __shared__ __align__(16) unsigned char dmma_raw[];
    const hmd_cuda_net &net = mp->emb[k];
    double2 *const wf = reinterpret_cast<double2 *>(dmma_raw);
    for (int l = 1, base = 0; l < net.nlayers; l++) { /* the weights in fragment order */
        const hmd_cuda_layer &L = net.L[l];
        const int nt = round8(L.n_out) / 8, count = dmma_weight_frags(L);
        for (int e = threadIdx.x; e < count; e += blockDim.x) {
            const int lane = e % 32, ks = e / 32 / nt, j = e / 32 % nt;
            const int q = 8 * ks + lane % 4, o = 8 * j + lane / 4;
            wf[base + e] = make_double2(padded_weight(L, q, o), padded_weight(L, q + 4, o));
        }
        base += count;
    }
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int ld0 = p.ld[0], ld1 = p.ld[1]; /* the outputs of even and of odd layers */
    double *const buf0 =
        reinterpret_cast<double *>(wf + p.wtotal) + (size_t)warp * 16 * (ld0 + ld1);
    double *const buf1 = buf0 + 16 * ld0;
    const hmd_cuda_layer L0 = net.L[0]; /* in registers: stores cannot change it */
    const size_t groups = (n + 7) / 8;
    for (size_t grp = (size_t)blockIdx.x * p.warps + warp; grp < groups;
         grp += (size_t)gridDim.x * p.warps) {
        const size_t slot = 8 * grp + g;
        const double x = slot < n ? s[slot] : 0.0;
#pragma unroll 4
        for (int o = t; o < round8(L0.n_out); o += 4) { /* the first layer (1 -> n_out) */
            const bool real = o < L0.n_out;
            const int u = real ? o : 0;
            double a, dt;
            dmma_unit<TANH>(L0, u, x * L0.w[u] + (L0.b ? L0.b[u] : 0.0), L0.w[u], a, dt);
            if (L0.resnet != HMD_RESNET_NONE) { /* n_in = 1: the input, and dx/dx = 1 */
                a += x;
                dt += 1.0;
            }
            a = real ? a : 0.0;
            dt = real ? dt : 0.0;
            if (net.nlayers > 1) {
                buf0[g * ld0 + o] = a;
                buf0[(8 + g) * ld0 + o] = dt;
            } else if (slot < n && real) {
                out[slot * L0.n_out + o] = a;
                out[(n + slot) * L0.n_out + o] = dt;
            }
        }
        __syncwarp();
        for (int l = 1, base = 0; l < net.nlayers; l++) {
            const hmd_cuda_layer L = net.L[l];
            const bool last = l == net.nlayers - 1;
            const bool odd = l % 2; /* reads the even layers' buffer, writes the odd ones' */
            dmma_layer<TANH>(L, wf + base, odd ? buf0 : buf1, odd ? ld0 : ld1,
                             last ? NULL : (odd ? buf1 : buf0), odd ? ld1 : ld0, out, n, slot);
            base += dmma_weight_frags(L);
            __syncwarp();
        }
    }
}

} // namespace

#endif
