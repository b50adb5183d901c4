#include "ff/dp.h"

#include <stdlib.h>

#include "core/error.h"
#include "nnp/dp_eval.h"

struct dp_provider {
    const struct hmd_dp_model *model; /* borrowed */
    struct hmd_dp_workspace ws;       /* owned */
};

static double dp_cutoff(const void *self)
{
    return ((const struct dp_provider *)self)->model->rcut;
}

static int dp_terms(const void *self, const char **names)
{
    (void)self;
    names[0] = "Deep Potential";
    return 1;
}

static int dp_prepare(void *self, const struct hmd_force_io *io)
{
    (void)self;
    (void)io; /* the workspace grows on demand inside the evaluation */
    return HMD_OK;
}

static int dp_compute(void *self, const struct hmd_force_io *io)
{
    struct dp_provider *dp = self;
    struct hmd_dp_output out = {
        .ncount = io->ncount,
        .atom_energy = io->atom_energy,
        .force = io->f,
        .atom_virial = io->atom_virial,
    };
    int rc = hmd_dp_compute_cpu(dp->model, &dp->ws, io->nlocal, io->nall, io->x, io->type,
                                io->type0, io->nl, &out);
    if (rc) {
        return rc;
    }
    for (int k = 0; k < 9; k++) {
        io->ev[HMD_FORCE_EV_VIRIAL + k] += out.virial[k];
    }
    io->ev[HMD_FORCE_EV_ENERGY] += out.energy;
    io->ev[HMD_FORCE_EV_DROPPED] += (double)out.dropped;
    if (io->terms) {
        io->terms[0] += out.energy;
    }
    return HMD_OK;
}

static void dp_destroy(void *self)
{
    struct dp_provider *dp = self;
    if (dp) {
        hmd_dp_workspace_free(&dp->ws);
        free(dp);
    }
}

static const struct hmd_force_provider_ops dp_ops = {
    .name = "deep-potential",
    .kind = HMD_FORCE_HOST,
    .cutoff = dp_cutoff,
    .terms = dp_terms,
    .prepare = dp_prepare,
    .compute = dp_compute,
    .device_bytes = NULL,
    .destroy = dp_destroy,
};

int hmd_ff_dp_create(struct hmd_force_provider *p, const struct hmd_dp_model *model)
{
    struct dp_provider *dp = calloc(1, sizeof *dp);
    if (!dp) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the Deep Potential");
    }
    dp->model = model;
    p->ops = &dp_ops;
    p->self = dp;
    return HMD_OK;
}
