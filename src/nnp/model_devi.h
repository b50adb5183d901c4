/* Model deviation of an ensemble of Deep Potential models (active learning, DP-GEN): how much
 * several models trained on the same data disagree on one configuration. The frames where they
 * disagree most are the ones worth labelling.
 *
 * Definitions (DeePMD-kit: deepmd/infer/model_devi.py for `dp model-devi`, and
 * source/api_cc DeepPotModelDevi with source/lmp/pair_deepmd.cpp for LAMMPS's
 * `pair_style deepmd m1 m2 ... out_freq N [relative eps] [relative_v eps_v] [atomic]`), with
 * populations standard deviations (1/n, not 1/(n-1)) over the n models:
 *   force, per atom i:   e_i = sqrt( sum_d std_k(F_k,i,d)^2 )   (eV/Å)
 *     relative:          e_i / (|mean_k F_k,i| + relative)      (dimensionless)
 *     max_devi_f, min_devi_f, avg_devi_f: largest, smallest and mean e_i over the atoms
 *   virial, per component c of W_k / natoms:  s_c = std_k(W_k,c / natoms)   (eV)
 *     relative_v:        s_c / (|mean_k W_k,c / natoms| + relative_v), component by component,
 *                        as LAMMPS's pair_style deepmd (`dp model-devi --relative_v` divides by
 *                        the norm of the whole mean virial instead; docs/active_learning.md)
 *     max_devi_v, min_devi_v over the 9 components; avg_devi_v = sqrt(sum_c s_c^2 / 9)
 *   energy:              devi_e = std_k(E_k / natoms)   (eV; dp model-devi's last column)
 */
#ifndef HMD_NNP_MODEL_DEVI_H
#define HMD_NNP_MODEL_DEVI_H

#include "nnp/model.h"

struct hmd_model_devi {
    double max_devi_v, min_devi_v, avg_devi_v; /* eV, or dimensionless with relative_v */
    double max_devi_f, min_devi_f, avg_devi_f; /* eV/Å, or dimensionless with relative */
    double devi_e;                             /* eV */
};

/* Deviation of `nmodels` >= 1 evaluations of one configuration of `natoms` >= 1 atoms:
 * force[k] ([natoms][3], eV/Å), virial[k] ([9], eV) and energy[k] (eV) of model k.
 * `relative` and `relative_v` are the level parameters of the relative modes (> 0), or 0 for
 * absolute deviations. `atom_devi` ([natoms], or NULL) receives e_i. */
void hmd_model_devi_compute(int nmodels, int natoms, const double *const *force,
                            const double *const *virial, const double *energy, double relative,
                            double relative_v, struct hmd_model_devi *out, double *atom_devi);

/* Checks that `nmodels` models (named by `paths` in messages) can make a deviation together:
 * the same cut-off, and the same types in any order. map[k * ntypes + t] (ntypes of model 0;
 * map holds nmodels * ntypes ints) receives the type of model k that is type t of model 0, so
 * that types indexed by model 0 can be handed to every model. HMD_EDATA with a message naming
 * both files otherwise. */
int hmd_model_devi_check(const struct hmd_dp_model *const *models, const char *const *paths,
                         int nmodels, int *map);

#endif /* HMD_NNP_MODEL_DEVI_H */
