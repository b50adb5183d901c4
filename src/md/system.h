/* The system a run or a single point works on: the structure read on rank 0, mapped to model
 * types, cut into subdomains and handed to the ranks that own them.
 *
 * Collective: hmd_system_load is called by every rank.
 */
#ifndef HMD_MD_SYSTEM_H
#define HMD_MD_SYSTEM_H

#include <stdbool.h>

#include "core/atoms.h"
#include "core/box.h"
#include "dd/domain.h"
#include "io/structure.h"
#include "nnp/model.h"

struct hmd_system {
    int natoms;             /* atoms of the whole system */
    bool has_box;           /* the structure file gave a cell */
    struct hmd_box box;     /* the cell; without one, a non-periodic cell spanning the atoms,
                               used to bin and decompose them */
    int type0;              /* model type of atom 0 (global id 0) */
    struct hmd_domain dd;   /* this rank's subdomain (owned) */
    struct hmd_atoms atoms; /* this rank's home atoms, then ghosts (owned) */
};

/* What a topology adds to the structure (md/setup.c, -p); NULL pointers: nothing. */
struct hmd_system_extra {
    const double *mass;         /* [natoms] masses (g/mol) replacing the file's and the elements' */
    const unsigned char *typed; /* [natoms] the atoms that need a model type (the nnp-group); the
                                   others get type 0, which no provider of theirs reads */
};

/* From `frame` (significant on rank 0 only; NULL elsewhere, `path` names its file in messages):
 * maps elements to the model's types (every atom, or those of extra->typed; all type 0 when
 * `model` is NULL: a classical run), takes masses from extra->mass, else the file, else the
 * standard atomic weights, numbers atoms 0..n-1 in file order, chooses the domain grid for the
 * ranks (or `dd_request` when its entries are > 0) for ghost cut-off `cutoff` (Å), and gives each
 * rank the atoms of its subdomain, wrapped into the cell. Velocities come from the frame (zero if
 * none). Errors are the same on every rank (the message on the rank that found it): HMD_EDATA
 * for an atom whose element is not in the type map or has no known mass, or a cell too small
 * for the grid; HMD_EUSAGE for a bad dd_request; HMD_ENOMEM. */
int hmd_system_load(struct hmd_system *sys, const struct hmd_frame *frame, const char *path,
                    const struct hmd_dp_model *model, const struct hmd_system_extra *extra,
                    const int dd_request[3], double cutoff);

/* Frees what sys owns and zeroes it. */
void hmd_system_free(struct hmd_system *sys);

#endif /* HMD_MD_SYSTEM_H */
