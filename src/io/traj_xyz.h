/* Extended XYZ trajectory: one frame after another in one text file, as ASE
 * (`ase.io.read(path, index=':')`), OVITO and dpdata read it. Each frame is
 *
 *     <natoms>
 *     Lattice="ax ay az bx by bz cx cy cz"
 *         Properties=species:S:1:pos:R:3[:masses:R:1:momenta:R:3][:forces:R:3]
 *         energy=<eV> step=<n> time=<ps> pbc="T T T"          (one line)
 *     <species> <x y z> [<m> <px py pz>] [<fx fy fz>]         (natoms lines)
 *
 * in halomd's units, except the velocities: positions and cell in Å, forces in eV/Å, energy in
 * eV, time in ps. Velocities are written as ASE reads them (ase.io.read(...).get_velocities()):
 * momenta in amu Å per ASE time unit (1e-10 s sqrt(amu/e) = 0.010181 ps) beside a masses
 * column, the element's standard weight (1 for an unknown element), so that momenta / masses
 * is the velocity whatever masses the run used; halomd's own reader (io/xyz.c) turns them back
 * into Å/ps (within a few ulp). Without a cell, Lattice is left out and pbc="F F F". Every
 * number is written with 17 significant digits.
 */
#ifndef HMD_IO_TRAJ_XYZ_H
#define HMD_IO_TRAJ_XYZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/box.h"

/* An open extended XYZ trajectory (opaque). */
struct hmd_xyz_traj;

/* Writes one frame to `fp` (not flushed). Arguments:
 *   natoms   number of atoms
 *   element  element symbol per atom ("O"); an empty symbol is written as "X" (unknown)
 *   x        positions, natoms*3 row-major (Å)
 *   v        velocities, natoms*3 (Å/ps), or NULL to leave the masses and momenta columns out
 *   f        forces, natoms*3 (eV/Å), or NULL to leave the forces column out
 *   box      cell and periodic flags, or NULL when there is no cell
 *   step     MD step; time_ps the simulation time (ps); energy the potential energy (eV)
 * Returns HMD_OK or HMD_EIO with the OS reason (the caller prefixes the file name). */
int hmd_xyz_write_frame_to(FILE *fp, int natoms, const char (*element)[4], const double *x,
                           const double *v, const double *f, const struct hmd_box *box,
                           int64_t step, double time_ps, double energy);

/* Backs up an existing `path` (see io/backup.h; the log note goes to `note`, capacity
 * `note_len`) and creates the trajectory file. On success *traj is a new handle owned by the
 * caller, to be released with hmd_xyz_traj_close().
 * Returns HMD_OK, HMD_ECANTCREAT (naming the file and the OS reason) or HMD_ENOMEM. */
int hmd_xyz_traj_open(const char *path, struct hmd_xyz_traj **traj, char *note, size_t note_len);

/* Appends one frame (arguments as for hmd_xyz_write_frame_to()) and flushes it to the operating
 * system, so a crashed run keeps every complete frame.
 * Returns HMD_OK or HMD_EIO naming the file and the OS reason. */
int hmd_xyz_traj_write_frame(struct hmd_xyz_traj *traj, int natoms, const char (*element)[4],
                             const double *x, const double *v, const double *f,
                             const struct hmd_box *box, int64_t step, double time_ps,
                             double energy);

/* Closes the file and frees the handle; NULL is accepted.
 * Returns HMD_OK, or HMD_EIO when buffered data could not be written. */
int hmd_xyz_traj_close(struct hmd_xyz_traj *traj);

#endif /* HMD_IO_TRAJ_XYZ_H */
