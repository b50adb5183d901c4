/* Energy file: one CSV row per energy output step, for pandas.read_csv, numpy.genfromtxt and
 * gnuplot. The header row names each column with its unit:
 *
 *     step,time_ps,temp_K,pe_eV,ke_eV,etot_eV,conserved_eV,press_bar,vol_A3
 *
 * A run with a classical force field appends one column per energy term, GROMACS's name with
 * the unit ("LJ (SR)_eV", "Coulomb (SR)_eV", "Bond_eV", ...; "Deep Potential_eV" for the model's
 * share in hybrid ML/MM), in the providers' order; pe_eV is their sum.
 *
 * Values are written with 17 significant digits, so each reads back to the same double; a
 * non-finite value is written as printf prints it ("nan", "inf"), which those readers accept.
 * Every row is flushed, so a crashed run keeps all rows written before the crash.
 */
#ifndef HMD_IO_ENERGY_CSV_H
#define HMD_IO_ENERGY_CSV_H

#include <stddef.h>
#include <stdint.h>

/* One row of the energy file. */
struct hmd_energy_row {
    int64_t step;        /* MD step number */
    double time;         /* simulation time (ps) */
    double temp;         /* instantaneous temperature (K) */
    double pe;           /* potential energy (eV) */
    double ke;           /* kinetic energy (eV) */
    double etot;         /* pe + ke (eV) */
    double conserved;    /* etot plus the work done by thermostat and barostat (eV) */
    double press;        /* pressure (bar); NaN when not computed */
    double vol;          /* cell volume (Å^3); NaN without a cell */
    const double *terms; /* [the file's nterms] energy terms (eV); NULL when it has none */
};

/* An open energy file (opaque). */
struct hmd_energy_csv;

/* Backs up an existing `path` (see io/backup.h; the log note goes to `note`, capacity
 * `note_len`), creates the file and writes the header row. On success *csv is a new handle owned
 * by the caller, to be released with hmd_energy_csv_close().
 * Returns HMD_OK, HMD_ECANTCREAT (naming the file and the OS reason), HMD_EIO or HMD_ENOMEM. */
int hmd_energy_csv_open(const char *path, struct hmd_energy_csv **csv, char *note, size_t note_len);

/* The same with `nterms` energy-term columns after vol_A3, named names[t] + "_eV" (names with no
 * comma, quote or newline: HMD_ESOFTWARE otherwise); every row then gives row->terms. */
int hmd_energy_csv_open_terms(const char *path, int nterms, const char *const *names,
                              struct hmd_energy_csv **csv, char *note, size_t note_len);

/* Appends `row` and flushes it to the operating system.
 * Returns HMD_OK or HMD_EIO naming the file and the OS reason (disk full). */
int hmd_energy_csv_write(struct hmd_energy_csv *csv, const struct hmd_energy_row *row);

/* Closes the file and frees the handle; NULL is accepted.
 * Returns HMD_OK, or HMD_EIO when buffered data could not be written. */
int hmd_energy_csv_close(struct hmd_energy_csv *csv);

#endif /* HMD_IO_ENERGY_CSV_H */
