/* Throughput of the FP64 tensor-core instructions (DMMA) by shape, alone on one GPU: the
 * m8n8k4 of compute capability 8.0 against the m16n8k4, m16n8k8 and m16n8k16 that PTX 7.8 added
 * for 9.0. Each warp runs CHAINS independent accumulators through ITERS dependent steps from
 * registers (no memory in the loop); printed as TFLOP/s of the whole GPU with the warps resident
 * a scheduler (occupancy) and the chains a warp. One chain on one warp per scheduler gives the
 * latency of the instruction in cycles (clock64). Tells whether the fused attention kernels'
 * m8n8k4 can reach the DMMA peak. Build and run on a GPU node:
 *   nvcc -O2 -arch=sm_90 -std=c++17 -o /tmp/dmma_shapes bench/gpu_single/dmma_shapes.cu
 *   /tmp/dmma_shapes out.json */
#include "bench_cuda.cuh"

#include <cstdio>

namespace
{

constexpr int ITERS = 4096;

/* One step of shape S on c (the fragment of the accumulator) from a and b. */
template <int S>
__device__ inline void step(double (&c)[4], const double (&a)[8], const double (&b)[4])
{
    if constexpr (S == 0) {
        asm volatile(
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
            : "+d"(c[0]), "+d"(c[1])
            : "d"(a[0]), "d"(b[0]));
    } else if constexpr (S == 1) {
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, "
                     "{%6}, {%0, %1, %2, %3};"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                     : "d"(a[0]), "d"(a[1]), "d"(b[0]));
    } else if constexpr (S == 2) {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, "
                     "%6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, "
                     "%6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, {%0, %1, %2, %3};"
                     : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
                     : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
                       "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
    }
}

/* FLOPs of one instruction of shape S. */
constexpr double flops(int S)
{
    return S == 0 ? 2.0 * 8 * 8 * 4 : 2.0 * 16 * 8 * (S == 1 ? 4 : S == 2 ? 8 : 16);
}

/* ITERS steps on CHAINS accumulators per warp; out keeps the compiler honest, cycles gets the
 * first warp's clock64 span. */
template <int S, int CHAINS> __global__ void k_dmma(double seed, double *out, long long *cycles)
{
    double a[8], b[4], c[CHAINS][4];
    for (int i = 0; i < 8; i++) {
        a[i] = seed * (threadIdx.x + i);
    }
    for (int i = 0; i < 4; i++) {
        b[i] = seed * (i + 1);
    }
    for (int k = 0; k < CHAINS; k++) {
        for (int i = 0; i < 4; i++) {
            c[k][i] = 0.0;
        }
    }
    const long long t0 = clock64();
    for (int it = 0; it < ITERS; it++) {
#pragma unroll
        for (int k = 0; k < CHAINS; k++) {
            step<S>(c[k], a, b);
        }
    }
    const long long t1 = clock64();
    double s = 0.0;
    for (int k = 0; k < CHAINS; k++) {
        s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *cycles = t1 - t0;
    }
}

struct timing {
    double tflops, cycles_per_step;
    int warps_per_scheduler; /* resident (occupancy), not asked */
};

/* k_dmma<S, CHAINS> in blocks of `warps` warps, as many blocks an SM as fit up to per_sm. */
template <int S, int CHAINS>
timing run(int warps, int per_sm, int sms, double *out, long long *cycles)
{
    int fit;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k_dmma<S, CHAINS>, 32 * warps, 0));
    const int per = per_sm < fit ? per_sm : fit, blocks = per * sms;
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    k_dmma<S, CHAINS><<<blocks, 32 * warps>>>(1e-9, out, cycles);
    CHECK(cudaEventRecord(t0));
    k_dmma<S, CHAINS><<<blocks, 32 * warps>>>(1e-9, out, cycles);
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    long long cyc;
    CHECK(cudaMemcpy(&cyc, cycles, sizeof cyc, cudaMemcpyDeviceToHost));
    const double total = flops(S) * ITERS * CHAINS * warps * (double)blocks;
    return {total / (ms * 1e-3) / 1e12, (double)cyc / ITERS, per * warps / 4};
}

const char *const NAMES[] = {"m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16"};

/* One line and one JSON member for shape S: the latency (one warp per scheduler, one chain) and
 * the throughput with 1, 4 and 8 chains a warp. */
template <int S> void shape(FILE *f, int sms, double *out, long long *cycles, bool first)
{
    const timing lat = run<S, 1>(4, 1, sms, out, cycles);
    const timing c[3] = {run<S, 1>(16, 4, sms, out, cycles), run<S, 4>(8, 4, sms, out, cycles),
                         run<S, 8>(8, 4, sms, out, cycles)};
    printf("%-9s | %8.1f |", NAMES[S], lat.cycles_per_step);
    fprintf(f, "%s\"%s\": {\"latency_cycles\": %.1f, \"runs\": [", first ? "" : ", ", NAMES[S],
            lat.cycles_per_step);
    const int chains[3] = {1, 4, 8};
    for (int i = 0; i < 3; i++) {
        printf(" %2dx%d %6.1f", c[i].warps_per_scheduler, chains[i], c[i].tflops);
        fprintf(f, "%s{\"warps_per_scheduler\": %d, \"chains\": %d, \"tflops\": %.2f}",
                i ? ", " : "", c[i].warps_per_scheduler, chains[i], c[i].tflops);
    }
    printf("\n");
    fprintf(f, "]}");
}

} // namespace

int main(int argc, char **argv)
{
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    double *out;
    long long *cycles;
    CHECK(cudaMalloc(&out, sizeof(double) * 4 * p.multiProcessorCount * 512));
    CHECK(cudaMalloc(&cycles, sizeof(long long)));
    FILE *f = fopen(argc > 1 ? argv[1] : "/dev/null", "w");
    CHECK(f == NULL);
    fprintf(f, "{\"benchmark\": \"dmma_shapes\", \"gpu\": \"%s\", \"sms\": %d, \"iters\": %d, ",
            p.name, p.multiProcessorCount, ITERS);
    printf("%-9s | %8s | TFLOP/s (warps a scheduler x chains a warp)\n", "shape", "latency");
    shape<0>(f, p.multiProcessorCount, out, cycles, true);
    shape<1>(f, p.multiProcessorCount, out, cycles, false);
    shape<2>(f, p.multiProcessorCount, out, cycles, false);
    shape<3>(f, p.multiProcessorCount, out, cycles, false);
    fprintf(f, "}\n");
    fclose(f);
    return 0;
}
