/* Structure files: GROMACS .gro, PDB, extended XYZ, LAMMPS data.
 *
 * A reader turns a file into one or more frames (struct hmd_frame) in halomd's units (Å, Å/ps,
 * g/mol). Readers know nothing of models: each atom carries an element symbol (given by the file
 * or guessed from its atom name as GROMACS does) and hmd_frame_map_types() maps elements to a
 * model's type map afterwards.
 *
 * Every error names the file and line (HMD_EDATA for malformed content, HMD_ENOINPUT for a file
 * that cannot be opened).
 */
#ifndef HMD_IO_STRUCTURE_H
#define HMD_IO_STRUCTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "core/box.h"
#include "io/text.h"

enum hmd_structure_format {
    HMD_FORMAT_UNKNOWN = 0,
    HMD_FORMAT_GRO,
    HMD_FORMAT_PDB,
    HMD_FORMAT_XYZ, /* extended XYZ (plain XYZ is the special case with no header keys) */
    HMD_FORMAT_LAMMPS_DATA,
};

/* One configuration. All arrays have natoms entries (x and v: natoms*3, row-major x y z) and
 * are owned by the frame. */
struct hmd_frame {
    int natoms;
    double *x;          /* positions (Å) */
    double *v;          /* velocities (Å/ps); NULL when the file has none */
    double *mass;       /* masses (g/mol); NULL unless the file gives them (LAMMPS Masses) */
    char (*element)[4]; /* element symbol per atom, capitalised ("O", "Cl"); "" if unknown */
    char (*name)[8];    /* atom name as written (GRO/PDB atom name, XYZ species, LAMMPS type) */
    char (*resname)[8]; /* residue name (GRO/PDB); NULL for formats without residues */
    int *resnr;         /* residue number (GRO/PDB); NULL for formats without residues */
    int *line;          /* line of the file where the atom is written (1-based), for messages */
    bool has_box;       /* false: the file has no cell; the system is not periodic */
    struct hmd_box box; /* cell (valid when has_box; periodic flags from the file) */
    double time;        /* time stamp of the frame (ps), 0 when the file has none */
    char title[128];    /* title or comment line, may be empty */
};

/* Resets `frame` (no box, time 0, empty title) and allocates its per-atom arrays for
 * `natoms` >= 0 atoms, zeroed; v, mass, resname and resnr stay NULL for the reader to add.
 * Returns HMD_ENOMEM on failure (the frame is then zeroed). */
int hmd_frame_alloc(struct hmd_frame *frame, int natoms);

/* Frees what a frame owns and zeroes it. Safe on a zeroed frame. */
void hmd_frame_free(struct hmd_frame *frame);

/* Frees an array of frames returned by hmd_structure_read() and the array itself. */
void hmd_frames_free(struct hmd_frame *frames, int nframes);

/* Format from the file name extension (.gro, .pdb/.ent, .xyz/.extxyz, .data/.lmp/.lammps),
 * else from the first lines of the content; HMD_FORMAT_UNKNOWN when neither tells. */
enum hmd_structure_format hmd_structure_detect(const char *path);

/* Reads every frame of `path` (a GRO or XYZ file may hold several; PDB MODEL records; a LAMMPS
 * data file holds one). On success *frames (owned by the caller, free with hmd_frames_free)
 * holds *nframes >= 1 frames. */
int hmd_structure_read(const char *path, struct hmd_frame **frames, int *nframes);

/* Per-format readers, same contract as hmd_structure_read(). Atoms without a known element
 * keep element "" (hmd_frame_map_types() reports them).
 *
 * GRO: positions nm -> Å, velocities nm/ps -> Å/ps; field width taken from the decimal points
 * of the first atom line as GROMACS does; box of 3 or 9 values, all zero = no box; periodic in
 * x, y, z; "t= <ps>" in the title gives the time; fills resname and resnr.
 * PDB: CRYST1 -> lower-triangular h (a along x, b in the xy plane); no CRYST1 or the 1 1 1
 * placeholder = no box; element from columns 77-78, else guessed; a frame ends at ENDMDL or
 * END, so both MODEL/ENDMDL files and END-separated files (VMD) give several frames; fills
 * resname (columns 18-21) and resnr.
 * XYZ: extended XYZ as ASE writes it (Lattice, Properties, pbc, Time; velocities from vel,
 * velo or velocities in Å/ps, or from ASE momenta and masses); a comment line without
 * key=value pairs is plain XYZ: species x y z, no box. A species that is an element symbol in
 * any case ("CL") is that element, any other is guessed ("OW" -> O).
 * LAMMPS data: `units metal` is assumed (Å, Å/ps, g/mol); atom styles atomic, charge, full
 * (and molecular/bond/angle through the `Atoms # style` hint) with optional image flags, which
 * are applied; positions are shifted by -(xlo, ylo, zlo) so the cell starts at the origin;
 * periodic in x, y, z; atoms sorted by id; mass per atom from Masses; element per type from a
 * Masses comment naming it ("1 15.999 # O"), else from the mass (within 0.1 g/mol); name is
 * the type number. */
int hmd_gro_read(const char *path, struct hmd_frame **frames, int *nframes);
int hmd_pdb_read(const char *path, struct hmd_frame **frames, int *nframes);
int hmd_xyz_read(const char *path, struct hmd_frame **frames, int *nframes);
int hmd_lammps_data_read(const char *path, struct hmd_frame **frames, int *nframes);

/* Maps each atom's element to its index in `type_map` (ntypes symbols, e.g. {"O", "H"}),
 * writing type[natoms]. An atom whose element is not in the map ends with HMD_EDATA and a
 * message naming the file (`path`), line, atom number, name and element, and the type map. */
int hmd_frame_map_types(const struct hmd_frame *frame, const char *path,
                        const char *const *type_map, int ntypes, int *type);

/* ---- Helpers for the readers above ---- */

/* Sets the element of atom i to atomic number z (0: unknown, element ""). */
void hmd_frame_set_element(struct hmd_frame *frame, int i, int z);

/* Reads a file of frames that follow each other (GRO, XYZ): `read_one` parses one frame
 * starting at the current line of tf (the frame's first line) and leaves tf on its last line.
 * Blank lines between frames are skipped, and before the first one unless
 * `first_line_may_be_blank` (a GRO title may be empty). An empty file is HMD_EDATA with
 * "expected <first_line>". Same contract as hmd_structure_read() otherwise. */
int hmd_frames_read_sequence(const char *path,
                             int (*read_one)(struct hmd_text_file *tf, struct hmd_frame *frame),
                             bool first_line_may_be_blank, const char *first_line,
                             struct hmd_frame **frames, int *nframes);

/* Appends *frame to the array *frames of *nframes frames (capacity *cap, grown as needed);
 * *frame is moved: on success it is zeroed and the array owns its arrays. HMD_ENOMEM leaves
 * *frame as it was. */
int hmd_frames_append(struct hmd_frame **frames, int *nframes, int *cap, struct hmd_frame *frame);

#endif /* HMD_IO_STRUCTURE_H */
