/* H5MD trajectories through HDF5 (io/traj_h5md.h). */
#include "io/traj_h5md.h"

#include <errno.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/backup.h"
#include "io/out_groups.h"

#define CHUNK_ATOMS 32768

/* One time-dependent element: /particles/<group>/<name>/{step,time,value}. */
struct element {
    const char *name; /* "position", "velocity", "force", "box/edges" */
    hid_t group, step, time, value;
    hsize_t nframes;
};

struct hmd_h5md_traj {
    hid_t file;
    struct element el[4]; /* position, velocity, force, edges */
    int what;
    bool periodic;
    int natoms, n; /* atoms in the arrays, atoms written */
    int *select;   /* [n] or NULL for all */
    double *buf;   /* [min(n, CHUNK_ATOMS)][3] */
    char path[];
};

enum { E_POS, E_VEL, E_FORCE, E_EDGES };

/* An attribute of n elements (n = 0: a scalar) of file type `ftype` from `data` of memory type
 * `mtype`. */
static int attr_write(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n,
                      const void *data)
{
    hid_t s = n ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, mtype, data);
    if (a >= 0) {
        H5Aclose(a);
    }
    H5Sclose(s);
    return e < 0 ? -1 : 0;
}

/* Strings as variable-length UTF-8 attributes, which h5py returns as str (MDAnalysis compares
 * units as str): one (n = 0) or an array of n. */
static int attr_strings(hid_t loc, const char *name, const char *const *v, hsize_t n)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int rc = attr_write(loc, name, t, t, n, v);
    H5Tclose(t);
    return rc;
}

static int attr_string(hid_t loc, const char *name, const char *value)
{
    return attr_strings(loc, name, &value, 0);
}

static int attr_ints(hid_t loc, const char *name, const int *v, hsize_t n)
{
    return attr_write(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT, n, v);
}

/* An extendible dataset of rank `rank` with first dimension 0 and the rest `dims[1..]`. */
static hid_t extendible(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims,
                        const hsize_t *chunk)
{
    hsize_t cur[3] = {0, 0, 0}, max[3] = {H5S_UNLIMITED, 0, 0};
    for (int k = 1; k < rank; k++) {
        cur[k] = max[k] = dims[k];
    }
    hid_t space = H5Screate_simple(rank, cur, max), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = -1;
    if (space >= 0 && dcpl >= 0 && H5Pset_chunk(dcpl, rank, chunk) >= 0) {
        d = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    }
    if (dcpl >= 0) {
        H5Pclose(dcpl);
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    return d;
}

/* The element's group with its step, time and value datasets (value: [frame][n][3], or
 * [frame][3][3] for the edges). */
static int element_create(struct hmd_h5md_traj *t, hid_t parent, struct element *e,
                          const char *unit)
{
    const hsize_t rows = e == &t->el[E_EDGES] ? 3 : (hsize_t)t->n;
    const hsize_t dims[3] = {0, rows, 3}, one[1] = {64};
    const hsize_t chunk[3] = {1, rows < CHUNK_ATOMS ? rows : CHUNK_ATOMS, 3};
    e->group = H5Gcreate2(parent, e->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (e->group < 0) {
        return -1;
    }
    e->step = extendible(e->group, "step", H5T_STD_I64LE, 1, dims, one);
    e->time = extendible(e->group, "time", H5T_IEEE_F64LE, 1, dims, one);
    e->value = extendible(e->group, "value", H5T_IEEE_F64LE, 3, dims, chunk);
    if (e->step < 0 || e->time < 0 || e->value < 0 || attr_string(e->value, "unit", unit) ||
        attr_string(e->time, "unit", "ps")) {
        return -1;
    }
    return 0;
}

/* A time-independent per-atom integer dataset of the group (species, id). */
static int per_atom_ints(struct hmd_h5md_traj *t, hid_t group, const char *name, const int *all,
                         bool index)
{
    const hsize_t n = (hsize_t)t->n;
    int *v = malloc(sizeof *v * (size_t)t->n);
    if (!v) {
        return -1;
    }
    for (int k = 0; k < t->n; k++) {
        const int i = t->select ? t->select[k] : k;
        v[k] = index ? i : all[i];
    }
    hid_t s = H5Screate_simple(1, &n, NULL);
    hid_t d =
        s < 0 ? -1
              : H5Dcreate2(group, name, H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = d < 0 ? -1 : H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (d >= 0) {
        H5Dclose(d);
    }
    if (s >= 0) {
        H5Sclose(s);
    }
    free(v);
    return e < 0 ? -1 : 0;
}

/* Everything but the frames. */
static int layout(struct hmd_h5md_traj *t, const char *group, const int *species,
                  const struct hmd_box *box, const char *version)
{
    const int h5md_version[2] = {1, 1};
    hid_t h5md = H5Gcreate2(t->file, "h5md", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (h5md < 0 || attr_ints(h5md, "version", h5md_version, 2)) {
        return -1;
    }
    hid_t author = H5Gcreate2(h5md, "author", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t creator = H5Gcreate2(h5md, "creator", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int bad = author < 0 || creator < 0 || attr_string(author, "name", "halomd user") ||
              attr_string(creator, "name", "halomd") ||
              attr_string(creator, "version", version ? version : "");
    H5Gclose(author);
    H5Gclose(creator);
    H5Gclose(h5md);
    hid_t particles = H5Gcreate2(t->file, "particles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t g =
        particles < 0 ? -1 : H5Gcreate2(particles, group, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t b = g < 0 ? -1 : H5Gcreate2(g, "box", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const int three = 3;
    const char *bounds[3];
    for (int k = 0; k < 3; k++) {
        bounds[k] = box && box->periodic[k] ? "periodic" : "none";
    }
    bad = bad || b < 0 || attr_ints(b, "dimension", &three, 0) ||
          attr_strings(b, "boundary", bounds, 3);
    bad = bad || (t->periodic && element_create(t, b, &t->el[E_EDGES], "Angstrom"));
    bad = bad || ((t->what & HMD_H5MD_POSITION) && element_create(t, g, &t->el[E_POS], "Angstrom"));
    bad = bad ||
          ((t->what & HMD_H5MD_VELOCITY) && element_create(t, g, &t->el[E_VEL], "Angstrom ps-1"));
    bad = bad || ((t->what & HMD_H5MD_FORCE) &&
                  element_create(t, g, &t->el[E_FORCE], "kJ mol-1 Angstrom-1"));
    bad = bad || per_atom_ints(t, g, "id", NULL, true);
    bad = bad || (species && per_atom_ints(t, g, "species", species, false));
    if (b >= 0) {
        H5Gclose(b);
    }
    if (g >= 0) {
        H5Gclose(g);
    }
    if (particles >= 0) {
        H5Gclose(particles);
    }
    return bad ? -1 : 0;
}

static void traj_free(struct hmd_h5md_traj *t)
{
    for (int k = 0; k < 4; k++) {
        struct element *e = &t->el[k];
        if (e->value > 0) {
            H5Dclose(e->value);
        }
        if (e->time > 0) {
            H5Dclose(e->time);
        }
        if (e->step > 0) {
            H5Dclose(e->step);
        }
        if (e->group > 0) {
            H5Gclose(e->group);
        }
    }
    free(t->select);
    free(t->buf);
    free(t);
}

int hmd_h5md_traj_open(const char *path, struct hmd_h5md_traj **traj, int natoms, const int *select,
                       int nselect, const char *group, const int *species, int what,
                       const struct hmd_box *box, const char *program_version, char *note,
                       size_t note_len)
{
    *traj = NULL;
    if (!(what & 7)) {
        return hmd_error_set(HMD_ECONFIG, "%s: no element to write", path);
    }
    int *sel = NULL, n = 0;
    int rc = hmd_out_group_copy(path, natoms, select, nselect, &sel, &n);
    if (rc) {
        return rc;
    }
    size_t path_size = strlen(path) + 1;
    struct hmd_h5md_traj *t = calloc(1, sizeof *t + path_size);
    const int rows = n < CHUNK_ATOMS ? n : CHUNK_ATOMS;
    if (!t || !(t->buf = malloc(sizeof(double) * 3 * rows))) {
        free(t);
        free(sel);
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(t->path, path, path_size);
    t->select = sel;
    t->natoms = natoms;
    t->n = n;
    t->what = what;
    t->periodic = box && (box->periodic[0] || box->periodic[1] || box->periodic[2]);
    const char *names[4] = {"position", "velocity", "force", "edges"};
    for (int k = 0; k < 4; k++) {
        t->el[k] =
            (struct element){.name = names[k], .group = -1, .step = -1, .time = -1, .value = -1};
    }
    rc = hmd_output_backup(path, note, note_len);
    if (rc) {
        traj_free(t);
        return rc;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    t->file = H5Fcreate(path, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
    if (t->file < 0) {
        traj_free(t);
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", path,
                             errno ? strerror(errno) : "HDF5 refused it");
    }
    if (layout(t, group && *group ? group : "all", species, box, program_version)) {
        H5Fclose(t->file);
        traj_free(t);
        return hmd_error_set(HMD_ECANTCREAT, "cannot write the H5MD layout of %s", path);
    }
    *traj = t;
    return HMD_OK;
}

/* Extends the element by one frame and writes step, time and (when `a` is given) the
 * selected rows of a, scaled by `scale`, through the buffer (or the 3x3 cell when edges). */
static int append(struct hmd_h5md_traj *t, struct element *e, const double *a, double scale,
                  const double (*h)[3], int64_t step, double time_ps)
{
    const hsize_t f = e->nframes, rows = h ? 3 : (hsize_t)t->n;
    hsize_t ext1 = f + 1, ext3[3] = {f + 1, rows, 3};
    if (H5Dset_extent(e->step, &ext1) < 0 || H5Dset_extent(e->time, &ext1) < 0 ||
        H5Dset_extent(e->value, ext3) < 0) {
        return -1;
    }
    const hsize_t one = 1;
    hid_t mem = H5Screate_simple(1, &one, NULL);
    int bad = mem < 0;
    hid_t ds[2] = {e->step, e->time};
    const void *val[2] = {&step, &time_ps};
    hid_t mt[2] = {H5T_NATIVE_INT64, H5T_NATIVE_DOUBLE};
    for (int k = 0; k < 2 && !bad; k++) {
        hid_t s = H5Dget_space(ds[k]);
        bad = s < 0 || H5Sselect_hyperslab(s, H5S_SELECT_SET, &f, NULL, &one, NULL) < 0 ||
              H5Dwrite(ds[k], mt[k], mem, s, H5P_DEFAULT, val[k]) < 0;
        if (s >= 0) {
            H5Sclose(s);
        }
    }
    if (mem >= 0) {
        H5Sclose(mem);
    }
    hid_t space = bad ? -1 : H5Dget_space(e->value);
    bad = bad || space < 0;
    const hsize_t block = h ? 3 : CHUNK_ATOMS;
    for (hsize_t r0 = 0; !bad && r0 < rows; r0 += block) {
        const hsize_t nr = rows - r0 < block ? rows - r0 : block;
        const hsize_t start[3] = {f, r0, 0}, count[3] = {1, nr, 3};
        const double *src = t->buf;
        if (h) {
            src = &h[0][0];
        } else {
            for (hsize_t k = 0; k < nr; k++) {
                const size_t i = t->select ? (size_t)t->select[r0 + k] : (size_t)(r0 + k);
                for (int d = 0; d < 3; d++) {
                    t->buf[3 * k + d] = scale * a[3 * i + d];
                }
            }
        }
        hid_t m = H5Screate_simple(3, count, NULL);
        bad = m < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
              H5Dwrite(e->value, H5T_NATIVE_DOUBLE, m, space, H5P_DEFAULT, src) < 0;
        if (m >= 0) {
            H5Sclose(m);
        }
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    if (!bad) {
        e->nframes++;
    }
    return bad ? -1 : 0;
}

int hmd_h5md_traj_write_frame(struct hmd_h5md_traj *t, const double *x, const double *v,
                              const double *f, const struct hmd_box *box, int64_t step,
                              double time_ps)
{
    const double *arr[3] = {x, v, f};
    const int bit[3] = {HMD_H5MD_POSITION, HMD_H5MD_VELOCITY, HMD_H5MD_FORCE};
    const double scale[3] = {1.0, 1.0, HMD_KJMOL_PER_EV};
    for (int k = 0; k < 3; k++) {
        if (arr[k] && !(t->what & bit[k])) {
            return hmd_error_set(HMD_ESOFTWARE, "%s was opened without /%s", t->path,
                                 t->el[k].name);
        }
    }
    if (x && t->periodic && !box) {
        return hmd_error_set(HMD_ESOFTWARE, "%s: a periodic frame needs its cell", t->path);
    }
    for (int k = 0; k < 3; k++) {
        if (arr[k] && append(t, &t->el[k], arr[k], scale[k], NULL, step, time_ps)) {
            return hmd_error_set(HMD_EIO, "cannot write %s (/particles/.../%s at step %lld)",
                                 t->path, t->el[k].name, (long long)step);
        }
    }
    if (x && t->periodic && append(t, &t->el[E_EDGES], NULL, 1.0, box->h, step, time_ps)) {
        return hmd_error_set(HMD_EIO, "cannot write %s (box/edges)", t->path);
    }
    if (H5Fflush(t->file, H5F_SCOPE_LOCAL) < 0) {
        return hmd_error_set(HMD_EIO, "cannot write %s (flush failed: disk full?)", t->path);
    }
    return HMD_OK;
}

int hmd_h5md_traj_close(struct hmd_h5md_traj *t)
{
    if (!t) {
        return HMD_OK;
    }
    hid_t file = t->file;
    char path[4096];
    snprintf(path, sizeof path, "%s", t->path);
    traj_free(t); /* closes every dataset and group first */
    if (H5Fclose(file) < 0) {
        return hmd_error_set(HMD_EIO, "cannot write %s (closing it failed)", path);
    }
    return HMD_OK;
}
