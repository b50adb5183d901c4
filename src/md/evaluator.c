#include "md/evaluator.h"

#include <stdlib.h>
#include <string.h>

#include "dd/collect.h"
#include "comm/comm.h"
#include "core/error.h"
#include "md/backend.h"
#include "md/model_setup.h"

int hmd_evaluator_open(struct hmd_evaluator *ev, const char *path, const struct hmd_params *p,
                       const int dd[3])
{
    memset(ev, 0, sizeof *ev);
    ev->params = *p;
    for (int d = 0; d < 3; d++) {
        ev->dd[d] = dd ? dd[d] : 0;
    }
    int rc = hmd_comm_agree(hmd_model_setup(path, &ev->params, &ev->model));
    if (!rc) {
        rc = hmd_params_check(&ev->params, ev->model.rcut);
    }
    if (rc) {
        return rc;
    }
    /* The subdomain and the system's size are set for each configuration
     * (hmd_forces_set_system); the backend is chosen once, so the GPU's copy of the model is
     * made once. */
    const struct hmd_backend_request req = {.name = ev->params.backend,
                                            .precision = ev->params.precision,
                                            .resident = false,
                                            .model = &ev->model};
    rc = hmd_forces_init(&ev->fs, NULL, ev->params.verlet_buffer, 0, 0);
    return hmd_comm_agree(rc ? rc
                             : hmd_backend_setup(&ev->fs, &req, ev->backend, sizeof ev->backend));
}

/* Rank 0's gather buffers for n atoms. */
static int reserve(struct hmd_evaluator *ev, int n)
{
    if (n <= ev->cap) {
        return HMD_OK;
    }
    double *f = realloc(ev->force, sizeof(double) * 3 * (size_t)n);
    if (f) {
        ev->force = f;
    }
    double *e = realloc(ev->atom_energy, sizeof(double) * (size_t)n);
    if (e) {
        ev->atom_energy = e;
    }
    if (!f || !e) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the results of %d atoms", n);
    }
    ev->cap = n;
    return HMD_OK;
}

int hmd_evaluator_eval(struct hmd_evaluator *ev, const struct hmd_frame *frame, const char *path,
                       struct hmd_eval_result *res)
{
    memset(res, 0, sizeof *res);
    hmd_system_free(&ev->sys);
    struct hmd_system *sys = &ev->sys;
    int rc = hmd_system_load(sys, frame, path, &ev->model, NULL, ev->dd, ev->params.rlist);
    if (!rc) {
        hmd_forces_set_system(&ev->fs, &sys->dd, sys->natoms, sys->type0);
        rc = hmd_forces_rebuild(&ev->fs, &sys->atoms, &sys->box);
    }
    if (!rc) {
        rc = hmd_forces_compute(&ev->fs, &sys->atoms, &sys->box, true);
    }
    if (!rc) {
        rc = hmd_comm_agree(hmd_comm_rank() == 0 ? reserve(ev, sys->natoms + 1) : HMD_OK);
    }
    if (!rc) {
        rc = hmd_collect_gather(sys->atoms.id, sys->atoms.f, sys->atoms.nlocal, 3, ev->force,
                                sys->natoms);
    }
    if (!rc) {
        rc = hmd_collect_gather(sys->atoms.id, ev->fs.atom_energy, sys->atoms.nlocal, 1,
                                ev->atom_energy, sys->natoms);
    }
    if (rc) {
        return rc;
    }
    res->natoms = sys->natoms;
    res->energy = ev->fs.energy;
    memcpy(res->virial, ev->fs.virial, sizeof res->virial);
    res->force = ev->force;
    res->atom_energy = ev->atom_energy;
    res->dropped = ev->fs.dropped;
    return HMD_OK;
}

void hmd_evaluator_close(struct hmd_evaluator *ev)
{
    hmd_forces_free(&ev->fs);
    hmd_system_free(&ev->sys);
    hmd_model_free(&ev->model);
    free(ev->force);
    free(ev->atom_energy);
    memset(ev, 0, sizeof *ev);
}
