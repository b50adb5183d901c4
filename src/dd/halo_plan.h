/* Halo plan: which atoms each swap sends, where the received ghosts go, and the periodic shift.
 * Pure host bookkeeping, rebuilt at neighbour-list steps by the borders verb (comm/halo.h) and
 * replayed by forward and reverse every step.
 *
 * Swaps run in order, staged along cell vector a, then b, then c, so ghosts made along a are
 * sent again along b and c (edges and corners propagate). When the cut-off is larger than a
 * subdomain, several pulses per direction send the ghosts of the previous pulse further. A
 * swap whose peers are this rank is a copy (one rank along that vector, periodic images).
 */
#ifndef HMD_DD_HALO_PLAN_H
#define HMD_DD_HALO_PLAN_H

#include <stddef.h>

struct hmd_halo_swap {
    int dim;         /* cell vector 0..2 the swap crosses */
    int dir;         /* +1: ghosts are images shifted by +h[dim]; -1: by -h[dim] */
    int pulse;       /* 1 for the first swap of (dim, dir), 2 for the next, ... */
    int to;          /* rank the atoms are sent to (-1: none, an open boundary) */
    int from;        /* rank the ghosts come from (-1: none) */
    int nsend;       /* atoms sent */
    int send_offset; /* first entry of this swap in plan->send_list */
    int recv_offset; /* first ghost slot (index into the nall arrays) filled by this swap */
    int nrecv;       /* ghosts received */
    double shift[3]; /* Cartesian shift added to sent positions (Å) */
};

struct hmd_halo_plan {
    int nswap;
    struct hmd_halo_swap *swap; /* [nswap] in execution order (owned) */
    int *send_list;             /* indices into the nall arrays, all swaps back to back (owned) */
    int nsend_total;
    double cutoff; /* ghost cut-off the plan was built for (Å) */
    int cap_swap;
    int cap_send;
    double *sendbuf, *recvbuf; /* exchange buffers (owned) */
    size_t cap_buf;            /* doubles each buffer holds */
};

/* Makes both exchange buffers hold at least `doubles` doubles. HMD_ENOMEM on failure. */
int hmd_halo_plan_reserve_buffers(struct hmd_halo_plan *plan, size_t doubles);

/* Appends a swap with no atoms yet; returns its index, or HMD_ENOMEM (negative). */
int hmd_halo_plan_add_swap(struct hmd_halo_plan *plan, int dim, int dir, int pulse, int to,
                           int from, const double shift[3], int recv_offset);

/* Appends atom k to the send list of the last swap. HMD_ENOMEM on failure. */
int hmd_halo_plan_add_send(struct hmd_halo_plan *plan, int k);

/* For a plan whose swaps all stay on rank `self` (one rank: periodic images), the home atom
 * each ghost is an image of and the lattice shift from it (staged swaps composed), so a GPU
 * can make every ghost in one pass: x[nlocal + g] = x[src[g]] + shift[g]. src [nghost] and
 * shift [nghost][3] are the caller's. HMD_ENOTSUP when a swap exchanges with another rank. */
int hmd_halo_plan_self_images(const struct hmd_halo_plan *plan, int nlocal, int self, int *src,
                              double *shift);

/* Forgets the swaps, keeping capacity. */
void hmd_halo_plan_clear(struct hmd_halo_plan *plan);

/* Frees the plan and zeroes it. */
void hmd_halo_plan_free(struct hmd_halo_plan *plan);

#endif /* HMD_DD_HALO_PLAN_H */
