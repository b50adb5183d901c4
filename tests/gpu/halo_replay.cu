/* The halo test's replay stage (halo_replay.h). */
#include "halo_replay.h"

#include <cuda_runtime.h>
#include <stdlib.h>

extern "C" {
#include "comm/comm.h"
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t check_err_ = (call);                                                           \
        if (check_err_ != cudaSuccess) {                                                           \
            return hmd_error_set(HMD_ESOFTWARE, "CUDA: %s: %s", #call,                             \
                                 cudaGetErrorString(check_err_));                                  \
        }                                                                                          \
    } while (0)

namespace
{

constexpr int THREADS = 256;

unsigned blocks(long long n)
{
    return (unsigned)((n + THREADS - 1) / THREADS > 0 ? (n + THREADS - 1) / THREADS : 1);
}

/* the round's number, and home positions moved by one */
__global__ void next_round(long long *round, int nlocal, double *x)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e == 0) {
        *round += 1;
    }
    if (e < 3 * nlocal) {
        x[e] += 1.0;
    }
}

__global__ void check_ghosts(const long long *round, int nlocal, int nall, const double *x,
                             const double *x0, unsigned long long *bad)
{
    const long long e = 3ll * nlocal + blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e < 3ll * nall && fabs(x[e] - x0[e] - (double)*round) > 1e-6) {
        atomicAdd(bad, 1ull);
    }
}

__global__ void set_forces(const long long *round, int nlocal, int nall, double *f)
{
    const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e < 3ll * nall) {
        f[e] = e >= 3ll * nlocal && e % 3 == 0 ? (double)*round : 0.0;
    }
}

__global__ void check_home(const long long *round, int nlocal, const double *f,
                           const double *copies, unsigned long long *bad)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nlocal) {
        const double want = copies[k] * (double)*round;
        if (fabs(f[3 * k] - want) > 1e-9 * (1.0 + want) || f[3 * k + 1] != 0.0 ||
            f[3 * k + 2] != 0.0) {
            atomicAdd(bad, 1ull);
        }
    }
}

struct replay {
    long long *round = nullptr;
    unsigned long long *bad = nullptr;
    double *x0 = nullptr, *copies = nullptr;
};

/* One round; `skip_forward` (HMD_TEST_REPLAY_SKIP_FORWARD=1, to see the check fail) leaves the
 * forward out. */
int one_round(hmd_halo_transport *t, const hmd_cuda_atoms &a, const hmd_box *box, const replay &r)
{
    cudaStream_t st = (cudaStream_t)a.stream;
    const char *skip = getenv("HMD_TEST_REPLAY_SKIP_FORWARD");
    next_round<<<blocks(3ll * a.nlocal), THREADS, 0, st>>>(r.round, a.nlocal, a.x);
    int rc = skip && atoi(skip) ? HMD_OK : hmd_halo_transport_forward(t, a.x, box, a.stream);
    if (rc) {
        return rc;
    }
    check_ghosts<<<blocks(3ll * (a.nall - a.nlocal)), THREADS, 0, st>>>(r.round, a.nlocal, a.nall,
                                                                        a.x, r.x0, r.bad);
    set_forces<<<blocks(3ll * a.nall), THREADS, 0, st>>>(r.round, a.nlocal, a.nall, a.f);
    rc = hmd_halo_transport_reverse(t, a.f, 3, a.stream);
    if (rc) {
        return rc;
    }
    check_home<<<blocks(a.nlocal), THREADS, 0, st>>>(r.round, a.nlocal, a.f, r.copies, r.bad);
    CHECK(cudaGetLastError());
    return HMD_OK;
}

int run(hmd_halo_transport *t, const hmd_cuda_atoms &a, const hmd_box *box, int rounds,
        const replay &r)
{
    cudaStream_t st = (cudaStream_t)a.stream;
    if (!hmd_halo_transport_capturable(t)) {
        for (int n = 0; n < rounds; n++) {
            const int rc = one_round(t, a, box, r);
            if (rc) {
                return rc;
            }
        }
        return HMD_OK;
    }
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const int rc = one_round(t, a, box, r);
    cudaGraph_t g = nullptr;
    const cudaError_t end = cudaStreamEndCapture(st, &g);
    if (rc) {
        if (g) {
            cudaGraphDestroy(g);
        }
        return rc;
    }
    CHECK(end);
    cudaGraphExec_t e = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&e, g, 0);
    cudaGraphDestroy(g);
    CHECK(made);
    cudaError_t err = cudaSuccess;
    for (int n = 0; n < rounds && err == cudaSuccess; n++) {
        err = cudaGraphLaunch(e, st);
    }
    cudaGraphExecDestroy(e);
    CHECK(err);
    return HMD_OK;
}

} // namespace

extern "C" int hmd_test_halo_replay(struct hmd_halo_transport *t, struct hmd_cuda_state *s,
                                    const struct hmd_box *box, const double *copies, int rounds,
                                    long long *bad)
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(s);
    cudaStream_t st = (cudaStream_t)a.stream;
    replay r;
    *bad = 0;
    CHECK(cudaMalloc((void **)&r.round, sizeof(long long)));
    CHECK(cudaMalloc((void **)&r.bad, sizeof(unsigned long long)));
    CHECK(cudaMalloc((void **)&r.x0, 3 * sizeof(double) * (a.nall > 0 ? a.nall : 1)));
    CHECK(cudaMalloc((void **)&r.copies, sizeof(double) * (a.nlocal > 0 ? a.nlocal : 1)));
    CHECK(cudaMemsetAsync(r.round, 0, sizeof(long long), st));
    CHECK(cudaMemsetAsync(r.bad, 0, sizeof(unsigned long long), st));
    CHECK(cudaMemcpyAsync(r.x0, a.x, 3 * sizeof(double) * a.nall, cudaMemcpyDeviceToDevice, st));
    CHECK(cudaMemcpyAsync(r.copies, copies, sizeof(double) * a.nlocal, cudaMemcpyHostToDevice, st));
    CHECK(cudaStreamSynchronize(st));
    /* every rank holds its start values before any rank's first forward stores into them */
    hmd_comm_barrier();
    int rc = run(t, a, box, rounds, r);
    CHECK(cudaStreamSynchronize(st));
    rc = rc ? rc : hmd_halo_transport_check(t);
    unsigned long long n = 0;
    CHECK(cudaMemcpy(&n, r.bad, sizeof n, cudaMemcpyDeviceToHost));
    *bad = (long long)n;
    cudaFree(r.round);
    cudaFree(r.bad);
    cudaFree(r.x0);
    cudaFree(r.copies);
    return rc;
}
