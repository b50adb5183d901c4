/* Borders (LAMMPS' name): at neighbour-list steps, decides which atoms become ghosts where (a
 * new halo plan, dd/halo_plan.h) and creates them with the fields the table of core/atoms.h marks
 * HMD_FIELD_BORDER (positions shifted across periodic boundaries, types, ids, charges).
 *
 * Collective: every rank calls it at the same step.
 */
#ifndef HMD_DD_BORDERS_H
#define HMD_DD_BORDERS_H

#include "core/atoms.h"
#include "core/box.h"
#include "dd/domain.h"
#include "dd/halo_plan.h"

/* Rebuilds `plan` and the ghosts of `atoms` (nghost is reset): every atom of another
 * subdomain, or periodic image, within `cutoff` (Å) of this subdomain along each vector becomes
 * a ghost. Returns HMD_EDATA when a subdomain is thinner than cutoff / HMD_HALO_MAX_PULSES
 * along a vector with periodic images (the message says how thin and what is needed),
 * HMD_ENOMEM on allocation failure. */
int hmd_dd_borders(struct hmd_halo_plan *plan, struct hmd_atoms *atoms, const struct hmd_box *box,
                   const struct hmd_domain *dd, double cutoff);

#endif /* HMD_DD_BORDERS_H */
