/* Output groups: which atoms a trajectory writes (compressed-x-grps, h5md-grps), named as
 * GROMACS's default index groups name them, without an index file:
 *   System      every atom
 *   Water       residues named SOL, WAT, HOH, TIP3, TIP4, TIP5, SPC or SPCE
 *   non-Water   every other atom
 *   <resname>   the atoms of residues of that name ("SOL", "NA", "LIG"; as written in the file)
 *   <element>   with a leading '@': the atoms of that element ("@O", "@Na")
 * A list of names ("Water NA CL") selects their union; atoms keep the structure's order.
 * Names compare exactly, except Water / non-Water / System, which are case-insensitive as in
 * GROMACS.
 */
#ifndef HMD_IO_OUT_GROUPS_H
#define HMD_IO_OUT_GROUPS_H

#include "io/structure.h"

/* Resolves `spec` (space-separated names; `key` names the parameter for messages) against the
 * atoms of `frame`. On success *select (owned by the caller, free()) holds the indices of the
 * selected atoms in increasing order and *nselect their count; for "System" alone *select is
 * NULL and *nselect = frame->natoms (writers take NULL as "every atom").
 * Returns HMD_OK, HMD_ECONFIG naming the key and the group when a name matches no atom or the
 * spec is empty (listing the residue names the structure has), or HMD_ENOMEM. */
int hmd_out_group_select(const char *spec, const char *key, const struct hmd_frame *frame,
                         int **select, int *nselect);

/* A writer's copy of a selection: checks that select[0..nselect) (or, when select is NULL,
 * all natoms atoms) is a non-empty set of indices in 0..natoms-1, and sets *copy (owned by the
 * caller; NULL for all atoms) and *n. Returns HMD_OK, HMD_ECONFIG naming `path`, or
 * HMD_ENOMEM. */
int hmd_out_group_copy(const char *path, int natoms, const int *select, int nselect, int **copy,
                       int *n);

#endif /* HMD_IO_OUT_GROUPS_H */
