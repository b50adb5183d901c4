#include "md/resident.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "cuda/cuda_api.h"
#include "dd/halo_plan.h"

/* The ghost images of the current halo plan into r's arrays. */
static int ghost_images(struct hmd_resident *r, const struct hmd_forces *fs,
                        const struct hmd_atoms *atoms)
{
    if (atoms->nghost > r->cap_ghost) {
        const int cap = atoms->nghost + atoms->nghost / 4 + 16;
        int *src = realloc(r->ghost_src, sizeof(int) * cap);
        if (src) {
            r->ghost_src = src;
        }
        double *shift = realloc(r->ghost_shift, sizeof(double) * 3 * cap);
        if (shift) {
            r->ghost_shift = shift;
        }
        if (!src || !shift) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for the ghost images");
        }
        r->cap_ghost = cap;
    }
    return hmd_halo_plan_self_images(&fs->plan, atoms->nlocal, 0, r->ghost_src, r->ghost_shift);
}

static int upload_list(struct hmd_resident *r, struct hmd_forces *fs, struct hmd_atoms *atoms,
                       bool initial, double *forces_s)
{
    int rc = ghost_images(r, fs, atoms);
    if (!rc) {
        rc = hmd_cuda_md_finish_list_step(r->dev, hmd_atoms_nall(atoms), atoms->x, atoms->type,
                                          r->ghost_src, r->ghost_shift, fs->rlist, initial,
                                          forces_s);
    }
    return rc;
}

int hmd_resident_start(struct hmd_resident *r, struct hmd_forces *fs, struct hmd_atoms *atoms,
                       const struct hmd_thermostat *th, const struct hmd_params *p,
                       int64_t first_step, double thermostat_work)
{
    const struct hmd_cuda_md_config c = {
        .nlocal = atoms->nlocal,
        .dt = p->dt,
        .tcoupl = p->tcoupl == HMD_TCOUPL_VRESCALE   ? HMD_CUDA_TCOUPL_VRESCALE
                  : p->tcoupl == HMD_TCOUPL_LANGEVIN ? HMD_CUDA_TCOUPL_LANGEVIN
                                                     : HMD_CUDA_TCOUPL_NO,
        .ref_t = th->ref_t,
        .tau_t = th->tau_t,
        .ndof = th->ndof,
        .seed = th->seed,
        .nstcomm = p->comm_mode == HMD_COMM_LINEAR ? p->nstcomm : 0,
        .type0 = fs->type0,
        .first_step = first_step,
        .thermostat_work = thermostat_work,
    };
    int rc = hmd_cuda_md_create(&r->dev, fs->cuda, &c, atoms->mass, atoms->id, atoms->v);
    if (!rc) {
        rc = upload_list(r, fs, atoms, true, NULL);
    }
    if (!rc) {
        rc = hmd_resident_fetch(r, fs, atoms, false, false, true, NULL);
    }
    return rc;
}

int hmd_resident_begin_list_step(struct hmd_resident *r, struct hmd_atoms *atoms, double *moved)
{
    return hmd_cuda_md_begin_list_step(r->dev, atoms->x, moved);
}

int hmd_resident_finish_list_step(struct hmd_resident *r, struct hmd_forces *fs,
                                  struct hmd_atoms *atoms, double *forces_s)
{
    return upload_list(r, fs, atoms, false, forces_s);
}

int hmd_resident_step(struct hmd_resident *r)
{
    return hmd_cuda_md_step(r->dev);
}

int hmd_resident_wait(struct hmd_resident *r)
{
    return hmd_cuda_md_wait(r->dev);
}

int hmd_resident_next_displacement(struct hmd_resident *r, double *disp)
{
    return hmd_cuda_md_next_displacement(r->dev, disp);
}

int hmd_resident_fetch(struct hmd_resident *r, struct hmd_forces *fs, struct hmd_atoms *atoms,
                       bool x, bool v, bool f, double *thermostat_work)
{
    struct hmd_cuda_md_scalars s = {0};
    int rc = hmd_cuda_md_fetch(r->dev, x ? atoms->x : NULL, v ? atoms->v : NULL,
                               f ? atoms->f : NULL, &s);
    if (!rc) {
        fs->energy = s.energy;
        memcpy(fs->virial, s.virial, sizeof fs->virial);
        fs->dropped = (long)s.dropped;
        if (thermostat_work) {
            *thermostat_work = s.thermostat_work;
        }
    }
    return rc;
}

size_t hmd_resident_device_bytes(const struct hmd_resident *r)
{
    return hmd_cuda_md_device_bytes(r->dev);
}

void hmd_resident_free(struct hmd_resident *r)
{
    hmd_cuda_md_destroy(r->dev);
    free(r->ghost_src);
    free(r->ghost_shift);
    memset(r, 0, sizeof *r);
}
