/* The `mpi` halo transport (cuda_api.h hmd_cuda_halo_open_mpi): any plan on device arrays, swap
 * by swap in the host transport's order (halo/host.c) and with its arithmetic, bit for bit:
 * forward packs x[send] + shift on the device, and a swap with another rank goes through the
 * host (pinned buffers, comm/comm.h's exchange: the nodes' Open MPI is not CUDA-aware); a swap
 * that stays on this rank is one kernel. Reverse returns ghost values the same way into a
 * landing buffer and folds them in send-list order (a swap sends an atom at most once: no
 * atomics). Its calls synchronise the stream, so a step that uses it cannot be one CUDA graph:
 * the step records the device work between two of its calls (cuda/md/step.cu). */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

#include <algorithm>
#include <vector>

extern "C" {
#include "comm/comm.h"
#include "core/timer.h"
}

namespace
{

constexpr int THREADS = 256;

struct mpi_transport {
    const hmd_halo_plan *plan; /* borrowed, from setup */
    int rank;
    int *send;    /* device: every swap's send list, back to back */
    double *buf;  /* device: a swap's packed values or landing values, [cap_buf] */
    double *host; /* pinned: [2][cap_buf] send and receive staging */
    size_t cap_send, cap_buf;
    double h[3][3];            /* the cell of the shifts */
    std::vector<double> shift; /* [nswap][3] */
    size_t bytes;
    unsigned long generation;
    double waited; /* seconds in the forward and reverse exchanges (the peers' data) */
};

/* out[n][c] = x[send[n]][c] + shift[c] for n < count (out may be x + 3 recv_offset: the sources
 * of a swap come before its ghosts). */
__global__ void pack_kernel(int count, const int *send, const double *x, double s0, double s1,
                            double s2, double *out)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * count) {
        const int n = e / 3, c = e % 3;
        out[e] = x[3 * (size_t)send[n] + c] + (c == 0 ? s0 : c == 1 ? s1 : s2);
    }
}

/* v[send[n]][c] += val[n][c] for n < count (send-list entries of a swap are distinct). */
__global__ void fold_kernel(int count, int ncomp, const int *send, const double *val, double *v)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < ncomp * count) {
        const int n = e / ncomp, c = e % ncomp;
        v[(size_t)ncomp * send[n] + c] += val[e];
    }
}

unsigned blocks(size_t n)
{
    return (unsigned)std::max<size_t>(1, (n + THREADS - 1) / THREADS);
}

/* Room for `doubles` doubles in the device and pinned buffers. */
int reserve_buf(mpi_transport *t, size_t doubles)
{
    if (doubles <= t->cap_buf && t->buf) {
        return HMD_OK;
    }
    cudaFree(t->buf);
    cudaFreeHost(t->host);
    t->bytes -= t->cap_buf * sizeof(double);
    t->buf = NULL;
    t->host = NULL;
    t->cap_buf = 0;
    const size_t cap = doubles + doubles / 2 + 64;
    HMD_CUDA_CHECK(cudaMalloc((void **)&t->buf, cap * sizeof(double)));
    HMD_CUDA_CHECK(cudaMallocHost((void **)&t->host, 2 * cap * sizeof(double)));
    t->bytes += cap * sizeof(double);
    t->cap_buf = cap;
    t->generation++;
    return HMD_OK;
}

int mpi_setup(void *self, const hmd_halo_arrays *a)
{
    mpi_transport *t = (mpi_transport *)self;
    const hmd_halo_plan *plan = a->plan;
    t->plan = plan;
    size_t most = 0;
    for (int s = 0; s < plan->nswap; s++) {
        most = std::max(most, (size_t)std::max(plan->swap[s].nsend, plan->swap[s].nrecv));
    }
    int rc = reserve_buf(t, 3 * most);
    if (!rc && (size_t)plan->nsend_total > t->cap_send) {
        cudaFree(t->send);
        t->bytes -= t->cap_send * sizeof(int);
        t->send = NULL;
        const size_t cap = plan->nsend_total + plan->nsend_total / 2 + 64;
        HMD_CUDA_CHECK(cudaMalloc((void **)&t->send, cap * sizeof(int)));
        t->bytes += cap * sizeof(int);
        t->cap_send = cap;
        t->generation++;
    }
    if (!rc && plan->nsend_total > 0) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(t->send, plan->send_list, sizeof(int) * plan->nsend_total,
                                       cudaMemcpyHostToDevice, (cudaStream_t)a->stream));
        HMD_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)a->stream));
    }
    t->shift.assign(3 * (size_t)plan->nswap, 0.0);
    memset(t->h, 0, sizeof t->h);
    return rc;
}

bool stays(const mpi_transport *t, const hmd_halo_swap *sw)
{
    return sw->to == t->rank && sw->from == t->rank;
}

int mpi_forward(void *self, double *x, const hmd_box *box, void *stream)
{
    mpi_transport *t = (mpi_transport *)self;
    const hmd_halo_plan *plan = t->plan;
    cudaStream_t st = (cudaStream_t)stream;
    for (int s = 0; s < plan->nswap; s++) {
        const hmd_halo_swap *sw = &plan->swap[s];
        double sh[3];
        hmd_halo_swap_shift(sw, box, sh);
        const int *send = t->send + sw->send_offset;
        if (stays(t, sw)) { /* a copy on the device, straight into the ghost slots */
            if (sw->nsend > 0) {
                pack_kernel<<<blocks(3 * (size_t)sw->nsend), THREADS, 0, st>>>(
                    sw->nsend, send, x, sh[0], sh[1], sh[2], x + 3 * (size_t)sw->recv_offset);
                HMD_CUDA_LAUNCHED("pack_kernel");
            }
            continue;
        }
        const size_t out = 3 * (size_t)sw->nsend, in = 3 * (size_t)sw->nrecv;
        double *hsend = t->host, *hrecv = t->host + t->cap_buf;
        if (sw->to >= 0 && sw->nsend > 0) {
            pack_kernel<<<blocks(out), THREADS, 0, st>>>(sw->nsend, send, x, sh[0], sh[1], sh[2],
                                                         t->buf);
            HMD_CUDA_LAUNCHED("pack_kernel");
            HMD_CUDA_CHECK(
                cudaMemcpyAsync(hsend, t->buf, sizeof(double) * out, cudaMemcpyDeviceToHost, st));
        }
        /* also the receive buffer's last copy to the device is done */
        HMD_CUDA_CHECK(cudaStreamSynchronize(st));
        const double t0 = hmd_wtime();
        hmd_comm_exchange(sw->to, hsend, sw->to < 0 ? 0 : sizeof(double) * out, sw->from, hrecv,
                          sw->from < 0 ? 0 : sizeof(double) * in, HMD_TAG_FORWARD);
        t->waited += hmd_wtime() - t0;
        if (sw->from >= 0 && in > 0) {
            HMD_CUDA_CHECK(cudaMemcpyAsync(x + 3 * (size_t)sw->recv_offset, hrecv,
                                           sizeof(double) * in, cudaMemcpyHostToDevice, st));
        }
    }
    return HMD_OK;
}

int mpi_reverse(void *self, double *v, int ncomp, void *stream)
{
    mpi_transport *t = (mpi_transport *)self;
    const hmd_halo_plan *plan = t->plan;
    cudaStream_t st = (cudaStream_t)stream;
    if (ncomp != 3) {
        return hmd_error_set(HMD_ENOTSUP, "halo-transport = mpi: reverse of %d values per atom",
                             ncomp);
    }
    for (int s = plan->nswap - 1; s >= 0; s--) {
        const hmd_halo_swap *sw = &plan->swap[s];
        const int *send = t->send + sw->send_offset;
        const size_t back = 3 * (size_t)sw->nrecv, in = 3 * (size_t)sw->nsend;
        const double *val = v + 3 * (size_t)sw->recv_offset;
        if (!stays(t, sw)) {
            double *hsend = t->host, *hrecv = t->host + t->cap_buf;
            if (sw->from >= 0 && back > 0) {
                HMD_CUDA_CHECK(
                    cudaMemcpyAsync(hsend, val, sizeof(double) * back, cudaMemcpyDeviceToHost, st));
            }
            HMD_CUDA_CHECK(cudaStreamSynchronize(st));
            /* the ghosts' values go back to the rank they came from */
            const double t0 = hmd_wtime();
            hmd_comm_exchange(sw->from, hsend, sw->from < 0 ? 0 : sizeof(double) * back, sw->to,
                              hrecv, sw->to < 0 ? 0 : sizeof(double) * in, HMD_TAG_REVERSE);
            t->waited += hmd_wtime() - t0;
            if (sw->to < 0 || in == 0) {
                continue;
            }
            HMD_CUDA_CHECK(
                cudaMemcpyAsync(t->buf, hrecv, sizeof(double) * in, cudaMemcpyHostToDevice, st));
            val = t->buf;
        }
        if (sw->nsend > 0) {
            fold_kernel<<<blocks(in), THREADS, 0, st>>>(sw->nsend, 3, send, val, v);
            HMD_CUDA_LAUNCHED("fold_kernel");
        }
    }
    return HMD_OK;
}

/* Every rank's values gathered on the host, added in rank order. */
int mpi_sum(void *self, const double *local, double *total, int n, void *stream)
{
    mpi_transport *t = (mpi_transport *)self;
    cudaStream_t st = (cudaStream_t)stream;
    const int nranks = hmd_comm_size();
    double mine[HMD_HALO_MAX_SUM];
    std::vector<double> all((size_t)n * nranks);
    std::vector<size_t> counts(nranks);
    HMD_CUDA_CHECK(cudaMemcpyAsync(mine, local, sizeof(double) * n, cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    hmd_comm_allgatherv(mine, sizeof(double) * n, all.data(), counts.data());
    for (int c = 0; c < n; c++) {
        double s = 0.0;
        for (int r = 0; r < nranks; r++) {
            s += all[(size_t)r * n + c];
        }
        t->host[c] = s; /* pinned: the copy below may still run after this call */
    }
    HMD_CUDA_CHECK(cudaMemcpyAsync(total, t->host, sizeof(double) * n, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    return HMD_OK;
}

size_t mpi_device_bytes(const void *self)
{
    return ((const mpi_transport *)self)->bytes;
}

unsigned long mpi_generation(const void *self)
{
    return ((const mpi_transport *)self)->generation;
}

double mpi_waited(void *self)
{
    return ((const mpi_transport *)self)->waited;
}

void mpi_destroy(void *self)
{
    mpi_transport *t = (mpi_transport *)self;
    if (t) {
        cudaFree(t->send);
        cudaFree(t->buf);
        cudaFreeHost(t->host);
        delete t;
    }
}

const hmd_halo_transport_ops mpi_ops = {
    "mpi",          true,        false,   mpi_setup,
    mpi_forward,    mpi_reverse, mpi_sum, mpi_device_bytes,
    mpi_generation, mpi_destroy, NULL,    mpi_waited,
};

} // namespace

extern "C" int hmd_cuda_halo_open_mpi(struct hmd_halo_transport *out)
{
    mpi_transport *t = new mpi_transport();
    t->rank = hmd_comm_rank();
    out->ops = &mpi_ops;
    out->self = t;
    return reserve_buf(t, 3 * 1024); /* the staging of the sums needs a little from the start */
}
