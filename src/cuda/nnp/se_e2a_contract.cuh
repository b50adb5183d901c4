/* se_e2_a over all slots: the two contractions with the embedding G of a chunk, each one pass
 * over G. Part of dp_eval.cu's translation unit (only it includes this file), in an anonymous
 * namespace as the rest of it.
 *   forward:  T = G^T R / nnei per centre (M x 4), summed over the type blocks;
 *   backward: px = G gamma and py = dG gamma per slot (4 each), gamma = dE/dT (4 x M per centre).
 * Layouts: se_e2a_slots.cuh (slot_index); G of block tau at 2 rows sel_offset[tau] M, values
 * [rows sel][M] then tangents [rows sel][M]; R and px, py [slot][4]; T [row][M][4]; gamma
 * [row][4][M]. Both kernels are bound by reading G: every thread issues CONTRACT_LOADS
 * predicated loads of G before it sums any of them, so that they are in flight together. */
#ifndef HMD_CUDA_SE_E2A_CONTRACT_CUH
#define HMD_CUDA_SE_E2A_CONTRACT_CUH

#include "cuda/nnp/se_e2a_slots.cuh"
#include "cuda/nnp/warp_sum8.cuh"

#include <algorithm>

namespace
{

constexpr int CONTRACT_THREADS = 256; /* at most, a block; a multiple of 32 */
constexpr int CONTRACT_LOADS = 8;     /* loads of G a thread has in flight at once */

/* Dynamic shared memory of slots_T: the R of one centre's slots (nnei x 4), or 0 (R read where it
 * is) when that exceeds the default 48 kB. */
size_t slots_T_smem(const hmd_cuda_model &g)
{
    const size_t bytes = 4 * (size_t)g.nnei * sizeof(double);
    return bytes <= 48 * 1024 ? bytes : 0;
}

/* Threads of a slots_T block: one per unit, up to CONTRACT_THREADS (a block loops over more). */
int slots_T_threads(const hmd_cuda_model &g)
{
    return std::min(CONTRACT_THREADS, (g.M + 31) / 32 * 32);
}

/* T of each of the chunk's rows centres, a block of slots_T_threads threads per centre (grid:
 * rows): T[row][u][c] = sum over blocks tau and slots j of G(row, j)[u] R(row, j)[c] / nnei, R
 * first copied into shared memory when `staged` (slots_T_smem bytes). */
__global__ void __launch_bounds__(CONTRACT_THREADS)
    slots_T(const hmd_cuda_model *mp, int rows, const double *R, const double *G, double *T,
            bool staged)
{
    extern __shared__ double R_row[]; /* [nnei][4], by block as the slots */
    const hmd_cuda_model &m = *mp;
    const int row = blockIdx.x, M = m.M;
    const double inv_nnei = 1.0 / m.nnei;
    for (int tau = 0; tau < m.ntypes && staged; tau++) {
        const int sel = m.sel[tau], off = m.sel_offset[tau];
        const double *Rb = R + 4 * ((size_t)rows * off + (size_t)row * sel);
        for (int e = threadIdx.x; e < 4 * sel; e += blockDim.x) {
            R_row[4 * off + e] = Rb[e];
        }
    }
    __syncthreads();
    for (int u = threadIdx.x; u < M; u += blockDim.x) {
        double t[4] = {0.0, 0.0, 0.0, 0.0};
        for (int tau = 0; tau < m.ntypes; tau++) {
            const int sel = m.sel[tau], off = m.sel_offset[tau];
            const double *Gb = G + (2 * (size_t)rows * off + (size_t)row * sel) * M + u;
            const double *Rs =
                staged ? R_row + 4 * off : R + 4 * ((size_t)rows * off + (size_t)row * sel);
            for (int j0 = 0; j0 < sel; j0 += CONTRACT_LOADS) {
                double gl[CONTRACT_LOADS]; /* all loads first, then the sums */
#pragma unroll
                for (int q = 0; q < CONTRACT_LOADS; q++) {
                    gl[q] = j0 + q < sel ? Gb[(size_t)(j0 + q) * M] : 0.0;
                }
#pragma unroll
                for (int q = 0; q < CONTRACT_LOADS; q++) {
                    for (int c = 0; c < 4 && j0 + q < sel; c++) {
                        t[c] = fma(gl[q], Rs[4 * (j0 + q) + c], t[c]);
                    }
                }
            }
        }
        double2 *out = reinterpret_cast<double2 *>(T + ((size_t)row * M + u) * 4);
        out[0] = make_double2(t[0] * inv_nnei, t[1] * inv_nnei);
        out[1] = make_double2(t[2] * inv_nnei, t[3] * inv_nnei);
    }
}

/* Shared memory of slots_pxy: one centre's gamma (4 x M). */
size_t slots_pxy_smem(const hmd_cuda_model &g)
{
    return 4 * (size_t)g.M * sizeof(double);
}

/* px and py of every slot of block tau = blockIdx.y of centre row = blockIdx.x (grid: rows x
 * ntypes; blocks of CONTRACT_THREADS threads and slots_pxy_smem bytes), a warp per slot:
 * px[slot][c] = sum_u G(slot)[u] gamma[row][c][u], py the same with the tangents. */
__global__ void __launch_bounds__(CONTRACT_THREADS)
    slots_pxy(const hmd_cuda_model *mp, int rows, const double *gamma, const double *G, double *px,
              double *py)
{
    extern __shared__ double gamma_row[]; /* [4][M] */
    const hmd_cuda_model &m = *mp;
    const int row = blockIdx.x, tau = blockIdx.y, M = m.M;
    const int sel = m.sel[tau], off = m.sel_offset[tau];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    for (int e = threadIdx.x; e < 4 * M; e += blockDim.x) {
        gamma_row[e] = gamma[(size_t)row * 4 * M + e];
    }
    __syncthreads();
    const size_t n = (size_t)rows * sel, first = (size_t)rows * off + (size_t)row * sel;
    const double *Gv = G + (2 * (size_t)rows * off + (size_t)row * sel) * M;
    const double *Gt = Gv + n * M;
    for (int j = warp; j < sel; j += warps) {
        double v[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        for (int u0 = 0; u0 < M; u0 += 32 * CONTRACT_LOADS / 2) {
            double gv[CONTRACT_LOADS / 2], gt[CONTRACT_LOADS / 2]; /* all loads first */
#pragma unroll
            for (int q = 0; q < CONTRACT_LOADS / 2; q++) {
                const int u = u0 + lane + 32 * q;
                gv[q] = u < M ? Gv[(size_t)j * M + u] : 0.0;
                gt[q] = u < M ? Gt[(size_t)j * M + u] : 0.0;
            }
#pragma unroll
            for (int q = 0; q < CONTRACT_LOADS / 2; q++) {
                const int u = u0 + lane + 32 * q;
                for (int c = 0; c < 4 && u < M; c++) {
                    v[c] = fma(gv[q], gamma_row[c * M + u], v[c]);
                    v[4 + c] = fma(gt[q], gamma_row[c * M + u], v[4 + c]);
                }
            }
        }
        const int i = warp_sum8(v); /* v[0]: the sum of px[i] (i < 4) or py[i - 4] */
        if (lane % 4 == 0) {
            (i < 4 ? px : py)[4 * (first + j) + i % 4] = v[0];
        }
    }
}

} // namespace

#endif
