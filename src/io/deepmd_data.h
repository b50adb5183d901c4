/* DeePMD-kit data systems (the training and test data of `dp train` and `dp test`):
 *
 *   system/type.raw        one integer type per atom (whitespace separated)
 *   system/type_map.raw    optional: the name of each type (usually element symbols)
 *   system/nopbc           optional: the system is not periodic (no box.npy needed)
 *   system/set.NNN/coord.npy (nframes, natoms * 3) positions (Å)
 *   system/set.NNN/box.npy   (nframes, 9) cell vectors a, b, c as rows (Å)
 *   system/set.NNN/energy.npy, force.npy, virial.npy: optional labels (eV, eV/Å, eV)
 *
 * Sets are read in the sorted order of their names and concatenated, as DeePMD-kit's
 * DeepmdData does; labels other than coord may have any shape with the right number of values
 * (DeePMD-kit reshapes them). A label is used when every set has it; one that only some sets
 * have is refused (DeePMD-kit would take its presence from the first set and zeros elsewhere).
 * Mixed-type systems (real_atom_types.npy) are refused.
 */
#ifndef HMD_IO_DEEPMD_DATA_H
#define HMD_IO_DEEPMD_DATA_H

#include <stdbool.h>

#include "io/structure.h"

struct hmd_deepmd_system {
    char *path;          /* the system folder (owned) */
    int natoms;          /* atoms per frame */
    int *type;           /* [natoms] type.raw (owned) */
    int ntypes;          /* names in type_map.raw; 0 when there is none */
    char (*type_map)[8]; /* [ntypes] type names (owned), or NULL */
    bool pbc;            /* no `nopbc` file */
    int nsets;           /* set.* folders read */
    int nframes;         /* frames over all sets */
    double *coord;       /* [nframes][natoms * 3] Å (owned) */
    double *box;         /* [nframes][9] Å, or NULL when not periodic (owned) */
    double *energy;      /* [nframes] eV, or NULL when unlabelled (owned) */
    double *force;       /* [nframes][natoms * 3] eV/Å, or NULL (owned) */
    double *virial;      /* [nframes][9] eV, or NULL (owned) */
};

/* Reads the system folder `dir` into `sys` (zeroed first). Errors name the file and, for
 * type.raw and type_map.raw, the line: HMD_ENOINPUT (no type.raw, no set.* folder, no
 * coord.npy or box.npy where needed), HMD_EDATA (a malformed file, a type without a name in
 * type_map.raw, arrays whose sizes do not fit natoms and the frame count, a label present in
 * some sets only), HMD_ENOTSUP (mixed-type data), HMD_ENOMEM. On error sys holds nothing. */
int hmd_deepmd_system_read(const char *dir, struct hmd_deepmd_system *sys);

/* Frees what sys owns and zeroes it; safe on a zeroed struct. */
void hmd_deepmd_system_free(struct hmd_deepmd_system *sys);

/* Every system under `root` (root itself included): the folders holding a type.raw, in sorted
 * order, as `dp test -s` finds them. *paths (owned by the caller: free each, then the array)
 * holds *n >= 1 paths. HMD_ENOINPUT when root cannot be read or holds no system. */
int hmd_deepmd_find_systems(const char *root, char ***paths, int *n);

/* Frame f of sys as a structure frame (`frame` is allocated; free with hmd_frame_free):
 * positions, the cell (periodic along a, b, c) unless the system is not periodic, and as each
 * atom's element and name the type's name: from type_map.raw, else from `type_map`
 * (`ntypes` names: the model's, which then indexes type.raw directly). Masses are 1 g/mol
 * (single points do not use them); frame->line numbers the atoms from 1, as lines of type.raw.
 * HMD_EDATA names type.raw when a type has no name or a name is longer than 3 characters;
 * HMD_ENOMEM. */
int hmd_deepmd_system_frame(const struct hmd_deepmd_system *sys, int f, const char *const *type_map,
                            int ntypes, struct hmd_frame *frame);

#endif /* HMD_IO_DEEPMD_DATA_H */
