/* The `nvshmem` halo transport (nvshmem_api.h hmd_nvshmem_halo_open): GPU-initiated, positions
 * and forces on the NVSHMEM symmetric heap, the step's halo in two kernels and its global sums
 * in a third, none of them waiting for the host, so that the whole step is one CUDA graph.
 *
 * Forward, one kernel for every swap. Each entry a rank sends (a swap's send-list entry) is
 * resolved at setup through the swaps that stay on this rank (periodic images) to a root: a
 * home atom, or a ghost another rank delivered; its value is the root's position plus the
 * shifts of the swaps on the way, added in the host transport's order (bit for bit). Entries
 * are sorted by the swap their root waits for (home roots first) and cut into chunks; a
 * block takes chunks in that order, and waits (thread 0, acquire at system scope) only for
 * the swaps its chunk's roots came by, so entries of home atoms go at once and forwarded ones
 * wait only for the swap that delivered their source. Stores go straight into the peer's
 * ghost slots through nvshmem_ptr (NVLink, or the same GPU under MPS); where a peer is not
 * mapped (another node) they go into a symmetric send buffer, put with the signal by
 * nvshmem_double_put_signal_nbi. Each stored entry counts at GPU scope (acq_rel) towards its
 * swap; the entry that completes a swap releases one signal to the peer (a system-scope
 * release store through nvshmem_ptr, or the put's signal), whatever the number of blocks. The
 * kernel ends when every swap this rank receives has arrived.
 *
 * Reverse, one block: swaps in reverse order; for each, this rank pushes the forces of the
 * ghosts the swap brought back to the rank they came from (its landing slice of that swap,
 * then the signal), then waits for its own landing slice and folds it onto the atoms it sent,
 * in send-list order (no atomics): the host transport's order of additions, bit for bit.
 *
 * Signals are counts of forward and reverse exchanges made so far, kept on the device by the
 * kernels themselves (never a host argument: a recorded step replays as it is); the global
 * sums count theirs the same way, with one signal per source rank.
 * Write-after-read safety comes from the step's chain: a rank stores into a peer's ghosts for
 * step n + 1 only after that peer returned its step-n ghost forces (which it sent after its
 * forces, the last reader of those ghosts). Every wait is bounded (HMD_NVSHMEM_WAIT_S seconds,
 * default 60): a wait that runs out records which rank, swap and step it waited for and gives
 * up, and the host reports it (check) instead of hanging. The time rank's waits take (block 0's
 * in the forward, the reverse block's) adds up on the device for the log (waited).
 * HMD_NVSHMEM_DELAY_US (tests): every signal is held back for a random time below it, so that
 * the exchanges see peers arrive late and in every order.
 *
 * HMD_NVSHMEM_BULK=1 (an A/B variant, Hopper and later): the forward's stores into a mapped
 * peer go as bulk copies (cp.async.bulk from shared memory to the peer's address, the TMA
 * engine) instead of one store per value: a chunk's entries of one swap with consecutive ghost
 * slots are staged in shared memory and copied as one run from the first even slot, an even
 * number of entries (16-byte aligned, a multiple of 16 bytes); the entries left over are stored
 * as before. The issuing thread waits for its copy, then counts the run's entries at once. */
#include "nvshmem/nvshmem_api.h"

#include "cuda/halo/shifts.cuh"

#include <cuda/atomic>
#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <algorithm>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

extern "C" {
#include "comm/comm.h"
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t check_err_ = (call);                                                           \
        if (check_err_ != cudaSuccess) {                                                           \
            return hmd_error_set(HMD_ESOFTWARE, "CUDA: %s: %s (%s:%d)", #call,                     \
                                 cudaGetErrorString(check_err_), __FILE__, __LINE__);              \
        }                                                                                          \
    } while (0)

namespace
{

constexpr int CHUNK = 256;         /* entries of a forward chunk, threads of a forward block */
constexpr int FORWARD_BLOCKS = 16; /* resident on any partition of the GPU (MPS) */
constexpr int REVERSE_THREADS = 1024;

enum swap_kind {
    NONE,   /* no peer that way (an open boundary) */
    SELF,   /* this rank: periodic images, a copy */
    MAPPED, /* another rank whose memory this GPU reaches (nvshmem_ptr) */
    REMOTE, /* another rank reached by NVSHMEM's puts only */
};

/* One swap on the device, both of this rank's roles in it. */
struct dswap {
    int send_kind, recv_kind; /* swap_kind of the sending and receiving sides */
    int to, from;             /* PEs */
    int nsend, nrecv;         /* entries sent, ghosts received */
    int send_offset;          /* first entry in the plan's send list */
    int recv_offset;          /* first ghost slot of this rank */
    int peer_recv_offset;     /* first ghost slot on `to` */
    int land_offset;          /* first atom of this swap's landing slice (the same on every PE) */
    int sbuf_offset;          /* first atom of this swap's slice of the send buffer */
    double *peer_x;           /* MAPPED sending: `to`'s positions */
    unsigned long long *peer_sig_x; /* MAPPED sending: `to`'s arrival signal of this swap */
    double *peer_land;              /* MAPPED receiving: `from`'s landing buffer */
    unsigned long long *peer_sig_f; /* MAPPED receiving: `from`'s force signal of this swap */
};

/* A wait that ran out (mapped host memory, read by the host after the step). */
struct wait_error {
    int failed;     /* 0 while none */
    int rank, swap; /* who waited, for which swap (-1: a global sum) */
    long long step; /* at which exchange (the count of forwards, reverses or sums) */
    int what;       /* 0 positions, 1 forces, 2 sums */
};

struct device_plan {
    int nswap;
    const int *counts; /* device [2]: entries and chunks of this plan (not kernel arguments, so
                          that a recorded step survives a new plan of the same arrays) */
    const dswap *swap;
    const int *root, *dst, *eswap, *chain_offset, *chain, *send_list;
    const int *chunk_begin; /* [nchunk + 1] first entry of each chunk */
    /* HMD_NVSHMEM_BULK: the shared-memory slot of each entry a bulk copy takes (-1: stored by
     * its thread), and the runs of each chunk, bulk_begin[c] .. bulk_begin[c + 1] - 1 */
    const int *slot, *bulk_begin;
    const int4 *bulk; /* x: first slot, y: entries (even), z: first ghost slot on the peer,
                         w: swap */
    const unsigned long long *chunk_deps; /* bit d: the chunk waits for swap d */
    const double *shift;                  /* [nswap][3] */
    unsigned int *count;                  /* [nswap] entries stored this step (reset by the last) */
    unsigned long long *sig_x, *sig_f;    /* symmetric [HMD_HALO_MAX_SWAPS] */
    double *x, *f, *land, *sbuf;          /* symmetric */
    unsigned long long *epoch;            /* [2] forward and reverse exchanges made so far */
    unsigned int *blocks_done;            /* forward blocks that finished this exchange */
    long long wait_cycles;
    wait_error *err;
    unsigned long long *waited; /* [2] ns forward and reverse spent waiting (device) */
    unsigned delay_ns;          /* tests: most random delay before a signal (0: none) */
    int rank;
};

__device__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Tests (HMD_NVSHMEM_DELAY_US): holds the calling thread for a pseudo-random time below
 * delay_ns, different for every rank, exchange and salt, so that signals come late and in
 * every order; nothing when delay_ns is 0. */
__device__ void random_delay(unsigned delay_ns, int rank, unsigned long long step, int salt)
{
    if (delay_ns == 0) {
        return;
    }
    unsigned long long h = step * 0x9E3779B97F4A7C15ull ^ (unsigned long long)(rank + 1) << 40 ^
                           (unsigned long long)(salt + 1) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    h ^= h >> 29;
    const unsigned long long end = global_ns() + h % delay_ns;
    while (global_ns() < end) {
    }
}

/* Waits until *sig >= value, at most `cycles` clock cycles; a wait that runs out is recorded
 * in err. The time spent is added to *waited (ns) unless it is NULL. */
__device__ bool wait_for(unsigned long long *sig, unsigned long long value, long long cycles,
                         wait_error *err, int rank, int swap, long long step, int what,
                         unsigned long long *waited)
{
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> s(*sig);
    if (s.load(cuda::memory_order_acquire) >= value) {
        return true;
    }
    const long long t0 = clock64();
    const unsigned long long ns0 = waited ? global_ns() : 0;
    while (s.load(cuda::memory_order_acquire) < value) {
        if (clock64() - t0 > cycles) {
            if (atomicCAS(&err->failed, 0, 1) == 0) {
                err->rank = rank;
                err->swap = swap;
                err->step = step;
                err->what = what;
                __threadfence_system();
            }
            return false;
        }
    }
    if (waited) {
        *waited += global_ns() - ns0;
    }
    return true;
}

/* Adds n stored entries to swap s's count; the call that completes the swap releases its signal
 * to the peer (after every store before it, this thread's and those counted before). */
__device__ void count_stored(const device_plan &p, int s, unsigned n, unsigned long long step)
{
    const dswap &sw = p.swap[s];
    /* the stores before the count; the entry that completes the swap signals */
    cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
    cuda::atomic_ref<unsigned int, cuda::thread_scope_device> c(p.count[s]);
    if (c.fetch_add(n, cuda::memory_order_acq_rel) + n == (unsigned)sw.nsend) {
        c.store(0, cuda::memory_order_relaxed);
        random_delay(p.delay_ns, p.rank, step, s);
        cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
        if (sw.send_kind == MAPPED) {
            cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> sig(*sw.peer_sig_x);
            sig.store(step, cuda::memory_order_release);
        } else {
            nvshmem_double_put_signal_nbi(p.x + 3 * (size_t)sw.peer_recv_offset,
                                          p.sbuf + 3 * (size_t)sw.sbuf_offset, 3 * (size_t)sw.nsend,
                                          (uint64_t *)&p.sig_x[s], step, NVSHMEM_SIGNAL_SET, sw.to);
        }
    }
}

/* One bulk copy of `bytes` (a multiple of 16) from shared memory to global memory (16-byte
 * aligned both), waited for: its stores are done when this returns. */
__device__ void bulk_store(double *dst, const double *src, unsigned bytes)
{
#if __CUDA_ARCH__ >= 900
    const unsigned from = (unsigned)__cvta_generic_to_shared(src);
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
                 "r"(from), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    asm volatile("fence.proxy.async.global;" ::: "memory");
#else
    for (unsigned k = 0; k < bytes / sizeof(double); k++) {
        dst[k] = src[k];
    }
#endif
}

__global__ void __launch_bounds__(CHUNK) forward_kernel(device_plan p)
{
    const unsigned long long step = p.epoch[0] + 1;
    __shared__ bool ok;
    __shared__ alignas(16) double staged[3 * CHUNK]; /* HMD_NVSHMEM_BULK */
    const int nchunk = p.counts[1];
    for (int c = blockIdx.x; c < nchunk; c += gridDim.x) {
        if (threadIdx.x == 0) {
            ok = true;
            unsigned long long deps = p.chunk_deps[c];
            while (deps && ok) {
                const int d = __ffsll((long long)deps) - 1;
                deps &= deps - 1;
                ok = wait_for(&p.sig_x[d], step, p.wait_cycles, p.err, p.rank, d, step, 0,
                              blockIdx.x == 0 ? &p.waited[0] : NULL);
            }
        }
        __syncthreads();
        const int e = p.chunk_begin[c] + threadIdx.x;
        if (ok && e < p.chunk_begin[c + 1]) {
            const double *r = p.x + 3 * (size_t)p.root[e];
            double v0 = r[0], v1 = r[1], v2 = r[2];
            for (int k = p.chain_offset[e]; k < p.chain_offset[e + 1]; k++) {
                const double *sh = p.shift + 3 * p.chain[k];
                v0 += sh[0];
                v1 += sh[1];
                v2 += sh[2];
            }
            const int s = p.eswap[e];
            const dswap &sw = p.swap[s];
            const int slot = p.slot ? p.slot[e] : -1;
            double *out =
                slot >= 0              ? staged + 3 * slot
                : sw.send_kind == SELF ? p.x + 3 * (size_t)p.dst[e]
                : sw.send_kind == MAPPED
                    ? sw.peer_x + 3 * (size_t)p.dst[e]
                    : p.sbuf + 3 * ((size_t)sw.sbuf_offset + p.dst[e] - sw.peer_recv_offset);
            out[0] = v0;
            out[1] = v1;
            out[2] = v2;
            if (slot >= 0) { /* shared memory, then the async proxy reads it */
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            } else if (sw.send_kind != SELF) {
                count_stored(p, s, 1, step);
            }
        }
        if (p.slot) {
            __syncthreads();
            const int run = p.bulk_begin[c] + threadIdx.x;
            if (ok && run < p.bulk_begin[c + 1]) {
                const int4 b = p.bulk[run];
                bulk_store(p.swap[b.w].peer_x + 3 * (size_t)b.z, staged + 3 * b.x,
                           (unsigned)(3 * sizeof(double) * b.y));
                count_stored(p, b.w, (unsigned)b.y, step);
            }
        }
        __syncthreads();
    }
    /* the kernel ends when this rank's ghosts have all come */
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int s = 0; s < p.nswap; s++) {
            const dswap &sw = p.swap[s];
            if ((sw.recv_kind == MAPPED || sw.recv_kind == REMOTE) && sw.nrecv > 0 &&
                !wait_for(&p.sig_x[s], step, p.wait_cycles, p.err, p.rank, s, step, 0,
                          &p.waited[0])) {
                break;
            }
        }
    }
    /* the last block out counts the exchange (every block has read the count by then) */
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned int, cuda::thread_scope_device> done(*p.blocks_done);
        if (done.fetch_add(1, cuda::memory_order_acq_rel) + 1 == gridDim.x) {
            done.store(0, cuda::memory_order_relaxed);
            p.epoch[0] = step;
        }
    }
}

__global__ void __launch_bounds__(REVERSE_THREADS) reverse_kernel(device_plan p)
{
    const unsigned long long step = p.epoch[1] + 1;
    __shared__ bool ok;
    if (threadIdx.x == 0) {
        ok = true;
    }
    __syncthreads();
    for (int s = p.nswap - 1; s >= 0 && ok; s--) {
        const dswap &sw = p.swap[s];
        const double *ghost = p.f + 3 * (size_t)sw.recv_offset;
        /* the ghosts' forces (complete: later swaps folded into them) back to their owner */
        if (sw.recv_kind == MAPPED && sw.nrecv > 0) {
            double *dst = sw.peer_land + 3 * (size_t)sw.land_offset;
            for (int e = threadIdx.x; e < 3 * sw.nrecv; e += blockDim.x) {
                dst[e] = ghost[e];
            }
            __syncthreads();
            if (threadIdx.x == 0) {
                random_delay(p.delay_ns, p.rank, step, HMD_HALO_MAX_SWAPS + s);
                cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
                cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> sig(*sw.peer_sig_f);
                sig.store(step, cuda::memory_order_release);
            }
        } else if (sw.recv_kind == REMOTE && sw.nrecv > 0 && threadIdx.x == 0) {
            random_delay(p.delay_ns, p.rank, step, HMD_HALO_MAX_SWAPS + s);
            nvshmem_double_put_signal_nbi(p.land + 3 * (size_t)sw.land_offset, ghost,
                                          3 * (size_t)sw.nrecv, (uint64_t *)&p.sig_f[s], step,
                                          NVSHMEM_SIGNAL_SET, sw.from);
        }
        /* the forces of the ghosts this rank made for the swap, onto the atoms it sent */
        const double *val = NULL;
        if (sw.send_kind == SELF) {
            val = ghost;
        } else if ((sw.send_kind == MAPPED || sw.send_kind == REMOTE) && sw.nsend > 0) {
            if (threadIdx.x == 0) {
                ok = wait_for(&p.sig_f[s], step, p.wait_cycles, p.err, p.rank, s, step, 1,
                              &p.waited[1]);
            }
            __syncthreads();
            val = p.land + 3 * (size_t)sw.land_offset;
        }
        if (val && ok) {
            const int *send = p.send_list + sw.send_offset;
            for (int e = threadIdx.x; e < 3 * sw.nsend; e += blockDim.x) {
                p.f[3 * (size_t)send[e / 3] + e % 3] += val[e];
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        p.epoch[1] = step;
    }
}

/* The global sums: this rank's n values into slot `rank` of every rank's mailbox (two copies
 * by the parity of the sum's number, so that a fast rank cannot overwrite values not yet
 * read), then the signal of this source set to the sum's number on each; then, once every
 * source's signal has reached it, the sum of every slot in rank order. One thread. A signal
 * per source (not one count for all): a fast rank's next contribution cannot stand in for a
 * slow rank's current one. */
struct sum_plan {
    int npes, rank, n;
    double *box;                   /* symmetric [2][npes][HMD_HALO_MAX_SUM] */
    double **peer_box;             /* [npes] mapped mailbox of each rank, or NULL */
    unsigned long long *sig;       /* symmetric [npes]: the last sum each source sent here */
    unsigned long long **peer_sig; /* [npes] mapped `sig` of each rank, or NULL */
    unsigned long long *seq;       /* sums made so far (this rank's, device) */
    long long wait_cycles;
    wait_error *err;
    unsigned delay_ns; /* tests: most random delay before the signals (0: none) */
};

__global__ void sum_kernel(sum_plan p, const double *local, double *total)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) {
        return;
    }
    const unsigned long long seq = *p.seq + 1;
    const int par = (int)(seq & 1);
    const size_t slot = ((size_t)par * p.npes + p.rank) * HMD_HALO_MAX_SUM;
    /* this rank's own slot first: the source of the puts, symmetric and left alone until the
     * sum after next (local may change as soon as this kernel ends) */
    for (int c = 0; c < p.n; c++) {
        p.box[slot + c] = local[c];
    }
    random_delay(p.delay_ns, p.rank, seq, 2 * HMD_HALO_MAX_SWAPS);
    for (int q = 0; q < p.npes; q++) {
        if (q == p.rank) {
            cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> s(p.sig[q]);
            s.store(seq, cuda::memory_order_release);
        } else if (p.peer_box[q]) {
            for (int c = 0; c < p.n; c++) {
                p.peer_box[q][slot + c] = local[c];
            }
            cuda::atomic_thread_fence(cuda::memory_order_seq_cst, cuda::thread_scope_system);
            cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> s(
                p.peer_sig[q][p.rank]);
            s.store(seq, cuda::memory_order_release);
        } else {
            nvshmem_double_put_signal_nbi(p.box + slot, p.box + slot, p.n,
                                          (uint64_t *)&p.sig[p.rank], seq, NVSHMEM_SIGNAL_SET, q);
        }
    }
    for (int q = 0; q < p.npes; q++) {
        if (!wait_for(&p.sig[q], seq, p.wait_cycles, p.err, p.rank, -1, (long long)seq, 2, NULL)) {
            return;
        }
    }
    for (int c = 0; c < p.n; c++) {
        double s = 0.0;
        for (int q = 0; q < p.npes; q++) {
            s += p.box[((size_t)par * p.npes + q) * HMD_HALO_MAX_SUM + c];
        }
        total[c] = s;
    }
    *p.seq = seq;
}

/* ---- host side ---- */

/* The plan's device arrays in one allocation, filled from pinned memory by one copy queued on
 * the stream: a list step's set-up costs one transfer instead of a synchronous copy per array.
 * Each array keeps a region of its own with room to grow, so that the arrays stay where they
 * are (a recorded step holds their addresses) until one outgrows its region. */
struct plan_arena {
    static constexpr int N = 13;
    size_t cap[N] = {}, off[N] = {}; /* bytes of each array's region, and where it starts */
    size_t size = 0;                 /* bytes of the regions */
    char *dev = nullptr, *host = nullptr;
    cudaEvent_t copied = nullptr; /* the last copy out of `host` is done */
};

/* One array of the arena: n elements of `size` bytes from src; *dst gets its device address. */
struct arena_piece {
    const void *src;
    size_t n, size;
    const void **dst;
};

template <typename T> arena_piece piece(const std::vector<T> &v, const T **dst)
{
    return arena_piece{v.data(), v.size(), sizeof(T), (const void **)dst};
}

/* Copies the pieces into the arena's regions on `stream` (laid out anew, and *moved set, when a
 * piece outgrew its region); bytes follows the device memory held. */
int arena_upload(plan_arena &a, const arena_piece *pieces, int n, cudaStream_t stream,
                 size_t &bytes, bool *moved)
{
    bool fits = a.dev != nullptr;
    for (int k = 0; k < n; k++) {
        fits = fits && pieces[k].n * pieces[k].size <= a.cap[k];
    }
    *moved = !fits;
    if (!fits) {
        if (a.copied) {
            CHECK(cudaEventSynchronize(a.copied));
        }
        cudaFree(a.dev);
        cudaFreeHost(a.host);
        bytes -= a.size;
        a.dev = a.host = nullptr;
        a.size = 0;
        for (int k = 0; k < n; k++) {
            const size_t b = pieces[k].n * pieces[k].size;
            a.cap[k] = (b + b / 2 + 256 + 15) & ~(size_t)15;
            a.off[k] = a.size;
            a.size += a.cap[k];
        }
        CHECK(cudaMalloc((void **)&a.dev, a.size));
        CHECK(cudaMallocHost((void **)&a.host, a.size));
        bytes += a.size;
        if (!a.copied) {
            CHECK(cudaEventCreateWithFlags(&a.copied, cudaEventDisableTiming));
        }
    } else {
        CHECK(cudaEventSynchronize(a.copied)); /* the last copy has left `host` */
    }
    size_t end = 0;
    for (int k = 0; k < n; k++) {
        const size_t b = pieces[k].n * pieces[k].size;
        if (b > 0) {
            memcpy(a.host + a.off[k], pieces[k].src, b);
            end = a.off[k] + b;
        }
        *pieces[k].dst = a.dev + a.off[k];
    }
    if (end > 0) {
        CHECK(cudaMemcpyAsync(a.dev, a.host, end, cudaMemcpyHostToDevice, stream));
    }
    CHECK(cudaEventRecord(a.copied, stream));
    return HMD_OK;
}

void arena_free(plan_arena &a)
{
    cudaFree(a.dev);
    cudaFreeHost(a.host);
    if (a.copied) {
        cudaEventDestroy(a.copied);
    }
    a = plan_arena{};
}

struct nvshmem_transport {
    int rank, npes;
    const hmd_halo_plan *plan;
    device_plan dp;
    sum_plan sp;
    plan_arena arena; /* device_plan's arrays */
    bool use_bulk;    /* HMD_NVSHMEM_BULK */
    hmd_cuda_halo_shifts shifts;
    unsigned int *count;        /* device [HMD_HALO_MAX_SWAPS] */
    unsigned long long *seq;    /* device [1] sums made */
    unsigned long long *epoch;  /* device [2] forwards and reverses made */
    unsigned int *blocks_done;  /* device [1] */
    unsigned long long *waited; /* device [2] ns forward and reverse waited */
    double **peer_box;          /* device [npes] */
    unsigned long long **peer_sig_sum;
    long long wait_cycles;
    unsigned delay_ns; /* HMD_NVSHMEM_DELAY_US (tests) */
    /* symmetric */
    unsigned long long *sig_x, *sig_f, *sig_sum;
    double *box, *land, *sbuf;
    size_t cap_land, cap_sbuf; /* atoms (the same on every PE) */
    wait_error *err, *err_dev; /* mapped host memory */
    size_t bytes;
    unsigned long generation;
};

long long wait_cycles()
{
    const char *v = getenv("HMD_NVSHMEM_WAIT_S");
    const double s = v && atof(v) > 0 ? atof(v) : 60.0;
    int rate_khz = 0, dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, dev);
    return (long long)(s * 1e3 * (rate_khz > 0 ? rate_khz : 2000000));
}

/* A collective, same-size symmetric allocation of n elements of T (all PEs call it). Not
 * cleared: a peer may write into it as soon as the allocation's barrier is passed. */
template <typename T> T *sym_alloc(size_t n)
{
    return (T *)nvshmem_malloc(std::max<size_t>(n, 1) * sizeof(T));
}

/* A symmetric array that holds at least n atoms of 3 doubles (collective: n is the same on
 * every rank). */
int reserve_sym(nvshmem_transport *t, double **p, size_t *cap, size_t n)
{
    if (n <= *cap && *p) {
        return HMD_OK;
    }
    CHECK(cudaDeviceSynchronize());
    if (*p) {
        nvshmem_free(*p);
        t->bytes -= *cap * 3 * sizeof(double);
    }
    const size_t c = n + n / 2 + 64;
    *p = sym_alloc<double>(3 * c);
    if (!*p) {
        *cap = 0;
        return hmd_error_set(HMD_ENOMEM,
                             "NVSHMEM: no room on the symmetric heap for %zu atoms "
                             "(NVSHMEM_SYMMETRIC_SIZE)",
                             c);
    }
    *cap = c;
    t->bytes += c * 3 * sizeof(double);
    t->generation++;
    return HMD_OK;
}

/* The entries this rank sends, resolved through this rank's own swaps to their roots. */
struct flat {
    std::vector<int> root, dst, eswap, chain_offset, chain, chunk_begin;
    std::vector<unsigned long long> chunk_deps;
    std::vector<int> slot, bulk_begin; /* device_plan's, with bulk copies */
    std::vector<int4> bulk;
};

/* The bulk copies of the flattened entries (device_plan slot, bulk_begin, bulk): in each chunk,
 * every run of entries of one swap into a mapped peer (mapped[s]) with consecutive ghost slots
 * copies from its first even slot an even number of entries, staged at even shared slots. */
void plan_bulk(const std::vector<bool> &mapped, flat &f)
{
    f.slot.assign(f.root.size(), -1);
    f.bulk_begin.assign(1, 0);
    f.bulk.clear();
    for (size_t c = 0; c + 1 < f.chunk_begin.size(); c++) {
        int next = 0; /* the chunk's next free shared slot (stays even) */
        for (int r0 = f.chunk_begin[c], r1; r0 < f.chunk_begin[c + 1]; r0 = r1) {
            r1 = r0 + 1;
            while (r1 < f.chunk_begin[c + 1] && f.eswap[r1] == f.eswap[r0] &&
                   f.dst[r1] == f.dst[r1 - 1] + 1) {
                r1++;
            }
            const int first = r0 + (f.dst[r0] & 1), n = (r1 - first) & ~1;
            if (!mapped[f.eswap[r0]] || n < 2) {
                continue;
            }
            for (int k = 0; k < n; k++) {
                f.slot[first + k] = next + k;
            }
            f.bulk.push_back(make_int4(next, n, f.dst[first], f.eswap[r0]));
            next += n;
        }
        f.bulk_begin.push_back((int)f.bulk.size());
    }
}

int flatten(const hmd_halo_plan *plan, int rank, const std::vector<int> &peer_recv, flat &out)
{
    const int nlocal = plan->nlocal;
    /* the swap that made each ghost, and each ghost's root, dependency and chain */
    int nall = nlocal;
    for (int s = 0; s < plan->nswap; s++) {
        nall = std::max(nall, plan->swap[s].recv_offset + plan->swap[s].nrecv);
    }
    const int nghost = nall - nlocal;
    std::vector<int> g_root(nghost), g_dep(nghost), g_off(nghost + 1, 0), g_chain;
    std::vector<int> g_swap(nghost, -1);
    for (int s = 0; s < plan->nswap; s++) {
        const hmd_halo_swap *sw = &plan->swap[s];
        for (int n = 0; n < sw->nrecv; n++) {
            g_swap[sw->recv_offset + n - nlocal] = s;
        }
    }
    /* ghosts of a swap that stays here are images of earlier atoms: resolve in index order */
    struct res {
        int root, dep;
        std::vector<int> chain;
    };
    auto resolve = [&](int k, res &r) {
        if (k < nlocal) {
            r = {k, -1, {}};
            return;
        }
        const int g = k - nlocal;
        r.root = g_root[g];
        r.dep = g_dep[g];
        r.chain.assign(g_chain.begin() + g_off[g], g_chain.begin() + g_off[g + 1]);
    };
    for (int g = 0; g < nghost; g++) {
        const int s = g_swap[g];
        const hmd_halo_swap *sw = &plan->swap[s];
        res r;
        if (sw->to == rank && sw->from == rank) {
            resolve(plan->send_list[sw->send_offset + (nlocal + g - sw->recv_offset)], r);
            r.chain.push_back(s);
        } else {
            r = {nlocal + g, s, {}}; /* delivered by another rank */
        }
        g_root[g] = r.root;
        g_dep[g] = r.dep;
        g_chain.insert(g_chain.end(), r.chain.begin(), r.chain.end());
        g_off[g + 1] = (int)g_chain.size();
    }
    /* every entry sent, with its level (its dependency + 1; home roots 0) */
    struct entry {
        int level, swap, n, root;
        std::vector<int> chain;
    };
    std::vector<entry> all;
    for (int s = 0; s < plan->nswap; s++) {
        const hmd_halo_swap *sw = &plan->swap[s];
        if (sw->to < 0) {
            continue;
        }
        for (int n = 0; n < sw->nsend; n++) {
            res r;
            resolve(plan->send_list[sw->send_offset + n], r);
            r.chain.push_back(s);
            all.push_back({r.dep + 1, s, n, r.root, r.chain});
        }
    }
    std::stable_sort(all.begin(), all.end(), [](const entry &a, const entry &b) {
        return a.level != b.level ? a.level < b.level : a.swap < b.swap;
    });
    out = flat{};
    out.chain_offset.push_back(0);
    for (size_t e = 0; e < all.size(); e++) {
        const entry &en = all[e];
        const hmd_halo_swap *sw = &plan->swap[en.swap];
        const bool self = sw->to == rank && sw->from == rank;
        out.root.push_back(en.root);
        out.dst.push_back((self ? sw->recv_offset : peer_recv[en.swap]) + en.n);
        out.eswap.push_back(en.swap);
        out.chain.insert(out.chain.end(), en.chain.begin(), en.chain.end());
        out.chain_offset.push_back((int)out.chain.size());
        /* a chunk holds entries of one level only: a chunk waiting for swap d must not hold
         * entries that others wait for before d can arrive (home entries, earlier levels) */
        if (e == 0 || (int)e - out.chunk_begin.back() == CHUNK || en.level != all[e - 1].level) {
            out.chunk_begin.push_back((int)e);
            out.chunk_deps.push_back(en.level > 0 ? 1ull << (en.level - 1) : 0);
        }
    }
    out.chunk_begin.push_back((int)all.size());
    return HMD_OK;
}

int nv_setup(void *self, const hmd_halo_arrays *a)
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    const hmd_halo_plan *plan = a->plan;
    t->plan = plan;
    const int me = t->rank;
    if (!a->x || nvshmem_ptr(a->x, me) == NULL || nvshmem_ptr(a->f, me) == NULL) {
        return hmd_error_set(HMD_ESOFTWARE, "halo-transport = nvshmem: positions and forces are "
                                            "not on the symmetric heap");
    }
    /* the receiver's ghost slots of every swap: each rank tells the rank it receives from */
    std::vector<int> peer_recv(plan->nswap, 0), land_off(plan->nswap), sbuf_off(plan->nswap);
    /* [2 s] entries swap s sends, [2 s + 1] those it sends to another rank: their largest over
     * the ranks sizes the landing and send slices, at the same place on every rank */
    std::vector<int> most(2 * (size_t)plan->nswap);
    std::vector<int> theirs(plan->nswap, 0);
    std::vector<hmd_comm_pair> pairs(plan->nswap);
    for (int s = 0; s < plan->nswap; s++) { /* all at once: one round of messages */
        const hmd_halo_swap *sw = &plan->swap[s];
        pairs[s] = {sw->from, &sw->recv_offset, sw->from < 0 ? 0 : sizeof(int),
                    sw->to,   &theirs[s],       sw->to < 0 ? 0 : sizeof(int)};
        most[2 * s] = sw->nsend;
        most[2 * s + 1] = sw->to >= 0 && sw->to != me ? sw->nsend : 0;
    }
    hmd_comm_exchange_all(pairs.data(), plan->nswap, HMD_TAG_ALL_FORWARD);
    for (int s = 0; s < plan->nswap; s++) {
        peer_recv[s] = plan->swap[s].to == me ? plan->swap[s].recv_offset : theirs[s];
    }
    hmd_comm_max_int(most.data(), 2 * plan->nswap);
    int land = 0, sbuf = 0;
    for (int s = 0; s < plan->nswap; s++) {
        land_off[s] = land;
        land += most[2 * s];
        sbuf_off[s] = sbuf;
        sbuf += most[2 * s + 1];
    }
    int rc = reserve_sym(t, &t->land, &t->cap_land, (size_t)land);
    rc = rc ? rc : reserve_sym(t, &t->sbuf, &t->cap_sbuf, (size_t)sbuf);
    if (rc) {
        return rc;
    }
    std::vector<dswap> sw(plan->nswap);
    for (int s = 0; s < plan->nswap; s++) {
        const hmd_halo_swap *p = &plan->swap[s];
        dswap &d = sw[s];
        d = dswap{};
        auto kind = [&](int pe, double *remote_base) {
            return pe < 0 ? NONE : pe == me ? SELF : remote_base ? MAPPED : REMOTE;
        };
        d.to = p->to;
        d.from = p->from;
        d.peer_x = p->to >= 0 && p->to != me ? (double *)nvshmem_ptr(a->x, p->to) : NULL;
        d.peer_land =
            p->from >= 0 && p->from != me ? (double *)nvshmem_ptr(t->land, p->from) : NULL;
        d.send_kind = kind(p->to, d.peer_x);
        d.recv_kind = kind(p->from, d.peer_land);
        if (p->to == me && p->from != me) {
            d.send_kind = d.recv_kind = REMOTE; /* a rank cannot be its own peer one way only */
        }
        d.peer_sig_x =
            d.send_kind == MAPPED ? (unsigned long long *)nvshmem_ptr(t->sig_x + s, p->to) : NULL;
        d.peer_sig_f =
            d.recv_kind == MAPPED ? (unsigned long long *)nvshmem_ptr(t->sig_f + s, p->from) : NULL;
        d.nsend = p->nsend;
        d.nrecv = p->nrecv;
        d.send_offset = p->send_offset;
        d.recv_offset = p->recv_offset;
        d.peer_recv_offset = peer_recv[s];
        d.land_offset = land_off[s];
        d.sbuf_offset = sbuf_off[s];
    }
    flat fl;
    rc = flatten(plan, me, peer_recv, fl);
    if (t->use_bulk) {
        std::vector<bool> mapped(plan->nswap);
        for (int s = 0; s < plan->nswap; s++) {
            mapped[s] = sw[s].send_kind == MAPPED;
        }
        plan_bulk(mapped, fl);
    }
    if (rc) {
        return rc;
    }
    const std::vector<int> send(plan->send_list, plan->send_list + plan->nsend_total);
    const std::vector<int> counts = {(int)fl.root.size(), (int)fl.chunk_deps.size()};
    device_plan &dp = t->dp;
    const arena_piece pieces[plan_arena::N] = {
        piece(sw, &dp.swap),
        piece(fl.root, &dp.root),
        piece(fl.dst, &dp.dst),
        piece(fl.eswap, &dp.eswap),
        piece(fl.chain_offset, &dp.chain_offset),
        piece(fl.chain, &dp.chain),
        piece(send, &dp.send_list),
        piece(fl.chunk_deps, &dp.chunk_deps),
        piece(fl.chunk_begin, &dp.chunk_begin),
        piece(fl.slot, &dp.slot),
        piece(fl.bulk_begin, &dp.bulk_begin),
        piece(fl.bulk, &dp.bulk),
        piece(counts, &dp.counts),
    };
    bool moved = false;
    rc = arena_upload(t->arena, pieces, plan_arena::N, (cudaStream_t)a->stream, t->bytes, &moved);
    if (rc) {
        return rc;
    }
    if (!t->use_bulk) {
        dp.slot = NULL;
    }
    /* the swap count is a kernel argument: a recorded step holds it */
    if (moved || plan->nswap != dp.nswap) {
        t->generation++;
    }
    dp.nswap = plan->nswap;
    dp.shift = t->shifts.dev;
    dp.count = t->count;
    dp.sig_x = t->sig_x;
    dp.sig_f = t->sig_f;
    dp.x = a->x;
    dp.f = a->f;
    dp.land = t->land;
    dp.sbuf = t->sbuf;
    dp.epoch = t->epoch;
    dp.blocks_done = t->blocks_done;
    dp.waited = t->waited;
    dp.wait_cycles = t->wait_cycles;
    dp.delay_ns = t->delay_ns;
    dp.err = t->err_dev;
    dp.rank = me;
    t->shifts.valid = false;
    return hmd_cuda_halo_shifts_update(&t->shifts, plan, a->box, (cudaStream_t)a->stream);
}

int nv_forward(void *self, double *x, const hmd_box *box, void *stream)
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    cudaStream_t st = (cudaStream_t)stream;
    if (x != t->dp.x) {
        return hmd_error_set(HMD_ESOFTWARE, "halo-transport = nvshmem: forward of an array the "
                                            "set-up was not given");
    }
    int rc = hmd_cuda_halo_shifts_update(&t->shifts, t->plan, box, st);
    if (rc) {
        return rc;
    }
    forward_kernel<<<FORWARD_BLOCKS, CHUNK, 0, st>>>(t->dp);
    CHECK(cudaGetLastError());
    return HMD_OK;
}

int nv_reverse(void *self, double *v, int ncomp, void *stream)
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    if (v != t->dp.f || ncomp != 3) {
        return hmd_error_set(HMD_ENOTSUP, "halo-transport = nvshmem: reverse of other values "
                                          "than the forces the set-up was given");
    }
    reverse_kernel<<<1, REVERSE_THREADS, 0, (cudaStream_t)stream>>>(t->dp);
    CHECK(cudaGetLastError());
    return HMD_OK;
}

int nv_sum(void *self, const double *local, double *total, int n, void *stream)
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    if (n > HMD_HALO_MAX_SUM) {
        return hmd_error_set(HMD_ESOFTWARE, "halo: a global sum of %d values (at most %d)", n,
                             HMD_HALO_MAX_SUM);
    }
    sum_plan p = t->sp;
    p.n = n;
    sum_kernel<<<1, 32, 0, (cudaStream_t)stream>>>(p, local, total);
    CHECK(cudaGetLastError());
    return HMD_OK;
}

int nv_check(void *self)
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    wait_error e;
    __sync_synchronize();
    memcpy(&e, (const void *)t->err, sizeof e); /* mapped memory the device wrote */
    if (!e.failed) {
        return HMD_OK;
    }
    static const char *what[] = {"positions", "forces", "a global sum"};
    const hmd_halo_swap *sw =
        e.swap >= 0 && t->plan && e.swap < t->plan->nswap ? &t->plan->swap[e.swap] : NULL;
    return hmd_error_set(HMD_ESOFTWARE,
                         "halo-transport = nvshmem: rank %d waited more than %g s for %s "
                         "(swap %d, from rank %d, exchange %lld): another rank stopped or "
                         "hangs (HMD_NVSHMEM_WAIT_S sets the limit)",
                         e.rank,
                         getenv("HMD_NVSHMEM_WAIT_S") ? atof(getenv("HMD_NVSHMEM_WAIT_S")) : 60.0,
                         what[e.what < 0 || e.what > 2 ? 0 : e.what], e.swap,
                         sw ? (e.what == 1 ? sw->to : sw->from) : -1, e.step);
}

size_t nv_device_bytes(const void *self)
{
    return ((const nvshmem_transport *)self)->bytes;
}

unsigned long nv_generation(const void *self)
{
    return ((const nvshmem_transport *)self)->generation;
}

void nv_destroy(void *self)
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    if (!t) {
        return;
    }
    cudaDeviceSynchronize();
    void *plain[] = {t->count,    t->seq,          t->epoch, t->blocks_done,
                     t->peer_box, t->peer_sig_sum, t->waited};
    arena_free(t->arena);
    for (void *p : plain) {
        cudaFree(p);
    }
    /* symmetric: collective, every rank destroys its transport at the same point */
    void *sym[] = {t->sig_x, t->sig_f, t->sig_sum, t->box, t->land, t->sbuf};
    for (void *p : sym) {
        if (p) {
            nvshmem_free(p);
        }
    }
    cudaFreeHost(t->err);
    hmd_cuda_halo_shifts_free(&t->shifts);
    delete t;
}

bool nv_waited(void *self, double waited[2])
{
    nvshmem_transport *t = (nvshmem_transport *)self;
    unsigned long long ns[2] = {0, 0};
    if (cudaMemcpy(ns, t->waited, sizeof ns, cudaMemcpyDeviceToHost) != cudaSuccess) {
        return false;
    }
    waited[0] = 1e-9 * (double)ns[0];
    waited[1] = 1e-9 * (double)ns[1];
    return true;
}

const hmd_halo_transport_ops nv_ops = {
    "nvshmem",       true,          true,       nv_setup, nv_forward, nv_reverse, nv_sum,
    nv_device_bytes, nv_generation, nv_destroy, nv_check, nv_waited,
};

template <typename T> int dev_alloc(nvshmem_transport *t, T **p, size_t n)
{
    CHECK(cudaMalloc((void **)p, n * sizeof(T)));
    CHECK(cudaMemset(*p, 0, n * sizeof(T)));
    t->bytes += n * sizeof(T);
    return HMD_OK;
}

int open_transport(nvshmem_transport *t)
{
    const int npes = t->npes;
    int rc = hmd_cuda_halo_shifts_init(&t->shifts);
    t->bytes += rc ? 0 : HMD_CUDA_HALO_SHIFTS_BYTES;
    rc = rc ? rc : dev_alloc(t, &t->count, HMD_HALO_MAX_SWAPS);
    rc = rc ? rc : dev_alloc(t, &t->seq, 1);
    rc = rc ? rc : dev_alloc(t, &t->epoch, 2);
    rc = rc ? rc : dev_alloc(t, &t->blocks_done, 1);
    rc = rc ? rc : dev_alloc(t, &t->waited, 2);
    rc = rc ? rc : dev_alloc(t, &t->peer_box, npes);
    rc = rc ? rc : dev_alloc(t, &t->peer_sig_sum, npes);
    rc = hmd_comm_agree(rc); /* the symmetric allocations below are collective */
    if (rc) {
        return rc;
    }
    t->sig_x = sym_alloc<unsigned long long>(HMD_HALO_MAX_SWAPS);
    t->sig_f = sym_alloc<unsigned long long>(HMD_HALO_MAX_SWAPS);
    t->sig_sum = sym_alloc<unsigned long long>(npes);
    t->box = sym_alloc<double>(2 * (size_t)npes * HMD_HALO_MAX_SUM);
    if (!t->sig_x || !t->sig_f || !t->sig_sum || !t->box) {
        return hmd_error_set(HMD_ENOMEM, "NVSHMEM: no room on the symmetric heap for the halo's "
                                         "signals (NVSHMEM_SYMMETRIC_SIZE)");
    }
    /* zero before the barrier below: no rank signals before every rank has cleared */
    CHECK(cudaMemset(t->sig_x, 0, HMD_HALO_MAX_SWAPS * sizeof(unsigned long long)));
    CHECK(cudaMemset(t->sig_f, 0, HMD_HALO_MAX_SWAPS * sizeof(unsigned long long)));
    CHECK(cudaMemset(t->sig_sum, 0, npes * sizeof(unsigned long long)));
    CHECK(cudaDeviceSynchronize());
    t->bytes += (2 * HMD_HALO_MAX_SWAPS + npes) * sizeof(unsigned long long) +
                2 * (size_t)npes * HMD_HALO_MAX_SUM * sizeof(double);
    std::vector<double *> box(npes);
    std::vector<unsigned long long *> sig(npes);
    for (int q = 0; q < npes; q++) {
        box[q] = (double *)nvshmem_ptr(t->box, q);
        sig[q] = (unsigned long long *)nvshmem_ptr(t->sig_sum, q);
        if (!box[q] || !sig[q]) {
            box[q] = NULL;
            sig[q] = NULL;
        }
    }
    CHECK(cudaMemcpy(t->peer_box, box.data(), npes * sizeof(double *), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(t->peer_sig_sum, sig.data(), npes * sizeof(unsigned long long *),
                     cudaMemcpyHostToDevice));
    CHECK(cudaHostAlloc((void **)&t->err, sizeof(wait_error), cudaHostAllocMapped));
    memset(t->err, 0, sizeof(wait_error));
    CHECK(cudaHostGetDevicePointer((void **)&t->err_dev, t->err, 0));
    t->wait_cycles = wait_cycles();
    const char *delay = getenv("HMD_NVSHMEM_DELAY_US");
    t->delay_ns = delay && atof(delay) > 0 ? (unsigned)(1e3 * std::min(atof(delay), 1e6)) : 0;
    const char *bulk = getenv("HMD_NVSHMEM_BULK");
    t->use_bulk = bulk && !strcmp(bulk, "1");
    t->sp = sum_plan{npes,       t->rank,         0,      t->box,         t->peer_box,
                     t->sig_sum, t->peer_sig_sum, t->seq, t->wait_cycles, t->err_dev,
                     t->delay_ns};
    nvshmem_barrier_all(); /* every rank's signals are zero before anyone signals */
    return HMD_OK;
}

} // namespace

extern "C" bool hmd_nvshmem_halo_bulk(const struct hmd_halo_transport *t)
{
    return t->ops == &nv_ops && ((const nvshmem_transport *)t->self)->use_bulk;
}

extern "C" int hmd_nvshmem_halo_open(struct hmd_halo_transport *out)
{
    nvshmem_transport *t = new nvshmem_transport();
    t->rank = nvshmem_my_pe();
    t->npes = nvshmem_n_pes();
    out->ops = &nv_ops;
    out->self = t;
    const int rc = open_transport(t);
    if (rc) {
        hmd_halo_transport_close(out);
    }
    return rc;
}
