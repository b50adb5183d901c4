/* H5MD trajectory (h5md.nongnu.org, version 1.1) through HDF5: positions, velocities and
 * forces of one output group of atoms, in double precision, read by MDAnalysis (H5MDReader),
 * h5py and pyh5md. Layout:
 *   /h5md                 attribute version = [1, 1]; groups author (name) and creator
 *                         (name "halomd", version)
 *   /particles/<group>/box                attributes dimension = 3, boundary = "periodic" or
 *                                         "none" per direction
 *   /particles/<group>/box/edges          {step, time, value[frame][3][3]} the cell vectors as
 *                                         rows (Å), one entry per position frame (periodic only)
 *   /particles/<group>/position           {step, time, value[frame][n][3]}  Angstrom
 *   /particles/<group>/velocity           {step, time, value[frame][n][3]}  Angstrom ps-1
 *   /particles/<group>/force              {step, time, value[frame][n][3]}  kJ mol-1 Angstrom-1
 *   /particles/<group>/species            [n] atomic numbers (0 = unknown)
 *   /particles/<group>/id                 [n] the atoms' indices in the structure file (from 0)
 * step is int64, time float64 (ps). Each element has its own step and time series, so
 * positions, velocities and forces may be written at different intervals. Forces are
 * converted from eV/Å (x 96.48533212331002) because MDAnalysis accepts only kJ/mol or kcal/mol
 * force units. Values are chunked by frame and by up to 32,768 atoms and written from the
 * caller's arrays through a buffer of that many atoms, whatever the system's size.
 */
#ifndef HMD_IO_TRAJ_H5MD_H
#define HMD_IO_TRAJ_H5MD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/box.h"

/* Factor from eV/Å to kJ/mol/Å (eV x N_A / 1000). */
#define HMD_KJMOL_PER_EV 96.48533212331002

/* An open H5MD trajectory (opaque). */
struct hmd_h5md_traj;

/* What the file holds: bits of the `what` argument of hmd_h5md_traj_open(). */
enum { HMD_H5MD_POSITION = 1, HMD_H5MD_VELOCITY = 2, HMD_H5MD_FORCE = 4 };

/* Backs up an existing `path` (io/backup.h; the log note goes to `note`, capacity note_len,
 * may be NULL) and creates the file for the atoms `select[0..nselect)` (indices into arrays of
 * `natoms` atoms, each in 0..natoms-1, copied), or for all natoms atoms when select is NULL.
 * `group` names the particles group ("all" when NULL or empty); `species` (natoms atomic
 * numbers, may be NULL) fills /particles/<group>/species; `what` is a set of HMD_H5MD_* bits;
 * `box` gives the periodic flags (NULL: no cell, boundary "none"). On success *traj is a new
 * handle owned by the caller, to be released with hmd_h5md_traj_close().
 * Returns HMD_OK, HMD_ECONFIG (an index out of range, nothing selected), HMD_ECANTCREAT naming
 * the file, or HMD_ENOMEM. */
int hmd_h5md_traj_open(const char *path, struct hmd_h5md_traj **traj, int natoms, const int *select,
                       int nselect, const char *group, const int *species, int what,
                       const struct hmd_box *box, const char *program_version, char *note,
                       size_t note_len);

/* Appends one entry to each element given: positions x (natoms*3, Å; with the cell `box` when
 * the file is periodic), velocities v (Å/ps), forces f (eV/Å); each may be NULL (nothing
 * written for it at this step), and an element the file was not opened for is refused.
 * `step` and `time_ps` label the entries. The file is flushed, so a crashed run keeps every
 * complete frame. Returns HMD_OK, HMD_EIO naming the file and the dataset, or HMD_ESOFTWARE
 * for an element the file does not hold or a periodic file's missing box. */
int hmd_h5md_traj_write_frame(struct hmd_h5md_traj *traj, const double *x, const double *v,
                              const double *f, const struct hmd_box *box, int64_t step,
                              double time_ps);

/* Closes the file and frees the handle; NULL is accepted.
 * Returns HMD_OK or HMD_EIO naming the file. */
int hmd_h5md_traj_close(struct hmd_h5md_traj *traj);

#endif /* HMD_IO_TRAJ_H5MD_H */
