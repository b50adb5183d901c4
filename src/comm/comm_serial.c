/* One rank, no MPI: collectives are identities or copies (built when HMD_HAVE_MPI is 0). */
#include "comm/comm.h"

#include <stdlib.h>
#include <string.h>

void hmd_comm_init(int *argc, char ***argv) {}

void hmd_comm_finalize(void) {}

int hmd_comm_rank(void)
{
    return 0;
}

int hmd_comm_size(void)
{
    return 1;
}

int hmd_comm_local_rank(void)
{
    return 0;
}

int hmd_comm_local_size(void)
{
    return 1;
}

int hmd_comm_cuda_aware(void)
{
    return 0;
}

_Noreturn void hmd_comm_abort(int code)
{
    exit(code);
}

void hmd_comm_sum(double *buf, int n) {}

void hmd_comm_max(double *buf, int n) {}

void hmd_comm_sum_i64(int64_t *buf, int n) {}

void hmd_comm_max_int(int *buf, int n) {}

void hmd_comm_bcast(void *buf, size_t bytes, int root) {}

size_t hmd_comm_exchange(int to, const void *sendbuf, size_t nsend, int from, void *recvbuf,
                         size_t recv_cap, int tag)
{
    if (to < 0 || from < 0) {
        return 0; /* an open boundary: nothing arrives */
    }
    size_t n = nsend < recv_cap ? nsend : recv_cap;
    memmove(recvbuf, sendbuf, n);
    return n;
}

void hmd_comm_exchange_all(const struct hmd_comm_pair *pairs, int n, int tag)
{
    (void)tag;
    for (int k = 0; k < n; k++) {
        const struct hmd_comm_pair *p = &pairs[k];
        hmd_comm_exchange(p->to, p->sendbuf, p->nsend, p->from, p->recvbuf, p->recv_cap, tag);
    }
}

void hmd_comm_gatherv(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts, int root)
{
    memmove(recvbuf, sendbuf, bytes);
    counts[0] = bytes;
}

void hmd_comm_allgatherv(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts)
{
    memmove(recvbuf, sendbuf, bytes);
    counts[0] = bytes;
}

void hmd_comm_barrier(void) {}
