/* gpu.contract: the contraction kernels of se_e2_a over all slots (src/cuda/se_e2a_contract.cuh:
 * slots_T, T = G^T R / nnei, and slots_pxy, px = G gamma and py = dG gamma) against plain host
 * loops, launched as evaluate_se_slots launches them, on shapes the model files do not have:
 * empty type blocks (sel 0), sel below 8 and not a multiple of the 8 loads a thread issues, 1 to 4
 * type blocks, M of 1, 31, 33, 129, 200 and 256 (not multiples of 32, more than 128), and
 * nnei above 1,536, where slots_T reads R in place instead of staging it in shared memory. Every
 * output starts as NaN, so an entry left unwritten fails. Pass: T, px and py within 1e-13 of the
 * largest in magnitude of their case. Exit 77 (skipped) without a CUDA device. */
#include "cuda/nnp/se_e2a_contract.cuh"
#include "gpu_test.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace
{

/* Largest |got - want| over the largest |want| (infinite where got is NaN). */
double relative_error(const std::vector<double> &got, const std::vector<double> &want)
{
    double err = 0.0, big = 0.0;
    for (size_t e = 0; e < want.size(); e++) {
        const double d = std::fabs(got[e] - want[e]);
        err = std::isnan(d) ? INFINITY : std::max(err, d);
        big = std::max(big, std::fabs(want[e]));
    }
    return big > 0 ? err / big : err;
}

/* One case: type blocks of the given sel, embedding width M, `rows` centres; returns the worse
 * of the relative errors of T and of px, py. */
double run_case(const std::vector<int> &sel, int M, int rows, std::mt19937 &rng)
{
    hmd_cuda_model m = {};
    m.ntypes = (int)sel.size();
    m.M = M;
    for (int tau = 0; tau < m.ntypes; tau++) {
        m.sel[tau] = sel[tau];
        m.sel_offset[tau + 1] = m.sel_offset[tau] + sel[tau];
    }
    m.nnei = m.sel_offset[m.ntypes];
    const size_t nslots = (size_t)rows * m.nnei;
    std::normal_distribution<double> normal(0.0, 1.0);
    auto random = [&](size_t n) {
        std::vector<double> v(n);
        for (double &x : v) {
            x = normal(rng);
        }
        return v;
    };
    const std::vector<double> R = random(4 * nslots), G = random(2 * nslots * M),
                              gamma = random((size_t)rows * 4 * M);
    /* the host's sums, in the layout of se_e2a_contract.cuh */
    std::vector<double> T(4 * (size_t)rows * M, 0.0), pxy(8 * nslots, 0.0);
    for (int row = 0; row < rows; row++) {
        for (int tau = 0; tau < m.ntypes; tau++) {
            const size_t n = (size_t)rows * sel[tau];
            const size_t first = (size_t)rows * m.sel_offset[tau] + (size_t)row * sel[tau];
            const size_t gv = (2 * (size_t)rows * m.sel_offset[tau] + (size_t)row * sel[tau]) * M;
            for (int j = 0; j < sel[tau]; j++) {
                for (int u = 0; u < M; u++) {
                    const double value = G[gv + (size_t)j * M + u];
                    const double tangent = G[gv + n * M + (size_t)j * M + u];
                    for (int c = 0; c < 4; c++) {
                        T[((size_t)row * M + u) * 4 + c] += value * R[4 * (first + j) + c] / m.nnei;
                        const double w = gamma[((size_t)row * 4 + c) * M + u];
                        pxy[4 * (first + j) + c] += value * w;
                        pxy[4 * (nslots + first + j) + c] += tangent * w;
                    }
                }
            }
        }
    }
    hmd_cuda_model *d_model = to_device(&m, 1);
    double *d_R = to_device(R.data(), R.size()), *d_G = to_device(G.data(), G.size());
    double *d_gamma = to_device(gamma.data(), gamma.size());
    double *d_T = nan_on_device(T.size()), *d_pxy = nan_on_device(pxy.size());
    const size_t T_smem = slots_T_smem(m);
    slots_T<<<rows, slots_T_threads(m), T_smem>>>(d_model, rows, d_R, d_G, d_T, T_smem > 0);
    CUDA_OK(cudaGetLastError());
    slots_pxy<<<dim3(rows, m.ntypes), CONTRACT_THREADS, slots_pxy_smem(m)>>>(
        d_model, rows, d_gamma, d_G, d_pxy, d_pxy + 4 * nslots);
    CUDA_OK(cudaGetLastError());
    const double rel = std::max(relative_error(from_device(d_T, T.size()), T),
                                relative_error(from_device(d_pxy, pxy.size()), pxy));
    for (void *p :
         {(void *)d_model, (void *)d_R, (void *)d_G, (void *)d_gamma, (void *)d_T, (void *)d_pxy}) {
        CUDA_OK(cudaFree(p));
    }
    return rel;
}

} // namespace

int main()
{
    if (no_cuda_device()) {
        return 77;
    }
    struct shape {
        std::vector<int> sel;
        int M, rows;
    };
    const shape shapes[] = {
        {{46, 92}, 100, 37}, {{3, 5}, 6, 5},      {{0, 5}, 33, 4},
        {{7, 0, 9}, 100, 3}, {{1}, 1, 2},         {{8, 16}, 32, 6},
        {{9, 2}, 129, 3},    {{12, 5}, 256, 2},   {{3, 1, 0, 2}, 200, 3},
        {{20}, 31, 4},       {{800, 900}, 16, 3},
    };
    std::mt19937 rng(20261201);
    int bad = 0;
    for (const shape &c : shapes) {
        const double rel = run_case(c.sel, c.M, c.rows, rng);
        const bool ok = rel <= 1e-13;
        bad += !ok;
        printf("%s sel [", ok ? "ok  " : "FAIL");
        for (size_t t = 0; t < c.sel.size(); t++) {
            printf("%s%d", t ? ", " : "", c.sel[t]);
        }
        printf("] M %3d rows %2d: %.2e relative\n", c.M, c.rows, rel);
    }
    printf("%d of %zu cases failed\n", bad, sizeof shapes / sizeof shapes[0]);
    return bad ? 1 : 0;
}
