/* The ranks of a run and the collectives between them. Built with MPI (HMD_HAVE_MPI) this is
 * MPI_COMM_WORLD; without, one rank whose collectives are copies. Only src/comm/comm_mpi.c
 * includes <mpi.h>.
 *
 * Collective: every function below except hmd_comm_rank/size must be called by every rank in
 * the same order. Failures of the MPI library abort the whole job (MPI_Abort), so no rank hangs.
 */
#ifndef HMD_COMM_COMM_H
#define HMD_COMM_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* Starts MPI when built with it and started by an MPI launcher (mpirun, mpiexec, srun); else,
 * and without MPI, a no-op. Call once, first thing in main. Without MPI started (a lone
 * process, a test, a library user), the functions below behave as for one rank. */
void hmd_comm_init(int *argc, char ***argv);

/* Ends MPI. Call once, last thing in main. */
void hmd_comm_finalize(void);

/* This rank (0-based) and the number of ranks. */
int hmd_comm_rank(void);
int hmd_comm_size(void);

/* This rank among the ranks of its node (0-based; the rank of MPI_COMM_TYPE_SHARED), and their
 * number: what picks a rank's GPU. */
int hmd_comm_local_rank(void);
int hmd_comm_local_size(void);

/* Whether the MPI library takes device pointers: Open MPI's MPIX_Query_cuda_support() at run
 * time where its headers have it, else no; HMD_MPI_CUDA_AWARE=1 or 0 says so instead (for a
 * library that is CUDA-aware without telling). 0 without MPI. */
int hmd_comm_cuda_aware(void);

/* Aborts every rank with exit code `code` (MPI_Abort; exit without MPI). */
#ifdef __cplusplus
[[noreturn]] void hmd_comm_abort(int code);
#else
_Noreturn void hmd_comm_abort(int code);
#endif

/* Element-wise sums and maxima over ranks, in place. */
void hmd_comm_sum(double *buf, int n);
void hmd_comm_max(double *buf, int n);
void hmd_comm_sum_i64(int64_t *buf, int n);
void hmd_comm_max_int(int *buf, int n);

/* Copies `bytes` bytes of buf from rank `root` to every rank. */
void hmd_comm_bcast(void *buf, size_t bytes, int root);

/* Message tags of the point-to-point exchanges, one per verb, so that they never mix. */
enum {
    HMD_TAG_BORDERS = 101, /* and +1 */
    HMD_TAG_MIGRATE = 103, /* and +1 */
    HMD_TAG_FORWARD = 105,
    HMD_TAG_REVERSE = 106,
    /* hmd_comm_exchange_all: message k of a call takes tag + k (k < HMD_TAG_ALL_SPAN) */
    HMD_TAG_ALL_FORWARD = 4096,
    HMD_TAG_ALL_REVERSE = 8192,
    HMD_TAG_ALL_SPAN = 4096,
};

/* Sends nsend bytes to rank `to` while receiving up to recv_cap bytes from rank `from`
 * (receive posted first); returns the bytes received. A rank exchanging with itself copies;
 * a peer of -1 means none (nothing sent, nothing received). `tag` separates exchanges. */
size_t hmd_comm_exchange(int to, const void *sendbuf, size_t nsend, int from, void *recvbuf,
                         size_t recv_cap, int tag);

/* One pair of messages of hmd_comm_exchange_all: nsend bytes to rank `to`, up to recv_cap
 * bytes from rank `from` (a peer of -1: none). */
struct hmd_comm_pair {
    int to;
    const void *sendbuf;
    size_t nsend;
    int from;
    void *recvbuf;
    size_t recv_cap;
};

/* The n exchanges of pairs[] at once, as hmd_comm_exchange would do them one after another
 * (the pairs must not depend on each other): every receive posted, then every send, then all
 * waited for. Pair k uses tag + k (tag is HMD_TAG_ALL_FORWARD or HMD_TAG_ALL_REVERSE, n <=
 * HMD_TAG_ALL_SPAN); a rank exchanging with itself copies. Buffers are host memory, or device
 * memory where the MPI library is CUDA-aware. */
void hmd_comm_exchange_all(const struct hmd_comm_pair *pairs, int n, int tag);

/* Gathers `bytes` bytes from every rank into root's recvbuf (rank order); counts[r] gets each
 * rank's size on root. recvbuf and counts are used on root only. */
void hmd_comm_gatherv(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts, int root);

/* Every rank gets every rank's `bytes` bytes (rank order) in recvbuf; counts[r] sizes. */
void hmd_comm_allgatherv(const void *sendbuf, size_t bytes, void *recvbuf, size_t *counts);

/* Waits for every rank. */
void hmd_comm_barrier(void);

/* The same status on every rank: the worst of all ranks' `status` (statuses are negative). A
 * rank whose own status was HMD_OK forgets its error message, so only ranks that failed
 * themselves have one to print. Collective. */
static inline int hmd_comm_agree(int status)
{
    int bad = -status;
    hmd_comm_max_int(&bad, 1);
    if (status == HMD_OK && bad) {
        hmd_error_clear();
    }
    return -bad;
}

#endif /* HMD_COMM_COMM_H */
