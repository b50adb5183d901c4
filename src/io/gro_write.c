#include "io/gro_write.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "io/backup.h"
#include "io/cell_rotation.h"

#define NM_PER_ANGSTROM 0.1

/* GROMACS keeps the 5-digit columns by writing numbers modulo 100000. */
#define GRO_NUMBER_WRAP 100000

static void write_box(FILE *fp, const double h[3][3])
{
    double b[3][3];
    for (int a = 0; a < 3; a++) {
        for (int k = 0; k < 3; k++) {
            b[a][k] = h[a][k] * NM_PER_ANGSTROM;
        }
    }
    fprintf(fp, "%10.5f%10.5f%10.5f", b[0][0], b[1][1], b[2][2]);
    /* The six off-diagonal values follow only when one of them prints as nonzero, so a
     * rectangular cell that was rotated (residues of 1e-16) keeps its three-value line. The
     * above-diagonal entries are zero in the lower-triangular form, but GRO lists them. */
    const double shown = 0.5e-5; /* smallest magnitude %10.5f prints as nonzero (nm) */
    if (fabs(b[1][0]) >= shown || fabs(b[2][0]) >= shown || fabs(b[2][1]) >= shown) {
        fprintf(fp, "%10.5f%10.5f%10.5f%10.5f%10.5f%10.5f", b[0][1], b[0][2], b[1][0], b[1][2],
                b[2][0], b[2][1]);
    }
    fputc('\n', fp);
}

int hmd_gro_write_to(FILE *fp, const char *title, int natoms, const char (*name)[8],
                     const char (*resname)[8], const int *resnr, const double *x, const double *v,
                     const struct hmd_box *box, int64_t step, double time_ps)
{
    struct hmd_cell_rotation rot = {.identity = true};
    double h_lt[3][3] = {{0}};
    if (box) {
        hmd_cell_rotation_init(&rot, box, h_lt);
    }
    fprintf(fp, "%.*s t= %.5f step= %" PRId64 "\n%d\n", (int)strcspn(title, "\r\n"), title, time_ps,
            step, natoms);
    for (int i = 0; i < natoms; i++) {
        double r[3];
        hmd_cell_rotation_apply(&rot, x + 3 * (size_t)i, r);
        fprintf(fp, "%5d%-5.5s%5.5s%5d%8.3f%8.3f%8.3f", (resnr ? resnr[i] : 1) % GRO_NUMBER_WRAP,
                resname ? resname[i] : "MOL", name[i], (i + 1) % GRO_NUMBER_WRAP,
                r[0] * NM_PER_ANGSTROM, r[1] * NM_PER_ANGSTROM, r[2] * NM_PER_ANGSTROM);
        if (v) {
            hmd_cell_rotation_apply(&rot, v + 3 * (size_t)i, r);
            fprintf(fp, "%8.4f%8.4f%8.4f", r[0] * NM_PER_ANGSTROM, r[1] * NM_PER_ANGSTROM,
                    r[2] * NM_PER_ANGSTROM);
        }
        fputc('\n', fp);
    }
    write_box(fp, h_lt);
    /* A stream's error flag is sticky, so one check at the end catches any failed write. */
    if (ferror(fp)) {
        return hmd_error_set(HMD_EIO, "%s", strerror(errno));
    }
    return HMD_OK;
}

int hmd_gro_write(const char *path, const char *title, int natoms, const char (*name)[8],
                  const char (*resname)[8], const int *resnr, const double *x, const double *v,
                  const struct hmd_box *box, int64_t step, double time_ps, char *note,
                  size_t note_len)
{
    FILE *fp;
    int status = hmd_output_open(path, &fp, note, note_len);
    if (status != HMD_OK) {
        return status;
    }
    status = hmd_gro_write_to(fp, title, natoms, name, resname, resnr, x, v, box, step, time_ps);
    if (status != HMD_OK) {
        hmd_error_prefix(status, "cannot write %s: ", path);
    }
    if (fclose(fp) != 0 && status == HMD_OK) {
        status = hmd_error_set(HMD_EIO, "cannot write %s: %s", path, strerror(errno));
    }
    return status;
}
