/* gpu.embed_dmma: slots_embed_dmma (src/cuda/se_e2a_dmma.cuh, the double embedding on the FP64
 * tensor cores) against a CPU evaluation in double of the same random embedding nets, values and
 * tangents d/ds, for the shapes the model files of the other tests do not have: 1, 2, 5 and 6
 * layers, widths that are not multiples of 8 and odd last widths, skips SAME and DOUBLE, with and
 * without bias and timestep, activations other than tanh (the kernel's general path), and slot
 * counts of 1, 7, 9, 1,003 and 300,001 (warps that take several groups of 8). Pass: every value
 * and tangent within 1e-12 of the largest in magnitude of its case, and no plan for a net whose
 * weights leave room for fewer than 4 warps (6 layers of 64: the engine runs it layer by layer).
 * Exit 77 (skipped) without a CUDA device. */
#include "cuda/se_e2a_dmma.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace
{

#define CUDA_OK(x)                                                                                 \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* One layer on the host: weights [n_in][n_out], bias and timestep (empty: none). */
struct host_layer {
    int n_in, n_out;
    hmd_resnet resnet;
    std::vector<double> w, b, idt;
};

/* A device copy of v (NULL when v is empty), freed by the caller through `owned`. */
const double *upload(const std::vector<double> &v, std::vector<void *> &owned)
{
    if (v.empty()) {
        return NULL;
    }
    void *d = NULL;
    CUDA_OK(cudaMalloc(&d, v.size() * sizeof(double)));
    CUDA_OK(cudaMemcpy(d, v.data(), v.size() * sizeof(double), cudaMemcpyHostToDevice));
    owned.push_back(d);
    return static_cast<const double *>(d);
}

/* Values and tangents of the net at input s, on the host (mlp.c's layer semantics). */
void host_net(const std::vector<host_layer> &net, hmd_activation act, double s,
              std::vector<double> &v, std::vector<double> &t)
{
    v.assign(1, s);
    t.assign(1, 1.0);
    for (const host_layer &L : net) {
        std::vector<double> a(L.n_out), d(L.n_out);
        for (int o = 0; o < L.n_out; o++) {
            double z = L.b.empty() ? 0.0 : L.b[o], dz = 0.0;
            for (int q = 0; q < L.n_in; q++) {
                z += v[q] * L.w[(size_t)q * L.n_out + o];
                dz += t[q] * L.w[(size_t)q * L.n_out + o];
            }
            a[o] = hmd_act(act, NULL, z);
            d[o] = hmd_act_grad(act, NULL, hmd_act_keeps_output(act) ? a[o] : z) * dz;
            if (!L.idt.empty()) {
                a[o] *= L.idt[o];
                d[o] *= L.idt[o];
            }
            if (L.resnet != HMD_RESNET_NONE) { /* DOUBLE: n_out = 2 n_in */
                a[o] += v[o % L.n_in];
                d[o] += t[o % L.n_in];
            }
        }
        v = a;
        t = d;
    }
}

/* One case: a random net of the given widths; returns the largest error over the largest
 * magnitude, or -1 when the kernel declines the net (no plan). */
double run_case(const std::vector<int> &widths, hmd_activation act, bool skip, bool bias,
                bool timestep, size_t n, std::mt19937 &rng)
{
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<host_layer> net;
    int n_in = 1;
    for (int n_out : widths) {
        host_layer L = {n_in, n_out, HMD_RESNET_NONE, {}, {}, {}};
        if (skip) {
            L.resnet = n_out == n_in       ? HMD_RESNET_SAME
                       : n_out == 2 * n_in ? HMD_RESNET_DOUBLE
                                           : HMD_RESNET_NONE;
        }
        for (int e = 0; e < n_in * n_out; e++) {
            L.w.push_back(normal(rng) / std::sqrt((double)(n_in + n_out)));
        }
        for (int o = 0; bias && o < n_out; o++) {
            L.b.push_back(normal(rng));
        }
        for (int o = 0; timestep && o < n_out; o++) {
            L.idt.push_back(0.1 + 0.1 * normal(rng));
        }
        net.push_back(L);
        n_in = n_out;
    }
    std::vector<void *> owned;
    hmd_cuda_model model = {};
    hmd_cuda_net &g = model.emb[0];
    g.nlayers = (int)net.size();
    for (size_t l = 0; l < net.size(); l++) {
        hmd_cuda_layer &L = g.L[l];
        L.n_in = net[l].n_in;
        L.n_out = net[l].n_out;
        L.act = act;
        L.resnet = net[l].resnet;
        L.w = upload(net[l].w, owned);
        L.b = upload(net[l].b, owned);
        L.idt = upload(net[l].idt, owned);
    }
    const dmma_plan p = make_dmma_plan(g, smem_budget(DMMA_MAX_SMEM));
    if (!p.smem) {
        return -1;
    }
    hmd_cuda_model *d_model = NULL;
    CUDA_OK(cudaMalloc(&d_model, sizeof model));
    CUDA_OK(cudaMemcpy(d_model, &model, sizeof model, cudaMemcpyHostToDevice));
    const int M = widths.back();
    std::vector<double> s(n);
    for (double &x : s) {
        x = 2.0 * normal(rng);
    }
    const double *d_s = upload(s, owned);
    double *d_out = NULL;
    CUDA_OK(cudaMalloc(&d_out, 2 * n * M * sizeof(double)));
    CUDA_OK(cudaMemset(d_out, 0xff, 2 * n * M * sizeof(double))); /* NaN where nothing is written */
    int sms = 0;
    CUDA_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    auto kernel = p.tanh ? slots_embed_dmma<true> : slots_embed_dmma<false>;
    CUDA_OK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)smem_budget(DMMA_MAX_SMEM)));
    const size_t blocks = std::min((size_t)sms, ((n + 7) / 8 + p.warps - 1) / p.warps);
    kernel<<<(unsigned)blocks, 32 * p.warps, p.smem>>>(d_model, 0, p, n, d_s, d_out);
    CUDA_OK(cudaGetLastError());
    std::vector<double> out(2 * n * M);
    CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(double), cudaMemcpyDeviceToHost));
    double err = 0.0, big = 0.0;
    std::vector<double> v, t;
    for (size_t r = 0; r < n; r++) {
        host_net(net, act, s[r], v, t);
        for (int o = 0; o < M; o++) {
            const double e =
                std::max(std::fabs(out[r * M + o] - v[o]), std::fabs(out[(n + r) * M + o] - t[o]));
            err = std::isnan(e) ? INFINITY : std::max(err, e);
            big = std::max(big, std::max(std::fabs(v[o]), std::fabs(t[o])));
        }
    }
    CUDA_OK(cudaFree(d_out));
    CUDA_OK(cudaFree(d_model));
    for (void *d : owned) {
        CUDA_OK(cudaFree(d));
    }
    return err / big;
}

} // namespace

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("no CUDA device: skipped\n");
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
