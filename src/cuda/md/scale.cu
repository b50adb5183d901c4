/* Pressure coupling on the device (cuda_api.h hmd_cuda_scale): the home atoms' kinetic-energy
 * tensor and the C-rescale scaling of their positions and velocities (md/crescale.h), on the
 * state's arrays and stream. Twins of md/integrate.c hmd_integrate_kinetic_energy and
 * md/crescale.c hmd_crescale_apply: the scaling repeats the host's products and sums in its
 * order without fused multiply-adds (core/mat3.h), bit for bit; the sums over atoms run in a
 * fixed order (blocks, then the blocks in order), so they do not depend on the GPU's threads. */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

#include <algorithm>

extern "C" {
#include "core/units.h"
}

struct hmd_cuda_scale {
    double *part;   /* [MAX_PARTS][6] first-stage sums (device) */
    double *loc;    /* [6] this rank's sums (device) */
    double *pinned; /* [6] their host copy */
};

namespace
{

constexpr int THREADS = 256;
constexpr int MAX_PARTS = 1024;
constexpr int NSUM = 6; /* m v_a v_b: xx yy zz xy xz yz; the scaling uses the first only */

struct mat3 {
    double m[3][3];
};

unsigned parts(int n)
{
    const int b = (n + THREADS - 1) / THREADS;
    return (unsigned)std::min(std::max(b, 1), MAX_PARTS);
}

/* r' = r m as core/mat3.c hmd_mat3_row_times: (p0 + p1) + p2, every operation rounded. */
__device__ void row_times(const double r[3], const mat3 &m, double out[3])
{
    for (int b = 0; b < 3; b++) {
        const double p0 = __dmul_rn(r[0], m.m[0][b]), p1 = __dmul_rn(r[1], m.m[1][b]);
        out[b] = __dadd_rn(__dadd_rn(p0, p1), __dmul_rn(r[2], m.m[2][b]));
    }
}

/* Block b's sums of acc[NSUM] into part[NSUM * b + c]. */
__device__ void block_sums(double acc[NSUM], double *part)
{
    __shared__ double sh[NSUM][THREADS];
    for (int c = 0; c < NSUM; c++) {
        sh[c][threadIdx.x] = acc[c];
    }
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            for (int c = 0; c < NSUM; c++) {
                sh[c][threadIdx.x] += sh[c][threadIdx.x + w];
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        for (int c = 0; c < NSUM; c++) {
            part[NSUM * blockIdx.x + c] = sh[c][0];
        }
    }
}

/* First stage of sum_i m_i v_ia v_ib over the home atoms. */
__global__ void kinetic_parts(int n, const double *mass, const double *v, double *part)
{
    double acc[NSUM] = {0, 0, 0, 0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const double m = mass[i], *u = v + 3 * i;
        acc[0] += m * u[0] * u[0];
        acc[1] += m * u[1] * u[1];
        acc[2] += m * u[2] * u[2];
        acc[3] += m * u[0] * u[1];
        acc[4] += m * u[0] * u[2];
        acc[5] += m * u[1] * u[2];
    }
    block_sums(acc, part);
}

/* x' = x mu, v' = v inv (inv = mu^-1) of the home atoms, and the first stage of
 * sum_i m_i (|v'_i|^2 - |v_i|^2) into part[.][0]. */
__global__ void scale_atoms(int n, mat3 mu, mat3 inv, const double *mass, double *x, double *v,
                            double *part)
{
    double acc[NSUM] = {0, 0, 0, 0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double r[3], w[3];
        row_times(x + 3 * i, mu, r);
        double *u = v + 3 * i;
        row_times(u, inv, w);
        acc[0] += mass[i] * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2] - u[0] * u[0] - u[1] * u[1] -
                             u[2] * u[2]);
        for (int d = 0; d < 3; d++) {
            x[3 * i + d] = r[d];
            u[d] = w[d];
        }
    }
    block_sums(acc, part);
}

/* Second stage, one thread: loc[c] = the nparts partials of c, in block order. */
__global__ void local_sums(const double *part, int nparts, double *loc)
{
    for (int c = 0; c < NSUM; c++) {
        double s = 0.0;
        for (int b = 0; b < nparts; b++) {
            s += part[NSUM * b + c];
        }
        loc[c] = s;
    }
}

/* The second stage queued after a first of np blocks, its result copied to s->pinned; waits. */
int finish_sums(hmd_cuda_scale *s, unsigned np, cudaStream_t st)
{
    local_sums<<<1, 1, 0, st>>>(s->part, (int)np, s->loc);
    HMD_CUDA_LAUNCHED("local_sums");
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(s->pinned, s->loc, sizeof(double) * NSUM, cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    return HMD_OK;
}

} // namespace

extern "C" int hmd_cuda_scale_create(struct hmd_cuda_scale **out)
{
    hmd_cuda_scale *s = new hmd_cuda_scale();
    *out = s;
    HMD_CUDA_CHECK(cudaMalloc((void **)&s->part, sizeof(double) * NSUM * MAX_PARTS));
    HMD_CUDA_CHECK(cudaMalloc((void **)&s->loc, sizeof(double) * NSUM));
    HMD_CUDA_CHECK(cudaMallocHost((void **)&s->pinned, sizeof(double) * NSUM));
    return HMD_OK;
}

extern "C" int hmd_cuda_scale_kinetic(struct hmd_cuda_scale *s, const struct hmd_cuda_state *state,
                                      double ke[9])
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(state);
    cudaStream_t st = (cudaStream_t)a.stream;
    const unsigned np = parts(a.nlocal);
    kinetic_parts<<<np, THREADS, 0, st>>>(a.nlocal, a.mass, a.v, s->part);
    HMD_CUDA_LAUNCHED("kinetic_parts");
    const int rc = finish_sums(s, np, st);
    if (rc) {
        return rc;
    }
    static const int at[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
    for (int k = 0; k < 9; k++) {
        ke[k] = s->pinned[at[k]] * HMD_MVV2E;
    }
    return HMD_OK;
}

extern "C" int hmd_cuda_scale_apply(struct hmd_cuda_scale *s, const struct hmd_cuda_state *state,
                                    const double mu[3][3], const double inv[3][3], double *dkin)
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(state);
    cudaStream_t st = (cudaStream_t)a.stream;
    mat3 m, im;
    memcpy(m.m, mu, sizeof m.m);
    memcpy(im.m, inv, sizeof im.m);
    const unsigned np = parts(a.nlocal);
    scale_atoms<<<np, THREADS, 0, st>>>(a.nlocal, m, im, a.mass, a.x, a.v, s->part);
    HMD_CUDA_LAUNCHED("scale_atoms");
    const int rc = finish_sums(s, np, st);
    *dkin = rc ? 0.0 : 0.5 * s->pinned[0] * HMD_MVV2E;
    return rc;
}

extern "C" void hmd_cuda_scale_destroy(struct hmd_cuda_scale *s)
{
    if (!s) {
        return;
    }
    cudaFree(s->part);
    cudaFree(s->loc);
    cudaFreeHost(s->pinned);
    delete s;
}
