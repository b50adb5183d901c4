/* AMBER NetCDF trajectory (ambermd.org/netcdf/nctraj.xhtml, ConventionVersion 1.0), the binary
 * trajectory that MDAnalysis, MDTraj, ASE, OVITO, VMD and cpptraj all read.
 *
 * The file is classic NetCDF with 64-bit offsets (CDF-2), as the convention requires. Layout:
 *   global   Conventions "AMBER", ConventionVersion "1.0", program "halomd", programVersion
 *   dims     frame (unlimited), spatial 3, atom, cell_spatial 3, cell_angular 3, label 5
 *   time(frame)                          float   picosecond
 *   spatial, cell_spatial, cell_angular  char    "xyz", "abc", "alpha" "beta" "gamma"
 *   coordinates(frame, atom, spatial)    float   angstrom
 *   velocities(frame, atom, spatial)     float   angstrom/picosecond   (when requested)
 *   forces(frame, atom, spatial)         float   kilocalorie/mole/angstrom   (when requested)
 *   cell_lengths(frame, cell_spatial)    double  angstrom   (periodic systems)
 *   cell_angles(frame, cell_angular)     double  degree     (periodic systems)
 * Forces are converted from eV/Å (x 23.060547830619026), because readers (MDAnalysis) check
 * that unit. Readers rebuild the cell from lengths and angles as a along +x and b in the xy
 * plane; for a cell in another orientation, coordinates, velocities and forces are rotated
 * with the cell into that orientation (see io/cell_rotation.h). Atom names and elements are
 * not part of the format: pair the file with a topology (the GRO or PDB written at the start).
 *
 * Without NetCDF in the build (HMD_HAVE_NETCDF 0) these functions are stubs that return
 * HMD_ENOTSUP.
 */
#ifndef HMD_IO_TRAJ_NETCDF_H
#define HMD_IO_TRAJ_NETCDF_H

#include <stdbool.h>
#include <stddef.h>

#include "core/box.h"
#include "core/error.h"

/* Factor from eV/Å to kcal/mol/Å (the forces unit of the AMBER convention). */
#define HMD_KCALMOL_PER_EV 23.060547830619026

/* An open AMBER NetCDF trajectory (opaque). */
struct hmd_netcdf_traj;

#if HMD_HAVE_NETCDF

/* Backs up an existing `path` (see io/backup.h; the log note goes to `note`, capacity
 * `note_len`) and creates the trajectory for `natoms` atoms, with velocities and forces
 * variables when has_velocities / has_forces, and cell variables when `periodic`.
 * `program_version` ("0.1.0") is stored as the programVersion attribute. On success *traj is a
 * new handle owned by the caller, to be released with hmd_netcdf_traj_close().
 * Returns HMD_OK, HMD_ECANTCREAT (naming the file and the reason) or HMD_ENOMEM. */
int hmd_netcdf_traj_open(const char *path, struct hmd_netcdf_traj **traj, int natoms,
                         bool has_velocities, bool has_forces, bool periodic,
                         const char *program_version, char *note, size_t note_len);

/* Appends one frame: positions x (natoms*3, Å), velocities v (natoms*3, Å/ps; required when
 * opened with has_velocities, otherwise ignored), forces f (natoms*3, eV/Å; required when opened
 * with has_forces, otherwise ignored), the cell `box` (required when opened periodic, otherwise
 * ignored) and the simulation time (ps). The frame is synced to the file, so a crashed run
 * keeps every complete frame.
 * Returns HMD_OK, HMD_EIO naming the file and the reason, or HMD_ESOFTWARE when an array or
 * box the file was opened for is NULL. */
int hmd_netcdf_traj_write_frame(struct hmd_netcdf_traj *traj, const double *x, const double *v,
                                const double *f, const struct hmd_box *box, double time_ps);

/* Closes the file and frees the handle; NULL is accepted.
 * Returns HMD_OK or HMD_EIO naming the file and the reason. */
int hmd_netcdf_traj_close(struct hmd_netcdf_traj *traj);

#else

static inline int hmd_netcdf_traj_open(const char *path, struct hmd_netcdf_traj **traj, int natoms,
                                       bool has_velocities, bool has_forces, bool periodic,
                                       const char *program_version, char *note, size_t note_len)
{
    *traj = NULL;
    return hmd_error_set(HMD_ENOTSUP,
                         "cannot write %s: this halomd was built without NetCDF; install "
                         "libnetcdf-dev and rebuild, or choose the xyz trajectory format",
                         path);
}

static inline int hmd_netcdf_traj_write_frame(struct hmd_netcdf_traj *traj, const double *x,
                                              const double *v, const double *f,
                                              const struct hmd_box *box, double time_ps)
{
    return hmd_error_set(HMD_ENOTSUP, "this halomd was built without NetCDF");
}

static inline int hmd_netcdf_traj_close(struct hmd_netcdf_traj *traj)
{
    return HMD_OK;
}

#endif /* HMD_HAVE_NETCDF */

#endif /* HMD_IO_TRAJ_NETCDF_H */
