/* model_devi.out, the model-deviation table DP-GEN reads, in the layout DeePMD-kit's
 * `dp model-devi` writes (deepmd/infer/model_devi.py write_model_devi_out, numpy.savetxt):
 *
 *   # <header, e.g. the system>
 *   # step      max_devi_v         min_devi_v         ...  avg_devi_f         devi_e
 *              0       1.234568e-03 ...
 *
 * a block of two comment lines then one row per frame: the step (%12d), then max/min/avg of
 * the virial deviation, max/min/avg of the force deviation and devi_e (%19.6e each), and with
 * `atomic` the deviation of the force on every atom (a column atm_devi_f(N) in the header).
 * Columns 0-6 are those of LAMMPS's pair_style deepmd out_file. Several blocks may follow each
 * other in one file (dp model-devi writes one per system).
 */
#ifndef HMD_IO_MODEL_DEVI_OUT_H
#define HMD_IO_MODEL_DEVI_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nnp/model_devi.h"

/* Writes the two header lines of a block: "# <header>" and the column names. HMD_EIO names
 * `path` (the file's name for messages) on failure. */
int hmd_model_devi_out_header(FILE *fp, const char *path, const char *header, bool atomic);

/* Writes one row: `step`, the deviations and, unless atom_devi is NULL, its natoms values.
 * HMD_EIO on failure. */
int hmd_model_devi_out_row(FILE *fp, const char *path, int64_t step, const struct hmd_model_devi *d,
                           const double *atom_devi, int natoms);

#endif /* HMD_IO_MODEL_DEVI_OUT_H */
