/* The `mpi` halo transport (cuda_api.h hmd_cuda_halo_open_mpi): any plan on device arrays, with
 * the host transport's arithmetic (halo/host.c), bit for bit. The swaps are grouped into stages,
 * runs of consecutive swaps of which none sends a ghost another one delivers (both directions of
 * a cell vector, typically): forward packs every swap of a stage (x[send] + shift) on the device,
 * brings them to the host in one copy (pinned buffers: the nodes' Open MPI is not CUDA-aware;
 * with a CUDA-aware MPI, `device_buffers`, the staging buffers are device memory instead and the
 * copies stay on the device), posts all of the stage's messages at once (comm/comm.h
 * hmd_comm_exchange_all) and copies the ghosts in; a swap that stays on this rank is one kernel.
 * Reverse returns ghost values the same way, stage by stage from the last, and folds them in the
 * swaps' reverse order (a swap sends an atom at most once: no atomics). Its calls synchronise the
 * stream, so a step that uses it cannot be one CUDA graph: the step records the device work between
 * two of its calls (cuda/md/step.cu). */
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
    double *host; /* [2][cap_buf] send and receive staging: pinned host memory, or device
                     memory with device_buffers */
    bool device_buffers;
    double *sums; /* pinned: [HMD_HALO_MAX_SUM] the sums over ranks on their way to the device */
    size_t cap_send, cap_buf;
    double h[3][3];            /* the cell of the shifts */
    std::vector<double> shift; /* [nswap][3] */
    /* stage k is swaps stage[k] .. stage[k + 1] - 1; a swap's sent and received values sit at
     * doubles sent_at[s] and received_at[s] of the stage's packed buffers */
    std::vector<int> stage;
    std::vector<size_t> sent_at, received_at;
    std::vector<hmd_comm_pair> pairs; /* one stage's messages */
    size_t bytes;
    unsigned long generation;
    double waited[2]; /* seconds in the forward and reverse exchanges (the peers' data) */
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
    if (t->device_buffers) {
        cudaFree(t->host);
    } else {
        cudaFreeHost(t->host);
    }
    t->bytes -= (t->device_buffers ? 3 : 1) * t->cap_buf * sizeof(double);
    t->buf = NULL;
    t->host = NULL;
    t->cap_buf = 0;
    const size_t cap = doubles + doubles / 2 + 64;
    HMD_CUDA_CHECK(cudaMalloc((void **)&t->buf, cap * sizeof(double)));
    if (t->device_buffers) {
        HMD_CUDA_CHECK(cudaMalloc((void **)&t->host, 2 * cap * sizeof(double)));
    } else {
        HMD_CUDA_CHECK(cudaMallocHost((void **)&t->host, 2 * cap * sizeof(double)));
    }
    t->bytes += (t->device_buffers ? 3 : 1) * cap * sizeof(double);
    t->cap_buf = cap;
    t->generation++;
    return HMD_OK;
}

/* Whether swap `later` sends a ghost that swap `earlier` delivers. */
bool sends_ghost_of(const hmd_halo_plan *plan, int later, int earlier)
{
    const hmd_halo_swap *l = &plan->swap[later], *e = &plan->swap[earlier];
    const int *send = plan->send_list + l->send_offset;
    for (int n = 0; n < l->nsend; n++) {
        if (send[n] >= e->recv_offset && send[n] < e->recv_offset + e->nrecv) {
            return true;
        }
    }
    return false;
}

/* Groups the plan's swaps into stages (t->stage), the same on every rank (collective: a swap
 * starts a stage where, on any rank, it sends a ghost that a swap of the stage so far delivers;
 * every rank must post a stage's messages alike), and places each swap's values in its stage's
 * buffers (t->sent_at, t->received_at); returns the atoms the largest stage sends or receives. */
size_t plan_stages(mpi_transport *t, const hmd_halo_plan *plan)
{
    const int n = plan->nswap;
    std::vector<int> dep((size_t)n * n, 0); /* [later][earlier] */
    for (int s = 0; s < n; s++) {
        for (int e = 0; e < s; e++) {
            dep[(size_t)s * n + e] = sends_ghost_of(plan, s, e);
        }
    }
    if (n > 0) {
        hmd_comm_max_int(dep.data(), n * n);
    }
    t->stage.assign(1, 0);
    t->sent_at.assign((size_t)plan->nswap, 0);
    t->received_at.assign((size_t)plan->nswap, 0);
    size_t most = 0, sent = 0, received = 0;
    for (int s = 0; s < plan->nswap; s++) {
        bool depends = s - t->stage.back() >= HMD_TAG_ALL_SPAN;
        for (int e = t->stage.back(); e < s && !depends; e++) {
            depends = dep[(size_t)s * n + e];
        }
        if (depends) {
            t->stage.push_back(s);
            sent = received = 0;
        }
        t->sent_at[s] = 3 * sent;
        t->received_at[s] = 3 * received;
        sent += (size_t)plan->swap[s].nsend;
        received += (size_t)plan->swap[s].nrecv;
        most = std::max(most, std::max(sent, received));
    }
    t->stage.push_back(plan->nswap);
    return most;
}

int mpi_setup(void *self, const hmd_halo_arrays *a)
{
    mpi_transport *t = (mpi_transport *)self;
    const hmd_halo_plan *plan = a->plan;
    t->plan = plan;
    const size_t most = plan_stages(t, plan);
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

/* Whether any swap of stage k exchanges with another rank. */
bool stage_leaves(const mpi_transport *t, int k)
{
    for (int s = t->stage[k]; s < t->stage[k + 1]; s++) {
        if (!stays(t, &t->plan->swap[s])) {
            return true;
        }
    }
    return false;
}

int mpi_forward(void *self, double *x, const hmd_box *box, void *stream)
{
    mpi_transport *t = (mpi_transport *)self;
    const hmd_halo_plan *plan = t->plan;
    cudaStream_t st = (cudaStream_t)stream;
    double *hsend = t->host, *hrecv = t->host + t->cap_buf;
    for (int k = 0; k + 1 < (int)t->stage.size(); k++) {
        const int first = t->stage[k], end = t->stage[k + 1];
        size_t packed = 0; /* doubles of this stage's packed values */
        t->pairs.clear();
        for (int s = first; s < end; s++) {
            const hmd_halo_swap *sw = &plan->swap[s];
            double sh[3];
            hmd_halo_swap_shift(sw, box, sh);
            const int *send = t->send + sw->send_offset;
            const size_t out = 3 * (size_t)sw->nsend, in = 3 * (size_t)sw->nrecv;
            if (stays(t, sw)) { /* a copy on the device, straight into the ghost slots */
                if (sw->nsend > 0) {
                    pack_kernel<<<blocks(out), THREADS, 0, st>>>(
                        sw->nsend, send, x, sh[0], sh[1], sh[2], x + 3 * (size_t)sw->recv_offset);
                    HMD_CUDA_LAUNCHED("pack_kernel");
                }
                continue;
            }
            if (sw->to >= 0 && sw->nsend > 0) {
                pack_kernel<<<blocks(out), THREADS, 0, st>>>(sw->nsend, send, x, sh[0], sh[1],
                                                             sh[2], t->buf + t->sent_at[s]);
                HMD_CUDA_LAUNCHED("pack_kernel");
                packed = t->sent_at[s] + out;
            }
            t->pairs.push_back({sw->to, hsend + t->sent_at[s],
                                sw->to < 0 ? 0 : sizeof(double) * out, sw->from,
                                hrecv + t->received_at[s], sw->from < 0 ? 0 : sizeof(double) * in});
        }
        if (t->pairs.empty()) {
            continue;
        }
        if (packed > 0) {
            HMD_CUDA_CHECK(
                cudaMemcpyAsync(hsend, t->buf, sizeof(double) * packed, cudaMemcpyDefault, st));
        }
        /* also the last stage's copies of received values to the device are done */
        HMD_CUDA_CHECK(cudaStreamSynchronize(st));
        const double t0 = hmd_wtime();
        hmd_comm_exchange_all(t->pairs.data(), (int)t->pairs.size(), HMD_TAG_ALL_FORWARD);
        t->waited[0] += hmd_wtime() - t0;
        for (int s = first; s < end; s++) {
            const hmd_halo_swap *sw = &plan->swap[s];
            if (!stays(t, sw) && sw->from >= 0 && sw->nrecv > 0) {
                HMD_CUDA_CHECK(
                    cudaMemcpyAsync(x + 3 * (size_t)sw->recv_offset, hrecv + t->received_at[s],
                                    sizeof(double) * 3 * (size_t)sw->nrecv, cudaMemcpyDefault, st));
            }
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
    /* ghosts' values go back to the rank they came from: sent from the ghost slots, received
     * into the places of the stage's sent values */
    double *hsend = t->host, *hrecv = t->host + t->cap_buf;
    for (int k = (int)t->stage.size() - 2; k >= 0; k--) {
        const int first = t->stage[k], end = t->stage[k + 1];
        const bool leaves = stage_leaves(t, k);
        size_t landed = 0; /* doubles of this stage's received values */
        t->pairs.clear();
        for (int s = first; s < end && leaves; s++) {
            const hmd_halo_swap *sw = &plan->swap[s];
            if (stays(t, sw)) {
                continue;
            }
            const size_t back = 3 * (size_t)sw->nrecv, in = 3 * (size_t)sw->nsend;
            if (sw->from >= 0 && back > 0) {
                HMD_CUDA_CHECK(cudaMemcpyAsync(hsend + t->received_at[s],
                                               v + 3 * (size_t)sw->recv_offset,
                                               sizeof(double) * back, cudaMemcpyDefault, st));
            }
            if (sw->to >= 0 && in > 0) {
                landed = t->sent_at[s] + in;
            }
            t->pairs.push_back({sw->from, hsend + t->received_at[s],
                                sw->from < 0 ? 0 : sizeof(double) * back, sw->to,
                                hrecv + t->sent_at[s], sw->to < 0 ? 0 : sizeof(double) * in});
        }
        if (leaves) {
            HMD_CUDA_CHECK(cudaStreamSynchronize(st));
            const double t0 = hmd_wtime();
            hmd_comm_exchange_all(t->pairs.data(), (int)t->pairs.size(), HMD_TAG_ALL_REVERSE);
            t->waited[1] += hmd_wtime() - t0;
            if (landed > 0) {
                HMD_CUDA_CHECK(
                    cudaMemcpyAsync(t->buf, hrecv, sizeof(double) * landed, cudaMemcpyDefault, st));
            }
        }
        for (int s = end - 1; s >= first; s--) { /* the folds in the swaps' reverse order */
            const hmd_halo_swap *sw = &plan->swap[s];
            const double *val = v + 3 * (size_t)sw->recv_offset;
            if (!stays(t, sw)) {
                if (sw->to < 0) {
                    continue;
                }
                val = t->buf + t->sent_at[s];
            }
            if (sw->nsend > 0) {
                fold_kernel<<<blocks(3 * (size_t)sw->nsend), THREADS, 0, st>>>(
                    sw->nsend, 3, t->send + sw->send_offset, val, v);
                HMD_CUDA_LAUNCHED("fold_kernel");
            }
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
    HMD_CUDA_CHECK(cudaMemcpyAsync(mine, local, sizeof(double) * n, cudaMemcpyDefault, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    hmd_comm_allgatherv(mine, sizeof(double) * n, all.data(), counts.data());
    for (int c = 0; c < n; c++) {
        double s = 0.0;
        for (int r = 0; r < nranks; r++) {
            s += all[(size_t)r * n + c];
        }
        t->sums[c] = s; /* pinned: the copy below may still run after this call */
    }
    HMD_CUDA_CHECK(cudaMemcpyAsync(total, t->sums, sizeof(double) * n, cudaMemcpyDefault, st));
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

bool mpi_waited(void *self, double waited[2])
{
    const mpi_transport *t = (const mpi_transport *)self;
    waited[0] = t->waited[0];
    waited[1] = t->waited[1];
    return true;
}

void mpi_destroy(void *self)
{
    mpi_transport *t = (mpi_transport *)self;
    if (t) {
        cudaFree(t->send);
        cudaFree(t->buf);
        if (t->device_buffers) {
            cudaFree(t->host);
        } else {
            cudaFreeHost(t->host);
        }
        cudaFreeHost(t->sums);
        delete t;
    }
}

const hmd_halo_transport_ops mpi_ops = {
    "mpi",          true,        false,   mpi_setup,
    mpi_forward,    mpi_reverse, mpi_sum, mpi_device_bytes,
    mpi_generation, mpi_destroy, NULL,    mpi_waited,
};

} // namespace

extern "C" int hmd_cuda_halo_open_mpi(struct hmd_halo_transport *out, bool device_buffers)
{
    mpi_transport *t = new mpi_transport();
    t->device_buffers = device_buffers;
    t->rank = hmd_comm_rank();
    out->ops = &mpi_ops;
    out->self = t;
    HMD_CUDA_CHECK(cudaMallocHost((void **)&t->sums, sizeof(double) * HMD_HALO_MAX_SUM));
    return HMD_OK;
}
