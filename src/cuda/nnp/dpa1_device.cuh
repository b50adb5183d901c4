/* DPA-1 on the GPU, device side shared by its kernels: the model and attention-layer views the
 * kernels take by value, and device helpers (warp sums, the
 * environment row and switch rounded as the CPU rounds them, the strip gate, the attention
 * multiplier). Part of dpa1_eval.cu's translation unit (only it and its dpa1_*.cuh include this
 * file), in an anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_DPA1_DEVICE_CUH
#define HMD_CUDA_DPA1_DEVICE_CUH

#include "cuda/cuda_internal.cuh"

namespace
{

constexpr double ATTN_SHIFT = 20.0;       /* DeePMD-kit's attnw_shift (dpa1.c ATTN_SHIFT) */
constexpr double NORM_EPS = 1e-12;        /* torch.nn.functional.normalize's eps (dpa1.c) */
constexpr int THREADS = HMD_CUDA_THREADS; /* per block */
constexpr int WARPS = THREADS / 32;       /* rows per block of the warp-per-row kernels */

/* The descriptor as the kernels read it (passed by value; arrays in device memory). */
struct dpa1_model {
    int ntypes, nnei, M, M2, H;
    int ke;       /* embedding input width: 1 (strip), 1 + tebd_dim (one side), 1 + 2 tebd_dim */
    int tebd_dim; /* type embedding width */
    int dim;      /* dim_descrpt */
    bool strip, type_one_side, smooth, dotr, normalize, concat_output_tebd, compressed;
    double scaling;                                                      /* q scale */
    double rcut, rcut_smth, protection;                                  /* Å */
    unsigned char exclude[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES];      /* descriptor */
    unsigned char pair_exclude[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES]; /* model level */
    const double *davg, *dstd;                                           /* [ntypes][nnei][4] */
    const double *type_embd;    /* [ntypes + 1][tebd_dim], last row zero */
    const double *strip_table;  /* strip: hmd_dpa1.strip_table */
    const double *pad;          /* [type0][ti][nnei + 1][M][4]: hmd_dpa1_pad_table per type0 */
    struct hmd_emb_table table; /* compressed: the geometric table (coef on the device) */
};

/* One attention layer on the device (weights row-major [n_in][n_out] as on the host). */
struct attn_layer {
    const double *w_in, *b_in;     /* [M][3H], [3H] or NULL */
    const double *w_out, *b_out;   /* [H][M], [M] or NULL */
    const float *w_in_f, *w_out_f; /* fp32 copies (mixed; w_in_f not with 3xTF32), or NULL */
    const float *w_in_x3;          /* 3xTF32 (mixed): w_in split, [3M][3H] (tf32x3.cuh), or NULL */
    const float *w_in_x3t;         /* and w_in^T split, [9H][M], or NULL */
    const double *ln_w, *ln_b;     /* [M] */
    double ln_eps;
};

/* Sum of v over the warp, in every lane. */
__device__ double warp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

/* Maximum of v over the warp, in every lane. */
__device__ double warp_max(double v)
{
    for (int o = 16; o > 0; o >>= 1) {
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

/* Row handled by the calling warp in the warp-per-row kernels. */
__device__ size_t warp_row()
{
    return ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
}

/* Element handled by the calling thread in the thread-per-element kernels. */
__device__ size_t thread_index()
{
    return (size_t)blockIdx.x * blockDim.x + threadIdx.x;
}

/* What each lane of the warp-per-row kernels keeps in registers (each_lane_slot): slots of an
 * attention row (k_softmax, k_softmax_backward: nnei <= 128 read once), features of a q, k, v or
 * layer-norm row (k_qkv_prepare, k_qkv_backward, k_layer_norm and its backward: H, M <= 256). */
constexpr int SLOT_KEPT = 4;
constexpr int FEATURE_KEPT = 8;

/* Calls f(k, i) for the slots k = lane, lane + 32, ... < n of the calling lane, in that order,
 * with i = 0 .. KEPT - 1 for the first KEPT of them and i = KEPT for the rest. The warp-per-row
 * kernels keep the first ones in registers (arrays of KEPT indexed by i: the loop over them is
 * unrolled, so i is a constant) and read the rest again at each pass. */
template <int KEPT, typename F> __device__ inline void each_lane_slot(int n, int lane, F f)
{
#pragma unroll
    for (int i = 0; i < KEPT; i++) {
        if (lane + 32 * i < n) {
            f(lane + 32 * i, i);
        }
    }
    for (int k = lane + 32 * KEPT; k < n; k += 32) {
        f(k, KEPT);
    }
}

/* |d| rounded as the CPU rounds it (no fused multiply-add). */
__device__ double norm_rn(const double d[3])
{
    return sqrt(
        __dadd_rn(__dadd_rn(__dmul_rn(d[0], d[0]), __dmul_rn(d[1], d[1])), __dmul_rn(d[2], d[2])));
}

/* nnp/env_mat.h's hmd_env_switch and hmd_env_row with every product and sum rounded as the CPU
 * rounds them (__dmul_rn and __dadd_rn are never contracted into a fused multiply-add). Needed
 * bit for bit: near rc, s = u^3 p(u) + 1 cancels to ~1e-13, where one rounding of the sum is a
 * relative 1e-4 of s, and |R[1:4]| falls below the 1e-12 of rhat's clamp, so rhat = R[1:4] / 1e-12
 * carries that error into every attention weight of the centre (DPA-1 goldens' "sensitive"
 * pairs); with contraction the GPU's s differed there by 1e-4 and forces far from the pair by
 * 1e-7. */
__device__ void env_switch_rn(double r, double rs, double rc, double *s, double *ds)
{
    if (r <= rs) {
        *s = 1.0;
        *ds = 0.0;
    } else if (r >= rc) {
        *s = 0.0;
        *ds = 0.0;
    } else {
        const double w = rc - rs, u = (r - rs) / w;
        const double u2 = __dmul_rn(u, u), u3 = __dmul_rn(u2, u);
        const double p = __dadd_rn(__dadd_rn(__dmul_rn(-6.0, u2), __dmul_rn(15.0, u)), -10.0);
        *s = __dadd_rn(__dmul_rn(u3, p), 1.0);
        *ds = __dadd_rn(__dmul_rn(__dmul_rn(3.0, u2), p),
                        __dmul_rn(u3, __dadd_rn(__dmul_rn(-12.0, u), 15.0))) /
              w;
    }
}

__device__ void env_row_rn(const double d[3], double rs, double rc, double protection,
                           double row[4], double jac[4][3])
{
    const double r = norm_rn(d);
    double s, ds;
    env_switch_rn(r, rs, rc, &s, &ds);
    const double q = r + protection, inv_q = 1.0 / q, inv_q2 = __dmul_rn(inv_q, inv_q);
    row[0] = __dmul_rn(s, inv_q);
    for (int c = 0; c < 3; c++) {
        row[c + 1] = __dmul_rn(__dmul_rn(s, d[c]), inv_q2);
    }
    if (!jac) {
        return;
    }
    const double inv_r = 1.0 / r, s_q2 = __dmul_rn(s, inv_q2);
    const double a0 = __dmul_rn(__dadd_rn(__dmul_rn(ds, inv_q), -s_q2), inv_r);
    const double a1 = __dmul_rn(
        __dadd_rn(__dmul_rn(ds, inv_q2), -__dmul_rn(__dmul_rn(__dmul_rn(2.0, s), inv_q2), inv_q)),
        inv_r);
    for (int m = 0; m < 3; m++) {
        jac[0][m] = __dmul_rn(a0, d[m]);
        for (int c = 0; c < 3; c++) {
            jac[c + 1][m] = __dadd_rn(__dmul_rn(__dmul_rn(d[c], d[m]), a1), c == m ? s_q2 : 0.0);
        }
    }
}

/* Row of the strip table for centre type ti and neighbour type tj (dpa1.c gate_row). */
__device__ const double *gate_row(const dpa1_model &g, int ti, int tj)
{
    const int row = g.type_one_side ? tj : ti * (g.ntypes + 1) + tj;
    return g.strip_table + (size_t)row * g.M;
}

/* Attention multiplier F_jk = sw_j sw_k (smooth) times rhat_j . rhat_k (dotr), as the product
 * of its two factors (dpa1.c gate_factor). */
__device__ void gate_factors(const dpa1_model &g, const double *sw, const double *rhat, size_t j,
                             size_t k, double *fsw, double *fd)
{
    *fsw = g.smooth ? sw[j] * sw[k] : 1.0;
    *fd = 1.0;
    if (g.dotr) {
        const double *a = rhat + 3 * j, *b = rhat + 3 * k;
        *fd = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    }
}

} // namespace

#endif /* HMD_CUDA_DPA1_DEVICE_CUH */
