#include "md/system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dd/collect.h"
#include "comm/comm.h"
#include "core/elements.h"
#include "core/error.h"

/* A non-periodic cell spanning the atoms, so the cell list and the grid have a frame. */
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

/* Model types of the frame's atoms into type[]: every atom's, or (typed) those of the subset,
 * the others 0; all 0 without a model. */
static int map_types(const struct hmd_frame *frame, const char *path,
                     const struct hmd_dp_model *model, const unsigned char *typed, int *type)
{
    memset(type, 0, sizeof *type * (size_t)frame->natoms);
    if (!model) {
        return HMD_OK;
    }
    const char *names[64];
    for (int t = 0; t < model->ntypes && t < 64; t++) {
        names[t] = model->type_map[t];
    }
    if (!typed) {
        return hmd_frame_map_types(frame, path, names, model->ntypes, type);
    }
    for (int i = 0; i < frame->natoms; i++) {
        int t = -1;
        for (int k = 0; typed[i] && k < model->ntypes && k < 64; k++) {
            t = strcasecmp(frame->element[i], names[k]) ? t : k;
        }
        if (typed[i] && t < 0) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d '%s' (element %s) of the nnp-group has no type "
                                 "in the model",
                                 path, frame->line ? frame->line[i] : 0, i + 1, frame->name[i],
                                 frame->element[i]);
        }
        type[i] = typed[i] ? t : 0;
    }
    return HMD_OK;
}

/* Rank 0: the whole system as home atoms of `all`, plus its cell. */
static int whole_system(struct hmd_system *sys, struct hmd_atoms *all,
                        const struct hmd_frame *frame, const char *path,
                        const struct hmd_dp_model *model, const struct hmd_system_extra *extra)
{
    const int n = frame->natoms;
    int rc = hmd_atoms_reserve(all, n);
    if (!rc) {
        rc = map_types(frame, path, model, extra ? extra->typed : NULL, all->type);
    }
    if (rc) {
        return rc;
    }
    for (int i = 0; i < n; i++) {
        all->id[i] = i;
        memcpy(all->x + 3 * i, frame->x + 3 * i, sizeof(double) * 3);
        for (int d = 0; d < 3; d++) {
            all->v[3 * i + d] = frame->v ? frame->v[3 * i + d] : 0.0;
        }
        double m = extra && extra->mass ? extra->mass[i] : frame->mass ? frame->mass[i] : 0.0;
        if (!(m > 0)) {
            m = hmd_element_mass(hmd_element_number(frame->element[i]));
        }
        if (!(m > 0)) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d '%s' has no mass: its element is unknown", path,
                                 frame->line ? frame->line[i] : 0, i + 1, frame->name[i]);
        }
        all->mass[i] = m;
    }
    all->nlocal = n;
    sys->natoms = n;
    sys->has_box = frame->has_box;
    sys->type0 = n > 0 ? all->type[0] : 0;
    if (frame->has_box) {
        sys->box = frame->box;
        return HMD_OK;
    }
    rc = bounding_cell(frame, &sys->box);
    return rc ? hmd_error_prefix(rc, "%s: ", path) : HMD_OK;
}

int hmd_system_load(struct hmd_system *sys, const struct hmd_frame *frame, const char *path,
                    const struct hmd_dp_model *model, const struct hmd_system_extra *extra,
                    const int dd_request[3], double cutoff)
{
    memset(sys, 0, sizeof *sys);
    struct hmd_atoms all = {0};
    int rc = hmd_comm_rank() == 0 ? whole_system(sys, &all, frame, path, model, extra) : HMD_OK;
    rc = hmd_comm_agree(rc);
    if (!rc) {
        /* what every rank needs to know about the whole system */
        struct {
            int natoms, has_box, type0;
            struct hmd_box box;
        } head = {sys->natoms, sys->has_box, sys->type0, sys->box};
        hmd_comm_bcast(&head, sizeof head, 0);
        sys->natoms = head.natoms;
        sys->has_box = head.has_box;
        sys->type0 = head.type0;
        sys->box = head.box;
        rc = hmd_comm_agree(hmd_domain_init(&sys->dd, &sys->box, hmd_comm_size(), hmd_comm_rank(),
                                            dd_request, cutoff));
    }
    if (!rc) {
        rc = hmd_collect_scatter(&all, sys->natoms, &sys->box, &sys->dd, &sys->atoms);
    }
    hmd_atoms_free(&all);
    return rc;
}

void hmd_system_free(struct hmd_system *sys)
{
    hmd_domain_free(&sys->dd);
    hmd_atoms_free(&sys->atoms);
    memset(sys, 0, sizeof *sys);
}
