/* gpu.embed_dmma: slots_embed_dmma (src/cuda/se_e2a_dmma.cuh, the double embedding on the FP64
 * tensor cores) against the CPU reference (hmd_mlp_forward_tangent) on the same random embedding
 * nets (uploaded as the engine uploads them), values and tangents d/ds, for the shapes the model
 * files of the other tests do not have: 1, 2, 5 and 6 layers, widths that are not multiples of 8
 * and odd last widths, skips SAME and DOUBLE, with and without bias and timestep, activations other
 * than tanh (the kernel's general path), and slot counts of 1, 7, 9, 1,003 and 300,001 (warps that
 * take several groups of 8). Pass: every value and tangent within 1e-12 of the largest in magnitude
 * of its case, and no plan for a net whose weights leave room for fewer than 4 warps (6 layers of
 * 64: the engine runs it layer by layer). Exit 77 (skipped) without a CUDA device. */
#include "cuda/nnp/se_e2a_dmma.cuh"
#include "gpu_test.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace
{

/* A random embedding net (1 input, the given widths) as the CPU reference holds it: layers over
 * `store`, packed in `arena`. */
hmd_mlp make_net(const std::vector<int> &widths, hmd_activation act, bool skip, bool bias,
                 bool timestep, std::mt19937 &rng, std::vector<hmd_dense> &layers,
                 std::vector<std::vector<double>> &store, hmd_arena *arena)
{
    std::normal_distribution<double> normal(0.0, 1.0);
    auto values = [&](size_t count, double scale, double shift) {
        store.emplace_back(count);
        for (double &v : store.back()) {
            v = shift + scale * normal(rng);
        }
        return store.back().data();
    };
    layers.assign(widths.size(), hmd_dense{});
    int n_in = 1, width_sum = 0;
    for (size_t l = 0; l < widths.size(); l++) {
        const int n_out = widths[l];
        hmd_dense &L = layers[l];
        L.n_in = n_in;
        L.n_out = n_out;
        L.act = act;
        L.resnet = !skip               ? HMD_RESNET_NONE
                   : n_out == n_in     ? HMD_RESNET_SAME
                   : n_out == 2 * n_in ? HMD_RESNET_DOUBLE
                                       : HMD_RESNET_NONE;
        L.w = values((size_t)n_in * n_out, 1.0 / std::sqrt((double)(n_in + n_out)), 0.0);
        L.b = bias ? values(n_out, 1.0, 0.0) : NULL;
        L.idt = timestep ? values(n_out, 0.1, 0.1) : NULL;
        n_in = n_out;
        width_sum += n_out;
    }
    hmd_mlp net = {(int)layers.size(), layers.data(), 1, n_in, width_sum};
    if (hmd_mlp_pack(&net, arena) != HMD_OK) {
        fprintf(stderr, "hmd_mlp_pack failed\n");
        exit(1);
    }
    return net;
}

/* One case: a random net of the given widths on the GPU (slots_embed_dmma) and on the CPU
 * (hmd_mlp_forward_tangent, the reference); returns the largest difference over the largest
 * magnitude, or -1 when the kernel declines the net (no plan). */
double run_case(const std::vector<int> &widths, hmd_activation act, bool skip, bool bias,
                bool timestep, size_t n, std::mt19937 &rng)
{
    std::vector<hmd_dense> layers;
    std::vector<std::vector<double>> store;
    hmd_arena arena = {};
    const hmd_mlp net = make_net(widths, act, skip, bias, timestep, rng, layers, store, &arena);
    hmd_cuda_weights weights = {};
    hmd_cuda_model model = {};
    hmd_cuda_net &g = model.emb[0];
    if (hmd_cuda_upload_net(&weights, &net, &g) != HMD_OK) {
        fprintf(stderr, "hmd_cuda_upload_net failed\n");
        exit(1);
    }
    const dmma_plan p = make_dmma_plan(g, smem_budget(DMMA_MAX_SMEM));
    double worst = -1.0;
    if (p.smem) {
        hmd_cuda_model *d_model = to_device(&model, 1);
        const int M = net.n_out;
        std::normal_distribution<double> normal(0.0, 1.0);
        std::vector<double> s(n);
        for (double &x : s) {
            x = 2.0 * normal(rng);
        }
        double *d_s = to_device(s.data(), n), *d_out = nan_on_device(2 * n * M);
        int sms = 0;
        CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        auto kernel = p.tanh ? slots_embed_dmma<true> : slots_embed_dmma<false>;
        CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)smem_budget(DMMA_MAX_SMEM)));
        const size_t blocks = std::min((size_t)sms, ((n + 7) / 8 + p.warps - 1) / p.warps);
        kernel<<<(unsigned)blocks, 32 * p.warps, p.smem>>>(d_model, 0, p, n, d_s, d_out);
        CUDA_OK(cudaGetLastError());
        const std::vector<double> out = from_device(d_out, 2 * n * M);
        /* the reference in chunks of rows, each row's values and tangents against the GPU's */
        const int chunk = 4096;
        std::vector<double> work(hmd_mlp_tangent_work_size(&net, chunk));
        double err = 0.0, big = 0.0;
        for (size_t r0 = 0; r0 < n; r0 += chunk) {
            const int rows = (int)std::min((size_t)chunk, n - r0);
            const double *v = NULL, *t = NULL;
            hmd_mlp_forward_tangent(&net, rows, s.data() + r0, NULL, work.data(), &v, &t);
            for (size_t e = 0; e < (size_t)rows * M; e++) {
                const double d = std::max(std::fabs(out[r0 * M + e] - v[e]),
                                          std::fabs(out[(n + r0) * M + e] - t[e]));
                err = std::isnan(d) ? INFINITY : std::max(err, d);
                big = std::max(big, std::max(std::fabs(v[e]), std::fabs(t[e])));
            }
        }
        worst = err / big;
        CUDA_OK(cudaFree(d_out));
        CUDA_OK(cudaFree(d_s));
        CUDA_OK(cudaFree(d_model));
    }
    hmd_cuda_weights_free(&weights);
    hmd_arena_free(&arena);
    return worst;
}

} // namespace

int main()
{
    if (no_cuda_device()) {
        return 77;
    }
    struct shape {
        const char *name;
        std::vector<int> widths;
        hmd_activation act;
        bool skip, bias, timestep;
        bool fits; /* false: make_dmma_plan must decline it */
    };
    const shape shapes[] = {
        {"1 layer [25]", {25}, HMD_ACT_TANH, false, true, false, true},
        {"1 layer [2], DOUBLE skip, timestep", {2}, HMD_ACT_TANH, true, true, true, true},
        {"1 layer [1], SAME skip", {1}, HMD_ACT_TANH, true, true, true, true},
        {"2 layers [25, 50]", {25, 50}, HMD_ACT_TANH, true, true, false, true},
        {"v2 paper [25, 50, 100]", {25, 50, 100}, HMD_ACT_TANH, true, true, false, true},
        {"[5, 10, 10, 7], odd last width", {5, 10, 10, 7}, HMD_ACT_TANH, true, true, false, true},
        {"5 x [8], SAME skips, timestep", {8, 8, 8, 8, 8}, HMD_ACT_TANH, true, true, true, true},
        {"5 layers, no bias", {12, 24, 24, 48, 33}, HMD_ACT_TANH, true, false, true, true},
        {"6 x [40], SAME skips", {40, 40, 40, 40, 40, 40}, HMD_ACT_TANH, true, true, true, true},
        {"6 x [64]: no plan", {64, 64, 64, 64, 64, 64}, HMD_ACT_TANH, true, true, true, false},
        {"gelu [6, 13, 27]", {6, 13, 27}, HMD_ACT_GELU, true, true, true, true},
        {"softplus [8, 16, 32]", {8, 16, 32}, HMD_ACT_SOFTPLUS, true, true, true, true},
        {"relu [32, 64, 128]", {32, 64, 128}, HMD_ACT_RELU, true, true, false, true},
    };
    std::mt19937 rng(20261201);
    int bad = 0;
    for (size_t n : {(size_t)1, (size_t)7, (size_t)9, (size_t)1003, (size_t)300001}) {
        for (const shape &c : shapes) {
            const double rel = run_case(c.widths, c.act, c.skip, c.bias, c.timestep, n, rng);
            const bool ok = c.fits ? rel >= 0 && rel <= 1e-12 : rel < 0;
            bad += !ok;
            if (rel < 0) {
                printf("%s %-38s n %6zu: no plan\n", ok ? "ok  " : "FAIL", c.name, n);
            } else {
                printf("%s %-38s n %6zu: %.2e relative\n", ok ? "ok  " : "FAIL", c.name, n, rel);
            }
        }
    }
    printf("%d of %zu cases failed\n", bad, 5 * sizeof shapes / sizeof shapes[0]);
    return bad ? 1 : 0;
}
