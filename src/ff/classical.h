/* The classical force field of a GROMACS topology as a host force provider (ff/provider.h):
 * Lennard-Jones (cut-off with GROMACS's modifiers) and reaction-field or cut-off Coulomb
 * between the pairs the topology does not exclude, the reaction-field correction of excluded
 * pairs and the self term, 1-4 pairs, harmonic bonds and angles, Urey-Bradley angles, proper
 * and improper dihedrals. The CPU reference, in double; the CUDA twin is cuda/ff_classical.h.
 *
 * The provider reads io->x and io->id (global ids: parameters are looked up by id, so ghosts
 * need no per-atom fields beyond positions and ids), the full neighbour list io->nl of the home
 * atoms, and adds forces, energies (its terms: GROMACS's names, ff/ff_model.h), virial and, when
 * asked, per-atom energies and virials. How each interaction is counted once over the ranks of a
 * domain decomposition: ff/ff_plan.h.
 */
#ifndef HMD_FF_CLASSICAL_H
#define HMD_FF_CLASSICAL_H

#include "core/params.h"
#include "ff/ff_model.h"
#include "ff/provider.h"

/* The settings of the run's parameters (define aside): coulombtype, coulomb-modifier,
 * rcoulomb, epsilon-r, epsilon-rf, vdw-modifier, rvdw, rvdw-switch. HMD_ECONFIG names the keys
 * and where their values came from when they do not go together (a switch at or beyond the
 * cut-off). */
int hmd_ff_settings_from_params(const struct hmd_params *p, struct hmd_ff_settings *s);

/* Makes *p the host provider of topology `top` (borrowed during the call: the provider keeps
 * what it needs) with settings `s`. Returns HMD_OK, HMD_ECONFIG (settings), HMD_ENOMEM; *p is
 * zeroed on failure. Free with hmd_force_provider_destroy. */
int hmd_ff_classical_create(struct hmd_force_provider *p, const struct hmd_topology *top,
                            const struct hmd_ff_settings *s);

/* The same provider computing the way the GPU does (cuda/ff_classical.cu): the full-mode plan,
 * every pair from both sides, bonded forces through per-interaction slots summed atom by atom;
 * no per-atom virials (HMD_ENOTSUP). The host replay of the device provider's algorithm, which
 * the tests compare with the reference on machines without a GPU. */
int hmd_ff_classical_create_twin(struct hmd_force_provider *p, const struct hmd_topology *top,
                                 const struct hmd_ff_settings *s);

#endif /* HMD_FF_CLASSICAL_H */
