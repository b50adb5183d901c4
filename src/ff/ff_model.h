/* The classical force field of a system: a GROMACS topology's parameters by global atom index
 * with the nonbonded settings of the run, in the form the providers (ff/classical.h, its CUDA
 * twin) evaluate. Built once; owns copies of everything it needs (the topology may be freed).
 *
 * Energy terms have GROMACS's names and order (gmx energy): Bond, Angle, U-B, Proper Dih.,
 * Improper Dih., Per. Imp. Dih., LJ-14, Coulomb-14 for the interactions the topology has, then
 * LJ (SR) and Coulomb (SR) always. Coulomb (SR) includes, as in GROMACS's Verlet scheme, the
 * reaction-field correction of excluded pairs and the self term of every atom.
 */
#ifndef HMD_FF_FF_MODEL_H
#define HMD_FF_FF_MODEL_H

#include <stdbool.h>

#include "ff/ff_kernels.h"
#include "io/topology.h"

enum hmd_ff_coulomb { HMD_FF_COULOMB_CUTOFF, HMD_FF_COULOMB_REACTION_FIELD };

/* Nonbonded settings (the mdp keys of core/params.h), halomd units. */
struct hmd_ff_settings {
    enum hmd_ff_coulomb coulomb;
    bool coulomb_shift; /* cut-off: potential shifted to zero at rcoulomb */
    double rcoulomb;    /* Å */
    double epsilon_r;   /* 0 = infinity: no electrostatics */
    double epsilon_rf;  /* reaction field; 0 = infinity */
    int vdw_modifier;   /* HMD_FF_VDW_* (ff/ff_kernels.h) */
    double rvdw;        /* Å */
    double rvdw_switch; /* Å, force-switch and potential-switch */
    /* hybrid ML/MM (nnp-group): [natoms] nonzero for the atoms the Deep Potential treats, whose
     * interactions among themselves the model leaves out (bonded terms and 1-4 pairs with
     * every atom in the group, nonbonded pairs and excluded-pair corrections within the group,
     * the group's self terms); NULL: none. Borrowed during hmd_ff_model_create. */
    const unsigned char *nnp_group;
};

/* GROMACS's name of a term ("Coulomb (SR)"). */
const char *hmd_ff_term_name(int term);

struct hmd_ff_model {
    int natoms;
    /* per atom, by global index */
    double *charge;       /* e */
    int *type;            /* Lennard-Jones type */
    unsigned char *group; /* [natoms] the nnp-group (settings' nnp_group, copied), or NULL */
    int ntypes;
    double *c6, *c12; /* [ntypes][ntypes] eV Å^6, eV Å^12 */
    /* excluded pairs, as struct hmd_topology's excl_start / excl */
    int *excl_start, *excl;
    /* bonded interactions (a pair's p[2] set to its Coulomb prefactor, eV Å) */
    int ninter;
    struct hmd_top_interaction *inter;
    /* interactions by owner (their first atom): own[own_start[a] .. own_start[a+1]) */
    int *own_start, *own;
    /* interactions by every atom they join */
    int *member_start, *member;
    struct hmd_ff_nb nb;
    double cutoff; /* the longer of rcoulomb and rvdw (Å) */
    /* terms reported: slot[t] is term t's index in the provider's list or -1; names in order */
    int nterms;
    int slot[HMD_FF_NTERMS];
    const char *names[HMD_FF_NTERMS];
};

/* Checks the settings (HMD_ECONFIG naming the mdp key: switch distances, cut-offs) and fills
 * the nonbonded constants as GROMACS 2022 computes them (interaction_const.cpp). */
int hmd_ff_nb_init(struct hmd_ff_nb *nb, const struct hmd_ff_settings *s);

/* Builds the model of topology `top` (borrowed during the call) with settings `s`. HMD_ECONFIG
 * for bad settings, HMD_ENOMEM. On failure *m is zeroed. */
int hmd_ff_model_create(struct hmd_ff_model *m, const struct hmd_topology *top,
                        const struct hmd_ff_settings *s);

/* Whether global atoms a and b both lie in the nnp-group (their pair is the Deep Potential's). */
static inline bool hmd_ff_model_both_in_group(const struct hmd_ff_model *m, int a, int b)
{
    return m->group && m->group[a] && m->group[b];
}

/* Whether global atoms a and b are an excluded pair. */
bool hmd_ff_model_excluded(const struct hmd_ff_model *m, int a, int b);

void hmd_ff_model_free(struct hmd_ff_model *m);

#endif /* HMD_FF_FF_MODEL_H */
