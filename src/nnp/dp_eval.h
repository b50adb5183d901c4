/* Deep Potential energy, forces and virial on the CPU (reference, double precision).
 *
 * Input: nall atoms (nlocal home atoms first, then ghosts), their positions and model types,
 * and a full neighbour list of the home atoms (any cut-off >= rcut). Output: the energy and the
 * virial; per-atom energies of the home atoms, forces on all nall atoms (ghost forces still to
 * be summed onto their owners by the reverse halo) and per-atom virials ADDED to the caller's
 * arrays, so that the Deep Potential is one force provider among others (ff/provider.h).
 *
 * Neighbour selection is DeePMD-kit's (PyTorch backend, deepmd/pt/model/model/make_model.py
 * format_nlist + nlist_distinguish_types): keep neighbours with r <= rcut, take the nearest
 * sum(sel) of them; se_e2_a then splits them by type keeping the nearest sel[t] of each type,
 * DPA-1 keeps the one list; empty slots are -1 at the end. Model-level pair_exclude_types
 * remove neighbours first.
 *
 * Conventions: F_k = -dE/dx_k; virial W_ab = -sum_pairs (dE/dd_ij)_a d_ij,b, which equals
 * sum_k F_k,a x_k,b over all nall atoms (DeePMD-kit's `virial`); the atomic virial of a pair
 * term goes to the neighbour j, as in DeePMD-kit.
 *
 * Work is spread over OpenMP threads by centre atom; every sum onto shared atoms happens in a
 * fixed order, so results do not depend on the number of threads.
 */
#ifndef HMD_NNP_DP_EVAL_H
#define HMD_NNP_DP_EVAL_H

#include "nbr/nbr_list.h"
#include "nnp/model.h"

struct hmd_dp_output {
    int ncount;          /* in: centres 0..ncount-1 count towards energy and virial; the others
                            (replicated mode's halo atoms evaluated as full atoms) contribute
                            forces only. 0 means all nlocal. */
    double energy;       /* total potential energy of the home atoms (eV) */
    double *atom_energy; /* [nlocal] per-atom energy (eV) added, or NULL when not wanted */
    double *force;       /* [nall][3] forces (eV/Å), added to */
    double virial[9];    /* 3x3 row-major virial (eV) */
    double *atom_virial; /* [nall][9] per-atom virial (eV) added, or NULL when not wanted */
    long dropped;        /* out: neighbours within rcut the descriptor left out, over the
                            counted centres (more of a type than sel[t], or more than nnei): the
                            model then sees fewer neighbours than there are, as in DeePMD-kit */
};

/* Scratch of the evaluation, grown on demand (owned; free with hmd_dp_workspace_free). */
struct hmd_dp_workspace {
    int cap_local;       /* home atoms the per-atom arrays hold */
    int *slots;          /* [cap_local][nnei] formatted neighbours */
    double *T;           /* [cap_local][M*4] descriptor intermediates */
    double *D;           /* [cap_local][dim_descrpt] descriptors, then dE/dD */
    double *atom_e;      /* [cap_local] atomic energies */
    double *grad;        /* [cap_local][nnei][3] dE/dd_ij */
    int nthreads;        /* thread scratch sets allocated */
    double *thread_dbuf; /* per-thread doubles */
    int *thread_ibuf;    /* per-thread ints */
    size_t thread_doubles, thread_ints;
    int *order;        /* [cap_local] home atoms grouped by fitting net */
    int *dropped;      /* [cap_local] neighbours within rcut left out of each centre's slots */
    double *pad_table; /* DPA-1: the padding's share of T (hmd_dpa1_pad_table) */
    int pad_type;      /* DPA-1: the atom-0 type pad_table was made for, -1 before */
};

/* Evaluates the model. `type` [nall] are model type indices; `nl` lists neighbours of the
 * first nlocal atoms. `type0` is the type of the system's atom 0 (global id 0), which
 * DeePMD-kit gives to DPA-1's empty neighbour slots. Returns HMD_OK, or HMD_ENOMEM. */
int hmd_dp_compute_cpu(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws, int nlocal,
                       int nall, const double *x, const int *type, int type0,
                       const struct hmd_nbr_list *nl, struct hmd_dp_output *out);

/* Frees the workspace and zeroes it. */
void hmd_dp_workspace_free(struct hmd_dp_workspace *ws);

#endif /* HMD_NNP_DP_EVAL_H */
