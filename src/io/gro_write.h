/* GROMACS .gro writer, for the final configuration of a run (md.gro).
 *
 * Layout, as GROMACS writes it:
 *     <title> t= <time ps, %.5f> step= <step>
 *     <natoms>
 *     %5d%-5s%5s%5d%8.3f%8.3f%8.3f[%8.4f%8.4f%8.4f]   residue number, residue name, atom name,
 *                                                     atom number, x (nm), v (nm/ps)
 *     <box line>
 * Residue and atom numbers wrap at 100000 and names are cut to 5 characters, to keep the fixed
 * columns. The box line holds v1(x) v2(y) v3(z) in nm, followed by v1(y) v1(z) v2(x) v2(z)
 * v3(x) v3(y) when any of the last six is nonzero, or "0 0 0" (all zero) when there is no
 * cell. GRO has no periodicity flags: a cell is written whatever its flags.
 *
 * GRO can only hold a lower-triangular cell (a along x, b in the xy plane). A cell in any other
 * orientation is rotated into that form, and the positions and velocities with it, by one
 * proper rotation (see io/cell_rotation.h): distances and angles are kept, Cartesian
 * components are not.
 */
#ifndef HMD_IO_GRO_WRITE_H
#define HMD_IO_GRO_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/box.h"

/* Writes one configuration to `fp`. Arguments:
 *   title    first line, before " t= ... step= ..." (cut at a newline; may be "")
 *   natoms   number of atoms
 *   name     atom name per atom ("OW")
 *   resname  residue name per atom ("SOL"), or NULL: every atom in residue "MOL"
 *   resnr    residue number per atom, or NULL: every atom in residue 1
 *   x        positions, natoms*3 row-major (Å); written in nm
 *   v        velocities, natoms*3 (Å/ps), written in nm/ps; NULL leaves the columns out
 *   box      the cell, or NULL when there is none
 *   step, time_ps  MD step and time (ps) for the title
 * Returns HMD_OK or HMD_EIO with the OS reason (the caller prefixes the file name). */
int hmd_gro_write_to(FILE *fp, const char *title, int natoms, const char (*name)[8],
                     const char (*resname)[8], const int *resnr, const double *x, const double *v,
                     const struct hmd_box *box, int64_t step, double time_ps);

/* Backs up an existing `path` (see io/backup.h; the log note goes to `note`, capacity
 * `note_len`), then writes the configuration to it as hmd_gro_write_to() does.
 * Returns HMD_OK, HMD_ECANTCREAT (naming the file and the OS reason) or HMD_EIO. */
int hmd_gro_write(const char *path, const char *title, int natoms, const char (*name)[8],
                  const char (*resname)[8], const int *resnr, const double *x, const double *v,
                  const struct hmd_box *box, int64_t step, double time_ps, char *note,
                  size_t note_len);

#endif /* HMD_IO_GRO_WRITE_H */
