/* Checkpoints: the state a run needs to continue exactly where it stopped (`halomd run -cpi`).
 *
 * File layout (format 2, docs/formats.md): a 512-byte header, then an HDF5 file (HDF5 skips the
 * header as its "user block"). The header holds a magic string, the format version, the length
 * of the HDF5 part and its XXH3-128 hash, and a hash of the header itself. A reader checks the
 * header, the length (a truncated file is refused) and the hash of every byte before HDF5 sees
 * the file, so a damaged checkpoint never reaches HDF5's parser. Inside, the arrays are written
 * and read in blocks of HMD_CPT_BLOCK_ATOMS atoms, each with its own XXH3-64 checksum
 * (/checksums), and the scalars with one more: a bad block is named in the message.
 *
 * Writing is crash safe: the file is written to `<path>.tmp`, flushed to the disk (fsync) and
 * renamed over `path`; the checkpoint it replaces is kept as `<stem>_prev.cpt` (GROMACS's
 * name), hard-linked before the rename so that `path` exists at every moment once one
 * checkpoint has been written. A reader that refuses `path` names the previous one.
 *
 * Memory: the writer and the reader use a fixed buffer of 1 MiB beside the caller's arrays,
 * whatever the atom count (bench/results/checkpoint_memory_*.json).
 */
#ifndef HMD_IO_CHECKPOINT_H
#define HMD_IO_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Atoms per checksummed block (3 doubles each: 1.5 MiB of positions). */
#define HMD_CPT_BLOCK_ATOMS 65536

struct hmd_checkpoint {
    int64_t step;           /* the last step integrated */
    double dt;              /* ps */
    double thermostat_work; /* kinetic energy the thermostat added up to `step` (eV) */
    double barostat_work;   /* energy the barostat added up to `step` (eV); 0 without one */
    int natoms;
    bool has_box;
    double h[3][3];   /* cell vectors as rows (Å), when has_box */
    double *x, *v;    /* [natoms][3] positions (Å) and velocities (Å/ps), by atom */
    char model[4096]; /* the model file of the run, as given (for the log and the checks) */
    /* The seeds the run actually used (a drawn one where the parameter was -1), so that a
     * continued run draws the same noise. */
    int64_t gen_seed, ld_seed;
    /* XXH3-128 of the model file's bytes (hmd_checkpoint_hash_file), high half first;
     * all zero when not known (then it is not compared). */
    uint64_t model_hash[2];
    /* The positions of the last neighbour-list build and its step, so that a continued run
     * rebuilds the same list (same neighbour order, bitwise forces): x_list [natoms][3] (Å),
     * or NULL with list_step = -1 when not stored. */
    int64_t list_step;
    double *x_list;
    /* With x_list: the cell the list was built in (Å; it differs from h after pressure
     * coupling), and the largest squared displacement from x_list that the device step has
     * predicted since (Å^2; < 0: not known, as on the host step). A checkpoint written before
     * these were stored reads h and -1. */
    double h_list[3][3];
    double list_disp2;
};

/* Writes `c` to `path` as described above: `<path>.tmp`, fsync, the existing `path` kept as the
 * previous checkpoint (hmd_checkpoint_prev_path), rename, fsync of the directory. `note`
 * (capacity note_len, may be NULL) receives a line for the log naming the previous checkpoint.
 * Only rank 0 calls it, with the gathered arrays (not copied). Returns HMD_OK, HMD_ECONFIG
 * (natoms < 1, dt not positive), HMD_ECANTCREAT or HMD_EIO naming the file (a failed write,
 * flush, fsync, close or rename: then `path` and its previous version are as they were). */
int hmd_checkpoint_write(const char *path, const struct hmd_checkpoint *c, char *note,
                         size_t note_len);

/* Reads `path` into `c` (its arrays allocated; free with hmd_checkpoint_free; zeroed on error).
 * Returns HMD_OK, HMD_ENOINPUT (missing or unreadable), HMD_EDATA (not a halomd checkpoint; an
 * older JSON checkpoint; truncated, damaged or inconsistent: the message names the file, what
 * is wrong, and the previous checkpoint if there is one) or HMD_ENOMEM. Nothing is allocated
 * before the file's length and hash are checked, and no more than the file can hold. */
int hmd_checkpoint_read(const char *path, struct hmd_checkpoint *c);

/* Frees the arrays of `c` and zeroes it. */
void hmd_checkpoint_free(struct hmd_checkpoint *c);

/* The name of the previous checkpoint kept beside `path`: "md.cpt" -> "md_prev.cpt", a name
 * without ".cpt" gets "_prev" appended. Returns HMD_OK or HMD_EUSAGE when `out` (capacity
 * out_len) is too small. */
int hmd_checkpoint_prev_path(const char *path, char *out, size_t out_len);

/* XXH3-128 of the bytes of the file `path` (streamed), into hash[0] (high) and hash[1] (low).
 * Returns HMD_OK, HMD_ENOINPUT or HMD_EIO naming the file. */
int hmd_checkpoint_hash_file(const char *path, uint64_t hash[2]);

#endif /* HMD_IO_CHECKPOINT_H */
