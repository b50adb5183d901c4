/* The force computation of a run or a single point: ghosts (halo), neighbour list and the Deep
 * Potential, with the state they keep between steps. */
#ifndef HMD_MD_FORCES_H
#define HMD_MD_FORCES_H

#include <stdbool.h>

#include "core/atoms.h"
#include "core/box.h"
#include "dd/halo_plan.h"
#include "nbr/nbr_list.h"
#include "nnp/dp_eval.h"

struct hmd_forces {
    const struct hmd_dp_model *model; /* borrowed */
    double rlist;                     /* neighbour-list cut-off: rcut + skin (Å) */
    struct hmd_halo_plan plan;        /* periodic images (owned) */
    struct hmd_nbr_list nl;           /* owned */
    struct hmd_dp_workspace ws;       /* owned */
    double energy;                    /* potential energy of the last compute (eV) */
    double virial[9];                 /* virial of the last compute (eV), see dp_eval.h */
    double *atom_energy;              /* [nlocal] per-atom energies of the last compute (eV) */
    double *atom_virial;              /* [nall][9] per-atom virials, home atoms folded (eV) */
    int cap_atoms;                    /* capacity of the two arrays above */
    long nbuilds;                     /* neighbour-list builds so far */
};

/* Prepares `fs` for `model` with list cut-off rcut + skin (skin in Å, >= 0). */
void hmd_forces_init(struct hmd_forces *fs, const struct hmd_dp_model *model, double skin);

/* Neighbour-list step: wraps home atoms into the cell, rebuilds the ghosts (borders) and the
 * neighbour list. Errors: HMD_EDATA (cell too small), HMD_ENOMEM. */
int hmd_forces_rebuild(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box);

/* Other steps: copies home positions to their ghosts (forward halo). */
void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms);

/* True when an atom moved more than half the skin since the last rebuild. */
bool hmd_forces_list_expired(const struct hmd_forces *fs, const struct hmd_atoms *atoms);

/* Computes energy, forces (atoms->f, home atoms, ghost contributions folded in) and virial;
 * per-atom energies and virials too when `atomic`. HMD_ENOMEM on failure. */
int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, bool atomic);

/* Frees what fs owns and zeroes it. */
void hmd_forces_free(struct hmd_forces *fs);

#endif /* HMD_MD_FORCES_H */
