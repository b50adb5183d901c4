/* Per-atom arrays of one rank: home atoms 0..nlocal-1, then ghosts nlocal..nall-1.
 *
 * Ghosts are copies of atoms owned elsewhere (periodic images on one rank) made by the halo;
 * they carry positions, types and ids, never velocities. Arrays are x y z interleaved per atom.
 * Capacity grows only at neighbour-list steps (hmd_atoms_reserve).
 */
#ifndef HMD_CORE_ATOMS_H
#define HMD_CORE_ATOMS_H

#include <stdint.h>

struct hmd_atoms {
    int nlocal;   /* home atoms */
    int nghost;   /* ghost atoms after the home atoms */
    int cap;      /* capacity of every array, in atoms */
    double *x;    /* [cap][3] positions (Å) */
    double *v;    /* [cap][3] velocities (Å/ps), home atoms */
    double *f;    /* [cap][3] forces (eV/Å) */
    double *mass; /* [cap] masses (g/mol), home atoms */
    int *type;    /* [cap] model type index */
    int64_t *id;  /* [cap] global atom id, 0-based order of the input file */
};

/* Grows every array to hold at least n atoms, keeping contents. HMD_ENOMEM on failure. */
int hmd_atoms_reserve(struct hmd_atoms *atoms, int n);

/* Frees the arrays and zeroes the struct. */
void hmd_atoms_free(struct hmd_atoms *atoms);

/* nlocal + nghost */
static inline int hmd_atoms_nall(const struct hmd_atoms *atoms)
{
    return atoms->nlocal + atoms->nghost;
}

#endif /* HMD_CORE_ATOMS_H */
