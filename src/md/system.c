#include "md/system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "core/error.h"

/* A non-periodic cell spanning the atoms, so the cell list has something to bin against. */
static int bounding_cell(const struct hmd_frame *frame, struct hmd_box *box)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < frame->natoms; i++) {
        for (int d = 0; d < 3; d++) {
            lo[d] = fmin(lo[d], frame->x[3 * i + d]);
            hi[d] = fmax(hi[d], frame->x[3 * i + d]);
        }
    }
    double h[3][3] = {{0}};
    for (int d = 0; d < 3; d++) {
        h[d][d] = fmax(hi[d] - lo[d], 1.0);
    }
    const bool periodic[3] = {false, false, false};
    return hmd_box_init(box, h, periodic);
}

int hmd_system_init(struct hmd_atoms *atoms, struct hmd_box *box, const struct hmd_frame *frame,
                    const char *path, const struct hmd_dp_model *model)
{
    const int n = frame->natoms;
    const char *names[64];
    for (int t = 0; t < model->ntypes && t < 64; t++) {
        names[t] = model->type_map[t];
    }
    int rc = hmd_atoms_reserve(atoms, n);
    if (rc) {
        return rc;
    }
    rc = hmd_frame_map_types(frame, path, names, model->ntypes, atoms->type);
    if (rc) {
        return rc;
    }
    for (int i = 0; i < n; i++) {
        atoms->id[i] = i;
        for (int d = 0; d < 3; d++) {
            atoms->x[3 * i + d] = frame->x[3 * i + d];
            atoms->v[3 * i + d] = frame->v ? frame->v[3 * i + d] : 0.0;
            atoms->f[3 * i + d] = 0.0;
        }
        double m = frame->mass ? frame->mass[i] : 0.0;
        if (!(m > 0)) {
            m = hmd_element_mass(hmd_element_number(frame->element[i]));
        }
        if (!(m > 0)) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d '%s' has no mass: its element is unknown", path,
                                 frame->line ? frame->line[i] : 0, i + 1, frame->name[i]);
        }
        atoms->mass[i] = m;
    }
    atoms->nlocal = n;
    atoms->nghost = 0;
    if (frame->has_box) {
        *box = frame->box;
        return HMD_OK;
    }
    rc = bounding_cell(frame, box);
    return rc ? hmd_error_prefix(rc, "%s: ", path) : HMD_OK;
}
