/* se_e2_a on the GPU with compressed (tabulated) embeddings: one to four warps per centre
 * walking its live slots, forward (G (x) R) and backward (forces and virial). Part of dp_eval.cu's
 * translation unit (only it includes this file), in an anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_SE_E2A_COMPRESSED_CUH
#define HMD_CUDA_SE_E2A_COMPRESSED_CUH

#include "cuda/nnp/se_e2a_centre.cuh"
#include "cuda/nnp/warp_sum8.cuh"

namespace
{

/* ---- compressed tables: warps per centre -------------------------------------------------------
 *
 * The embedding of a compressed model is a quintic per interval of s and output. On the device
 * the coefficients are laid out in passes of TAB_PASS outputs, [interval][pass][a0..a5][TAB_PASS],
 * zero beyond M (table_device_layout), so that a coefficient's stride is a constant (the loads
 * of a slot take one address per output and immediate offsets); the padding is never read
 * (pass_offsets keeps every lane on an output below M). It costs tab_width(M) / M of the
 * table's memory: 1.28 for M = 100, 8 for M = 16. Both kernels give each lane the
 * outputs a = TAB_PASS pass + lane + 32 h (h < TAB_OUT) and walk the centre's live slots, so
 * that each load of the warp reads 32 consecutive outputs of one coefficient (a lane per slot
 * would read 32 scattered rows at once), all 6 TAB_OUT loads of a slot issued at once. A centre's
 * live slots are split in `split` (1, 2 or 4) consecutive ranges, one per warp of the centre, so
 * that a small system still fills the GPU (slot_warps). The forward kernel sums G (x) R in
 * registers and adds the warps' sums in shared memory, in warp order; the backward kernel keeps the
 * lane's gamma in registers, sums each slot's G gamma and dG gamma over the warp (warp_sum8) and
 * adds forces with atomics. Neither needs a barrier per slot (the per-centre kernels of
 * se_e2a_centre.cuh take NB slots between two). */

constexpr int TAB_WARPS = 4;           /* warps per block: TAB_WARPS / split centres */
constexpr int TAB_OUT = 4;             /* outputs per lane and pass over the slots */
constexpr int TAB_PASS = 32 * TAB_OUT; /* outputs per warp and pass */
constexpr int TAB_BLOCKS_PER_SM = 5;   /* compressed_forward, unsplit: 96 registers */
/* compressed_backward: 128 registers, a few spilled outside the slot loop (40 bytes in double,
 * 152 in fp32); unbounded it takes 158 and 3 blocks, and the kernel 24% more time (2026-12-01) */
constexpr int TAB_BWD_BLOCKS_PER_SM = 4;

/* The outputs of a pass times the passes that cover M. */
__host__ __device__ inline int tab_width(int M)
{
    return hmd_emb_table_pass_width(M, TAB_PASS);
}

/* The offsets of a lane's TAB_OUT outputs a0 + lane + 32 h into pass a0 / TAB_PASS, clamped to
 * the last output M - 1 (a lane beyond M reads what a lane within reads: no extra memory
 * traffic, and finite values that the callers do not use or multiply by zero). This clamp, not
 * the table's zero padding, keeps every read within the table's outputs. */
__device__ void pass_offsets(int M, int a0, int off[TAB_OUT])
{
#pragma unroll
    for (int h = 0; h < TAB_OUT; h++) {
        off[h] = min(threadIdx.x % 32 + 32 * h, M - 1 - a0);
    }
}

/* The quintics of a lane's TAB_OUT outputs at offset xr into their interval and their slopes,
 * extended linearly by delta beyond the table (hmd_emb_table_eval's polynomial, with value and
 * slope by one Horner pass: rounding differs from the host's in the last bits). c: the pass's
 * coefficients, coefficient k of the lane's output h at c[k TAB_PASS + off[h]]. The 6 TAB_OUT
 * loads are issued before the first product. */
template <typename A>
__device__ void table_units(const A *c, const int off[TAB_OUT], A xr, A delta, A g[TAB_OUT],
                            A dg[TAB_OUT])
{
    A q[TAB_OUT][6];
#pragma unroll
    for (int h = 0; h < TAB_OUT; h++) {
#pragma unroll
        for (int k = 0; k < 6; k++) {
            q[h][k] = __ldg(c + off[h] + k * TAB_PASS);
        }
    }
#pragma unroll
    for (int h = 0; h < TAB_OUT; h++) {
        A v = q[h][5], d = q[h][5];
#pragma unroll
        for (int k = 4; k >= 1; k--) {
            v = v * xr + q[h][k];
            d = d * xr + v;
        }
        v = v * xr + q[h][0];
        g[h] = v + d * delta;
        dg[h] = d;
    }
}

/* The live slots of a centre (occupied, type pair not excluded) in slot order into list (warp
 * wide, all lanes); returns their count. */
__device__ int warp_live_slots(const hmd_cuda_model &m, int ti, const int *slots, int *list)
{
    int n = 0;
    for (int j0 = 0; j0 < m.nnei; j0 += 32) {
        const int j = j0 + threadIdx.x % 32;
        const bool live =
            j < m.nnei && slots[j] >= 0 && !m.exclude[ti * m.ntypes + block_of_slot(m, j)];
        const int at = hmd_warp_append(live, &n);
        if (live) {
            list[at] = j;
        }
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

/* The table coefficients of slot q of the warp's batch, which lane q placed (net k, interval iv,
 * offset xr into it, extrapolation delta), from the first pass, and the slot's offset and
 * extrapolation in scalar A (warp wide). */
template <typename A>
__device__ const A *batch_coef(const hmd_cuda_model &m, int q, int k, int iv, double xr,
                               double delta, A &xq, A &dq)
{
    xq = A(__shfl_sync(0xffffffffu, xr, q));
    dq = A(__shfl_sync(0xffffffffu, delta, q));
    const int kq = __shfl_sync(0xffffffffu, k, q);
    const size_t interval = (size_t)6 * tab_width(m.M);
    return precision<A>::coef(m, kq) + __shfl_sync(0xffffffffu, iv, q) * interval;
}

/* acc[h][c] = sum of G_a R_c over the live slots list[lo..hi) of centre i, outputs
 * a = a0 + lane + 32 h of pass a0 / TAB_PASS (warp wide; for a >= M, not zero and not used). */
template <typename A>
__device__ void forward_sum(const hmd_cuda_model &m, int i, int ti, const int *slots,
                            const int *list, int lo, int hi, const double *x, int a0,
                            double acc[TAB_OUT][4])
{
    const int lane = threadIdx.x % 32;
    int off[TAB_OUT];
    pass_offsets(m.M, a0, off);
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
            A xq, dq, g[TAB_OUT], dg[TAB_OUT];
            const A *coef = batch_coef(m, q, k, iv, xr, delta, xq, dq) + 6 * a0;
            table_units(coef, off, xq, dq, g, dg);
#pragma unroll
            for (int h = 0; h < TAB_OUT; h++) {
                for (int c = 0; c < 4; c++) {
                    acc[h][c] += (double)g[h] * Rq[c];
                }
            }
        }
    }
}

/* T [rows][M][4] = (sum over live slots of G (x) R) / nnei of every centre of the chunk
 * (descriptor_forward without the padding and D, which pad_and_D adds), the table in scalar A.
 * `split` warps per centre (1 unless SPLIT), each walking its range of the slots once per TAB_PASS
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
    for (int a0 = 0; a0 < M; a0 += TAB_PASS) {
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

/* Forces and virial of every centre of the chunk from gamma [rows][4][M] (gamma_from_dD), the
 * table recomputed in scalar A (descriptor_backward's per-slot part). `split` warps per centre:
 * each walks its range of the live slots as compressed_forward does (lane: outputs
 * a0 + lane + 32 h of each pass a0, with the lane's gamma of the pass in registers), sums
 * px = G gamma and py = dG gamma of each slot over the warp and leaves them with the lane that
 * placed the slot (its place in the range % 32), which then adds that slot's forces. Dynamic shared
 * memory: backward_smem_bytes. */
template <typename A>
__global__ void __launch_bounds__(32 * TAB_WARPS, TAB_BWD_BLOCKS_PER_SM)
    compressed_backward(const hmd_cuda_model *mp, int rows, int split, int ncount, const double *x,
                        const int *type, const int *idx, const int *slots_all, const double *gamma,
                        hmd_exact *f, hmd_exact *virial)
{
    const hmd_cuda_model &m = *mp;
    /* [TAB_WARPS][32][8] px and py of a batch of slots, the slot lists */
    extern __shared__ double tab_batch[];
    __shared__ hmd_exact vir[9];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int row = (blockIdx.x * TAB_WARPS + warp) / split;
    if (threadIdx.x < 9) {
        vir[threadIdx.x] = hmd_exact{0, 0};
    }
    __syncthreads();
    if (row < rows) { /* a whole warp */
        const int M = m.M, i = idx[row], ti = type[i];
        const int *slots = slots_all + (size_t)row * m.nnei;
        const double *gamma_i = gamma + (size_t)row * 4 * M;
        double *batch = tab_batch + warp * 32 * 8;
        int *list = (int *)(tab_batch + TAB_WARPS * 32 * 8) + warp * m.nnei;
        int lo, hi;
        slot_range(warp_live_slots(m, ti, slots, list), warp % split, split, &lo, &hi);
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
            for (int a0 = 0; a0 < M; a0 += TAB_PASS) {
                /* the lane's gamma of the pass in registers, zero beyond M */
                int off[TAB_OUT];
                pass_offsets(M, a0, off);
                double gam[TAB_OUT][4];
#pragma unroll
                for (int h = 0; h < TAB_OUT; h++) {
                    const bool in = a0 + lane + 32 * h < M;
#pragma unroll
                    for (int c = 0; c < 4; c++) {
                        gam[h][c] = in ? gamma_i[c * M + a0 + off[h]] : 0.0;
                    }
                }
                for (int q = 0; q < nq; q++) {
                    A xq, dq, g[TAB_OUT], dg[TAB_OUT];
                    const A *coef = batch_coef(m, q, k, iv, xr, delta, xq, dq) + 6 * a0;
                    table_units(coef, off, xq, dq, g, dg);
                    double p[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
                    for (int h = 0; h < TAB_OUT; h++) {
#pragma unroll
                        for (int c = 0; c < 4; c++) {
                            p[c] += (double)g[h] * gam[h][c];
                            p[4 + c] += (double)dg[h] * gam[h][c];
                        }
                    }
                    const int v = warp_sum8(p);
                    if (lane % 4 == 0) { /* the passes' sums, in pass order */
                        batch[8 * q + v] = (a0 ? batch[8 * q + v] : 0.0) + p[0];
                    }
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
                hmd_exact_add(&f[3 * i + q], fi[q]);
            }
            for (int e = 0; e < 9 && i < ncount; e++) {
                hmd_exact_add(&vir[e], w[e]);
            }
        }
    }
    __syncthreads();
    if (threadIdx.x < 9) {
        hmd_exact_add_exact(&virial[threadIdx.x], vir[threadIdx.x]);
    }
}

/* Dynamic shared memory of compressed_forward: each warp's sums (when the centres' slots are
 * split) and slot list. */
size_t forward_smem_bytes(const hmd_cuda_model &g, int split)
{
    return (split > 1 ? sizeof(double) * TAB_WARPS * TAB_OUT * 4 * 32 : 0) +
           sizeof(int) * TAB_WARPS * g.nnei;
}

/* Dynamic shared memory of compressed_backward: each warp's px and py of a batch of slots and
 * its slot list. */
size_t backward_smem_bytes(const hmd_cuda_model &g)
{
    return sizeof(double) * TAB_WARPS * 32 * 8 + sizeof(int) * TAB_WARPS * g.nnei;
}

/* Table t's coefficients in the kernels' layout: [interval][pass][a0..a5][TAB_PASS], zero beyond
 * t.M (the host's is [interval][a0..a5][M]). */
std::vector<double> table_device_layout(const hmd_emb_table &t)
{
    std::vector<double> c((size_t)t.nspline * 6 * tab_width(t.M));
    hmd_emb_table_in_passes(&t, TAB_PASS, c.data());
    return c;
}

} // namespace

#endif /* HMD_CUDA_SE_E2A_COMPRESSED_CUH */
