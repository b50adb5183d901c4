/* Migrate (LAMMPS' exchange): at neighbour-list steps, home atoms that left this rank's
 * subdomain move to the rank that owns them now, with every field the table of core/atoms.h
 * marks HMD_FIELD_MIGRATE (positions, velocities, masses, types, ids, charges).
 *
 * Collective: every rank calls it at the same step.
 */
#ifndef HMD_DD_MIGRATE_H
#define HMD_DD_MIGRATE_H

#include "core/atoms.h"
#include "core/box.h"
#include "dd/domain.h"

/* Moves home atoms whose fractional position (atoms wrapped into the cell along periodic
 * vectors) lies outside this rank's subdomain to their owner, along a, then b, then c, and
 * (several ranks) leaves the home atoms in global id order. Ghosts must be absent (nghost 0).
 * HMD_ENOMEM on failure. */
int hmd_dd_migrate(struct hmd_atoms *atoms, const struct hmd_box *box, const struct hmd_domain *dd);

#endif /* HMD_DD_MIGRATE_H */
