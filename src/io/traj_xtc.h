/* Compressed GROMACS XTC trajectory (positions only, lossy: GROMACS's compressed-x-precision),
 * written through chemfiles (chemfiles.org, BSD), a maintained C/C++ library whose XTC code is
 * tested against GROMACS's files and readers. Why chemfiles: XTC's coordinate compression is
 * intricate and must match GROMACS bit for bit, and chemfiles is the one maintained
 * implementation with a C interface that a registry packages as a compiled library (the PyPI
 * wheel `chemfiles` ships libchemfiles.so); Debian has no xdrfile, libgromacs-dev installs
 * C++ headers without xtcio.h, and MDTraj and MDAnalysis compile xdrfile only into Python
 * extension modules.
 *
 * The library is loaded when the first XTC file is opened (dlopen), so halomd builds and runs
 * without it: from $HALOMD_CHEMFILES (the path of libchemfiles.so), else through the loader's
 * search path. `pip install chemfiles` and
 *   export HALOMD_CHEMFILES=$(python3 -c 'import chemfiles, os; print(os.path.join(
 *       os.path.dirname(chemfiles.__file__), "libchemfiles.so"))')
 * makes it available.
 *
 * Units: positions and cell in Å here; the file holds nm (chemfiles converts). Each frame
 * carries the step, the time (ps) and the cell; `precision` is GROMACS's (1/nm: 1000 keeps
 * 0.001 nm). The atoms written are an output group (compressed-x-grps), in the order given.
 */
#ifndef HMD_IO_TRAJ_XTC_H
#define HMD_IO_TRAJ_XTC_H

#include <stddef.h>
#include <stdint.h>

#include "core/box.h"

/* An open XTC trajectory (opaque). */
struct hmd_xtc_traj;

/* Backs up an existing `path` (io/backup.h; the note goes to `note`, capacity note_len, may be
 * NULL) and creates the XTC file for the atoms select[0..nselect) of arrays of `natoms` atoms
 * (all of them when select is NULL), with `precision` (1/nm, > 0). On success *traj is a new
 * handle owned by the caller (hmd_xtc_traj_close). Returns HMD_OK, HMD_ECONFIG (an index out of
 * range, nothing selected, precision not positive), HMD_ENOTSUP when libchemfiles cannot be
 * loaded (the message says how to install it), HMD_ECANTCREAT naming the file, or HMD_ENOMEM. */
int hmd_xtc_traj_open(const char *path, struct hmd_xtc_traj **traj, int natoms, const int *select,
                      int nselect, double precision, char *note, size_t note_len);

/* Appends one frame: positions x (natoms*3, Å) of the selected atoms, the cell (NULL: none,
 * written as a zero box), the step and the time (ps). Returns HMD_OK or HMD_EIO naming the file
 * and chemfiles's message. */
int hmd_xtc_traj_write_frame(struct hmd_xtc_traj *traj, const double *x, const struct hmd_box *box,
                             int64_t step, double time_ps);

/* Closes the file and frees the handle; NULL is accepted. Returns HMD_OK. */
int hmd_xtc_traj_close(struct hmd_xtc_traj *traj);

#endif /* HMD_IO_TRAJ_XTC_H */
