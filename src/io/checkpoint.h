/* Checkpoints: the state a run needs to continue exactly where it stopped (`halomd run -cpi`).
 *
 * A JSON document (schema "halomd-cpt-1"): the step, the time step, the cell, the kinetic energy
 * the thermostat has added so far (for the conserved energy), and the positions and velocities
 * of every atom in the order of the structure file, each number written with 17 significant
 * digits so that it reads back to the same double. The thermostats need nothing more: their
 * random numbers are keyed by seed, step and atom id.
 */
#ifndef HMD_IO_CHECKPOINT_H
#define HMD_IO_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmd_checkpoint {
    int64_t step;           /* the last step integrated */
    double dt;              /* ps */
    double thermostat_work; /* kinetic energy the thermostat added up to `step` (eV) */
    int natoms;
    bool has_box;
    double h[3][3];   /* cell vectors as rows (Å), when has_box */
    double *x, *v;    /* [natoms][3] positions (Å) and velocities (Å/ps), by atom */
    char model[4096]; /* the model file of the run, as given (for the log and the checks) */
};

/* Writes `c` to `path`, backing up an existing file (io/backup.h); `note` receives the backup
 * note for the log. Returns HMD_OK or HMD_ECANTCREAT / HMD_EIO naming the file. */
int hmd_checkpoint_write(const char *path, const struct hmd_checkpoint *c, char *note,
                         size_t note_len);

/* Reads `path` into `c` (its arrays allocated; free with hmd_checkpoint_free). Returns HMD_OK,
 * HMD_ENOINPUT (missing or unreadable), HMD_EDATA (not a halomd checkpoint, or a field missing
 * or malformed: the message names the file and the field) or HMD_ENOMEM. */
int hmd_checkpoint_read(const char *path, struct hmd_checkpoint *c);

/* Frees the arrays of `c` and zeroes it. */
void hmd_checkpoint_free(struct hmd_checkpoint *c);

#endif /* HMD_IO_CHECKPOINT_H */
