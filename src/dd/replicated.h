/* The replicated scheme of arXiv 2604.07276 (dd-mode = replicated), kept as the baseline the halo
 * mode is compared against: positions are all-gathered every step, each rank evaluates its home
 * atoms and every atom within 2 x rlist of its subdomain as full atoms (energies counted for
 * home atoms only), and forces are all-reduced. Two collectives a step, a halo of twice the
 * cut-off, ghosts evaluated as centres: what that paper's GROMACS + DeePMD-kit does.
 *
 * Collective: every function is called by every rank in the same order.
 */
#ifndef HMD_DD_REPLICATED_H
#define HMD_DD_REPLICATED_H

#include <stdint.h>

#include "core/atoms.h"
#include "core/box.h"
#include "dd/domain.h"

struct hmd_dd_replicated {
    int64_t natoms;      /* atoms of the whole system */
    double *full;        /* [natoms][3] positions, then forces, of all atoms by id (owned) */
    double *records;     /* all-gather buffer (owned) */
    int64_t *ghost_src;  /* [nghost] global id of each ghost (owned) */
    double *ghost_shift; /* [nghost][3] lattice shift of each ghost (Å) (owned) */
    int cap_ghost;
};

/* The halo of the scheme: the ghosts of `atoms` become every atom or image within 2 x rlist
 * (Å) of this rank's subdomain (home atoms excluded), taken from the gathered positions, with
 * their types and ids. HMD_ENOMEM (on every rank). */
int hmd_dd_replicated_borders(struct hmd_dd_replicated *r, struct hmd_atoms *atoms,
                              const struct hmd_box *box, const struct hmd_domain *dd, double rlist);

/* The first collective of a step: every position gathered, the ghosts set from them. Aborts
 * the job when memory runs out (the ghosts would be stale). */
void hmd_dd_replicated_forward(struct hmd_dd_replicated *r, struct hmd_atoms *atoms);

/* The second: every rank's home forces summed into one array, each rank's home atoms given
 * theirs back. */
void hmd_dd_replicated_reduce_forces(struct hmd_dd_replicated *r, struct hmd_atoms *atoms);

/* Frees what r owns and zeroes it (natoms kept). */
void hmd_dd_replicated_free(struct hmd_dd_replicated *r);

#endif /* HMD_DD_REPLICATED_H */
