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

#include "core/box.h"

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
    int *line;          /* line of the file where the atom is written (1-based), for messages */
    bool has_box;       /* false: the file has no cell; the system is not periodic */
    struct hmd_box box; /* cell (valid when has_box; periodic flags from the file) */
    double time;        /* time stamp of the frame (ps), 0 when the file has none */
    char title[128];    /* title or comment line, may be empty */
};

/* Allocates the per-atom arrays of `frame` for `natoms` atoms, zeroed (v and mass stay NULL).
 * Returns HMD_ENOMEM on failure. */
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

/* Per-format readers, same contract as hmd_structure_read(). */
int hmd_gro_read(const char *path, struct hmd_frame **frames, int *nframes);
int hmd_pdb_read(const char *path, struct hmd_frame **frames, int *nframes);
int hmd_xyz_read(const char *path, struct hmd_frame **frames, int *nframes);
int hmd_lammps_data_read(const char *path, struct hmd_frame **frames, int *nframes);

/* Maps each atom's element to its index in `type_map` (ntypes symbols, e.g. {"O", "H"}),
 * writing type[natoms]. An atom whose element is not in the map ends with HMD_EDATA and a
 * message naming the file (`path`), line, atom number, name and element, and the type map. */
int hmd_frame_map_types(const struct hmd_frame *frame, const char *path,
                        const char *const *type_map, int ntypes, int *type);

#endif /* HMD_IO_STRUCTURE_H */
