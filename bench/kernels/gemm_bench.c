/* Times the CPU network kernels of src/nnp/vmath.c on the shapes of the se_e2_a water model:
 * embedding layers (with the forward-mode tangent) and the fitting net's first layer.
 * Build: cc -O3 -std=c11 -fopenmp -I../../src gemm_bench.c ../../src/nnp/vmath.c \
 *        -fno-trapping-math -ffp-contract=fast -o gemm_bench -lm
 * Prints GFLOP/s per shape (2 flops per multiply-add, tangent counted). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "nnp/vmath.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static void run(const char *name, int rows, int k, int n, int tangent, int transposed)
{
    int np = hmd_gemm_padded(n), kp = hmd_gemm_padded(k);
    double *x = calloc((size_t)rows * (k > n ? k : n), sizeof(double));
    double *dx = calloc((size_t)rows * (k > n ? k : n), sizeof(double));
    double *w = calloc((size_t)(k + 1) * (np > kp ? np : kp) * 2, sizeof(double));
    double *b = calloc((size_t)np, sizeof(double));
    double *z = calloc((size_t)rows * (k > n ? k : n), sizeof(double));
    double *dz = calloc((size_t)rows * (k > n ? k : n), sizeof(double));
    for (int i = 0; i < rows * k; i++) {
        x[i] = dx[i] = 0.001 * (i % 97);
    }
    for (int i = 0; i < k * np; i++) {
        w[i] = 0.01 * (i % 13);
    }
    double flops = 2.0 * rows * k * n * (tangent ? 2 : 1), best = 1e30;
    int reps = (int)(2e8 / flops) + 1;
    for (int trial = 0; trial < 5; trial++) {
        double t0 = now();
        for (int r = 0; r < reps; r++) {
            if (transposed) {
                hmd_gemm_transposed(rows, k, n, x, w, z);
            } else {
                hmd_gemm_bias(rows, k, n, x, tangent ? dx : NULL, w, b, z, dz);
            }
        }
        double t = (now() - t0) / reps;
        best = t < best ? t : best;
    }
    printf("%-34s rows %4d k %5d n %4d  %8.2f GFLOP/s\n", name, rows, k, n, flops / best * 1e-9);
    free(x), free(dx), free(w), free(b), free(z), free(dz);
}

int main(void)
{
    run("embedding 1->25 (tangent)", 92, 1, 25, 1, 0);
    run("embedding 25->50 (tangent)", 92, 25, 50, 1, 0);
    run("embedding 50->100 (tangent)", 92, 50, 100, 1, 0);
    run("embedding 50->100 (padding rows)", 30, 50, 100, 0, 0);
    run("fitting 1600->240 forward", 32, 1600, 240, 0, 0);
    run("fitting 240->240 forward", 32, 240, 240, 0, 0);
    run("fitting 240->1600 backward (W^T)", 32, 240, 1600, 0, 1);
    return 0;
}
