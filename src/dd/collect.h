/* Moving whole-system data between rank 0 and the subdomains: scatter at start, gather for
 * output. Collective. */
#ifndef HMD_DD_COLLECT_H
#define HMD_DD_COLLECT_H

#include <stdint.h>

#include "core/atoms.h"
#include "core/box.h"

struct hmd_domain;

/* From `all` (the whole system, significant on rank 0 only: natoms home atoms with x, v, mass,
 * type, id) to `mine` (the home atoms of this rank's subdomain, wrapped into the cell along
 * periodic vectors). `natoms` and `box` must be equal on every rank. HMD_ENOMEM on failure. */
int hmd_collect_scatter(const struct hmd_atoms *all, int natoms, const struct hmd_box *box,
                        const struct hmd_domain *dd, struct hmd_atoms *mine);

/* Gathers ncomp doubles per home atom (values[nlocal][ncomp], atom k has global id id[k]) into
 * out[natoms][ncomp] on rank 0, ordered by global id (out may be NULL on other ranks).
 * HMD_ENOMEM on failure (on any rank). */
int hmd_collect_gather(const int64_t *id, const double *values, int nlocal, int ncomp, double *out,
                       int natoms);

#endif /* HMD_DD_COLLECT_H */
