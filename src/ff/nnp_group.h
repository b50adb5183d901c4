/* The nnp-group of hybrid ML/MM: which atoms of the system the Deep Potential treats.
 *
 * The parameter's value is one of
 *   resname NAME [NAME ...]    every atom of residues with these names (the topology's [ atoms ])
 *   resid A[-B] [C[-D] ...]    every atom of these residues, numbered 1, 2, ... through the
 *                              whole system in topology order (as the .gro file of grompp or
 *                              editconf numbers them; not the per-molecule resnr of [ atoms ])
 *   NAME                       the index group NAME of the -n file (gmx make_ndx's groups)
 */
#ifndef HMD_FF_NNP_GROUP_H
#define HMD_FF_NNP_GROUP_H

#include "io/topology.h"

/* Fills group[top->natoms] (1: in the group, 0: not) from `spec` (the nnp-group value; `where`
 * names it in messages, "md.mdp:12"), the topology's residues and the index file `ndx` (NULL
 * when -n was not given). Errors name the parameter or the file: HMD_ECONFIG (an empty
 * selection, a group name without -n, a bad residue range), or the index reader's. */
int hmd_nnp_group_select(const char *spec, const char *where, const struct hmd_topology *top,
                         const char *ndx, unsigned char *group);

/* Atoms in group[natoms]. */
int hmd_nnp_group_count(const unsigned char *group, int natoms);

#endif /* HMD_FF_NNP_GROUP_H */
