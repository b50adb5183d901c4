/* Single points: a model evaluated on one configuration after another, with the model, the
 * workspace and the GPU context (backend = cuda) kept between them. `halomd eval` (every
 * frame of -c or -s, each model of -m) and the C API of bindings (api/halomd.h) evaluate
 * through it, so both do the same arithmetic: the same system set-up (md/system.h) and force
 * computation (md/forces.h) as step 0 of `halomd run`.
 *
 * Collective: open, eval and close are called by every rank in the same order; results are
 * significant on rank 0.
 */
#ifndef HMD_MD_EVALUATOR_H
#define HMD_MD_EVALUATOR_H

#include "core/params.h"
#include "io/structure.h"
#include "md/forces.h"
#include "md/system.h"
#include "nnp/model.h"

/* Results of one configuration, in the atom order of its frame (rank 0). The arrays belong to
 * the evaluator and stay valid until its next eval or close. */
struct hmd_eval_result {
    int natoms;
    double energy;             /* potential energy (eV) */
    double virial[9];          /* sum_k F_k (x) r_k over all atoms and images, row-major (eV) */
    const double *force;       /* [natoms][3] forces (eV/Å) */
    const double *atom_energy; /* [natoms] atomic energies (eV) */
    long dropped;              /* neighbours within rcut left out of the descriptors (beyond sel) */
};

struct hmd_evaluator {
    struct hmd_dp_model model; /* owned */
    struct hmd_params params;  /* as given, checked against the model's cut-off */
    int dd[3];                 /* domain grid requested (entries <= 0: chosen) */
    char backend[512];         /* the backend chosen, and why for auto's fallback (for logs) */
    struct hmd_system sys;     /* the last configuration (owned) */
    struct hmd_forces fs;      /* kept between configurations (owned) */
    double *force;             /* [cap][3] rank 0: gathered forces (owned) */
    double *atom_energy;       /* [cap] rank 0: gathered atomic energies (owned) */
    int cap;
};

/* Reads the model at `path` and prepares it as `p` says (model compression, hmd_model_setup),
 * checks `p` against its cut-off (hmd_params_check on a copy) and selects p->backend in
 * p->precision (md/backend.h: "cuda" fails without a usable GPU, "auto" falls
 * back to the CPU). `dd` (NULL: chosen) is the domain grid for mpirun. `ev` must stay at its
 * address until closed. Errors carry the reader's, parameter check's or backend's message; on
 * error ev still needs hmd_evaluator_close. */
int hmd_evaluator_open(struct hmd_evaluator *ev, const char *path, const struct hmd_params *p,
                       const int dd[3]);

/* Evaluates `frame` (significant on rank 0 only, NULL elsewhere; `path` names its file in
 * messages): elements mapped to the model's types, the cell (or, without one, a non-periodic
 * frame around the atoms), the neighbour list with the run's skin, energy, forces, virial and
 * atomic energies into *res (rank 0). Errors: those of hmd_system_load (an element not in the
 * type map, a cell too small), hmd_forces_rebuild and hmd_forces_compute, HMD_ENOMEM. */
int hmd_evaluator_eval(struct hmd_evaluator *ev, const struct hmd_frame *frame, const char *path,
                       struct hmd_eval_result *res);

/* Frees what ev owns and zeroes it; safe after a failed open and on a zeroed struct. */
void hmd_evaluator_close(struct hmd_evaluator *ev);

#endif /* HMD_MD_EVALUATOR_H */
