/* Microbenchmark of the products of DPA-1's attention layers on one GPU (issue 5): cuBLAS
 * DGEMM, SGEMM, TF32 and error-compensated 3xTF32 built from one TF32 product over the inner
 * dimension concatenated three times, [a_hi | a_lo | a_hi] [w_hi; w_hi; w_lo], at the shapes of
 * the 15,668-atom protein with the 1.67M-parameter model (1.88 M rows, M = H = 256). Prints
 * ms and TFLOP/s (counted on the uncompensated k) and the worst error against the DGEMM of
 * the same fp32 inputs, relative to the largest |C|; writes the table as JSON to argv[1].
 * Build and run on a GPU node:
 *   nvcc -O2 -arch=sm_90 -o /tmp/gemm_tf32 bench/gpu_single/gemm_tf32.cu -lcublas
 *   /tmp/gemm_tf32 out.json [rows]
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "bench_cuda.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

/* Deterministic values in [-1, 1) scaled by s. */
__global__ void k_random(size_t n, unsigned seed, float s, float *x)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 16;
        h *= 0x85ebca6bu;
        h ^= h >> 13;
        h *= 0xc2b2ae35u;
        h ^= h >> 16;
        x[i] = s * ((float)(h >> 8) * (1.0f / 8388608.0f) - 1.0f);
    }
}

__global__ void k_to_double(size_t n, const float *x, double *y)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        y[i] = x[i];
    }
}

/* x rounded to the nearest TF32 (10 mantissa bits). */
__device__ float tf32_hi(float x)
{
    unsigned u = __float_as_uint(x);
    u = (u + 0x1000u) & 0xffffe000u;
    return __uint_as_float(u);
}

/* Rows of width k into rows of width 3k: [hi | lo | hi] (order 0) or [hi | hi | lo] (order 1). */
__global__ void k_split_rows(size_t rows, int k, int order, const float *x, float *y)
{
    const size_t n = rows * k;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const size_t r = i / k, c = i % k;
        const float hi = tf32_hi(x[i]), lo = x[i] - hi;
        float *o = y + r * 3 * k + c;
        o[0] = hi;
        o[k] = order ? hi : lo;
        o[2 * k] = order ? lo : hi;
    }
}

/* A k x n row-major matrix into 3k x n: [hi; hi; lo]. */
__global__ void k_split_stack(int k, int n, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < k * n; i += gridDim.x * blockDim.x) {
        const float hi = tf32_hi(x[i]);
        y[i] = hi;
        y[i + k * n] = hi;
        y[i + 2 * k * n] = x[i] - hi;
    }
}

__global__ void k_max_err(size_t n, const float *c, const double *ref, double *out)
{
    double e = 0, m = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        e = fmax(e, fabs((double)c[i] - ref[i]));
        m = fmax(m, fabs(ref[i]));
    }
    atomicMax((unsigned long long *)&out[0], __double_as_longlong(e));
    atomicMax((unsigned long long *)&out[1], __double_as_longlong(m));
}

struct timer {
    cudaEvent_t a, b;
    timer()
    {
        cudaEventCreate(&a), cudaEventCreate(&b);
    }
    template <typename F> double median_ms(F f)
    {
        std::vector<float> t;
        for (int r = 0; r < 7; r++) {
            cudaEventRecord(a);
            f();
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            float ms;
            cudaEventElapsedTime(&ms, a, b);
            if (r >= 2) {
                t.push_back(ms);
            }
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }
};

int main(int argc, char **argv)
{
    const char *json = argc > 1 ? argv[1] : "gemm_tf32.json";
    const size_t rows = argc > 2 ? strtoull(argv[2], NULL, 10) : 15668ull * 120;
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    timer tm;
    FILE *f = fopen(json, "w");
    fprintf(f, "{\"rows\": %zu, \"cases\": [\n", rows);
    printf("%-28s %6s %6s %9s %9s %10s\n", "product (rows x k -> n)", "k", "n", "ms", "TFLOP/s",
           "max err");
    /* (k, n): in_proj, in_proj backward, out_proj (and its backward) */
    const int shapes[3][2] = {{256, 768}, {768, 256}, {256, 256}};
    bool first = true;
    for (auto &s : shapes) {
        const int k = s[0], n = s[1];
        float *x, *w, *x3, *w3, *c;
        double *xd, *wd, *cd, *err;
        CHECK(cudaMalloc(&x, rows * k * 4));
        CHECK(cudaMalloc(&x3, rows * 3 * k * 4));
        CHECK(cudaMalloc(&w, (size_t)k * n * 4));
        CHECK(cudaMalloc(&w3, (size_t)3 * k * n * 4));
        CHECK(cudaMalloc(&c, rows * n * 4));
        CHECK(cudaMalloc(&xd, rows * k * 8));
        CHECK(cudaMalloc(&wd, (size_t)k * n * 8));
        CHECK(cudaMalloc(&cd, rows * n * 8));
        CHECK(cudaMalloc(&err, 16));
        k_random<<<1024, 256>>>(rows * k, 1u, 1.0f, x);
        k_random<<<1024, 256>>>((size_t)k * n, 2u, 1.0f / sqrtf((float)k), w);
        k_to_double<<<1024, 256>>>(rows * k, x, xd);
        k_to_double<<<1024, 256>>>((size_t)k * n, w, wd);
        k_split_stack<<<1024, 256>>>(k, n, w, w3);
        const double d1 = 1, d0 = 0;
        const float f1 = 1, f0 = 0;
        const double flop = 2.0 * rows * k * n;
        /* row-major C[rows][n] = X[rows][k] W[k][n], asked of cuBLAS as C^T = W^T X^T */
        auto dgemm = [&] {
            cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, (int)rows, k, &d1, wd, n, xd, k, &d0, cd,
                        n);
        };
        auto sgemm = [&] {
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, (int)rows, k, &f1, w, n, x, k, &f0, c, n);
        };
        auto tf32 = [&] {
            cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, (int)rows, k, &f1, w, CUDA_R_32F, n, x,
                         CUDA_R_32F, k, &f0, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32,
                         CUBLAS_GEMM_DEFAULT);
        };
        auto split = [&] { k_split_rows<<<4096, 256>>>(rows, k, 0, x, x3); };
        auto tf32x3 = [&] {
            cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, (int)rows, 3 * k, &f1, w3, CUDA_R_32F, n,
                         x3, CUDA_R_32F, 3 * k, &f0, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32,
                         CUBLAS_GEMM_DEFAULT);
        };
        auto run = [&](const char *name, auto fn, bool check) {
            const double ms = tm.median_ms(fn);
            double e[2] = {0, 0};
            if (check) {
                CHECK(cudaMemset(err, 0, 16));
                k_max_err<<<1024, 256>>>(rows * n, c, cd, err);
                CHECK(cudaMemcpy(e, err, 16, cudaMemcpyDeviceToHost));
            }
            printf("%-28s %6d %6d %9.3f %9.1f %10.2e\n", name, k, n, ms, flop / ms / 1e9,
                   check ? e[0] / e[1] : 0.0);
            fprintf(f,
                    "%s{\"product\": \"%s\", \"k\": %d, \"n\": %d, \"ms\": %.4f, "
                    "\"tflops\": %.2f, \"max_rel_err\": %.3e}",
                    first ? "" : ",\n", name, k, n, ms, flop / ms / 1e9, check ? e[0] / e[1] : 0.0);
            first = false;
        };
        run("dgemm", dgemm, false);
        dgemm();
        run("sgemm", sgemm, true);
        run("tf32", tf32, true);
        run("split [hi|lo|hi]", split, false);
        split();
        run("3xtf32 (k concatenated)", tf32x3, true);
        CHECK(cudaDeviceSynchronize());
        cudaFree(x), cudaFree(x3), cudaFree(w), cudaFree(w3), cudaFree(c);
        cudaFree(xd), cudaFree(wd), cudaFree(cd), cudaFree(err);
    }
    /* per-atom products of the attention, S = Q K^T (n = 120, H = 256), batched over atoms */
    {
        const int n = 120, H = 256, batch = (int)(rows / n);
        float *qkv, *S;
        CHECK(cudaMalloc(&qkv, (size_t)batch * n * 3 * H * 4));
        CHECK(cudaMalloc(&S, (size_t)batch * n * n * 4));
        k_random<<<1024, 256>>>((size_t)batch * n * 3 * H, 3u, 1.0f, qkv);
        const float f1 = 1, f0 = 0;
        const long long sq = (long long)n * 3 * H, ss = (long long)n * n;
        const double flop = 2.0 * batch * n * n * H;
        auto s32 = [&] {
            cublasSgemmStridedBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, H, &f1, qkv + H, 3 * H, sq,
                                      qkv, 3 * H, sq, &f0, S, n, ss, batch);
        };
        auto t32 = [&] {
            cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, H, &f1, qkv + H,
                                       CUDA_R_32F, 3 * H, sq, qkv, CUDA_R_32F, 3 * H, sq, &f0, S,
                                       CUDA_R_32F, n, ss, batch, CUBLAS_COMPUTE_32F_FAST_TF32,
                                       CUBLAS_GEMM_DEFAULT);
        };
        const double a = tm.median_ms(s32), b = tm.median_ms(t32);
        printf("%-28s %6d %6d %9.3f %9.1f\n", "Q K^T batched sgemm", H, n, a, flop / a / 1e9);
        printf("%-28s %6d %6d %9.3f %9.1f\n", "Q K^T batched tf32", H, n, b, flop / b / 1e9);
        fprintf(f,
                ",\n{\"product\": \"Q K^T batched sgemm\", \"ms\": %.4f, \"tflops\": %.2f},\n"
                "{\"product\": \"Q K^T batched tf32\", \"ms\": %.4f, \"tflops\": %.2f}",
                a, flop / a / 1e9, b, flop / b / 1e9);
        cudaFree(qkv), cudaFree(S);
    }
    fprintf(f, "\n]}\n");
    fclose(f);
    CHECK(cudaDeviceSynchronize());
    return 0;
}
