/* XTC through chemfiles's C interface, loaded at run time (io/traj_xtc.h).
 *
 * Only the few functions used are declared here, with the signatures of chemfiles 0.10's
 * public C headers (chemfiles/capi): the handles are opaque pointers, chfl_status is an int
 * (0 = success), chfl_vector3d is double[3]. */
#include "io/traj_xtc.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/backup.h"
#include "io/out_groups.h"

typedef double chfl_vector3d[3];

struct chemfiles_api {
    void *lib;
    const char *(*version)(void);
    const char *(*last_error)(void);
    void *(*trajectory_open)(const char *path, char mode);
    int (*trajectory_write)(void *traj, const void *frame);
    void (*trajectory_close)(const void *traj);
    void *(*frame)(void);
    int (*frame_resize)(void *frame, uint64_t size);
    int (*frame_positions)(void *frame, chfl_vector3d **positions, uint64_t *size);
    int (*frame_set_cell)(void *frame, const void *cell);
    int (*frame_set_step)(void *frame, uint64_t step);
    int (*frame_set_property)(void *frame, const char *name, const void *property);
    void *(*cell_from_matrix)(const chfl_vector3d matrix[3]);
    void *(*property_double)(double value);
    int (*free)(const void *object);
};

static struct chemfiles_api api;

/* Loads libchemfiles once. Returns HMD_OK or HMD_ENOTSUP saying how to get it. */
static int load_chemfiles(const char *path)
{
    if (api.lib) {
        return HMD_OK;
    }
    const char *env = getenv("HALOMD_CHEMFILES");
    const char *name = env && *env ? env : "libchemfiles.so";
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        return hmd_error_set(HMD_ENOTSUP,
                             "cannot write %s: XTC files are written through chemfiles, and "
                             "%s cannot be loaded (%s); pip install chemfiles and set "
                             "HALOMD_CHEMFILES to its libchemfiles.so (docs/formats.md)",
                             path, name, dlerror());
    }
    struct chemfiles_api a = {.lib = lib};
    struct {
        const char *symbol;
        void **slot;
    } table[] = {
        {"chfl_version", (void **)&a.version},
        {"chfl_last_error", (void **)&a.last_error},
        {"chfl_trajectory_open", (void **)&a.trajectory_open},
        {"chfl_trajectory_write", (void **)&a.trajectory_write},
        {"chfl_trajectory_close", (void **)&a.trajectory_close},
        {"chfl_frame", (void **)&a.frame},
        {"chfl_frame_resize", (void **)&a.frame_resize},
        {"chfl_frame_positions", (void **)&a.frame_positions},
        {"chfl_frame_set_cell", (void **)&a.frame_set_cell},
        {"chfl_frame_set_step", (void **)&a.frame_set_step},
        {"chfl_frame_set_property", (void **)&a.frame_set_property},
        {"chfl_cell_from_matrix", (void **)&a.cell_from_matrix},
        {"chfl_property_double", (void **)&a.property_double},
        {"chfl_free", (void **)&a.free},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        *table[k].slot = dlsym(lib, table[k].symbol);
        if (!*table[k].slot) {
            dlclose(lib);
            return hmd_error_set(HMD_ENOTSUP,
                                 "cannot write %s: %s has no %s; use chemfiles 0.10 or newer", path,
                                 name, table[k].symbol);
        }
    }
    api = a;
    return HMD_OK;
}

struct hmd_xtc_traj {
    void *traj, *frame;
    int natoms, n;
    int *select; /* [n] or NULL */
    double precision;
    char path[];
};

int hmd_xtc_traj_open(const char *path, struct hmd_xtc_traj **traj, int natoms, const int *select,
                      int nselect, double precision, char *note, size_t note_len)
{
    *traj = NULL;
    if (!(precision > 0)) {
        return hmd_error_set(HMD_ECONFIG, "%s: precision %g is not positive", path, precision);
    }
    int *sel = NULL, n = 0;
    int rc = hmd_out_group_copy(path, natoms, select, nselect, &sel, &n);
    rc = rc ? rc : load_chemfiles(path);
    size_t path_size = strlen(path) + 1;
    struct hmd_xtc_traj *t = rc ? NULL : calloc(1, sizeof *t + path_size);
    if (!t) {
        free(sel);
        return rc ? rc : hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(t->path, path, path_size);
    t->select = sel;
    t->natoms = natoms;
    t->n = n;
    t->precision = precision;
    rc = hmd_output_backup(path, note, note_len);
    if (!rc) {
        t->frame = api.frame();
        t->traj = t->frame ? api.trajectory_open(path, 'w') : NULL;
        if (!t->frame || !t->traj || api.frame_resize(t->frame, (uint64_t)n) != 0) {
            rc = hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", path, api.last_error());
        }
    }
    if (rc) {
        hmd_xtc_traj_close(t);
        return rc;
    }
    *traj = t;
    return HMD_OK;
}

/* chemfiles's property `name` = x on the frame. */
static int set_double(void *frame, const char *name, double x)
{
    void *p = api.property_double(x);
    int bad = !p || api.frame_set_property(frame, name, p) != 0;
    if (p) {
        api.free(p);
    }
    return bad;
}

int hmd_xtc_traj_write_frame(struct hmd_xtc_traj *t, const double *x, const struct hmd_box *box,
                             int64_t step, double time_ps)
{
    chfl_vector3d *pos = NULL;
    uint64_t size = 0;
    if (api.frame_positions(t->frame, &pos, &size) != 0 || size != (uint64_t)t->n) {
        return hmd_error_set(HMD_EIO, "cannot write %s: %s", t->path, api.last_error());
    }
    for (int k = 0; k < t->n; k++) {
        const size_t i = t->select ? (size_t)t->select[k] : (size_t)k;
        memcpy(pos[k], x + 3 * i, sizeof pos[k]);
    }
    /* chemfiles's cell matrix holds the cell vectors as columns */
    chfl_vector3d m[3] = {{0}};
    for (int a = 0; box && a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            m[b][a] = box->h[a][b];
        }
    }
    void *cell = api.cell_from_matrix(m);
    int bad = !cell || api.frame_set_cell(t->frame, cell) != 0 ||
              api.frame_set_step(t->frame, (uint64_t)step) != 0 ||
              set_double(t->frame, "time", time_ps) ||
              set_double(t->frame, "xtc_precision", t->precision) ||
              api.trajectory_write(t->traj, t->frame) != 0;
    if (cell) {
        api.free(cell);
    }
    return bad ? hmd_error_set(HMD_EIO, "cannot write %s: %s", t->path, api.last_error()) : HMD_OK;
}

int hmd_xtc_traj_close(struct hmd_xtc_traj *t)
{
    if (!t) {
        return HMD_OK;
    }
    if (t->traj) {
        api.trajectory_close(t->traj);
    }
    if (t->frame) {
        api.free(t->frame);
    }
    free(t->select);
    free(t);
    return HMD_OK;
}
