/* DPA-1 on the GPU, backward kernels: dE/dT to dE/dG and dE/dR, the layer norm, softmax and
 * q, k, v in reverse, the strip gate and compressed embedding in reverse, and the forces and
 * virial. Part of dpa1_eval.cu's translation unit (only it includes this file), in an anonymous
 * namespace as the rest of it. */
#ifndef HMD_CUDA_DPA1_BACKWARD_CUH
#define HMD_CUDA_DPA1_BACKWARD_CUH

#include "cuda/exact_sum.cuh"
#include "cuda/nnp/dpa1_device.cuh"
#include "cuda/nnp/tf32x3.cuh"

#include <type_traits>

namespace
{

/* Dynamic shared memory of k_grad_T: gamma of one centre. */
constexpr size_t grad_T_smem(int M)
{
    return (size_t)M * 4 * sizeof(double);
}

/* dE/dT back to G and R, centre i = block (dpa1.c hmd_dpa1_backward). gamma[a][c] = dE/dT[a][c]
 * / nnei (D[a][b] = T[a] . T[b], b < M2) goes into shared memory (grad_T_smem(M) bytes, column
 * c at c M); then one live row of the centre per warp (compacted row off[i] + k is padded row
 * i nnei + k): dE/dG = R gamma^T into the compacted dY, and dE/dR through T = G gamma into the
 * padded dR (G and dY in V, sums in double). gamma thus never leaves the chip (read through the
 * caches for every element, it moved four times the bytes of dY and of G). (Bounded to 12
 * blocks per SM, as k_descriptor, it spills.) */
template <typename V>
__global__ void k_grad_T(dpa1_model g, const double *T, const double *dD, const int *off,
                         const int *nlive, const double *R, const V *G, V *dY, double *dR)
{
    extern __shared__ double gam[]; /* gamma, [4][M] */
    const int i = blockIdx.x, M = g.M, M2 = g.M2, n = nlive[i];
    const double *Ti = T + (size_t)i * M * 4, *dDi = dD + (size_t)i * g.dim;
    for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
        const int a = e / 4, c = e % 4;
        gam[c * M + a] = hmd_descriptor_grad_T(dDi, M2, Ti, M, M2, a, c) / g.nnei;
    }
    __syncthreads();
    const size_t first = (size_t)off[i], pad = (size_t)i * g.nnei;
    const int lane = threadIdx.x % 32;
    for (int k = threadIdx.x / 32; k < n; k += blockDim.x / 32) {
        const double *r = R + 4 * (pad + k);
        const double r0 = r[0], r1 = r[1], r2 = r[2], r3 = r[3];
        const V *Gk = G + (first + k) * M;
        V *dYk = dY + (first + k) * M;
        /* the lane's first FEATURE_KEPT values of G's row, loaded together before any store to
         * dY (which the compiler must assume may alias G: loaded one by one after each store,
         * every load waited out the memory's latency) */
        V g_kept[FEATURE_KEPT];
        each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
            if (e < FEATURE_KEPT) {
                g_kept[e] = Gk[a];
            }
        });
        double acc[4] = {0, 0, 0, 0};
        each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
            const double g0 = gam[a], g1 = gam[M + a], g2 = gam[2 * M + a], g3 = gam[3 * M + a];
            dYk[a] = r0 * g0 + r1 * g1 + r2 * g2 + r3 * g3;
            const double ga = (double)(e < FEATURE_KEPT ? g_kept[e] : Gk[a]);
            acc[0] += ga * g0;
            acc[1] += ga * g1;
            acc[2] += ga * g2;
            acc[3] += ga * g3;
        });
        for (int c = 0; c < 4; c++) {
            acc[c] = warp_sum(acc[c]);
        }
        if (lane < 4) { /* (no dynamic index into acc: it would live in local memory) */
            dR[4 * (pad + k) + lane] = lane == 0   ? acc[0]
                                       : lane == 1 ? acc[1]
                                       : lane == 2 ? acc[2]
                                                   : acc[3];
        }
    }
}

/* Layer norm backward, one compacted row per warp: dX = (dzhat - mean(dzhat) - zhat
 * mean(dzhat zhat)) / sigma with dzhat = dY w (dpa1.c attention_backward), also written padded
 * into dP (it is dE/dP as well); zhat and sigma padded. */
template <typename V>
__global__ void k_layer_norm_backward(const int *count, const int *crow, int M, attn_layer L,
                                      const V *zhat, const double *sigma, const V *dY, V *dX, V *dP)
{
    const size_t c = warp_row();
    if (c >= (size_t)*count) {
        return;
    }
    const int lane = threadIdx.x % 32;
    const size_t r = (size_t)crow[c];
    const V *zh = zhat + r * M, *dy = dY + c * M;
    /* dE/dy and zhat of the lane's first features */
    double dy_kept[FEATURE_KEPT], zh_kept[FEATURE_KEPT];
    double m1 = 0.0, m2 = 0.0;
    each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
        const double y = dy[a], z = zh[a], dz = y * L.ln_w[a];
        m1 += dz;
        m2 += dz * z;
        if (e < FEATURE_KEPT) {
            dy_kept[e] = y, zh_kept[e] = z;
        }
    });
    m1 = warp_sum(m1) / M;
    m2 = warp_sum(m2) / M;
    const double sig = sigma[r];
    each_lane_slot<FEATURE_KEPT>(M, lane, [&](int a, int e) {
        const bool k = e < FEATURE_KEPT;
        const double y = k ? dy_kept[e] : (double)dy[a], z = k ? zh_kept[e] : (double)zh[a];
        /* (dE/dy w - m1 - zhat m2) / sigma as two fused multiply-adds, the roundings the
         * compiler gave the one expression before the values were kept (a product kept from
         * the first pass would be rounded once more) */
        const V d = __fma_rn(-z, m2, __fma_rn(y, L.ln_w[a], -m1)) / sig;
        dX[c * M + a] = d;
        dP[r * M + a] = d;
    });
}

/* Blocks of k_softmax_backward an SM holds (at most 80 registers): one block per centre, so a
 * 1,536-atom system's centres take 2 rounds on 132 SMs; at the 96 registers the compiler takes
 * unbounded (5 blocks an SM), 3. */
constexpr int SOFTMAX_BACKWARD_BLOCKS = 6;

/* Dynamic shared memory of k_softmax_backward: four sums per slot for each warp. */
constexpr size_t softmax_backward_smem(int nnei)
{
    return (size_t)WARPS * 4 * nnei * sizeof(double);
}

/* Through A' = A F and the softmax for centre i = block, one row j per warp at a time (dpa1.c
 * attention_backward): dA holds dE/dA' on entry and dE/dS on return; writes A' (for dV), zero
 * outside live x live. The pair coefficients Cd_jk (dotr) and Cs_jk (smooth) are summed over both
 * ends of each pair, as the CPU adds them: drhat_j += sum_k (Cd_jk + Cd_kj) rhat_k and dsw_j +=
 * sum_k (Cs_jk + Cs_kj) sw_k. Each warp gathers its rows' terms per slot in shared memory
 * (softmax_backward_smem), lane k % 32 holding slot k: down column k, and the sum along row j
 * (a warp sum) into slot j. Then the warps' sums add in a fixed order, so the result does not
 * depend on scheduling. Whether a slot is live is k < nlive[i] (the live slots come first), a
 * compare rather than a load, so that the loads of a lane's slots do not wait on one another.
 * Launched with THREADS threads. */
template <typename V>
__global__ void __launch_bounds__(THREADS, SOFTMAX_BACKWARD_BLOCKS)
    k_softmax_backward(dpa1_model g, const int *nlive, const double *sw, const double *rhat,
                       const V *__restrict__ S, const V *__restrict__ A, V *__restrict__ dA,
                       V *__restrict__ Ap, double *dsw, double *drhat)
{
    extern __shared__ double part[]; /* [WARPS][4][nnei] sums per slot */
    const int n = g.nnei, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int nl = nlive[blockIdx.x]; /* the live slots come first: slot k is live when k < nl */
    const size_t base = (size_t)blockIdx.x * n;
    double *mine = part + (size_t)warp * 4 * n;
    for (int e = threadIdx.x; e < WARPS * 4 * n; e += THREADS) {
        part[e] = 0.0;
    }
    __syncthreads();
    for (int j = warp; j < n; j += WARPS) {
        const size_t r = base + j, o = r * n;
        if (j >= nl) {
            for (int k = lane; k < n; k += 32) {
                dA[o + k] = Ap[o + k] = 0.0;
            }
            continue;
        }
        /* the lane's first SLOT_KEPT slots of A and dE/dA' in registers, loaded together */
        double a_kept[SLOT_KEPT], da_kept[SLOT_KEPT];
        each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
            if (e < SLOT_KEPT && k < nl) {
                a_kept[e] = A[o + k], da_kept[e] = dA[o + k];
            }
        });
        /* live slot k's gate factors, A and dE/dA' (kept, or read again) */
        auto slot = [&](int k, int e, double *fsw, double *fd, double *a, double *dap) {
            gate_factors(g, sw, rhat, r, base + k, fsw, fd);
            const bool kept = e < SLOT_KEPT;
            *a = kept ? a_kept[e] : (double)A[o + k];
            *dap = kept ? da_kept[e] : (double)dA[o + k];
        };
        double rowsum = 0.0; /* sum_k A_jk dE/dA_jk */
        each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
            if (k < nl) {
                double fsw, fd, a, dap;
                slot(k, e, &fsw, &fd, &a, &dap);
                rowsum += a * (dap * (fsw * fd));
            }
        });
        rowsum = warp_sum(rowsum);
        const double swj = sw[r], rj[3] = {rhat[3 * r], rhat[3 * r + 1], rhat[3 * r + 2]};
        double acc[4] = {0, 0, 0, 0}; /* sum_k Cd_jk rhat_k, sum_k Cs_jk sw_k */
        each_lane_slot<SLOT_KEPT>(n, lane, [&](int k, int e) {
            double ap = 0.0, ds = 0.0;
            if (k < nl) {
                double fsw, fd, a, dap;
                slot(k, e, &fsw, &fd, &a, &dap);
                const double swk = sw[base + k];
                const double *rk = rhat + 3 * (base + k);
                ap = a * (fsw * fd);
                ds = a * (dap * (fsw * fd) - rowsum);
                if (g.dotr) {
                    const double cd = dap * a * fsw;
                    for (int q = 0; q < 3; q++) {
                        acc[q] += cd * rk[q];
                        mine[q * n + k] += cd * rj[q];
                    }
                }
                if (g.smooth) {
                    /* S' = (S + 20) sw_j sw_k - 20, and A' carries sw_j sw_k */
                    const double cs = dap * a * fd + ds * ((double)S[o + k] + ATTN_SHIFT);
                    acc[3] += cs * swk;
                    mine[3 * n + k] += cs * swj;
                    ds *= swj * swk;
                }
            }
            dA[o + k] = ds;
            Ap[o + k] = ap;
        });
        for (int q = 0; q < 4; q++) {
            acc[q] = warp_sum(acc[q]);
        }
        if (lane == j % 32) { /* the lane that holds slot j */
            for (int q = 0; q < 4; q++) {
                mine[q * n + j] += acc[q];
            }
        }
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += THREADS) {
        if (j >= nl) {
            continue;
        }
        double sum[4] = {0, 0, 0, 0};
        for (int w = 0; w < WARPS; w++) {
            for (int q = 0; q < 4; q++) {
                sum[q] += part[((size_t)w * 4 + q) * n + j];
            }
        }
        for (int q = 0; q < 3; q++) {
            drhat[3 * (base + j) + q] += sum[q];
        }
        dsw[base + j] += sum[3];
    }
}

/* Back through q~ = c x / |x| (normalize) or c x, one (compacted row, part) per warp, from the
 * padded q~ and dE/dq~ in qkv and dQKV to the compacted dE/dx in out; x / |x| = q~ / c (dpa1.c
 * attention_backward). With `split` (3xTF32; fp32 only, ignored in double), out's rows are
 * [dx_hi | dx_lo] (hmd_tf32x2_put), 6H wide, for hmd_tf32x3_gemm2_add. */
template <typename V>
__global__ void k_qkv_backward(dpa1_model g, const int *count, const int *crow, const V *qkv,
                               const double *qkvn, const V *dQKV, bool split, V *out)
{
    const size_t w = warp_row();
    if (w >= (size_t)*count * 3) {
        return;
    }
    const int lane = threadIdx.x % 32, H = g.H;
    const size_t pw = (size_t)crow[w / 3] * 3 + w % 3;
    const V *q = qkv + pw * H, *din = dQKV + pw * H;
    /* part w % 3 of row w / 3 of dx (3H wide), or its hi and lo parts in [dx_hi | dx_lo] */
    auto put = [&](int h, double v) {
        if constexpr (std::is_same<V, float>::value) {
            if (split) {
                hmd_tf32x2_put(out, w / 3, (size_t)(w % 3) * H + h, 3 * (size_t)H, (float)v);
                return;
            }
        }
        out[w * H + h] = v;
    };
    /* the lane's first FEATURE_KEPT values of q and dE/dq in registers (each_lane_slot), all loads
     * in flight at once */
    double q_kept[FEATURE_KEPT], d_kept[FEATURE_KEPT];
    double dot = 0.0; /* u . g, u = x / |x| */
    each_lane_slot<FEATURE_KEPT>(H, lane, [&](int h, int e) {
        const double qh = q[h], dh = din[h];
        dot += qh * dh;
        if (e < FEATURE_KEPT) {
            q_kept[e] = qh, d_kept[e] = dh;
        }
    });
    const double norm = qkvn[w], c = w % 3 == 0 ? g.scaling : 1.0;
    const bool normalized = g.normalize && norm > NORM_EPS;
    dot = normalized ? warp_sum(dot) / c : 0.0;
    /* dE/dx = c (g - u (u . g)) / |x|, or c g / |x| without the normalisation */
    auto dx = [&](double qh, double dh) {
        return normalized ? c * (dh - qh / c * dot) / norm : dh * (c / norm);
    };
    each_lane_slot<FEATURE_KEPT>(H, lane, [&](int h, int e) {
        put(h, e < FEATURE_KEPT ? dx(q_kept[e], d_kept[e]) : dx(q[h], din[h]));
    });
}

/* Strip mode, one compacted row per warp: dE/dg_s = dE/dG0 (1 + gate w), in place; smooth:
 * dE/d sw += dE/dG0 . (g_s gate) (dpa1.c hmd_dpa1_backward), into the padded dsw. */
template <typename V>
__global__ void k_strip_backward(dpa1_model g, const int *count, const int *crow, const int *type,
                                 const int *tj, const double *sw, const V *gs, V *dG, double *dsw)
{
    const size_t r = warp_row();
    if (r >= (size_t)*count) {
        return;
    }
    const int lane = threadIdx.x % 32, M = g.M;
    const size_t pr = (size_t)crow[r];
    const double *gate = gate_row(g, type[pr / g.nnei], tj[r]);
    const double w = g.smooth ? sw[pr] : 1.0;
    double acc = 0.0;
    for (int a = lane; a < M; a += 32) {
        const double d = dG[r * M + a];
        acc += d * (double)gs[r * M + a] * gate[a];
        dG[r * M + a] = d * (gate[a] * w + 1.0);
    }
    acc = warp_sum(acc);
    if (g.smooth && lane == 0) {
        dsw[pr] += acc;
    }
}

/* Compressed embedding, one compacted row per warp: dE/dR0 = dE/dg . dg/dR0. */
template <typename V>
__global__ void k_table_backward(const int *count, int M, const V *dg, const V *dydx, V *dr0)
{
    const size_t r = warp_row();
    if (r >= (size_t)*count) {
        return;
    }
    double acc = 0.0;
    for (int a = threadIdx.x % 32; a < M; a += 32) {
        acc += (double)dg[r * M + a] * (double)dydx[r * M + a];
    }
    acc = warp_sum(acc);
    if (threadIdx.x % 32 == 0) {
        dr0[r] = acc;
    }
}

/* Atom i = block, its live neighbours over the threads (dpa1.c hmd_dpa1_backward, then
 * dp_eval.c scatter_pass): dE/dR = dR + dE/dR0 (dr0 [crows], `dr0_stride` apart) + the rhat
 * term, then dE/dd_ij through the normalisation, the Jacobian and the switch; forces on the
 * neighbours by atomics, the force on i and the virial of centres i < ncount summed over each
 * warp first (atomic adds of every thread on i's three and the block's nine addresses queued one
 * behind another). Launched with THREADS threads. */
template <typename V>
__global__ void k_force(dpa1_model g, int ncount, const double *x, const int *type,
                        const int *nlive, const int *off, const int *livej, const int *nbr,
                        const double *dRin, const V *dr0, int dr0_stride, const double *rhat,
                        const double *unorm, const double *drhat, const double *dsw, hmd_exact *f,
                        hmd_exact *virial)
{
    __shared__ hmd_exact vir[9];
    const int i = blockIdx.x, ti = type[i], nnei = g.nnei;
    const bool counted = i < ncount;
    if (threadIdx.x < 9) {
        vir[threadIdx.x] = hmd_exact{0, 0};
    }
    __syncthreads();
    double w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, fi[3] = {0, 0, 0};
    for (int k = threadIdx.x; k < nlive[i]; k += blockDim.x) {
        const size_t e = (size_t)i * nnei + k;
        const int j = livej[e]; /* the neighbour's rank, which its statistics follow */
        double dR[4];
        for (int c = 0; c < 4; c++) {
            dR[c] = dRin[4 * e + c];
        }
        dR[0] += dr0[((size_t)off[i] + k) * dr0_stride];
        if (g.dotr) {
            /* rhat = u / max(|u|, eps), u = R[1:4] */
            const double *rh = rhat + 3 * e, *drh = drhat + 3 * e;
            const double un = unorm[e];
            if (un > NORM_EPS) {
                const double dot =
                    __dadd_rn(__dadd_rn(__dmul_rn(rh[0], drh[0]), __dmul_rn(rh[1], drh[1])),
                              __dmul_rn(rh[2], drh[2]));
                for (int c = 0; c < 3; c++) {
                    dR[1 + c] += __dadd_rn(drh[c], -__dmul_rn(rh[c], dot)) / un;
                }
            } else {
                for (int c = 0; c < 3; c++) {
                    dR[1 + c] += drh[c] / NORM_EPS;
                }
            }
        }
        const int nb = nbr[e];
        double d[3], raw[4], jac[4][3], s, ds;
        for (int q = 0; q < 3; q++) {
            d[q] = x[3 * nb + q] - x[3 * i + q];
        }
        env_row_rn(d, g.rcut_smth, g.rcut, g.protection, raw, jac);
        const double rr = norm_rn(d);
        env_switch_rn(rr, g.rcut_smth, g.rcut, &s, &ds);
        const double *std = g.dstd + ((size_t)ti * nnei + j) * 4;
        double gr[3];
        for (int q = 0; q < 3; q++) {
            double v = __dmul_rn(__dmul_rn(dsw[e], ds), d[q]) / rr;
            for (int c = 0; c < 4; c++) {
                v = __dadd_rn(v, __dmul_rn(dR[c] / std[c], jac[c][q]));
            }
            gr[q] = v;
            hmd_exact_add(&f[3 * nb + q], -v);
            fi[q] += v;
        }
        for (int a = 0; a < 3 && counted; a++) {
            for (int b = 0; b < 3; b++) {
                w[3 * a + b] = __dadd_rn(w[3 * a + b], -__dmul_rn(gr[a], d[b]));
            }
        }
    }
    for (int q = 0; q < 3; q++) {
        fi[q] = warp_sum(fi[q]);
    }
    for (int q = 0; q < 9; q++) {
        w[q] = warp_sum(w[q]);
    }
    if (threadIdx.x % 32 == 0) {
        for (int q = 0; q < 3; q++) {
            hmd_exact_add(&f[3 * i + q], fi[q]);
        }
        for (int q = 0; q < 9 && counted; q++) {
            hmd_exact_add(&vir[q], w[q]);
        }
    }
    __syncthreads();
    if (counted && threadIdx.x < 9) {
        hmd_exact_add_exact(&virial[threadIdx.x], vir[threadIdx.x]);
    }
}

} // namespace

#endif /* HMD_CUDA_DPA1_BACKWARD_CUH */
