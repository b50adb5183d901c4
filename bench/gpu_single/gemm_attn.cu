/* Microbenchmark of DPA-1's per-centre attention products on one GPU (issue 5): cuBLAS strided
 * batched DGEMM and SGEMM at the three shapes the attention layers use (dpa1_eval.cu), each
 * centre's matrices nnei = 120 slots apart, over the first m slots of every centre:
 *   NT  S = Q K^T          m x m, inner H  (Q K^T, dO V^T)
 *   NN  O = A' V           m x H, inner m  (A' V, dS K)
 *   TN  dV = A'^T dO       m x H, inner m  (A'^T dO, dS^T Q)
 * for m from 120 down (multiples of 8, and the odd 109 that the rejected "most live slots"
 * version used), batch = 1,536 centres, H = 256: the 1.67M-parameter model on the 1,536-atom
 * water box. It answers whether products over fewer slots per centre (centres grouped by their
 * live count) can pay: the FLOPs of every shape fall as m^2, and the question is whether the
 * time does too. Prints ms (median of REPS) and TFLOP/s per case; writes the table as JSON to
 * argv[1].
 * Build and run on a GPU node:
 *   nvcc -O2 -arch=sm_90 -Isrc -o /tmp/gemm_attn bench/gpu_single/gemm_attn.cu -lcublas
 *   /tmp/gemm_attn out.json
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_cuda.cuh"
#include "cuda/nnp/blas.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

constexpr int NNEI = 120, H = 256, BATCH = 1536, REPS = 15;

/* Row-major C = op(A) op(B) as dpa1_eval.cu's gemm() asks cuBLAS for it (C^T = op(B)^T op(A)^T):
 * op(A) m x k, op(B) k x n. */
template <typename T>
void row_major(cublasHandle_t h, int m, int n, int k, bool ta, const T *A, int lda, long long sa,
               bool tb, const T *B, int ldb, long long sb, T *C, int ldc, long long sc)
{
    CHECK(hmd_blas_gemm(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k,
                        T(1), B, ldb, sb, A, lda, sa, T(0), C, ldc, sc, BATCH));
}

struct result {
    const char *type, *shape;
    int m;
    double ms, tflops;
};

template <typename T> void run(cublasHandle_t h, const char *type, std::vector<result> &out)
{
    const size_t sq = (size_t)NNEI * 3 * H, sn = (size_t)NNEI * NNEI, sh = (size_t)NNEI * H;
    T *qkv, *a, *c;
    CHECK(cudaMalloc(&qkv, sizeof(T) * sq * BATCH));
    CHECK(cudaMalloc(&a, sizeof(T) * sn * BATCH));
    CHECK(cudaMalloc(&c, sizeof(T) * std::max(sn, sh) * BATCH));
    k_fill<<<1024, 256>>>(sq * BATCH, 0u, qkv);
    k_fill<<<1024, 256>>>(sn * BATCH, 0u, a);
    CHECK(cudaDeviceSynchronize());
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    const int ms_list[] = {120, 112, 109, 104, 96, 88, 80, 64};
    const char *shapes[] = {"NT", "NN", "TN"};
    for (int m : ms_list) {
        for (int s = 0; s < 3; s++) {
            auto product = [&]() {
                if (s == 0) { /* S = Q K^T */
                    row_major<T>(h, m, m, H, false, qkv, 3 * H, sq, true, qkv + H, 3 * H, sq, c,
                                 NNEI, sn);
                } else { /* O = A' V, or A'^T dO */
                    row_major<T>(h, m, H, m, s == 2, a, NNEI, sn, false, qkv + 2 * H, 3 * H, sq, c,
                                 H, sh);
                }
            };
            product(); /* warm-up, and cuBLAS's choice of kernel */
            std::vector<float> t(REPS);
            for (float &x : t) {
                CHECK(cudaEventRecord(t0));
                product();
                CHECK(cudaEventRecord(t1));
                CHECK(cudaEventSynchronize(t1));
                CHECK(cudaEventElapsedTime(&x, t0, t1));
            }
            std::sort(t.begin(), t.end());
            const double ms = t[REPS / 2];
            const double flop = s == 0 ? 2.0 * m * m * H * BATCH : 2.0 * m * H * m * BATCH;
            out.push_back({type, shapes[s], m, ms, flop / (ms * 1e-3) / 1e12});
        }
    }
    cudaFree(qkv);
    cudaFree(a);
    cudaFree(c);
}

int main(int argc, char **argv)
{
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    std::vector<result> res;
    run<double>(h, "double", res);
    run<float>(h, "float", res);
    printf("%-7s %-3s %4s %9s %8s %8s\n", "type", "shp", "m", "ms", "TFLOP/s", "ms/m120");
    for (const result &r : res) {
        double base = 0;
        for (const result &b : res) {
            if (b.m == 120 && !strcmp(b.type, r.type) && !strcmp(b.shape, r.shape)) {
                base = b.ms;
            }
        }
        printf("%-7s %-3s %4d %9.4f %8.2f %8.3f\n", r.type, r.shape, r.m, r.ms, r.tflops,
               r.ms / base);
    }
    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        if (!f) {
            perror(argv[1]);
            return 1;
        }
        fprintf(f,
                "{\"benchmark\": \"gemm_attn\", \"batch\": %d, \"nnei\": %d, \"H\": %d, "
                "\"reps\": %d, \"cases\": [\n",
                BATCH, NNEI, H, REPS);
        for (size_t i = 0; i < res.size(); i++) {
            fprintf(f,
                    " {\"type\": \"%s\", \"shape\": \"%s\", \"m\": %d, \"ms\": %.5f, "
                    "\"tflops\": %.3f}%s\n",
                    res[i].type, res[i].shape, res[i].m, res[i].ms, res[i].tflops,
                    i + 1 < res.size() ? "," : "");
        }
        fprintf(f, "]}\n");
        fclose(f);
    }
    cublasDestroy(h);
    return 0;
}
