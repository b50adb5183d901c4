/* A host force provider restricted to a subset of the atoms: the Deep Potential of hybrid ML/MM
 * (nnp-group) sees the group's atoms alone, as centres and as neighbours, as if the rest of the
 * system were not there.
 *
 * At every prepare the wrapper picks the rank's atoms whose global id is in the subset (home
 * atoms first, then ghosts, each in their order), and the neighbour list of those centres cut
 * down to those neighbours; at every compute it hands the inner provider those atoms' positions
 * and adds what it returns (forces, per-atom energies and virials) back onto the rank's atoms.
 * Energies, virial and terms go straight through. The copies cost O(atoms) per step.
 */
#ifndef HMD_FF_SUBSET_H
#define HMD_FF_SUBSET_H

#include "ff/provider.h"

/* Makes *p a host provider running host provider `inner` (taken over: destroyed with *p, also on
 * failure) on the atoms with in[id] != 0 (in [natoms], copied), giving it `type0` as the model
 * type of the subset's first atom (DPA-1's padding: the subset is the system the inner sees).
 * HMD_ENOMEM; HMD_ENOTSUP for a device provider. Free with hmd_force_provider_destroy. */
int hmd_ff_subset_create(struct hmd_force_provider *p, struct hmd_force_provider inner,
                         const unsigned char *in, int natoms, int type0);

#endif /* HMD_FF_SUBSET_H */
