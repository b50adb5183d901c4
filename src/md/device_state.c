/* The device step's state where the host needs it beyond the outputs (backend = cuda): the
 * list positions and predicted displacement a checkpoint stores, a continuation from such a
 * checkpoint, and pressure coupling's kinetic-energy tensor and scaling (cuda/md/scale.cu). */
#include "md/run_internal.h"

#include <stdlib.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/mat3.h"

int md_device_resume(struct md *md)
{
    if (!md->cpt_x) { /* every rank has them or none (restore_positions) */
        return HMD_OK;
    }
    const struct hmd_atoms *a = &md->sys.atoms;
    double *x = malloc(sizeof(double) * 3 * (size_t)(a->nlocal > 0 ? a->nlocal : 1));
    int rc = hmd_comm_agree(x ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory"));
    for (int i = 0; !rc && i < a->nlocal; i++) {
        for (int d = 0; d < 3; d++) {
            x[3 * i + d] = md->cpt_x[3 * a->id[i] + d];
        }
    }
    /* the cell of the checkpoint's step (the list was built in md->h_list) */
    if (!rc && md->sys.has_box) {
        rc = hmd_comm_agree(hmd_box_init(&md->sys.box, md->cpt_h, md->sys.box.periodic));
    }
    rc = rc ? rc : hmd_comm_agree(hmd_cuda_md_resume(md->gpu.md, x, &md->sys.box, md->cpt_disp2));
    rc =
        rc ? rc : hmd_device_run_fetch(&md->gpu, &md->fs, &md->sys.atoms, false, false, true, NULL);
    free(x);
    free(md->cpt_x);
    md->cpt_x = NULL;
    return rc;
}

int md_device_list_positions(struct md *md, double *x_build, double *disp2)
{
    int rc = hmd_comm_agree(hmd_cuda_md_list_state(md->gpu.md, x_build, disp2));
    hmd_comm_max(disp2, 1);
    return rc;
}

int md_device_kinetic(struct md *md, double ke[9])
{
    int rc = hmd_device_run_fetch(&md->gpu, &md->fs, &md->sys.atoms, false, false, false,
                                  &md->thermostat_work); /* the virial of this step */
    if (!rc && !md->scale) {
        rc = hmd_comm_agree(hmd_cuda_scale_create(&md->scale));
    }
    rc = rc ? rc : hmd_comm_agree(hmd_cuda_scale_kinetic(md->scale, md->gpu.state, ke));
    if (!rc) {
        hmd_comm_sum(ke, 9);
    }
    return rc;
}

int md_device_scale(struct md *md, const double mu[3][3], double *dkin)
{
    double inv[3][3];
    hmd_mat3_lower_inverse(mu, inv);
    return hmd_comm_agree(hmd_cuda_scale_apply(md->scale, md->gpu.state, mu, inv, dkin));
}
