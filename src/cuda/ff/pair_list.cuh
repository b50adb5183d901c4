/* The classical force field's nonbonded pair list, built on the GPU at neighbour-list steps
 * (the device twin of ff/ff_plan.c's full-mode pairs): for each of the nlocal centres, every
 * atom of the nall (home atoms and ghosts, the ghosts standing for the periodic images) within
 * rlist of it, except itself and its own images, pairs within the model's nnp-group (the Deep
 * Potential's, hybrid ML/MM) and pairs with nothing to compute (uncharged and excluded, or
 * uncharged without Lennard-Jones); excluded pairs are kept, coded
 * -(j + 1) (hmd_ff_pair_decode), for the reaction-field correction.
 *
 * How: a Cartesian cell grid (cells at least rlist wide) over the atoms' bounding box; the
 * atoms sorted by cell with a stable radix sort (within a cell by index), then one warp per
 * centre scanning the 27 cells around it in a fixed order, 32 candidates at a time, appending
 * the hits in lane order. So the list, and the order of each centre's partners, depends on
 * the positions alone, not on the scheduling: sums over it in list order are reproducible.
 * Exclusions come from a per-atom sorted table by global id, uploaded once (binary search).
 *
 * Also fills each local atom's charge and Lennard-Jones type from its global id.
 */
#ifndef HMD_CUDA_FF_PAIR_LIST_CUH
#define HMD_CUDA_FF_PAIR_LIST_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda/nbr/cell_grid.cuh"

extern "C" {
#include "ff/ff_model.h"
}

struct hmd_ff_pair_list {
    /* the model by global id (uploaded once): charges, types, c6/c12 by type pair, exclusions */
    int natoms, ntypes;
    double *charge, *c6, *c12;
    int *gtype, *excl_start, *excl;
    unsigned char
        *group; /* [natoms] hybrid ML/MM's nnp-group (pairs within it left out), or NULL */
    /* per local atom (filled at each build) */
    int cap_all;
    double *q; /* [cap_all] */
    int *type; /* [cap_all] */
    /* the list: centre i's partners entry[i * cap .. i * cap + count[i]) */
    int cap, cap_centre, cap_entry_room;
    int *entry, *count, *overflow;
    /* cell grid */
    int cap_bins;
    unsigned *bin_of, *bin_sorted; /* [cap_all] each atom's cell, then sorted */
    int *order_in, *order;         /* [cap_all] 0..nall-1, then the atoms by cell */
    int *bin_count, *bin_start;    /* [cap_bins] */
    void *tmp;
    size_t tmp_bytes;
    size_t bytes;       /* device memory held */
    int *overflow_host; /* pinned: the largest count beyond cap, read back */
    /* the search queued by hmd_ff_pair_list_queue, for hmd_ff_pair_list_finish */
    struct {
        bool queued;
        int nlocal;
        double rlist;
        const double *x;
        const int64_t *id;
        hmd_cell_grid grid;
        cudaStream_t stream;
    } pending;
};

/* Uploads the model's per-atom tables (synchronously). Returns HMD_OK, HMD_ESOFTWARE (CUDA). */
int hmd_ff_pair_list_init(struct hmd_ff_pair_list *pl, const struct hmd_ff_model *m);

/* Queues on `stream` the build of the list of the nlocal centres among the nall atoms at d_x
 * [nall][3] (device) with global ids d_id [nall] (device), within rlist (Å), bounding box lo/hi
 * of the positions (Å, from the host's copy), and the read-back of its overflow count; returns
 * without waiting, so that the host can work meanwhile. d_x and d_id must stay as they are
 * until hmd_ff_pair_list_finish, which must come before the list is read. Grows the arrays
 * when needed; *moved is set when any array the compute reads was reallocated (a recorded graph
 * is then stale). Returns HMD_OK, HMD_ECONFIG (more than 2^28 cells), HMD_ESOFTWARE (CUDA). */
int hmd_ff_pair_list_queue(struct hmd_ff_pair_list *pl, int nlocal, int nall, const double *d_x,
                           const int64_t *d_id, const double lo[3], const double hi[3],
                           double rlist, cudaStream_t stream, bool *moved);

/* Waits for the queued build; where a centre had more partners than room, grows the rows
 * (*moved set) and searches again. Without a queued build, HMD_OK at once. */
int hmd_ff_pair_list_finish(struct hmd_ff_pair_list *pl, bool *moved);

/* hmd_ff_pair_list_queue, then hmd_ff_pair_list_finish. */
int hmd_ff_pair_list_build(struct hmd_ff_pair_list *pl, int nlocal, int nall, const double *d_x,
                           const int64_t *d_id, const double lo[3], const double hi[3],
                           double rlist, cudaStream_t stream, bool *moved);

void hmd_ff_pair_list_free(struct hmd_ff_pair_list *pl);

#endif /* HMD_CUDA_FF_PAIR_LIST_CUH */
