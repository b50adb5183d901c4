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
    char path[]; /* for messages */
};

static const char header[] =
    "step,time_ps,temp_K,pe_eV,ke_eV,etot_eV,conserved_eV,press_bar,vol_A3\n";

static int write_failed(const struct hmd_energy_csv *csv)
{
    return hmd_error_set(HMD_EIO, "cannot write %s: %s", csv->path, strerror(errno));
}

int hmd_energy_csv_open(const char *path, struct hmd_energy_csv **csv, char *note, size_t note_len)
{
    *csv = NULL;
    size_t path_size = strlen(path) + 1;
    struct hmd_energy_csv *c = malloc(sizeof *c + path_size);
    if (!c) {
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(c->path, path, path_size);
    int status = hmd_output_open(path, &c->fp, note, note_len);
    if (status != HMD_OK) {
        free(c);
        return status;
    }
    if (fputs(header, c->fp) < 0 || fflush(c->fp) != 0) {
        status = write_failed(c);
        hmd_energy_csv_close(c);
        return status;
    }
    *csv = c;
    return HMD_OK;
}

int hmd_energy_csv_write(struct hmd_energy_csv *csv, const struct hmd_energy_row *row)
{
    int n = fprintf(csv->fp, "%" PRId64 ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n",
                    row->step, row->time, row->temp, row->pe, row->ke, row->etot, row->conserved,
                    row->press, row->vol);
    if (n < 0 || fflush(csv->fp) != 0) {
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
