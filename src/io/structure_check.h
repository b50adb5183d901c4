/* Checks of a structure's positions that no reader's syntax catches, run by hmd_structure_read
 * on every frame: each with its own message, naming the file, the frame and the atoms (with
 * their lines where the reader recorded them).
 *   - absurd coordinates: |x| above HMD_STRUCTURE_MAX_COORD Å (1e30 read as a number is still
 *     not a position);
 *   - overlapping atoms: two atoms closer than HMD_STRUCTURE_MIN_DIST Å (a duplicated line,
 *     two molecules pasted at one place); periodic images are compared after wrapping into the
 *     cell, so two atoms a cell vector apart overlap too. Pairs closer than that across a
 *     periodic face are not seen here (the neighbour list sees them), nor sites without an
 *     element (virtual sites such as TIP4P's MW, which the model's type map refuses anyway).
 * The overlap search bins atoms in cells of HMD_STRUCTURE_MIN_DIST through a hash table: time
 * and memory linear in the atom count.
 */
#ifndef HMD_IO_STRUCTURE_CHECK_H
#define HMD_IO_STRUCTURE_CHECK_H

#include "io/structure.h"

#define HMD_STRUCTURE_MAX_COORD 1e6 /* Å */
#define HMD_STRUCTURE_MIN_DIST 0.1  /* Å */

/* Checks frame number `index` (from 1) of `path`. Returns HMD_OK, HMD_EDATA with the message,
 * or HMD_ENOMEM. */
int hmd_structure_check(const struct hmd_frame *frame, const char *path, int index);

#endif /* HMD_IO_STRUCTURE_CHECK_H */
