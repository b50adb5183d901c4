/* What one rank computes of a classical force field (ff/ff_model.h) between two neighbour-list
 * steps: its nonbonded pairs and its bonded interactions in local atom indices, built at list
 * steps (the providers' `prepare`) from the home atoms, their ghosts and the full neighbour list.
 *
 * Every interaction is counted exactly once over the ranks of a domain decomposition (and over
 * a rank's periodic images): each global atom is a home atom (a centre, local index < nlocal)
 * of exactly one rank, and
 * - a nonbonded pair {a, b} belongs to the centre with the smaller global id: centre i takes
 *   neighbour j of its full list when id[i] < id[j]. The full list holds every atom within
 *   rlist of i, so that rank has b (or the image of b nearest to a) and computes the pair once,
 *   forces on both atoms (a ghost's go back through the reverse halo); the other rank, where b
 *   is the centre, skips it. Twice the cut-off must fit in the cell, so that no pair has two
 *   images within the cut-off (GROMACS requires the same).
 * - a bonded interaction belongs to its first atom: the rank where that atom is a centre takes
 *   it, with each other atom the copy (home or ghost) nearest to the owner (the minimum image),
 *   which the halo provides when the atoms are within rlist of each other (checked).
 * Energies and virial count where the owner (the centre) is below ncount; forces are computed
 * for every centre (the replicated scheme's halo centres give forces to home atoms).
 *
 * In the replicated scheme (ncount < nlocal) a rank's centres may hold an atom twice (its home
 * copy and a periodic image in the halo); each copy of an interaction whose owner copy is a
 * centre is then computed, and a home atom takes its force from the one copy that contains it.
 *
 * Per-atom energies need more: half of each pair goes to each atom and an equal share of each
 * bonded interaction to each of its atoms, on the rank where the atom is at home. So the plan
 * also lists `shadow` pairs (centre i with a ghost j where id[i] > id[j]: the pair is computed
 * on j's rank, i's half here) and, for every home atom and every bonded interaction it is in,
 * a `share`: that interaction's atoms nearest to it, whose energy it takes 1/n of. Both are
 * evaluated only when per-atom energies are asked for.
 *
 * The full mode (`full`, for the GPU) lists every neighbour of each centre instead, each pair
 * then being computed twice, half on each side, without ghost forces.
 */
#ifndef HMD_FF_FF_PLAN_H
#define HMD_FF_FF_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/box.h"
#include "core/hd.h"
#include "ff/ff_model.h"
#include "nbr/nbr_list.h"

/* A local bonded interaction: the model's interaction `inter` on local atoms atom[]. */
struct hmd_ff_local {
    int inter;
    int atom[4];
    int flags;  /* HMD_FF_COUNTED: energy and virial count here (forces always) */
    int target; /* a share: the home atom taking 1/n of the energy; -1 for a term */
};

enum { HMD_FF_COUNTED = 2 };

struct hmd_ff_plan {
    bool full;
    int nlocal, nall, ncount;
    int natoms; /* of the model */
    /* per local atom: charge (e) and Lennard-Jones type, by global id */
    double *q;
    int *type;
    int cap_all;
    /* nonbonded: centre i's partners pair[pair_start[i] .. pair_start[i+1]) and, in the half
     * mode, its shadow partners the same way */
    int *pair_start, *pair;
    size_t npair, cap_pair;
    int *shadow_start, *shadow;
    size_t nshadow, cap_shadow;
    int cap_centre;
    /* bonded: the interactions owned by the centres, the per-atom energy shares */
    struct hmd_ff_local *term, *share;
    int nterm, cap_term, nshare, cap_share;
    /* full mode (a device's sums without atomics): the force slots 4 t + a of atom k (term t,
     * its atom a) are slot[slot_start[k] .. slot_start[k+1]), in term order; home atom h's
     * shares are share[share_start[h] .. share_start[h+1]) (the shares are in home-atom order) */
    int *slot_start, *slot, *share_start;
    size_t cap_slot_start, cap_slot, cap_share_start;
    /* scratch by global id: the copies of each atom here, the home one (index < ncount) */
    int *head, *home; /* [natoms] */
    int *next;        /* [cap_all] */
    int64_t *seen;    /* [cap_all] ids of the last build, whose head/home to reset */
    int nseen;
};

/* Builds the plan of the nlocal centres and nall atoms at x [nall][3] (Å) with global ids
 * id [nall], centres i < ncount counting towards energy and virial, from the full list `nl`
 * (cut-off >= the model's) in cell `box`. Grows the arrays (the one place the plan allocates).
 * Errors: HMD_ECONFIG when twice the cut-off does not fit in the cell or the list is shorter
 * than the cut-off; HMD_EDATA for an id outside the model or a bonded interaction whose atoms
 * are farther apart than the list's cut-off (or missing: the halo is too thin); HMD_ENOMEM. */
int hmd_ff_plan_build(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, bool full, int nlocal,
                      int nall, int ncount, const double *x, const int64_t *id,
                      const struct hmd_box *box, const struct hmd_nbr_list *nl);

/* hmd_ff_plan_build in the full mode without the nonbonded pairs (npair = 0: the GPU builds
 * them itself, cuda/ff/pair_list.cuh): the bonded interactions, their force slots and, when
 * `shares`, the per-atom energy shares (else nshare = 0), with each interaction's atoms within
 * rlist (Å, >= the model's cut-off) of its owner. Errors as hmd_ff_plan_build's. */
int hmd_ff_plan_build_bonded(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, int nlocal,
                             int nall, int ncount, const double *x, const int64_t *id,
                             const struct hmd_box *box, double rlist, bool shares);

void hmd_ff_plan_free(struct hmd_ff_plan *plan);

#endif /* HMD_FF_FF_PLAN_H */
