/* DPA-1 on the GPU, forward kernels: neighbour selection, the live rows and their offsets, the
 * environment rows, the compressed embedding and strip gate, q, k, v, the softmax, the layer norm
 * and the descriptor (dpa1_eval.cu's header comment gives the layouts). Part of dpa1_eval.cu's
 * translation unit (only it includes this file), in an anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_DPA1_FORWARD_CUH
#define HMD_CUDA_DPA1_FORWARD_CUH

#include "cuda/nnp/dpa1_device.cuh"

namespace
{

constexpr int OFFSET_THREADS = 1024; /* k_offsets' one block */

/* DPA-1's selection (dp_eval.c format_neighbors): within rcut and not pair-excluded, the nnei
 * nearest by (distance, index) into slots of atom i = block, in that order; the ranks of the live
 * ones, in order, into livej; the numbers of occupied and of live slots. Shared memory: cap
 * doubles and cap + 1 ints. */
__global__ void k_select(dpa1_model g, const double *x, const int *type, const int *nl_index,
                         const int *nl_count, int cap, int *slots, int *livej, int *filled,
                         int *nlive, double *dropped)
{
    extern __shared__ double sh[];
    double *r2 = sh;
    int *jj = (int *)(r2 + cap), *counts = jj + cap; /* counts: candidates */
    const int i = blockIdx.x, ti = type[i], nnei = g.nnei;
    int *out = slots + (size_t)i * nnei;
    const int n = hmd_select_candidates(i, x, type, nl_index, nl_count[i], cap, g.rcut * g.rcut,
                                        g.pair_exclude, g.ntypes, nnei, out, r2, jj, counts);
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        const double a = r2[k];
        const int ja = jj[k];
        int rank = 0;
        for (int q = 0; q < n; q++) {
            rank += r2[q] < a || (r2[q] == a && jj[q] < ja);
        }
        if (rank < nnei) {
            out[rank] = ja;
        }
    }
    __syncthreads();
    if (threadIdx.x < 32) { /* the live ranks in order, by one warp */
        const int nf = min(n, nnei);
        int nl = 0;
        for (int q0 = 0; q0 < nf; q0 += 32) {
            const int q = q0 + threadIdx.x;
            const int nb = q < nf ? out[q] : -1; /* -1 only if the list repeats an atom */
            const bool is_live = nb >= 0 && !g.exclude[ti * g.ntypes + type[nb]];
            const int at = hmd_warp_append(is_live, &nl);
            if (is_live) {
                livej[(size_t)i * nnei + at] = q;
            }
        }
        if (threadIdx.x == 0) {
            filled[i] = nf;
            nlive[i] = nl;
            if (n > nnei) {
                atomicAdd(dropped, (double)(n - nnei)); /* beyond sel: left out, as on the CPU */
            }
        }
    }
}

/* One block: off[i] = sum of nlive over the centres before i, and *count = the sum over all. */
__global__ void k_offsets(int nlocal, const int *nlive, int *off, int *count)
{
    __shared__ int part[OFFSET_THREADS];
    const int t = threadIdx.x, per = (nlocal + OFFSET_THREADS - 1) / OFFSET_THREADS;
    const int lo = min(t * per, nlocal), hi = min(lo + per, nlocal);
    int sum = 0;
    for (int i = lo; i < hi; i++) {
        sum += nlive[i];
    }
    part[t] = sum;
    __syncthreads();
    for (int d = 1; d < OFFSET_THREADS; d <<= 1) { /* inclusive scan of the parts */
        const int v = t >= d ? part[t - d] : 0;
        __syncthreads();
        part[t] += v;
        __syncthreads();
    }
    int run = part[t] - sum;
    for (int i = lo; i < hi; i++) {
        off[i] = run;
        run += nlive[i];
    }
    if (t == OFFSET_THREADS - 1) {
        *count = part[t];
    }
}

/* Per padded row e (atom i, its k-th live neighbour, of rank j; live when k < nlive[i]):
 * neighbour index, R, switch, direction (dpa1.c gather_neighbors); per compacted row c = off[i] +
 * k: its padded row, the neighbour type and the embedding input [R0, TE[tj], TE[ti]] or [R0]
 * (embedding_input) into in [crows][ke]. */
template <typename V>
__global__ void k_env(dpa1_model g, size_t rows, const double *x, const int *type, const int *slots,
                      const int *livej, const int *nlive, const int *off, int *nbr, int *crow,
                      int *tj_out, double *R, double *sw, double *rhat, double *unorm, V *in)
{
    const size_t e = thread_index();
    if (e >= rows) {
        return;
    }
    const int nnei = g.nnei, i = (int)(e / nnei), k = (int)(e % nnei), ti = type[i];
    const bool is_live = k < nlive[i];
    const int j = is_live ? livej[e] : 0, nb = is_live ? slots[(size_t)i * nnei + j] : -1;
    double Rr[4] = {0, 0, 0, 0}, s = 0.0, un = 0.0, rh[3] = {0, 0, 0};
    if (is_live) {
        double d[3], raw[4], ds;
        for (int q = 0; q < 3; q++) {
            d[q] = x[3 * nb + q] - x[3 * i + q];
        }
        env_row_rn(d, g.rcut_smth, g.rcut, g.protection, raw, NULL);
        env_switch_rn(norm_rn(d), g.rcut_smth, g.rcut, &s, &ds);
        const double *avg = g.davg + ((size_t)ti * nnei + j) * 4;
        const double *std = g.dstd + ((size_t)ti * nnei + j) * 4;
        for (int c = 0; c < 4; c++) {
            Rr[c] = (raw[c] - avg[c]) / std[c];
        }
        un = norm_rn(Rr + 1);
        const double den = un > NORM_EPS ? un : NORM_EPS;
        for (int c = 0; c < 3; c++) {
            rh[c] = Rr[1 + c] / den;
        }
    }
    nbr[e] = nb;
    for (int c = 0; c < 4; c++) {
        R[4 * e + c] = Rr[c];
    }
    for (int c = 0; c < 3; c++) {
        rhat[3 * e + c] = rh[c];
    }
    sw[e] = s;
    unorm[e] = un;
    if (!is_live) {
        return;
    }
    const size_t cr = (size_t)off[i] + k;
    const int tj = type[nb];
    crow[cr] = (int)e;
    tj_out[cr] = tj;
    V *row = in + cr * g.ke;
    row[0] = Rr[0];
    if (!g.strip) {
        const int Td = g.tebd_dim;
        for (int t = 0; t < Td; t++) {
            row[1 + t] = g.type_embd[(size_t)tj * Td + t];
        }
        for (int t = 0; t < Td && !g.type_one_side; t++) {
            row[1 + Td + t] = g.type_embd[(size_t)ti * Td + t];
        }
    }
}

/* Compressed embedding: y [crows][M] and dy = dy/ds from the table at s = R0 of each compacted
 * row (R padded [rows][4], tabulate.h hmd_emb_table_eval). */
template <typename V>
__global__ void k_table_forward(dpa1_model g, const int *count, const int *crow, const double *R,
                                V *y, V *dy)
{
    const size_t e = thread_index();
    const int M = g.M;
    if (e >= (size_t)*count * M) {
        return;
    }
    const size_t r = e / M;
    const int o = (int)(e % M);
    double xr, delta;
    const int i = hmd_emb_table_locate(&g.table, R[4 * (size_t)crow[r]], &xr, &delta);
    const double *a0 = g.table.coef + (size_t)i * 6 * M;
    const double *a1 = a0 + M, *a2 = a1 + M, *a3 = a2 + M, *a4 = a3 + M, *a5 = a4 + M;
    const double p = a0[o] + (a1[o] + (a2[o] + (a3[o] + (a4[o] + a5[o] * xr) * xr) * xr) * xr) * xr;
    const double dp =
        a1[o] + (2 * a2[o] + (3 * a3[o] + (4 * a4[o] + 5 * a5[o] * xr) * xr) * xr) * xr;
    y[e] = p + dp * delta;
    dy[e] = dp;
}

/* Strip mode, compacted rows: G0 = g_s (1 + gate(t_i, t_j) w), w = sw (smooth) or 1 (dpa1.c
 * embed). */
template <typename V>
__global__ void k_strip_gate(dpa1_model g, const int *count, const int *crow, const int *type,
                             const int *tj, const double *sw, const V *gs, V *G)
{
    const size_t e = thread_index();
    const int M = g.M;
    if (e >= (size_t)*count * M) {
        return;
    }
    const size_t r = e / M, pr = (size_t)crow[r];
    const int a = (int)(e % M);
    const double gate = gate_row(g, type[pr / g.nnei], tj[r])[a];
    const double geff = gate * (g.smooth ? sw[pr] : 1.0);
    const double x = gs[e];
    G[e] = x * geff + x;
}

/* Adds b_in to the raw projections (compacted) of one (row, part) per warp and turns them into
 * q, k, v (padded): divided by the norm (normalize), q times `scaling` (dpa1.c prepare_qkv); the
 * norms into qkvn (compacted). */
template <typename V>
__global__ void k_qkv_prepare(dpa1_model g, const int *count, const int *crow, const double *b_in,
                              const V *raw, V *qkv, double *qkvn)
{
    const size_t w = warp_row();
    if (w >= (size_t)*count * 3) {
        return;
    }
    const int lane = threadIdx.x % 32, part = (int)(w % 3), H = g.H;
    const V *x = raw + w * H; /* row w / 3, part w % 3: rows are [q | k | v] */
    V *q = qkv + ((size_t)crow[w / 3] * 3 + part) * H;
    auto biased = [&](int h) { return (double)x[h] + (b_in ? b_in[part * H + h] : 0.0); };
    double kept[FEATURE_KEPT]; /* the lane's first values of x + b */
    double ss = 0.0;
    each_lane_slot<FEATURE_KEPT>(H, lane, [&](int h, int e) {
        const double v = biased(h);
        ss += v * v;
        if (e < FEATURE_KEPT) {
            kept[e] = v;
        }
    });
    double norm = 1.0;
    if (g.normalize) {
        norm = sqrt(warp_sum(ss));
        norm = norm > NORM_EPS ? norm : NORM_EPS;
    }
    const double scale = (part == 0 ? g.scaling : 1.0) / norm;
    each_lane_slot<FEATURE_KEPT>(
        H, lane, [&](int h, int e) { q[h] = (e < FEATURE_KEPT ? kept[e] : biased(h)) * scale; });
    if (lane == 0) {
        qkvn[w] = norm;
    }
}

/* Softmax of one attention row per warp (dpa1.c attention_forward): A over the live columns of a
 * live row, with the smooth shift and the masked slots' share of the denominator, and
 * A' = A F. Rows and columns that are not live get A = A' = 0. */
template <typename V>
__global__ void k_softmax(dpa1_model g, size_t rows, const int *nlive, const double *sw,
                          const double *rhat, const V *__restrict__ S, V *__restrict__ A,
                          V *__restrict__ Ap)
{
    const size_t r = warp_row();
    if (r >= rows) {
        return;
    }
    const int lane = threadIdx.x % 32, n = g.nnei;
    const size_t i = r / n, base = i * n;
    const int nl = nlive[i]; /* the live slots come first: slot k is live when k < nl */
    const V *Sr = S + r * n;
    V *Ar = A + r * n, *Apr = Ap + r * n;
    if ((int)(r - base) >= nl) {
        for (int k = lane; k < n; k += 32) {
            Ar[k] = Apr[k] = 0.0;
        }
        return;
    }
    const double swj = sw[r];
    const int nmask = n - nl; /* empty and excluded slots: score -20 (smooth) */
    const bool shifted = g.smooth && nmask > 0;
    /* the score of column k, shifted in smooth mode */
    auto score_of = [&](double sk, int k) {
        return g.smooth ? (sk + ATTN_SHIFT) * swj * sw[base + k] - ATTN_SHIFT : sk;
    };
    auto score = [&](int k) { return score_of(Sr[k], k); };
    /* the lane's first SLOT_KEPT slots in registers: S (loaded together, before the first use),
     * then the scores, then their exponentials (the others go through Ar) */
    double kept[SLOT_KEPT];
    each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
        if (e < SLOT_KEPT && k < nl) {
            kept[e] = Sr[k];
        }
    });
    double mx = -INFINITY;
    each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
        if (k < nl) {
            const double v = e < SLOT_KEPT ? score_of(kept[e], k) : score(k);
            mx = fmax(mx, v);
            if (e < SLOT_KEPT) {
                kept[e] = v;
            }
        }
    });
    mx = warp_max(mx);
    if (shifted && -ATTN_SHIFT > mx) {
        mx = -ATTN_SHIFT;
    }
    double den = 0.0;
    each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
        if (k < nl) {
            const double ex = exp((e < SLOT_KEPT ? kept[e] : score(k)) - mx);
            if (e < SLOT_KEPT) {
                kept[e] = (double)(V)ex; /* rounded as the slots that go through Ar */
            } else {
                Ar[k] = ex;
            }
            den += ex;
        }
    });
    den = warp_sum(den) + (shifted ? nmask * exp(-ATTN_SHIFT - mx) : 0.0);
    each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
        if (k < nl) {
            double fsw, fd;
            gate_factors(g, sw, rhat, r, base + k, &fsw, &fd);
            const double a = (e < SLOT_KEPT ? kept[e] : (double)Ar[k]) / den;
            Ar[k] = a;
            Apr[k] = a * (fsw * fd);
        } else {
            Ar[k] = Apr[k] = 0.0;
        }
    });
}

/* One compacted row per warp: z = (P + b_out) + X, zhat = (z - mean) / sigma, X <- zhat w + b
 * (dpa1.c layer_norm). P comes in zhat (padded), which the kernel overwrites; X (compacted) is
 * updated in place; sigma is padded. */
template <typename V>
__global__ void k_layer_norm(const int *count, const int *crow, int M, attn_layer L, V *zhat,
                             double *sigma, V *X)
{
    const size_t c = warp_row();
    if (c >= (size_t)*count) {
        return;
    }
    const int lane = threadIdx.x % 32;
    const size_t r = (size_t)crow[c];
    V *z = zhat + r * M, *x = X + c * M;
    /* z of the lane's first features, rounded as those that go through zhat */
    double kept[FEATURE_KEPT];
    double sum = 0.0;
    each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
        const double v = ((double)z[a] + (L.b_out ? L.b_out[a] : 0.0)) + (double)x[a];
        if (e < FEATURE_KEPT) {
            kept[e] = (double)(V)v;
        } else {
            z[a] = v;
        }
        sum += v;
    });
    const double mean = warp_sum(sum) / M;
    auto z_of = [&](int a, int e) { return e < FEATURE_KEPT ? kept[e] : (double)z[a]; };
    double var = 0.0;
    each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
        const double d = z_of(a, e) - mean;
        var += d * d;
    });
    const double sig = sqrt(warp_sum(var) / M + L.ln_eps);
    each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
        const double zh = (z_of(a, e) - mean) / sig;
        z[a] = zh;
        x[a] = zh * L.ln_w[a] + L.ln_b[a];
    });
    if (lane == 0) {
        sigma[r] = sig;
    }
}

/* Atom i = block: T = (padding share + sum_j G_j (x) R_j) / nnei over its live rows, summed in
 * double in the CPU's order (with fused multiply-adds, which the CPU does not use; G compacted,
 * in V; R padded); D = T T[:M2]^T and TE[t_i] (dpa1.c forward). 12 blocks per SM
 * (40 registers): a 1,536-atom system's centres in one round. */
template <typename V>
__global__ void __launch_bounds__(THREADS, 12)
    k_descriptor(dpa1_model g, int type0, const int *type, const int *filled, const int *off,
                 const int *nlive, const V *G, const double *R, double *T, double *D)
{
    const int i = blockIdx.x, ti = type[i], M = g.M, M2 = g.M2, n = nlive[i];
    double *Ti = T + (size_t)i * M * 4;
    const double *pad =
        g.pad + (((size_t)type0 * g.ntypes + ti) * (g.nnei + 1) + filled[i]) * M * 4;
    const V *Gi = G + (size_t)off[i] * M;
    const double *Ri = R + (size_t)i * g.nnei * 4;
    const double inv = 1.0 / g.nnei;
    for (int a = threadIdx.x; a < M; a += blockDim.x) {
        double t[4] = {pad[4 * a], pad[4 * a + 1], pad[4 * a + 2], pad[4 * a + 3]};
#pragma unroll 4
        for (int k = 0; k < n; k++) {
            const double ga = (double)Gi[(size_t)k * M + a];
            for (int c = 0; c < 4; c++) {
                t[c] += ga * Ri[4 * k + c];
            }
        }
        for (int c = 0; c < 4; c++) {
            Ti[4 * a + c] = t[c] * inv;
        }
    }
    __syncthreads();
    double *Di = D + (size_t)i * g.dim;
    for (int e = threadIdx.x; e < M * M2; e += blockDim.x) {
        const double *Ta = Ti + 4 * (e / M2), *Tb = Ti + 4 * (e % M2);
        Di[e] = Ta[0] * Tb[0] + Ta[1] * Tb[1] + Ta[2] * Tb[2] + Ta[3] * Tb[3];
    }
    for (int t = threadIdx.x; t < g.tebd_dim && g.concat_output_tebd; t += blockDim.x) {
        Di[M * M2 + t] = g.type_embd[(size_t)ti * g.tebd_dim + t];
    }
}

} // namespace

#endif /* HMD_CUDA_DPA1_FORWARD_CUH */
