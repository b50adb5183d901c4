/* Spatial domain decomposition: the cell is cut into a grid of Px x Py x Pz subdomains along
 * its cell vectors (in fractional coordinates, so triclinic cells work alike), one per rank.
 * Cut positions along each vector are shared by all ranks (planes through the whole cell) and
 * may move to balance the load. Pure bookkeeping: no communication.
 */
#ifndef HMD_DD_DOMAIN_H
#define HMD_DD_DOMAIN_H

#include <stdbool.h>

#include "core/box.h"

#define HMD_DD_MAX_RANKS_PER_DIM 1024

struct hmd_domain {
    int nranks;          /* ranks in the grid: grid[0] * grid[1] * grid[2] */
    int rank;            /* this rank */
    int grid[3];         /* ranks along cell vectors a, b, c */
    int coord[3];        /* this rank's position in the grid */
    int neighbor[3][2];  /* rank below (0) and above (1) along each vector; -1 across an open
                            (non-periodic) boundary; may be this rank */
    double *cut[3];      /* [grid[d] + 1] fractional planes, cut[d][0] = 0, cut[d][grid[d]] = 1
                            (owned) */
    double lo[3], hi[3]; /* this rank's fractional bounds along each vector */
    bool periodic[3];    /* copied from the cell */
};

/* Chooses the grid for `nranks` ranks that minimises the volume of the halo of width
 * `cutoff` (Å) around a subdomain of `box`, or takes `request` when its entries are all > 0
 * (their product must be nranks), and fills `dd` for `rank` with even cuts. Errors
 * (HMD_EUSAGE naming -dd): a request whose product is not the number of ranks; HMD_EDATA: a
 * subdomain thinner than cutoff / HMD_HALO_MAX_PULSES along some vector. */
int hmd_domain_init(struct hmd_domain *dd, const struct hmd_box *box, int nranks, int rank,
                    const int request[3], double cutoff);

/* Rank owning fractional position s (clamped into [0, 1) along each vector). */
int hmd_domain_owner(const struct hmd_domain *dd, const double s[3]);

/* Rank at grid position c (each component taken modulo the grid). */
int hmd_domain_rank_at(const struct hmd_domain *dd, const int c[3]);

/* Moves the cuts along every split vector so that each slab carries load in proportion to its
 * share: `load` [nranks] is the measured cost of every rank (any unit), assumed uniform across
 * each rank's subdomain. Slabs keep at least `min_frac` (fractional) thickness and move by at
 * most half their thickness per call. Updates lo/hi. */
void hmd_domain_balance(struct hmd_domain *dd, const double *load, const double min_frac[3]);

/* Frees the cuts and zeroes dd. */
void hmd_domain_free(struct hmd_domain *dd);

#endif /* HMD_DD_DOMAIN_H */
