/* Model deviation on the fly (`halomd run -m a.dp b.dp ...`, LAMMPS's pair_style deepmd with
 * out_freq): the first model drives the run; at every model-devi-freq step the positions are
 * gathered on rank 0 and every other model evaluates them through the single-point evaluator
 * (md/evaluator.h), the path `halomd eval -m` takes, so that a run's rows equal those of
 * `halomd eval -m` over its own trajectory. The first model's forces, virial and energy are the
 * run's own at that step.
 *
 * Cost: each deviation step sets up every other model's system anew (decomposition, borders,
 * neighbour list) and gathers the forces on rank 0, one single point per extra model; on a
 * GPU-resident run the positions and forces are also copied from the device at those steps.
 * With the default model-devi-freq of 100 this is a few per cent of the run for 3 models. */
#include "md/run_internal.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "io/backup.h"
#include "io/model_devi_out.h"
#include "nnp/model_devi.h"

enum { DEVI_MAX_MODELS = 16 };

int md_devi_setup(struct md *md)
{
    struct md_devi *d = &md->devi;
    const int n = md->opt->nmodels;
    if (n < 2) {
        return HMD_OK;
    }
    if (n > DEVI_MAX_MODELS) {
        return hmd_error_set(HMD_EUSAGE, "a run's model deviation takes 2 to %d models",
                             DEVI_MAX_MODELS);
    }
    d->ev = calloc((size_t)n, sizeof *d->ev);
    int rc = d->ev ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    if (!rc) {
        d->nmodels = n;
    }
    /* ev[0] stays closed: the run's own model drives */
    for (int k = 1; k < n && !rc; k++) {
        rc = hmd_evaluator_open(&d->ev[k], md->opt->models[k], &md->p, md->opt->dd);
    }
    const struct hmd_dp_model *models[DEVI_MAX_MODELS];
    int map[DEVI_MAX_MODELS * 64];
    if (!rc && md->model.ntypes > 64) {
        rc = hmd_error_set(HMD_ENOTSUP, "%s: more than 64 types", md->model_path);
    }
    if (!rc) {
        models[0] = &md->model;
        for (int k = 1; k < n; k++) {
            models[k] = &d->ev[k].model;
        }
        rc = hmd_model_devi_check(models, md->opt->models, n, map);
    }
    if (!rc && hmd_comm_rank() == 0 && md->p.model_devi_atomic) {
        d->atom = malloc(sizeof(double) * ((size_t)md->sys.natoms + 1));
        rc = d->atom ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    return hmd_comm_agree(rc);
}

int md_devi_open(struct md *md)
{
    struct md_devi *d = &md->devi;
    if (d->nmodels < 2 || hmd_comm_rank() != 0) {
        return HMD_OK;
    }
    char note[HMD_MD_NAME_MAX];
    md_output_path(md, ".model_devi.out", d->path, sizeof d->path);
    int rc = hmd_output_open(d->path, &d->fp, note, sizeof note);
    if (!rc) {
        if (note[0]) {
            fprintf(md->out.log, "%s\n", note);
        }
        rc = hmd_model_devi_out_header(d->fp, d->path, md->opt->conf, md->p.model_devi_atomic);
    }
    return rc;
}

bool md_devi_step(const struct md *md)
{
    return md->devi.nmodels >= 2 && md_every(md->step, md->p.model_devi_freq);
}

int md_devi_write(struct md *md)
{
    struct md_devi *d = &md->devi;
    const bool root = hmd_comm_rank() == 0;
    const int natoms = md->sys.natoms;
    const double *force[DEVI_MAX_MODELS], *virial[DEVI_MAX_MODELS];
    double energy[DEVI_MAX_MODELS], vir[DEVI_MAX_MODELS][9];
    force[0] = md->out.gather_f;
    virial[0] = md->fs.virial;
    energy[0] = md->fs.energy;
    /* the positions of this step, in the structure's atom order, in the run's cell */
    struct hmd_frame frame;
    if (root) {
        frame = md->frames[0];
        frame.x = md->out.gather_x;
        frame.v = NULL;
        frame.has_box = md->sys.has_box;
        frame.box = md->sys.box;
    }
    int rc = HMD_OK;
    for (int k = 1; k < d->nmodels && !rc; k++) {
        struct hmd_eval_result res;
        rc = hmd_comm_agree(
            hmd_evaluator_eval(&d->ev[k], root ? &frame : NULL, md->opt->conf, &res));
        if (rc) {
            return hmd_error_prefix(rc, "step %lld, model %s: ", (long long)md->step,
                                    md->opt->models[k]);
        }
        force[k] = res.force; /* the evaluator's own buffer, kept until its next eval */
        memcpy(vir[k], res.virial, sizeof vir[k]);
        virial[k] = vir[k];
        energy[k] = res.energy;
    }
    if (!root) {
        return hmd_comm_agree(HMD_OK);
    }
    struct hmd_model_devi row;
    hmd_model_devi_compute(d->nmodels, natoms, force, virial, energy, md->p.model_devi_relative,
                           md->p.model_devi_relative_v, &row, d->atom);
    rc = hmd_model_devi_out_row(d->fp, d->path, md->step, &row, d->atom, natoms);
    if (!rc && fflush(d->fp)) { /* DP-GEN may read it while the run goes on */
        rc = hmd_error_set(HMD_EIO, "cannot write %s", d->path);
    }
    return hmd_comm_agree(rc);
}

int md_devi_close(struct md *md)
{
    struct md_devi *d = &md->devi;
    int rc = HMD_OK;
    if (d->fp && fclose(d->fp)) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", d->path);
    }
    for (int k = 1; k < d->nmodels; k++) {
        hmd_evaluator_close(&d->ev[k]);
    }
    free(d->ev);
    free(d->atom);
    memset(d, 0, sizeof *d);
    return rc;
}
