/* MPI_COMM_WORLD collectives (built when HMD_HAVE_MPI is 1). Every MPI call is checked; a
 * failure aborts the whole job so that no rank waits forever. */
#include "comm/comm.h"

#include <limits.h>
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> /* Open MPI's MPIX_Query_cuda_support */
#endif
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int check_rc_ = (call);                                                                    \
        if (check_rc_ != MPI_SUCCESS) {                                                            \
            char check_msg_[MPI_MAX_ERROR_STRING];                                                 \
            int check_len_ = 0;                                                                    \
            MPI_Error_string(check_rc_, check_msg_, &check_len_);                                  \
            fprintf(stderr, "halomd: fatal MPI error in %s (%s:%d): %s\n", #call, __FILE__,        \
                    __LINE__, check_msg_);                                                         \
            MPI_Abort(MPI_COMM_WORLD, 70);                                                         \
        }                                                                                          \
    } while (0)

static int world_rank, world_size = 1;
static int local_rank, local_size = 1; /* among the ranks of this node */
static int active; /* MPI initialised by hmd_comm_init: without it, one rank (library use) */

/* Whether a process manager started this process (mpirun or mpiexec of Open MPI, MPICH, Intel
 * MPI or MVAPICH, Slurm's srun): each sets one of these in its processes' environment. */
static int launched_by_mpi(void)
{
    static const char *const vars[] = {
        "OMPI_COMM_WORLD_SIZE", "PMI_RANK",           "PMI_SIZE", "PMIX_RANK",
        "MPI_LOCALNRANKS",      "MV2_COMM_WORLD_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        if (getenv(vars[i])) {
            return 1;
        }
    }
    return 0;
}

void hmd_comm_init(int *argc, char ***argv)
{
    if (!launched_by_mpi()) {
        /* one rank, without MPI: Open MPI's start of a lone process spawns a daemon and makes
         * session directories under TMPDIR, and processes that start together race to create
         * the same one (seen as "mkdir /tmp/ompi.HOST.UID: File exists" in parallel tests) */
        return;
    }
    CHECK(MPI_Init(argc, argv));
    CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
    CHECK(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
    MPI_Comm node;
    CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL,
                              &node));
    CHECK(MPI_Comm_rank(node, &local_rank));
    CHECK(MPI_Comm_size(node, &local_size));
    CHECK(MPI_Comm_free(&node));
    active = 1;
}

void hmd_comm_finalize(void)
{
    if (active) {
        MPI_Finalize();
    }
    active = 0;
}

int hmd_comm_rank(void)
{
    return world_rank;
}

int hmd_comm_size(void)
{
    return world_size;
}

int hmd_comm_local_rank(void)
{
    return local_rank;
}

int hmd_comm_local_size(void)
{
    return local_size;
}

int hmd_comm_cuda_aware(void)
{
    const char *env = getenv("HMD_MPI_CUDA_AWARE");
    if (env && (!strcmp(env, "0") || !strcmp(env, "1"))) {
        return env[0] == '1';
    }
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return active && MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

_Noreturn void hmd_comm_abort(int code)
{
    if (active) {
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    exit(code);
}

void hmd_comm_sum(double *buf, int n)
{
    if (!active) {
        return;
    }
    CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
}

void hmd_comm_max(double *buf, int n)
{
    if (!active) {
        return;
    }
    CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
}

void hmd_comm_sum_i64(int64_t *buf, int n)
{
    if (!active) {
        return;
    }
    CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
}

void hmd_comm_max_int(int *buf, int n)
{
    if (!active) {
        return;
    }
    CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
}

/* MPI counts are int: large transfers go in pieces of at most INT_MAX bytes. */
void hmd_comm_bcast(void *buf, size_t bytes, int root)
{
    if (!active) {
        return;
    }
    char *p = buf;
    while (bytes > 0) {
        int piece = bytes > (size_t)INT_MAX ? INT_MAX : (int)bytes;
        CHECK(MPI_Bcast(p, piece, MPI_BYTE, root, MPI_COMM_WORLD));
        p += piece;
        bytes -= (size_t)piece;
    }
}

size_t hmd_comm_exchange(int to, const void *sendbuf, size_t nsend, int from, void *recvbuf,
                         size_t recv_cap, int tag)
{
    if (!active && (to < 0 || from < 0)) {
        return 0;
    }
    if (!active || (to == world_rank && from == world_rank)) {
        size_t n = nsend < recv_cap ? nsend : recv_cap;
        memmove(recvbuf, sendbuf, n);
        return n;
    }
    if (nsend > (size_t)INT_MAX || recv_cap > (size_t)INT_MAX) {
        fprintf(stderr, "halomd: fatal: halo message of more than 2 GB\n");
        MPI_Abort(MPI_COMM_WORLD, 70);
    }
    MPI_Request req;
    MPI_Status status;
    int got = 0;
    const int peer_from = from < 0 ? MPI_PROC_NULL : from, peer_to = to < 0 ? MPI_PROC_NULL : to;
    CHECK(MPI_Irecv(recvbuf, (int)recv_cap, MPI_BYTE, peer_from, tag, MPI_COMM_WORLD, &req));
    CHECK(MPI_Send(sendbuf, (int)nsend, MPI_BYTE, peer_to, tag, MPI_COMM_WORLD));
    CHECK(MPI_Wait(&req, &status));
    CHECK(MPI_Get_count(&status, MPI_BYTE, &got));
    return (size_t)got;
}

void hmd_comm_exchange_all(const struct hmd_comm_pair *pairs, int n, int tag)
{
    enum { STACK = 32 };
    MPI_Request stack[2 * STACK], *req = stack;
    if (n > HMD_TAG_ALL_SPAN || (n > STACK && !(req = malloc(sizeof *req * 2 * (size_t)n)))) {
        fprintf(stderr, "halomd: fatal: %d halo messages at once\n", n);
        MPI_Abort(MPI_COMM_WORLD, 70);
    }
    int nreq = 0;
    for (int k = 0; k < n; k++) { /* the receives first, then the sends */
        const struct hmd_comm_pair *p = &pairs[k];
        if (!active || (p->to == world_rank && p->from == world_rank) || p->from < 0) {
            continue;
        }
        if (p->recv_cap > (size_t)INT_MAX) {
            fprintf(stderr, "halomd: fatal: halo message of more than 2 GB\n");
            MPI_Abort(MPI_COMM_WORLD, 70);
        }
        CHECK(MPI_Irecv(p->recvbuf, (int)p->recv_cap, MPI_BYTE, p->from, tag + k, MPI_COMM_WORLD,
                        &req[nreq++]));
    }
    for (int k = 0; k < n; k++) {
        const struct hmd_comm_pair *p = &pairs[k];
        if (!active || (p->to == world_rank && p->from == world_rank)) {
            if (p->to >= 0 && p->from >= 0) {
                memmove(p->recvbuf, p->sendbuf, p->nsend < p->recv_cap ? p->nsend : p->recv_cap);
            }
            continue;
        }
        if (p->to < 0) {
            continue;
        }
        if (p->nsend > (size_t)INT_MAX) {
            fprintf(stderr, "halomd: fatal: halo message of more than 2 GB\n");
            MPI_Abort(MPI_COMM_WORLD, 70);
        }
        CHECK(MPI_Isend(p->sendbuf, (int)p->nsend, MPI_BYTE, p->to, tag + k, MPI_COMM_WORLD,
                        &req[nreq++]));
    }
    CHECK(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
    if (req != stack) {
        free(req);
    }
}

static void gather_common(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts,
                          int root, int all)
{
    if (!active) {
        memmove(recvbuf, sendbuf, bytes);
        counts[0] = bytes;
        return;
    }
    int n = (int)bytes, *cnt = malloc(sizeof(int) * world_size),
        *displ = malloc(sizeof(int) * world_size);
    if (!cnt || !displ || bytes > (size_t)INT_MAX) {
        fprintf(stderr, "halomd: fatal: gather of %zu bytes\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 70);
    }
    CHECK(MPI_Allgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD));
    long long total = 0;
    for (int r = 0; r < world_size; r++) {
        displ[r] = (int)total;
        total += cnt[r];
        if (counts) {
            counts[r] = (size_t)cnt[r];
        }
    }
    if (total > INT_MAX) {
        fprintf(stderr, "halomd: fatal: gather of %lld bytes\n", total);
        MPI_Abort(MPI_COMM_WORLD, 70);
    }
    if (all) {
        CHECK(MPI_Allgatherv(sendbuf, n, MPI_BYTE, recvbuf, cnt, displ, MPI_BYTE, MPI_COMM_WORLD));
    } else {
        CHECK(
            MPI_Gatherv(sendbuf, n, MPI_BYTE, recvbuf, cnt, displ, MPI_BYTE, root, MPI_COMM_WORLD));
    }
    free(cnt);
    free(displ);
}

void hmd_comm_gatherv(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts, int root)
{
    gather_common(sendbuf, bytes, recvbuf, counts, root, 0);
}

void hmd_comm_allgatherv(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts)
{
    gather_common(sendbuf, bytes, recvbuf, counts, 0, 1);
}

void hmd_comm_barrier(void)
{
    if (!active) {
        return;
    }
    CHECK(MPI_Barrier(MPI_COMM_WORLD));
}
