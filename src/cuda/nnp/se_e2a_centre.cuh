/* se_e2_a on the GPU, the per-centre kernels: DeePMD-kit's neighbour selection
 * (format_neighbors), the descriptor forward and backward with one block per centre, and the
 * small kernels around the fitting nets (rows, fills, atomic energies). Part of dp_eval.cu's
 * translation unit (only it includes this file), in an anonymous namespace as the rest of it. */
#ifndef HMD_CUDA_SE_E2A_CENTRE_CUH
#define HMD_CUDA_SE_E2A_CENTRE_CUH

#include "cuda/nnp/se_e2a_device.cuh"

namespace
{

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
    const int i = idx[blockIdx.x], nnei = m.nnei;
    int *out = slots + (size_t)blockIdx.x * nnei;
    const int n = hmd_select_candidates(i, x, type, nl_index, nl_count[i], cap, m.rcut * m.rcut,
                                        m.pair_exclude, m.ntypes, nnei, out, r2, jj, n_in);
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
 * neighbour's force (exactly, cuda/exact_sum.cuh), +gr into the caller's centre force fi, and
 * -gr (x) d into its virial w (d = x_nb - x_i). */
__device__ void add_slot_force(const double *x, int i, int nb, const double gr[3], hmd_exact *f,
                               double fi[3], double w[9])
{
    double d[3];
    for (int q = 0; q < 3; q++) {
        d[q] = x[3 * nb + q] - x[3 * i + q];
        hmd_exact_add(&f[3 * nb + q], -gr[q]);
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
                                    const double *T_in, const double *dD_in, hmd_exact *f,
                                    hmd_exact *virial)
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
        s.vir[threadIdx.x] = hmd_exact{0, 0};
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
            hmd_exact_add(&f[3 * i + q], fi[q]);
        }
    }
    if (i < ncount) {
        if (lane == 0) {
            for (int e = 0; e < 9; e++) {
                hmd_exact_add(&s.vir[e], w[e]);
            }
        }
        __syncthreads();
        if (threadIdx.x < 9) {
            hmd_exact_add_exact(&virial[threadIdx.x], s.vir[threadIdx.x]);
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

/* Atomic energies e_i = scale[t] y_i + add[t] written over y and added to atom_energy (unless
 * NULL), and their sum over i < ncount added to *energy and *term (unless NULL), in a fixed
 * order (one block) so the energy does not depend on the scheduling. */
__global__ void atomic_energies(const hmd_cuda_model *mp, int nlocal, int ncount, const int *type,
                                double *y, double *energy, double *term, double *atom_energy)
{
    __shared__ double part[256];
    const hmd_cuda_model &m = *mp;
    double sum = 0.0;
    for (int i = threadIdx.x; i < nlocal; i += blockDim.x) {
        const int t = type[i];
        const double e = i < ncount ? m.e_scale[t] * y[i] + m.e_add[t] : 0.0;
        y[i] = e;
        if (atom_energy) {
            atom_energy[i] += e;
        }
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
        *energy += part[0];
        if (term) {
            *term += part[0];
        }
    }
}

/* Adds the exact sums (cuda/exact_sum.cuh) of an evaluation to the caller's doubles and zeroes
 * them for the next: f[e] += facc[e] for e < 3 * *nall (a count on the device, so that a launch
 * recorded over a capacity stays right while the count changes), virial[e] += vacc[e] for
 * e < 9. Between evaluations the accumulators are zero (they start so). */
__global__ void drain_exact(const int *nall, hmd_exact *facc, double *f, hmd_exact *vacc,
                            double *virial)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * (size_t)*nall) {
        f[e] += hmd_exact_value(facc[e]);
        facc[e] = hmd_exact{0, 0};
    }
    if (e < 9) {
        virial[e] += hmd_exact_value(vacc[e]);
        vacc[e] = hmd_exact{0, 0};
    }
}

unsigned blocks_for(size_t n, int threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

} // namespace

#endif /* HMD_CUDA_SE_E2A_CENTRE_CUH */
