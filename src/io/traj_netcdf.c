#include "io/traj_netcdf.h"

#include <netcdf.h>
#include <stdlib.h>
#include <string.h>

#include "io/backup.h"
#include "io/cell_rotation.h"

struct hmd_netcdf_traj {
    int ncid;
    int natoms;
    size_t nframes; /* frames written so far: the index of the next one */
    int time_id, coord_id;
    int vel_id, force_id;      /* -1 when the file has no velocities / forces */
    int lengths_id, angles_id; /* -1 when the file has no cell */
    float *buf;                /* natoms*3 staging array for the float conversion */
    char path[];               /* for messages */
};

static int put_text_att(int ncid, int varid, const char *name, const char *text)
{
    return nc_put_att_text(ncid, varid, name, strlen(text), text);
}

/* Defines variable `name` over dims[0..ndims) with a `units` attribute (none when NULL). */
static int def_var(int ncid, const char *name, nc_type type, int ndims, const int *dims,
                   const char *units, int *id)
{
    int nc = nc_def_var(ncid, name, type, ndims, dims, id);
    if (nc == NC_NOERR && units) {
        nc = put_text_att(ncid, *id, "units", units);
    }
    return nc;
}

/* Defines dimensions, variables and attributes, then leaves define mode and writes the label
 * variables. Returns the first NetCDF error: each call returns NC_NOERR (0) or an error code,
 * so every `||` chain stops at the first failure with the code in nc. */
static int define_file(struct hmd_netcdf_traj *t, bool has_velocities, bool has_forces,
                       bool periodic, const char *program_version)
{
    int ncid = t->ncid, nc;
    if ((nc = put_text_att(ncid, NC_GLOBAL, "Conventions", "AMBER")) ||
        (nc = put_text_att(ncid, NC_GLOBAL, "ConventionVersion", "1.0")) ||
        (nc = put_text_att(ncid, NC_GLOBAL, "program", "halomd")) ||
        (nc = put_text_att(ncid, NC_GLOBAL, "programVersion", program_version))) {
        return nc;
    }
    int frame, spatial, atom, cell_spatial, cell_angular, label;
    if ((nc = nc_def_dim(ncid, "frame", NC_UNLIMITED, &frame)) ||
        (nc = nc_def_dim(ncid, "spatial", 3, &spatial)) ||
        (nc = nc_def_dim(ncid, "atom", (size_t)t->natoms, &atom)) ||
        (nc = nc_def_dim(ncid, "cell_spatial", 3, &cell_spatial)) ||
        (nc = nc_def_dim(ncid, "cell_angular", 3, &cell_angular)) ||
        (nc = nc_def_dim(ncid, "label", 5, &label))) {
        return nc;
    }
    const int per_atom[3] = {frame, atom, spatial};
    const int lengths_dims[2] = {frame, cell_spatial};
    const int angles_dims[2] = {frame, cell_angular};
    const int angular_label[2] = {cell_angular, label};
    int spatial_id, cell_spatial_id, cell_angular_id;
    if ((nc = def_var(ncid, "time", NC_FLOAT, 1, &frame, "picosecond", &t->time_id)) ||
        (nc = def_var(ncid, "spatial", NC_CHAR, 1, &spatial, NULL, &spatial_id)) ||
        (nc = def_var(ncid, "cell_spatial", NC_CHAR, 1, &cell_spatial, NULL, &cell_spatial_id)) ||
        (nc = def_var(ncid, "cell_angular", NC_CHAR, 2, angular_label, NULL, &cell_angular_id)) ||
        (nc = def_var(ncid, "coordinates", NC_FLOAT, 3, per_atom, "angstrom", &t->coord_id))) {
        return nc;
    }
    if (has_velocities && (nc = def_var(ncid, "velocities", NC_FLOAT, 3, per_atom,
                                        "angstrom/picosecond", &t->vel_id))) {
        return nc;
    }
    if (has_forces && (nc = def_var(ncid, "forces", NC_FLOAT, 3, per_atom,
                                    "kilocalorie/mole/angstrom", &t->force_id))) {
        return nc;
    }
    if (periodic &&
        ((nc = def_var(ncid, "cell_lengths", NC_DOUBLE, 2, lengths_dims, "angstrom",
                       &t->lengths_id)) ||
         (nc = def_var(ncid, "cell_angles", NC_DOUBLE, 2, angles_dims, "degree", &t->angles_id)))) {
        return nc;
    }
    /* Every variable of a frame is written in full, so prefilling records is wasted I/O. */
    int old_fill;
    if ((nc = nc_set_fill(ncid, NC_NOFILL, &old_fill)) || (nc = nc_enddef(ncid)) ||
        (nc = nc_put_var_text(ncid, spatial_id, "xyz")) ||
        (nc = nc_put_var_text(ncid, cell_spatial_id, "abc")) ||
        (nc = nc_put_var_text(ncid, cell_angular_id, "alphabeta gamma"))) {
        return nc;
    }
    return NC_NOERR;
}

int hmd_netcdf_traj_open(const char *path, struct hmd_netcdf_traj **traj, int natoms,
                         bool has_velocities, bool has_forces, bool periodic,
                         const char *program_version, char *note, size_t note_len)
{
    *traj = NULL;
    if (natoms < 1) {
        /* NetCDF reads an atom dimension of length 0 as a second unlimited dimension. */
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: no atoms to write", path);
    }
    int status = hmd_output_backup(path, note, note_len);
    if (status != HMD_OK) {
        return status;
    }
    size_t path_size = strlen(path) + 1;
    struct hmd_netcdf_traj *t = malloc(sizeof *t + path_size);
    float *buf = malloc(3 * (size_t)natoms * sizeof *buf);
    if (!t || !buf) {
        free(t);
        free(buf);
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s for %d atoms", path, natoms);
    }
    *t = (struct hmd_netcdf_traj){.natoms = natoms,
                                  .buf = buf,
                                  .vel_id = -1,
                                  .force_id = -1,
                                  .lengths_id = -1,
                                  .angles_id = -1};
    memcpy(t->path, path, path_size);
    /* NC_NOCLOBBER: after the backup nothing is at `path`; never replace what appeared since. */
    int nc = nc_create(path, NC_NOCLOBBER | NC_64BIT_OFFSET, &t->ncid);
    if (nc != NC_NOERR) {
        free(buf);
        free(t);
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", path, nc_strerror(nc));
    }
    nc = define_file(t, has_velocities, has_forces, periodic, program_version);
    if (nc != NC_NOERR) {
        status = hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", path, nc_strerror(nc));
        nc_abort(t->ncid); /* deletes the half-defined file */
        free(buf);
        free(t);
        return status;
    }
    *traj = t;
    return HMD_OK;
}

/* Writes natoms*3 values of `a`, rotated by `rot` and multiplied by `scale`, as record
 * t->nframes of variable `varid`. */
static int put_vectors(struct hmd_netcdf_traj *t, int varid, const double *a,
                       const struct hmd_cell_rotation *rot, double scale)
{
    for (size_t i = 0; i < (size_t)t->natoms; i++) {
        double r[3];
        hmd_cell_rotation_apply(rot, a + 3 * i, r);
        for (int k = 0; k < 3; k++) {
            t->buf[3 * i + k] = (float)(r[k] * scale);
        }
    }
    const size_t start[3] = {t->nframes, 0, 0};
    const size_t count[3] = {1, (size_t)t->natoms, 3};
    return nc_put_vara_float(t->ncid, varid, start, count, t->buf);
}

int hmd_netcdf_traj_write_frame(struct hmd_netcdf_traj *traj, const double *x, const double *v,
                                const double *f, const struct hmd_box *box, double time_ps)
{
    bool periodic = traj->lengths_id >= 0;
    if (!x || (traj->vel_id >= 0 && !v) || (traj->force_id >= 0 && !f) || (periodic && !box)) {
        return hmd_error_set(HMD_ESOFTWARE,
                             "writing %s: a frame lacks positions, velocities, forces or the "
                             "cell the file was opened with",
                             traj->path);
    }
    struct hmd_cell_rotation rot = {.identity = true};
    double len[3], ang[3];
    if (periodic) {
        double h_lt[3][3];
        hmd_cell_rotation_init(&rot, box, h_lt);
        hmd_box_lengths_angles(box, len, ang);
    }
    const size_t frame = traj->nframes;
    const size_t start[2] = {frame, 0};
    const size_t count[2] = {1, 3};
    const float time = (float)time_ps;
    int nc = put_vectors(traj, traj->coord_id, x, &rot, 1.0);
    if (nc == NC_NOERR && traj->vel_id >= 0) {
        nc = put_vectors(traj, traj->vel_id, v, &rot, 1.0);
    }
    if (nc == NC_NOERR && traj->force_id >= 0) {
        nc = put_vectors(traj, traj->force_id, f, &rot, HMD_KCALMOL_PER_EV);
    }
    if (nc == NC_NOERR && periodic) {
        nc = nc_put_vara_double(traj->ncid, traj->lengths_id, start, count, len);
    }
    if (nc == NC_NOERR && periodic) {
        nc = nc_put_vara_double(traj->ncid, traj->angles_id, start, count, ang);
    }
    if (nc == NC_NOERR) {
        nc = nc_put_var1_float(traj->ncid, traj->time_id, &frame, &time);
    }
    /* Syncing writes the frame count into the header, so readers see the frame now and a
     * crashed run keeps it. */
    if (nc == NC_NOERR) {
        nc = nc_sync(traj->ncid);
    }
    if (nc != NC_NOERR) {
        return hmd_error_set(HMD_EIO, "cannot write %s: %s", traj->path, nc_strerror(nc));
    }
    traj->nframes++;
    return HMD_OK;
}

int hmd_netcdf_traj_close(struct hmd_netcdf_traj *traj)
{
    if (!traj) {
        return HMD_OK;
    }
    int status = HMD_OK;
    int nc = nc_close(traj->ncid);
    if (nc != NC_NOERR) {
        status = hmd_error_set(HMD_EIO, "cannot write %s: %s", traj->path, nc_strerror(nc));
    }
    free(traj->buf);
    free(traj);
    return status;
}
