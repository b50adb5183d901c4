/* The force calculation of a run or a single point: the force providers (ff/provider.h), the
 * halo that gives them ghosts (plan, host transport), the host neighbour list, migration at list
 * steps, and the energies they add up to. The step clears forces once, every host provider adds
 * its share, then the reverse halo folds ghost forces onto their owners and energies are
 * summed over ranks. Device providers are held here too (their cut-off sizes the halo) and run
 * by the device step (md/step_device.h), which borrows them.
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
#include "dd/domain.h"
#include "dd/halo_plan.h"
#include "dd/replicated.h"
#include "ff/provider.h"
#include "halo/transport.h"
#include "nbr/nbr_list.h"

#define HMD_FORCES_MAX_PROVIDERS 4
#define HMD_FORCES_MAX_TERMS (HMD_FORCES_MAX_PROVIDERS * HMD_FORCE_MAX_TERMS)

struct hmd_forces {
    const struct hmd_domain *dd; /* borrowed: this rank's subdomain */
    double skin;                 /* Verlet buffer (Å) */
    double rlist;   /* halo and neighbour-list cut-off: largest provider cut-off + skin (Å) */
    int64_t natoms; /* atoms of the whole system (checked at every rebuild) */
    int type0;      /* model type of the system's atom 0 (ff/provider.h io.type0) */
    struct hmd_force_provider provider[HMD_FORCES_MAX_PROVIDERS]; /* owned */
    int nprovider;
    int term_offset[HMD_FORCES_MAX_PROVIDERS + 1]; /* provider k's terms start here */
    const char *term_name[HMD_FORCES_MAX_TERMS];   /* names of every provider's terms */
    double terms[HMD_FORCES_MAX_TERMS];            /* energy per term, last compute (eV) */
    struct hmd_halo_plan plan;                     /* ghosts (owned) */
    struct hmd_halo_transport halo;                /* the host transport (owned) */
    struct hmd_nbr_list nl; /* host list, built when a host provider needs it (owned) */
    double energy;          /* potential energy of the system, last compute (eV) */
    double virial[9];       /* virial of the system, last compute (eV), provider.h */
    double *atom_energy;    /* [nlocal] per-atom energies of the last compute (eV) */
    long dropped; /* neighbours within rcut the descriptors left out at the last compute (more
                     than sel), over all ranks */
    double *atom_virial;          /* [nall][9] per-atom virials, home atoms folded (eV) */
    int cap_atoms;                /* capacity of the two arrays above */
    long nbuilds;                 /* neighbour-list builds so far */
    double t_force;               /* seconds this rank spent in the host providers, accumulated */
    bool replicated;              /* dd-mode = replicated (hmd_forces_use_replicated) */
    struct hmd_dd_replicated rep; /* its state */
};

/* Prepares `fs` for subdomain `dd` with Verlet buffer `skin` (Å, >= 0) and a system of
 * `natoms` atoms whose atom 0 has model type `type0`, with no provider yet. HMD_ENOMEM (the
 * host transport). */
int hmd_forces_init(struct hmd_forces *fs, const struct hmd_domain *dd, double skin, int64_t natoms,
                    int type0);

/* Points fs, providers kept, at another system (single points one after another): its
 * subdomain, size and type of atom 0; the next rebuild makes everything else anew. */
void hmd_forces_set_system(struct hmd_forces *fs, const struct hmd_domain *dd, int64_t natoms,
                           int type0);

/* Adds provider p (fs takes it over; destroyed by hmd_forces_free, also on failure): its terms
 * are appended and the list cut-off becomes the largest cut-off + skin. HMD_ENOTSUP beyond
 * HMD_FORCES_MAX_PROVIDERS providers or HMD_FORCES_MAX_TERMS terms. Before the first rebuild. */
int hmd_forces_add_provider(struct hmd_forces *fs, struct hmd_force_provider p);

/* Destroys every provider added so far (a backend's set-up that failed half way, before another
 * is tried); the list cut-off goes back to the buffer. Before the first rebuild. */
void hmd_forces_drop_providers(struct hmd_forces *fs);

/* Switches to the replicated scheme (dd/replicated.h). Before the first rebuild. */
void hmd_forces_use_replicated(struct hmd_forces *fs);

/* Whether a provider runs on the device (the run then keeps its step there). */
bool hmd_forces_on_device(const struct hmd_forces *fs);

/* Neighbour-list step: wraps home atoms into the cell, moves atoms that left the subdomain to
 * their owner (migrate), rebuilds the ghosts (borders), the halo transport's plan, the host
 * neighbour list and the host providers' scratch. Collective. Errors: HMD_EDATA (cell too
 * small), HMD_ENOMEM, HMD_ESOFTWARE when the ranks together no longer hold every atom (a broken
 * invariant), or a provider's status. */
int hmd_forces_rebuild(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box);

/* Other steps: copies home positions to their ghosts (forward halo). Collective. */
void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms,
                              const struct hmd_box *box);

/* Largest displacement of any atom of any rank since the last rebuild (Å), and through
 * `atom_id` the global id of that atom. Collective. */
double hmd_forces_max_displacement(const struct hmd_forces *fs, const struct hmd_atoms *atoms,
                                   int64_t *atom_id);

/* Computes the system's energy, terms and virial (reduced over ranks), forces on the home atoms
 * (ghost contributions folded in by the reverse halo) and, when `atomic`, per-atom energies
 * and virials, with the host providers. Collective. A provider's status on failure (on any
 * rank). */
int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box,
                       bool atomic);

/* Device memory of the providers (bytes). */
size_t hmd_forces_device_bytes(const struct hmd_forces *fs);

/* Frees what fs owns and zeroes it. */
void hmd_forces_free(struct hmd_forces *fs);

#endif /* HMD_MD_FORCES_H */
