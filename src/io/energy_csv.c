#include "io/energy_csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/backup.h"

struct hmd_energy_csv {
    FILE *fp;
    int nterms;  /* term columns after vol_A3 */
    char path[]; /* for messages */
};

static const char header[] =
    "step,time_ps,temp_K,pe_eV,ke_eV,etot_eV,conserved_eV,press_bar,vol_A3";

static int write_failed(const struct hmd_energy_csv *csv)
{
    return hmd_error_set(HMD_EIO, "cannot write %s: %s", csv->path, strerror(errno));
}

int hmd_energy_csv_open(const char *path, struct hmd_energy_csv **csv, char *note, size_t note_len)
{
    return hmd_energy_csv_open_terms(path, 0, NULL, csv, note, note_len);
}

/* The header row: the fixed columns, then the terms'. */
static int write_header(struct hmd_energy_csv *c, int nterms, const char *const *names)
{
    int ok = fputs(header, c->fp) >= 0;
    for (int t = 0; t < nterms && ok; t++) {
        ok = fprintf(c->fp, ",%s_eV", names[t]) > 0;
    }
    ok = ok && fputc('\n', c->fp) != EOF;
    return ok && fflush(c->fp) == 0 ? HMD_OK : write_failed(c);
}

int hmd_energy_csv_open_terms(const char *path, int nterms, const char *const *names,
                              struct hmd_energy_csv **csv, char *note, size_t note_len)
{
    *csv = NULL;
    for (int t = 0; t < nterms; t++) {
        if (strpbrk(names[t], ",\"\n")) {
            return hmd_error_set(HMD_ESOFTWARE, "energy term '%s' cannot be a CSV column name",
                                 names[t]);
        }
    }
    size_t path_size = strlen(path) + 1;
    struct hmd_energy_csv *c = malloc(sizeof *c + path_size);
    if (!c) {
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(c->path, path, path_size);
    c->nterms = nterms;
    int status = hmd_output_open(path, &c->fp, note, note_len);
    if (status != HMD_OK) {
        free(c);
        return status;
    }
    status = write_header(c, nterms, names);
    if (status != HMD_OK) {
        hmd_energy_csv_close(c);
        return status;
    }
    *csv = c;
    return HMD_OK;
}

int hmd_energy_csv_write(struct hmd_energy_csv *csv, const struct hmd_energy_row *row)
{
    int n = fprintf(csv->fp, "%" PRId64 ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g",
                    row->step, row->time, row->temp, row->pe, row->ke, row->etot, row->conserved,
                    row->press, row->vol);
    for (int t = 0; t < csv->nterms && n >= 0; t++) {
        n = fprintf(csv->fp, ",%.17g", row->terms[t]);
    }
    if (n < 0 || fputc('\n', csv->fp) == EOF || fflush(csv->fp) != 0) {
        return write_failed(csv);
    }
    return HMD_OK;
}

int hmd_energy_csv_close(struct hmd_energy_csv *csv)
{
    if (!csv) {
        return HMD_OK;
    }
    int status = HMD_OK;
    if (fclose(csv->fp) != 0) {
        status = write_failed(csv);
    }
    free(csv);
    return status;
}
