/* Halo plan: which atoms each swap sends, where the received ghosts go, and across which
 * periodic boundary. Pure host data, rebuilt at neighbour-list steps by borders (dd/borders.h)
 * and replayed by a halo transport (halo/transport.h) every step: forward (owners to ghosts,
 * swaps in order) and reverse (ghosts to owners, swaps in reverse order).
 *
 * Swaps run in order, staged along cell vector a, then b, then c, so ghosts made along a are
 * sent again along b and c (edges and corners propagate). When the cut-off is larger than a
 * subdomain, several pulses per direction send the ghosts of the previous pulse further. A
 * swap whose peers are this rank is a copy (one rank along that vector, periodic images). The
 * ghosts of a swap are contiguous (recv_offset .. recv_offset + nrecv - 1), so they are
 * received in place; an entry of a later swap may be a ghost of an earlier one.
 */
#ifndef HMD_DD_HALO_PLAN_H
#define HMD_DD_HALO_PLAN_H

#include <stddef.h>

#include "core/box.h"

/* Largest number of pulses per direction: a subdomain thinner than cutoff/8 is refused. */
#define HMD_HALO_MAX_PULSES 8

/* Largest number of swaps of a plan: 3 vectors, 2 directions, HMD_HALO_MAX_PULSES pulses. */
#define HMD_HALO_MAX_SWAPS (3 * 2 * HMD_HALO_MAX_PULSES)

struct hmd_halo_swap {
    int dim;         /* cell vector 0..2 the swap crosses */
    int dir;         /* 0: sent to the rank below (ghosts above it), 1: to the rank above */
    int pulse;       /* 1 for the first swap of (dim, dir), 2 for the next, ... */
    int to;          /* rank the atoms are sent to (-1: none, an open boundary) */
    int from;        /* rank the ghosts come from (-1: none) */
    int nsend;       /* atoms sent */
    int send_offset; /* first entry of this swap in plan->send_list */
    int recv_offset; /* first ghost slot (index into the nall arrays) filled by this swap */
    int nrecv;       /* ghosts received */
    int image[3];    /* lattice vector (in cell vectors) added to sent positions: nonzero only
                        for the swap that crosses the periodic boundary, +-1 along dim */
};

struct hmd_halo_plan {
    int nswap;
    struct hmd_halo_swap *swap; /* [nswap] in execution order (owned) */
    int *send_list;             /* indices into the nall arrays, all swaps back to back (owned) */
    int nsend_total;
    int nlocal;    /* home atoms when the plan was built: ghosts start there */
    double cutoff; /* ghost cut-off the plan was built for (Å) */
    int cap_swap;
    int cap_send;
};

/* The Cartesian shift (Å) swap `sw` adds to the positions it sends, in cell `box`. */
static inline void hmd_halo_swap_shift(const struct hmd_halo_swap *sw, const struct hmd_box *box,
                                       double shift[3])
{
    for (int k = 0; k < 3; k++) {
        shift[k] =
            sw->image[0] * box->h[0][k] + sw->image[1] * box->h[1][k] + sw->image[2] * box->h[2][k];
    }
}

/* Appends a swap with no atoms yet; returns its index, or HMD_ENOMEM (negative). */
int hmd_halo_plan_add_swap(struct hmd_halo_plan *plan, int dim, int dir, int pulse, int to,
                           int from, const int image[3], int recv_offset);

/* Appends atom k to the send list of the last swap. HMD_ENOMEM on failure. */
int hmd_halo_plan_add_send(struct hmd_halo_plan *plan, int k);

/* Whether every swap stays on rank `self` (one rank, or a grid of one along every vector with
 * periodic images): the ghosts are then images of this rank's own atoms. */
int hmd_halo_plan_is_self(const struct hmd_halo_plan *plan, int self);

/* Entries of the forward chains of hmd_halo_plan_flatten_self (a ghost made by its k-th swap
 * along the staging has k entries), or HMD_ENOMEM (negative). */
int hmd_halo_plan_chain_total(const struct hmd_halo_plan *plan);

/* The plan of a self plan (hmd_halo_plan_is_self) flattened so that a GPU can replay it in one
 * pass each way with the arithmetic of the swaps in order, bit for bit:
 *   forward: ghost g (0-based among the ghosts) is home atom root[g] plus the shifts of the
 *            swaps chain[chain_offset[g] .. chain_offset[g + 1] - 1], added one after the other
 *            (the first swap first), as the staged swaps add them;
 *   reverse: atom k (home or ghost, index into the nall arrays) receives the values of the
 *            ghosts child[child_offset[k] .. child_offset[k + 1] - 1] in that order (later
 *            swaps first), each after its own children: the staged swaps' order of additions.
 * Arrays are the caller's: root [nghost], chain_offset [nghost + 1], chain
 * [hmd_halo_plan_chain_total], child_offset [nall + 1], child [nghost]. HMD_ENOTSUP when a swap
 * exchanges with another rank, HMD_ENOMEM. */
int hmd_halo_plan_flatten_self(const struct hmd_halo_plan *plan, int self, int nall, int *root,
                               int *chain_offset, int *chain, int *child_offset, int *child);

/* Forgets the swaps, keeping capacity. */
void hmd_halo_plan_clear(struct hmd_halo_plan *plan);

/* Frees the plan and zeroes it. */
void hmd_halo_plan_free(struct hmd_halo_plan *plan);

#endif /* HMD_DD_HALO_PLAN_H */
