#include "io/traj_xyz.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "core/error.h"
#include "core/units.h"
#include "io/backup.h"

struct hmd_xyz_traj {
    FILE *fp;
    char path[]; /* for messages */
};

/* Writes the three components of vector i of `a` (natoms*3), each after a space. */
static void write_vec(FILE *fp, const double *a, int i)
{
    const double *r = a + 3 * (size_t)i;
    fprintf(fp, " %.17g %.17g %.17g", r[0], r[1], r[2]);
}

/* The mass written for an atom: its element's standard weight, 1 for an unknown element (ASE's
 * mass of "X"). */
static double column_mass(const char *element)
{
    const double m = hmd_element_mass(hmd_element_number(element));
    return m > 0 ? m : 1.0;
}

int hmd_xyz_write_frame_to(FILE *fp, int natoms, const char (*element)[4], const double *x,
                           const double *v, const double *f, const struct hmd_box *box,
                           int64_t step, double time_ps, double energy)
{
    fprintf(fp, "%d\n", natoms);
    if (box) {
        const double(*h)[3] = box->h;
        fprintf(fp, "Lattice=\"%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\" ", h[0][0],
                h[0][1], h[0][2], h[1][0], h[1][1], h[1][2], h[2][0], h[2][1], h[2][2]);
    }
    fprintf(fp, "Properties=species:S:1:pos:R:3%s%s energy=%.17g step=%" PRId64 " time=%.17g",
            v ? ":masses:R:1:momenta:R:3" : "", f ? ":forces:R:3" : "", energy, step, time_ps);
    /* No cell means no periodicity; ASE would assume "T T T" for a Lattice without pbc. */
    const bool none[3] = {false, false, false};
    const bool *pbc = box ? box->periodic : none;
    fprintf(fp, " pbc=\"%c %c %c\"\n", pbc[0] ? 'T' : 'F', pbc[1] ? 'T' : 'F', pbc[2] ? 'T' : 'F');
    for (int i = 0; i < natoms; i++) {
        fputs(element[i][0] ? element[i] : "X", fp);
        write_vec(fp, x, i);
        if (v) {
            /* ASE reads velocities only as momenta (amu Å per ASE time unit) over masses */
            const double m = column_mass(element[i]), k = m * hmd_ase_time_unit_ps();
            const double p[3] = {k * v[3 * i], k * v[3 * i + 1], k * v[3 * i + 2]};
            fprintf(fp, " %.17g", m);
            write_vec(fp, p, 0);
        }
        if (f) {
            write_vec(fp, f, i);
        }
        fputc('\n', fp);
    }
    /* A stream's error flag is sticky, so one check after the frame catches any failed write. */
    if (ferror(fp)) {
        return hmd_error_set(HMD_EIO, "%s", strerror(errno));
    }
    return HMD_OK;
}

int hmd_xyz_traj_open(const char *path, struct hmd_xyz_traj **traj, char *note, size_t note_len)
{
    *traj = NULL;
    size_t path_size = strlen(path) + 1;
    struct hmd_xyz_traj *t = malloc(sizeof *t + path_size);
    if (!t) {
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(t->path, path, path_size);
    int status = hmd_output_open(path, &t->fp, note, note_len);
    if (status != HMD_OK) {
        free(t);
        return status;
    }
    *traj = t;
    return HMD_OK;
}

int hmd_xyz_traj_write_frame(struct hmd_xyz_traj *traj, int natoms, const char (*element)[4],
                             const double *x, const double *v, const double *f,
                             const struct hmd_box *box, int64_t step, double time_ps, double energy)
{
    int status =
        hmd_xyz_write_frame_to(traj->fp, natoms, element, x, v, f, box, step, time_ps, energy);
    if (status != HMD_OK) {
        return hmd_error_prefix(status, "cannot write %s: ", traj->path);
    }
    if (fflush(traj->fp) != 0) {
        return hmd_error_set(HMD_EIO, "cannot write %s: %s", traj->path, strerror(errno));
    }
    return HMD_OK;
}

int hmd_xyz_traj_close(struct hmd_xyz_traj *traj)
{
    if (!traj) {
        return HMD_OK;
    }
    int status = HMD_OK;
    if (fclose(traj->fp) != 0) {
        status = hmd_error_set(HMD_EIO, "cannot write %s: %s", traj->path, strerror(errno));
    }
    free(traj);
    return status;
}
