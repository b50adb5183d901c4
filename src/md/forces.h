/* The force computation of a run or a single point: migration, ghosts (halo), neighbour list
 * and the Deep Potential, with the state they keep between steps.
 *
 * Collective: the functions that take or use the domain exchange with the neighbouring ranks
 * and reduce over all ranks; every rank calls them in the same order.
 */
#ifndef HMD_MD_FORCES_H
#define HMD_MD_FORCES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/atoms.h"
#include "core/box.h"
#include "core/params.h"
#include "dd/domain.h"
#include "dd/halo_plan.h"
#include "nbr/nbr_list.h"
#include "nnp/dp_eval.h"

struct hmd_forces {
    const struct hmd_dp_model *model; /* borrowed */
    const struct hmd_domain *dd;      /* borrowed: this rank's subdomain */
    double rlist;                     /* neighbour-list cut-off: rcut + skin (Å) */
    int type0;                        /* model type of the system's atom 0 (global id 0) */
    int64_t natoms;                   /* atoms of the whole system (checked at every rebuild) */
    struct hmd_halo_plan plan;        /* ghosts (owned) */
    struct hmd_nbr_list nl;           /* owned */
    struct hmd_dp_workspace ws;       /* owned */
    double energy;                    /* potential energy of the system, last compute (eV) */
    double virial[9];                 /* virial of the system, last compute (eV), dp_eval.h */
    double *atom_energy;              /* [nlocal] per-atom energies of the last compute (eV) */
    long dropped; /* neighbours within rcut the descriptors left out at the last compute (more
                     than sel; hmd_dp_output.dropped), over all ranks */
    double *atom_virial; /* [nall][9] per-atom virials, home atoms folded (eV) */
    int cap_atoms;       /* capacity of the two arrays above */
    long nbuilds;        /* neighbour-list builds so far */
    double t_force;      /* seconds this rank spent in the DP, accumulated */
    /* replicated mode (hmd_forces_use_replicated): every rank sees every position */
    bool replicated;
    double *full;        /* [natoms][3] positions, then forces, of all atoms by id (owned) */
    double *records;     /* all-gather buffer (owned) */
    int64_t *ghost_src;  /* [nghost] global id of each ghost (owned) */
    double *ghost_shift; /* [nghost][3] lattice shift of each ghost (Å) (owned) */
    int cap_ghost;
    struct hmd_cuda_dp *cuda; /* the GPU evaluates the model (hmd_forces_use_cuda), or NULL */
};

/* Prepares `fs` for `model` on subdomain `dd` with list cut-off rcut + skin (skin in Å,
 * >= 0); `type0` is the type of the system's atom 0 (DeePMD-kit's DPA-1 padding type) and
 * `natoms` the size of the whole system. */
void hmd_forces_init(struct hmd_forces *fs, const struct hmd_dp_model *model,
                     const struct hmd_domain *dd, double skin, int type0, int64_t natoms);

/* Switches to the replicated scheme of arXiv 2604.07276 (dd-mode = replicated), kept as the
 * baseline halo mode is compared against: positions are all-gathered every step, each rank
 * evaluates its home atoms and every atom within 2 x rlist of its subdomain as full atoms
 * (energies counted for home atoms only), and forces are all-reduced. Call after init. */
void hmd_forces_use_replicated(struct hmd_forces *fs);

/* Moves the evaluation of the model to the GPU (backend = cuda) in `precision`: the host keeps
 * the halo, the GPU builds the neighbour list and computes energies, forces and virial. Call
 * after init. Returns HMD_OK, or HMD_ENOTSUP (no CUDA in the build, no device, a model the GPU
 * path does not run) or another status of hmd_cuda_dp_create, with the reason in the message. */
int hmd_forces_use_cuda(struct hmd_forces *fs, enum hmd_precision precision);

/* Applies the backend and precision parameters: "cpu"; "cuda" (hmd_forces_use_cuda, its errors
 * returned); "auto" = cuda when it can be used, else cpu. precision = mixed needs the GPU (the
 * CPU is the double-precision reference): with cpu, or auto falling back to it, it is
 * HMD_ENOTSUP. Writes what was chosen, and why for auto's fallback, into what[len] (for the
 * log). */
int hmd_forces_select_backend(struct hmd_forces *fs, const char *backend,
                              enum hmd_precision precision, char *what, size_t len);

/* Neighbour-list step: wraps home atoms into the cell, moves atoms that left the subdomain to
 * their owner (migrate), rebuilds the ghosts (borders) and the neighbour list. Collective.
 * Errors: HMD_EDATA (cell too small), HMD_ENOMEM, HMD_ESOFTWARE when the ranks together no
 * longer hold every atom (a broken invariant). */
int hmd_forces_rebuild(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box);

/* Other steps: copies home positions to their ghosts (forward halo). Collective. */
void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms);

/* Largest displacement of any atom of any rank since the last rebuild (Å), and through
 * `atom_id` the global id of that atom. Collective. */
double hmd_forces_max_displacement(const struct hmd_forces *fs, const struct hmd_atoms *atoms,
                                   int64_t *atom_id);

/* Computes the system's energy and virial (reduced over ranks), forces on the home atoms
 * (ghost contributions folded in by the reverse halo) and, when `atomic`, per-atom energies
 * and virials. Collective. HMD_ENOMEM on failure (on any rank). */
int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, bool atomic);

/* Frees what fs owns and zeroes it. */
void hmd_forces_free(struct hmd_forces *fs);

#endif /* HMD_MD_FORCES_H */
