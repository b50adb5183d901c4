/* NVSHMEM's runtime for halomd (nvshmem_api.h): started over halomd's MPI by a unique id, and
 * the symmetric heap as the device state's heap. */
#include "nvshmem/nvshmem_api.h"

#include <cuda_runtime.h>
#include <nvshmem.h>
#include <nvshmemx.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

extern "C" {
#include "comm/comm.h"
}

namespace
{

bool started;

void *heap_alloc(size_t bytes, void *ctx)
{
    (void)ctx;
    return nvshmem_malloc(bytes);
}

void heap_free(void *p, void *ctx)
{
    (void)ctx;
    nvshmem_free(p);
}

/* Where the ranks run, from each rank's host and PCI bus id (right whatever each rank sees: all
 * GPUs, or one through CUDA_VISIBLE_DEVICES). Collective; every rank gets the same answer. */
struct placement {
    int ranks_per_gpu; /* the most ranks that share one GPU */
    bool one_host;     /* every rank on the same host */
};

placement place_ranks()
{
    constexpr size_t KEY = 128;
    char key[KEY] = "", bus[32] = "?";
    int dev = 0;
    cudaGetDevice(&dev);
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess) {
        cudaGetLastError();
    }
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(key, sizeof key, "%s/%s", host, bus);
    const int n = hmd_comm_size();
    std::vector<char> all((size_t)n * KEY);
    std::vector<size_t> counts(n);
    hmd_comm_allgatherv(key, KEY, all.data(), counts.data());
    placement p = {1, true};
    const size_t hostlen = strlen(host) + 1; /* the key's "host/" */
    for (int r = 0; r < n; r++) {
        int same = 0;
        for (int q = 0; q < n; q++) {
            same += !strncmp(&all[(size_t)r * KEY], &all[(size_t)q * KEY], KEY);
        }
        p.ranks_per_gpu = std::max(p.ranks_per_gpu, same);
        p.one_host = p.one_host && !strncmp(&all[(size_t)r * KEY], key, hostlen);
    }
    return p;
}

/* CPUs this process may run on (1 when mpirun bound it to one core). */
int cpus_allowed()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

} // namespace

extern "C" int hmd_nvshmem_init(char *what, size_t len)
{
    if (started) {
        return HMD_OK;
    }
    const placement where = place_ranks();
    const int shared = where.ranks_per_gpu;
    const char *pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
    int mps = pipe != NULL && pipe[0] != 0;
    /* under MPS the MPS server must be reachable; without, several ranks on one GPU time-slice */
    hmd_comm_max_int(&mps, 1);
    if (shared > 1 && !mps) {
        return hmd_comm_agree(hmd_error_set(
            HMD_ENOTSUP,
            "halo-transport = nvshmem: %d ranks share a GPU without MPS, where NVSHMEM's waits "
            "progress only by time slicing; start MPS (nvidia-cuda-mps-control -d, with "
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE <= %d per rank), use one rank per GPU, or "
            "halo-transport = mpi",
            shared, 100 / shared));
    }
    /* NVSHMEM's proxy thread busy-polls for the network transports; on one host the peers are
     * reached through the GPU alone (our waits have their own bounds), and the thread would
     * take half of a rank that mpirun bound to one core (Open MPI binds to cores for <= 2
     * ranks): every host step of that rank then runs at the scheduler's pace */
    const bool proxy_off = where.one_host && !getenv("NVSHMEM_DISABLE_LOCAL_ONLY_PROXY");
    if (proxy_off) {
        setenv("NVSHMEM_DISABLE_LOCAL_ONLY_PROXY", "1", 0);
    }
    int lone_core = !where.one_host && cpus_allowed() == 1;
    hmd_comm_max_int(&lone_core, 1);
    cudaFree(0); /* a context first: under MPS NVSHMEM's init fails without one */
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (hmd_comm_rank() == 0) {
        nvshmemx_get_uniqueid(&id);
    }
    hmd_comm_bcast(&id, sizeof id, 0);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(hmd_comm_rank(), hmd_comm_size(), &id, &attr);
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr); /* exits the job on failure */
    started = true;
    const int status = nvshmemx_init_status();
    const bool full = status == NVSHMEM_STATUS_FULL_MPG;
    if (what) {
        snprintf(what, len, "NVSHMEM %d.%d.%d, %d PEs, %s, %s", NVSHMEM_VENDOR_MAJOR_VERSION,
                 NVSHMEM_VENDOR_MINOR_VERSION, NVSHMEM_VENDOR_PATCH_VERSION, nvshmem_n_pes(),
                 shared > 1 ? (full ? "full multi-process support on shared GPUs (MPS)"
                                    : "LIMITED multi-process support")
                            : "one PE per GPU",
                 proxy_off   ? "no proxy thread (one host)"
                 : lone_core ? "proxy thread on the rank's only core: slow host steps (mpirun "
                               "--bind-to none, or --map-by ...:PE=2)"
                             : "proxy thread");
    }
    if (shared > 1 && !full) {
        return hmd_comm_agree(hmd_error_set(
            HMD_ENOTSUP,
            "halo-transport = nvshmem: NVSHMEM has only limited support for the %d ranks that "
            "share a GPU (the MPS active thread percentages of a GPU's ranks must add up to at "
            "most 100: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d)",
            shared, 100 / shared));
    }
    return HMD_OK;
}

extern "C" void hmd_nvshmem_finalize(void)
{
    if (started) {
        nvshmem_finalize();
        started = false;
    }
}

extern "C" struct hmd_cuda_heap hmd_nvshmem_heap(void)
{
    return hmd_cuda_heap{heap_alloc, heap_free, NULL};
}
