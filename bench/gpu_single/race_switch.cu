/* Is a cuBLAS product inside a captured switch node clean under compute-sanitizer racecheck?
 * DPA-1 MD in mixed precision dies under racecheck while double runs clean, and the difference is
 * the SGEMMs in the switch bodies (docs/performance.md, "DPA-1: gamma on chip, T per centre,
 * 3xTF32 in mixed"). This program holds nothing of halomd but live_rows.cuh, the mechanism that
 * makes the switch nodes: it captures one product over the first `count` rows of a 4096 x 256
 * matrix times 256 x 768 (the input projection's shape) in a graph, replays it for three counts,
 * and checks each against the same product run eagerly.
 * Build and run on a GPU node:
 *   nvcc -O2 -arch=sm_90 -std=c++17 -Isrc -o /tmp/race_switch bench/gpu_single/race_switch.cu \
 *        src/core/error.c -lcublas
 *   compute-sanitizer --tool racecheck /tmp/race_switch float|double|tf32 [switches|plain]
 * "plain" captures the product over all rows, without a switch node. "tf32" runs the product as
 * mixed precision's 3xTF32 calls do (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32), over an inner
 * dimension of 768 (3 x 256). Prints one line; exit
 * status 0 when every replay matches. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_cuda.cuh"
#include "cuda/nnp/live_rows.cuh"
#include "cuda/nnp/tf32x3.cuh"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

namespace
{

constexpr int ROWS = 4096, N = 768;

/* Row-major C[m][N] = A[m][K] W[K][N], as dpa1_eval.cu asks cuBLAS for it; with tf32 (float
 * only) as one TF32 product (hmd_tf32_gemm, as the 3xTF32 products run). */
template <typename T>
int product(cublasHandle_t h, bool tf32, int m, int K, const T *A, const T *W, T *C)
{
    cublasStatus_t r;
    if constexpr (std::is_same<T, float>::value) {
        if (tf32) {
            r = hmd_tf32_gemm(h, m, N, K, A, K, W, 0.0f, C, N);
            return r == CUBLAS_STATUS_SUCCESS ? HMD_OK : HMD_ESOFTWARE;
        }
    }
    r = hmd_blas_gemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, m, K, T(1), W, N, 0, A, K, 0, T(0), C, N, 0,
                      1);
    return r == CUBLAS_STATUS_SUCCESS ? HMD_OK : HMD_ESOFTWARE;
}

template <typename T> int run(bool switches, bool tf32)
{
    const int K = tf32 ? 768 : 256;
    cudaStream_t st, side;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    const size_t ws_bytes = 32u << 20;
    void *ws;
    T *A, *W, *C, *ref;
    int *count, *pinned;
    CHECK(cudaMalloc(&ws, ws_bytes));
    CHECK(cudaMalloc(&A, sizeof(T) * ROWS * K));
    CHECK(cudaMalloc(&W, sizeof(T) * K * N));
    CHECK(cudaMalloc(&C, sizeof(T) * ROWS * N));
    CHECK(cudaMalloc(&ref, sizeof(T) * ROWS * N));
    CHECK(cudaMalloc(&count, sizeof(int)));
    CHECK(cudaMallocHost(&pinned, sizeof(int)));
    k_fill<<<256, 256, 0, st>>>((size_t)ROWS * K, 1u, A);
    k_fill<<<256, 256, 0, st>>>((size_t)K * N, 2u, W);
    CHECK(hmd_blas_set_stream(h, st, ws, ws_bytes));

    /* the graph: the product over the live rows (live_rows.cuh) */
    hmd_live_rows lr;
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    CHECK(hmd_live_rows_begin(&lr, st, count, ROWS, switches, pinned));
    CHECK(hmd_live_product(&lr, st, side, h, ws, ws_bytes,
                           [&](int m) { return product<T>(h, tf32, m, K, A, W, C); }));
    cudaGraph_t graph;
    CHECK(cudaStreamEndCapture(st, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));

    std::vector<T> got((size_t)ROWS * N), want((size_t)ROWS * N);
    double worst = 0;
    for (int n : {ROWS, 1000, 2500}) {
        CHECK(cudaMemcpyAsync(count, &n, sizeof(int), cudaMemcpyHostToDevice, st));
        CHECK(cudaMemsetAsync(C, 0, sizeof(T) * ROWS * N, st));
        CHECK(cudaGraphLaunch(exec, st));
        CHECK(product<T>(h, tf32, n, K, A, W, ref));
        CHECK(cudaMemcpyAsync(got.data(), C, sizeof(T) * n * N, cudaMemcpyDeviceToHost, st));
        CHECK(cudaMemcpyAsync(want.data(), ref, sizeof(T) * n * N, cudaMemcpyDeviceToHost, st));
        CHECK(cudaStreamSynchronize(st));
        for (size_t i = 0; i < (size_t)n * N; i++) {
            worst = std::fmax(worst, std::fabs((double)got[i] - (double)want[i]));
        }
    }
    printf("race_switch %s %s: worst |graph - eager| %.3g over 3 replays\n",
           tf32             ? "tf32"
           : sizeof(T) == 4 ? "float"
                            : "double",
           switches ? "switches" : "plain", worst);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cublasDestroy(h);
    /* TF32 rounds each input to 11 bits: a branch's product may take another kernel than the
     * eager one */
    return worst <= (tf32 ? 5e-2 : sizeof(T) == 4 ? 1e-4 : 1e-12) ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    const bool tf32 = argc > 1 && strcmp(argv[1], "tf32") == 0;
    const bool fp32 = tf32 || (argc > 1 && strcmp(argv[1], "float") == 0);
    const bool switches = !(argc > 2 && strcmp(argv[2], "plain") == 0);
    if (argc < 2 || (!fp32 && strcmp(argv[1], "double") != 0)) {
        fprintf(stderr, "usage: race_switch float|double|tf32 [switches|plain]\n");
        return 64;
    }
    return fp32 ? run<float>(switches, tf32) : run<double>(switches, false);
}
