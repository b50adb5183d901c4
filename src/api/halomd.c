#include "api/halomd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md/evaluator.h"
#include "core/error.h"
#include "hmd_buildinfo.h"

struct hmd_api_model {
    struct hmd_evaluator ev; /* at a fixed address: the evaluator points into itself */
    long dropped;
};

static int set_param(struct hmd_params *p, const char *key, const char *value)
{
    char assignment[256];
    snprintf(assignment, sizeof assignment, "%s=%s", key, value);
    return hmd_params_set(p, assignment);
}

int hmd_api_model_open(struct hmd_api_model **out, const char *path, const char *backend,
                       const char *precision, const char *const *settings, int nsettings)
{
    *out = NULL;
    hmd_error_clear();
    if (!path) {
        return hmd_error_set(HMD_EUSAGE, "hmd_api_model_open: no model path");
    }
    struct hmd_params p;
    hmd_params_defaults(&p);
    int rc = set_param(&p, "backend", backend ? backend : "auto");
    if (!rc) {
        rc = set_param(&p, "precision", precision ? precision : "double");
    }
    for (int k = 0; k < nsettings && !rc; k++) {
        rc = hmd_params_set(&p, settings[k]);
    }
    if (rc) {
        return rc;
    }
    struct hmd_api_model *m = calloc(1, sizeof *m);
    if (!m) {
        return hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    rc = hmd_evaluator_open(&m->ev, path, &p, NULL);
    if (rc) {
        hmd_evaluator_close(&m->ev);
        free(m);
        return rc;
    }
    *out = m;
    return HMD_OK;
}

/* The configuration as a structure frame: elements are the model's type names. */
static int make_frame(const struct hmd_api_model *m, int natoms, const double *positions,
                      const int *types, const double *cell, const int *pbc, struct hmd_frame *frame)
{
    const struct hmd_dp_model *model = &m->ev.model;
    int rc = hmd_frame_alloc(frame, natoms);
    frame->mass = rc ? NULL : malloc(sizeof(double) * (size_t)natoms);
    if (!rc && !frame->mass) {
        rc = hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    for (int i = 0; i < natoms && !rc; i++) {
        const int t = types[i];
        if (t < 0 || t >= model->ntypes) {
            rc = hmd_error_set(HMD_EDATA, "atom %d: type %d, but the model has %d types", i + 1, t,
                               model->ntypes);
        } else if (strlen(model->type_map[t]) >= sizeof frame->element[i]) {
            rc = hmd_error_set(HMD_ENOTSUP,
                               "type %d of the model is '%s': halomd maps types by element "
                               "symbol (at most 3 characters)",
                               t, model->type_map[t]);
        }
        for (int d = 0; d < 3 && !rc; d++) {
            if (!isfinite(positions[3 * i + d])) {
                rc = hmd_error_set(HMD_EDATA, "atom %d: position is not finite", i + 1);
            }
        }
        if (!rc) {
            strcpy(frame->element[i], model->type_map[t]);
            strcpy(frame->name[i], model->type_map[t]);
            frame->line[i] = i + 1;
            frame->mass[i] = 1.0; /* single points do not use masses */
        }
    }
    if (!rc) {
        memcpy(frame->x, positions, sizeof(double) * 3 * (size_t)natoms);
    }
    if (!rc && cell) {
        double h[3][3];
        bool periodic[3];
        memcpy(h, cell, sizeof h);
        for (int d = 0; d < 3; d++) {
            periodic[d] = pbc ? pbc[d] != 0 : true;
        }
        rc = hmd_box_init(&frame->box, h, periodic);
        if (rc) {
            rc = hmd_error_prefix(rc, "cell: ");
        }
        frame->has_box = true;
    }
    return rc;
}

int hmd_api_model_eval(struct hmd_api_model *m, int natoms, const double *positions,
                       const int *types, const double *cell, const int *pbc, double *energy,
                       double *forces, double *virial, double *atom_energies)
{
    hmd_error_clear();
    if (natoms < 1) {
        return hmd_error_set(HMD_EUSAGE, "hmd_api_model_eval: %d atoms (at least 1)", natoms);
    }
    struct hmd_frame frame;
    int rc = make_frame(m, natoms, positions, types, cell, pbc, &frame);
    struct hmd_eval_result res;
    if (!rc) {
        rc = hmd_evaluator_eval(&m->ev, &frame, "input", &res);
    }
    hmd_frame_free(&frame);
    if (rc) {
        return rc;
    }
    *energy = res.energy;
    memcpy(forces, res.force, sizeof(double) * 3 * (size_t)natoms);
    memcpy(virial, res.virial, sizeof res.virial);
    if (atom_energies) {
        memcpy(atom_energies, res.atom_energy, sizeof(double) * (size_t)natoms);
    }
    m->dropped = res.dropped;
    return HMD_OK;
}

int hmd_api_model_ntypes(const struct hmd_api_model *m)
{
    return m->ev.model.ntypes;
}

const char *hmd_api_model_type_name(const struct hmd_api_model *m, int t)
{
    return t >= 0 && t < m->ev.model.ntypes ? m->ev.model.type_map[t] : NULL;
}

double hmd_api_model_rcut(const struct hmd_api_model *m)
{
    return m->ev.model.rcut;
}

const char *hmd_api_model_backend(const struct hmd_api_model *m)
{
    return m->ev.backend;
}

long hmd_api_model_dropped(const struct hmd_api_model *m)
{
    return m->dropped;
}

void hmd_api_model_close(struct hmd_api_model *m)
{
    if (m) {
        hmd_evaluator_close(&m->ev);
        free(m);
    }
}

const char *hmd_api_error_message(void)
{
    return hmd_error_msg();
}

const char *hmd_api_version(void)
{
    return HMD_VERSION " (" HMD_GIT_COMMIT ")";
}
