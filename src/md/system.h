/* From a structure frame and a model to the arrays MD and eval work on: model types mapped
 * from elements, masses, global ids, the cell. */
#ifndef HMD_MD_SYSTEM_H
#define HMD_MD_SYSTEM_H

#include "core/atoms.h"
#include "core/box.h"
#include "io/structure.h"
#include "nnp/model.h"

/* Fills `atoms` (home atoms only, ids 0..n-1 in file order, velocities from the frame or zero,
 * masses from the frame or the standard weight of each element) and `box` (the frame's cell;
 * for a frame without one, a non-periodic cell spanning the atoms, used only to bin them).
 * `path` names the structure file in messages. Errors: HMD_EDATA for an atom whose element is
 * not in the model's type map or has no known mass; HMD_ENOMEM. */
int hmd_system_init(struct hmd_atoms *atoms, struct hmd_box *box, const struct hmd_frame *frame,
                    const char *path, const struct hmd_dp_model *model);

#endif /* HMD_MD_SYSTEM_H */
