/* Accuracy of tanh_branchless (src/cuda/tanh_branchless.cuh, the activation of the se_e2_a
 * embedding on the FP64 tensor cores) against CUDA's tanh, both measured in units in the last
 * place (ulp) of the exact value, taken from the host's tanhl (x86 80-bit long double, 64-bit
 * mantissa). Points: every 2^-16 from -24 to 24, 2^22 log-spaced magnitudes from 1e-300 to 40
 * of both signs, and the special values (NaN, +-inf, +-0, a denormal), which must come out as
 * tanh's. Build and run on a GPU node:
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I src -o /tmp/tanh_ulp bench/gpu_single/tanh_ulp.cu
 *   /tmp/tanh_ulp out.json
 * Prints and writes (JSON) the largest and mean error of each, and the worst input. */
#include "bench_cuda.cuh"
#include "cuda/nnp/tanh_branchless.cuh"

#include <cmath>
#include <vector>

namespace
{

__global__ void k_tanh(size_t n, const double *x, double *mine, double *cuda)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        mine[i] = tanh_branchless(x[i]);
        cuda[i] = tanh(x[i]);
    }
}

/* |got - exact| in ulp of exact (as a double). */
double ulp_error(double got, long double exact)
{
    const double e = (double)exact;
    const double ulp = std::nextafter(std::fabs(e), INFINITY) - std::fabs(e);
    return (double)(std::fabs((long double)got - exact) / (long double)(ulp > 0 ? ulp : 4.9e-324));
}

struct stats {
    double worst = 0, sum = 0, at = 0;
    void add(double err, double x)
    {
        sum += err;
        if (err > worst) {
            worst = err;
            at = x;
        }
    }
};

} // namespace

int main(int argc, char **argv)
{
    std::vector<double> x;
    for (long i = -24L * 65536; i <= 24L * 65536; i++) {
        x.push_back((double)i / 65536.0);
    }
    const int nlog = 1 << 22;
    for (int i = 0; i < nlog; i++) {
        const double m = std::pow(10.0, -300.0 + (300.0 + std::log10(40.0)) * i / (nlog - 1));
        x.push_back(m);
        x.push_back(-m);
    }
    const size_t nreg = x.size();
    const double special[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 4.9e-320, 1e3, -1e3};
    for (double s : special) {
        x.push_back(s);
    }
    const size_t n = x.size();
    double *d_x, *d_mine, *d_cuda;
    CHECK(cudaMalloc(&d_x, n * sizeof(double)));
    CHECK(cudaMalloc(&d_mine, n * sizeof(double)));
    CHECK(cudaMalloc(&d_cuda, n * sizeof(double)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(double), cudaMemcpyHostToDevice));
    k_tanh<<<1024, 256>>>(n, d_x, d_mine, d_cuda);
    CHECK(cudaGetLastError());
    std::vector<double> mine(n), cuda(n);
    CHECK(cudaMemcpy(mine.data(), d_mine, n * sizeof(double), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(cuda.data(), d_cuda, n * sizeof(double), cudaMemcpyDeviceToHost));
    stats sm, sc;
    for (size_t i = 0; i < nreg; i++) {
        const long double exact = tanhl((long double)x[i]);
        sm.add(ulp_error(mine[i], exact), x[i]);
        sc.add(ulp_error(cuda[i], exact), x[i]);
    }
    int special_ok = 1;
    for (size_t i = nreg; i < n; i++) {
        const bool same = (std::isnan(mine[i]) && std::isnan(cuda[i])) ||
                          (mine[i] == cuda[i] && std::signbit(mine[i]) == std::signbit(cuda[i]));
        if (!same) {
            special_ok = 0;
            printf("special value %g: tanh_branchless %g, tanh %g\n", x[i], mine[i], cuda[i]);
        }
    }
    printf("%zu points: tanh_branchless max %.3f ulp (at %.17g), mean %.4f; CUDA tanh max %.3f ulp "
           "(at %.17g), mean %.4f; special values %s\n",
           nreg, sm.worst, sm.at, sm.sum / nreg, sc.worst, sc.at, sc.sum / nreg,
           special_ok ? "as tanh" : "DIFFER");
    if (argc > 1) {
        FILE *f = fopen(argv[1], "w");
        CHECK(f == NULL);
        fprintf(f,
                "{\"benchmark\": \"tanh_ulp\", \"points\": %zu, \"tanh_branchless\": {\"max_ulp\": "
                "%.4f, \"at\": %.17g, \"mean_ulp\": %.5f}, \"cuda_tanh\": {\"max_ulp\": %.4f, "
                "\"at\": %.17g, \"mean_ulp\": %.5f}, \"special_values_as_tanh\": %s}\n",
                nreg, sm.worst, sm.at, sm.sum / nreg, sc.worst, sc.at, sc.sum / nreg,
                special_ok ? "true" : "false");
        fclose(f);
    }
    return special_ok ? 0 : 1;
}
