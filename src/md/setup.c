/* The set-up of an MD run: every input read and checked before any output exists. */
#include "md/run_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/rng.h"
#include "ff/classical.h"
#include "ff/nnp_group.h"
#include "io/checkpoint.h"
#include "md/backend.h"
#include "md/integrate.h"
#include "md/model_setup.h"

int md_read_parameters(struct md *md)
{
    const struct hmd_run_options *opt = md->opt;
    hmd_params_defaults(&md->p);
    int rc = opt->mdp ? hmd_params_read(&md->p, opt->mdp) : HMD_OK;
    for (int k = 0; k < opt->nset && !rc; k++) {
        rc = hmd_params_set(&md->p, opt->set[k]);
    }
    if (!rc && opt->have_nsteps) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "nsteps=%lld", opt->nsteps);
        rc = hmd_params_set(&md->p, assignment);
    }
    if (!rc && opt->backend) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "backend=%s", opt->backend);
        rc = hmd_params_set(&md->p, assignment);
    }
    if (rc) {
        return rc;
    }
    const char *model = opt->nmodels > 0 ? opt->models[0] : opt->model ? opt->model : md->p.model;
    md->has_top = opt->top != NULL;
    md->has_model = model[0] != '\0';
    if (!md->has_model && !md->has_top) {
        return hmd_error_set(HMD_EUSAGE,
                             "no force field: give -m model.dp (or `model = ...` in %s), "
                             "-p topol.top (a GROMACS topology), or both (nnp-group)",
                             opt->mdp ? opt->mdp : "the parameter file");
    }
    if (md->has_model && md->has_top && !md->p.nnp_group[0]) {
        return hmd_error_set(HMD_EUSAGE,
                             "both a model (%s) and a topology (-p %s) but no nnp-group: set "
                             "nnp-group to the atoms the model treats (hybrid ML/MM), or drop "
                             "one of them",
                             model, opt->top);
    }
    if (md->p.nnp_group[0] && !(md->has_model && md->has_top)) {
        return hmd_error_set(HMD_EUSAGE,
                             "nnp-group = %s needs both -m model.dp (the group's "
                             "Deep Potential) and -p topol.top (the rest)",
                             md->p.nnp_group);
    }
    snprintf(md->model_path, sizeof md->model_path, "%s", model);
    snprintf(md->p.model, sizeof md->p.model, "%s", model);
    return HMD_OK;
}

static double degrees_of_freedom(const struct md *md)
{
    double ndof = 3.0 * md->sys.natoms;
    if (md->p.com_mode == HMD_COM_LINEAR && md->sys.natoms > 1) {
        ndof -= 3.0;
    }
    return ndof;
}

/* Seeds set to -1 come from rank 0's clock, so every rank uses the same ones. */
static void choose_seeds(struct md *md)
{
    int64_t seeds[2] = {md->p.gen_seed, md->p.ld_seed};
    if (seeds[0] == -1) {
        seeds[0] = (int64_t)hmd_rng_seed_from_clock();
    }
    if (seeds[1] == -1) {
        seeds[1] = (int64_t)hmd_rng_seed_from_clock() ^ 0x5DEECE66Dll;
    }
    hmd_comm_bcast(seeds, sizeof seeds, 0);
    md->p.gen_seed = seeds[0];
    md->p.ld_seed = seeds[1];
}

/* -cpi on rank 0: the checkpoint's positions, velocities and cell replace those of the
 * structure's first frame (the atoms' names and order stay the structure's). */
static int checkpoint_into_frame(struct md *md, const struct hmd_checkpoint *c)
{
    const char *cpt = md->opt->cpi, *conf = md->opt->conf;
    struct hmd_frame *f = &md->frames[0];
    if (c->natoms != f->natoms || c->has_box != f->has_box) {
        return hmd_error_set(HMD_EDATA, "%s: %d atoms%s, but %s has %d%s", cpt, c->natoms,
                             c->has_box ? " in a cell" : " without a cell", conf, f->natoms,
                             f->has_box ? " in a cell" : " without a cell");
    }
    const bool known =
        (c->model_hash[0] | c->model_hash[1]) && (md->model_hash[0] | md->model_hash[1]);
    if (known && memcmp(c->model_hash, md->model_hash, sizeof md->model_hash)) {
        return hmd_error_set(HMD_ECONFIG,
                             "the checkpoint %s was written with another model (%s, XXH3-128 "
                             "%016llx%016llx) than %s (%016llx%016llx)",
                             cpt, c->model, (unsigned long long)c->model_hash[0],
                             (unsigned long long)c->model_hash[1], md->model_path,
                             (unsigned long long)md->model_hash[0],
                             (unsigned long long)md->model_hash[1]);
    }
    if (fabs(c->dt - md->p.dt) > 1e-12 * c->dt) {
        return hmd_error_set(HMD_ECONFIG,
                             "dt = %g ps, but the checkpoint %s was written with dt = %g ps "
                             "(the time and the thermostat noise continue from its step)",
                             md->p.dt, cpt, c->dt);
    }
    if (!f->v) {
        f->v = malloc(sizeof(double) * 3 * f->natoms);
        if (!f->v) {
            return hmd_error_set(HMD_ENOMEM, "out of memory");
        }
    }
    /* with the positions of the last list build, the atoms start there: the first rebuild
     * then makes the original run's ghosts and list, and set_up_system moves them on to the
     * checkpoint's positions (restore_positions) */
    memcpy(f->x, c->x_list ? c->x_list : c->x, sizeof(double) * 3 * f->natoms);
    memcpy(f->v, c->v, sizeof(double) * 3 * f->natoms);
    /* ... in the cell of that build (pressure coupling may have changed it since) */
    if (c->has_box && hmd_box_init(&f->box, c->x_list ? c->h_list : c->h, f->box.periodic)) {
        return hmd_error_prefix(HMD_EDATA, "%s: ", cpt);
    }
    return HMD_OK;
}

/* -cpi: reads the checkpoint on rank 0 into the structure's frame, and sets the step and the
 * thermostat work on every rank. Collective; before the atoms are distributed. */
static int apply_checkpoint(struct md *md)
{
    /* step, list step (exact in a double), thermostat work, ld-seed used, barostat work, the
     * device's predicted displacement, the cell */
    double state[6 + 9] = {0.0, -1.0, 0.0, -1.0, 0.0, -1.0};
    int rc = HMD_OK;
    if (hmd_comm_rank() == 0) {
        struct hmd_checkpoint c;
        rc = hmd_checkpoint_read(md->opt->cpi, &c);
        if (!rc) {
            rc = checkpoint_into_frame(md, &c);
            state[0] = (double)c.step;
            state[1] = c.x_list ? (double)c.list_step : -1.0;
            state[2] = c.thermostat_work;
            state[3] = (double)c.ld_seed;
            state[4] = c.barostat_work;
            state[5] = c.x_list ? c.list_disp2 : -1.0;
            memcpy(state + 6, c.h, sizeof c.h);
        }
        /* positions of a step after the list's: kept until the first forces */
        if (!rc && c.x_list && c.list_step != c.step) {
            md->cpt_x = c.x;
            c.x = NULL;
        }
        hmd_checkpoint_free(&c);
    }
    rc = hmd_comm_agree(rc);
    if (rc) {
        return rc;
    }
    hmd_comm_bcast(state, sizeof state, 0);
    md->first_step = md->step = (int64_t)state[0];
    md->list_step = (int64_t)state[1];
    md->thermostat_work = state[2];
    md->barostat_work = state[4];
    md->cpt_disp2 = state[5];
    memcpy(md->cpt_h, state + 6, sizeof md->cpt_h);
    if (md->p.ld_seed == -1 && state[3] >= 0) { /* the noise goes on with the seed drawn */
        md->p.ld_seed = (int64_t)state[3];
    }
    if (md->p.nsteps >= 0 && md->step >= md->p.nsteps) {
        return hmd_error_set(HMD_ECONFIG,
                             "nsteps = %" PRId64 ", but the checkpoint %s is at step %" PRId64
                             " already: with -cpi, nsteps is the last step of the whole "
                             "simulation, counted from the first run's start",
                             md->p.nsteps, md->opt->cpi, md->step);
    }
    if (md->p.gen_vel && hmd_comm_rank() == 0) {
        fprintf(stderr, "halomd: note: gen-vel = yes ignored: the velocities are the "
                        "checkpoint's\n");
    }
    md->p.gen_vel = false;
    return HMD_OK;
}

/* -p: every rank reads the topology (each builds the classical provider from it), which must
 * make the `natoms` atoms of the structure, and the settings of the run's parameters; the
 * nnp-group of hybrid ML/MM. */
static int read_topology(struct md *md, long long natoms)
{
    const struct hmd_top_cpp_options cpp = {
        .defines = md->p.define, .natoms = natoms, .structure = md->opt->conf};
    int rc = hmd_topology_read(&md->top, md->opt->top, &cpp);
    if (!rc) {
        rc = hmd_ff_settings_from_params(&md->p, &md->ff);
    }
    if (!rc && md->p.nnp_group[0]) {
        char where[4200];
        hmd_params_origin_text(&md->p, "nnp-group", where, sizeof where);
        md->group = malloc((size_t)md->top.natoms + 1);
        rc = md->group
                 ? hmd_nnp_group_select(md->p.nnp_group, where, &md->top, md->opt->index, md->group)
                 : hmd_error_set(HMD_ENOMEM, "out of memory for the nnp-group");
        md->ff.nnp_group = md->group;
    } else if (!rc && md->opt->index) {
        fprintf(stderr, "halomd: note: -n %s is not used: no nnp-group is set\n", md->opt->index);
    }
    return rc;
}

/* The longest cut-off of the force fields (Å): the model's and the topology's. */
static double force_cutoff(const struct md *md)
{
    const double mm = md->has_top ? fmax(md->ff.rcoulomb, md->ff.rvdw) : 0.0;
    return md->has_model ? fmax(mm, md->model.rcut) : mm;
}

/* Rank 0: the model type of the nnp-group's first atom (its element in the type map). */
static int group_first_type(const struct md *md, int *type0)
{
    int g = 0;
    while (g < md->top.natoms && !md->group[g]) {
        g++;
    }
    const char *element = md->frames[0].element[g];
    for (int t = 0; t < md->model.ntypes; t++) {
        if (!strcasecmp(element, md->model.type_map[t])) {
            *type0 = t;
            return HMD_OK;
        }
    }
    return hmd_error_set(HMD_EDATA,
                         "%s: atom %d '%s' (element %s) of the nnp-group has no type in "
                         "the model %s",
                         md->opt->conf, g + 1, md->frames[0].name[g], element, md->model_path);
}

/* The structure's atoms against the topology's (rank 0), and the nnp-group's first type. */
static int check_structure(struct md *md, int *type0)
{
    int rc = HMD_OK;
    if (hmd_comm_rank() == 0 && md->has_top) {
        rc = hmd_topology_check_frame(&md->top, &md->frames[0], md->opt->conf);
        if (!rc && md->group) {
            rc = group_first_type(md, type0);
        }
    }
    rc = hmd_comm_agree(rc);
    if (!rc) {
        hmd_comm_bcast(type0, sizeof *type0, 0);
    }
    return rc;
}

/* -cpi with list positions of an earlier step: after the first rebuild at those positions
 * (in the list's cell), every rank's home atoms take the checkpoint's positions and cell and
 * the ghosts follow (forward halo), as they were in the run that wrote it; the device step does
 * this after its own first list (md_device_resume), with the positions given to every rank
 * here. Collective; a no-op otherwise. */
static int restore_positions(struct md *md)
{
    int have = md->cpt_x != NULL;
    hmd_comm_max_int(&have, 1);
    if (!have) {
        md->list_step = md->step;
        return HMD_OK;
    }
    const size_t bytes = sizeof(double) * 3 * (size_t)md->sys.natoms;
    if (!md->cpt_x) {
        md->cpt_x = malloc(bytes);
    }
    int rc = hmd_comm_agree(md->cpt_x ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory"));
    if (rc) {
        return rc;
    }
    hmd_comm_bcast(md->cpt_x, bytes, 0);
    if (hmd_forces_on_device(&md->fs)) {
        return HMD_OK;
    }
    if (md->sys.has_box) {
        rc = hmd_comm_agree(hmd_box_init(&md->sys.box, md->cpt_h, md->sys.box.periodic));
    }
    if (rc) {
        return rc;
    }
    struct hmd_atoms *a = &md->sys.atoms;
    for (int i = 0; i < a->nlocal; i++) {
        memcpy(a->x + 3 * i, md->cpt_x + 3 * a->id[i], sizeof(double) * 3);
    }
    free(md->cpt_x);
    md->cpt_x = NULL;
    hmd_forces_update_ghosts(&md->fs, a, &md->sys.box);
    return HMD_OK;
}

static int set_up_system(struct md *md)
{
    const char *conf = md->opt->conf;
    /* every rank reads the model (as DeePMD-kit's LAMMPS interface does) and the topology;
     * rank 0 the rest */
    int rc = HMD_OK, group_type0 = 0;
    if (md->has_model) {
        rc = hmd_comm_agree(hmd_model_setup(md->model_path, &md->p, &md->model));
    }
    if (!rc) { /* before the topology: its [ molecules ] must make the structure's atoms */
        rc = hmd_comm_rank() == 0 ? hmd_structure_read(conf, &md->frames, &md->nframes) : HMD_OK;
        rc = hmd_comm_agree(rc);
    }
    if (!rc && md->has_top) {
        int natoms = hmd_comm_rank() == 0 ? md->frames[0].natoms : 0;
        hmd_comm_bcast(&natoms, sizeof natoms, 0);
        rc = hmd_comm_agree(read_topology(md, natoms));
    }
    if (!rc) {
        rc = hmd_comm_agree(hmd_params_check(&md->p, force_cutoff(md)));
    }
    if (!rc) {
        rc = check_structure(md, &group_type0);
    }
    if (!rc && md->has_model && hmd_comm_rank() == 0) { /* for the checkpoint and the log */
        rc = hmd_checkpoint_hash_file(md->model_path, md->model_hash);
    }
    rc = hmd_comm_agree(rc);
    if (!rc && md->opt->cpi) {
        rc = apply_checkpoint(md);
    }
    if (!rc) {
        const struct hmd_system_extra extra = {
            .mass = md->has_top ? md->top.mass : NULL,
            .typed = md->has_top ? md->group : NULL,
        };
        rc = hmd_system_load(&md->sys, md->frames, conf, md->has_model ? &md->model : NULL, &extra,
                             md->opt->dd, md->p.rlist);
    }
    if (rc) {
        return rc;
    }
    if (md->nframes > 1) {
        fprintf(stderr, "halomd: note: %s holds %d frames; the run starts from the first\n", conf,
                md->nframes);
    }
    md->ndof = degrees_of_freedom(md);
    choose_seeds(md);
    if (md->p.gen_vel) {
        hmd_integrate_generate_velocities(&md->sys.atoms, md->p.gen_temp, (uint64_t)md->p.gen_seed,
                                          md->p.com_mode == HMD_COM_LINEAR, md->ndof);
    } else if (md->p.com_mode == HMD_COM_LINEAR && !md->opt->cpi) {
        hmd_integrate_remove_com(&md->sys.atoms); /* a checkpoint's are used as they are */
    }
    md->th = (struct hmd_thermostat){.ref_t = md->p.ref_t,
                                     .tau_t = md->p.tau_t,
                                     .dt = md->p.dt,
                                     .ndof = md->ndof,
                                     .seed = (uint64_t)md->p.ld_seed};
    rc = hmd_forces_init(&md->fs, &md->sys.dd, md->p.verlet_buffer, md->sys.natoms, md->sys.type0);
    if (!rc && md->p.dd_mode == HMD_DD_REPLICATED) {
        hmd_forces_use_replicated(&md->fs);
    }
    const struct hmd_backend_request req = {
        .name = md->p.backend,
        .precision = md->p.precision,
        .resident = true,
        .model = md->has_model ? &md->model : NULL,
        .top = md->has_top ? &md->top : NULL,
        .ff = &md->ff,
        .group_type0 = group_type0,
    };
    if (!rc) {
        rc = hmd_backend_setup(&md->fs, &req, md->backend, sizeof md->backend);
    }
    rc = hmd_comm_agree(rc);
    if (rc) {
        return rc;
    }
    rc = hmd_comm_agree(md_barostat_setup(md));
    rc = rc ? rc : md_devi_setup(md);
    /* the first borders also rejects a cell too small for the cut-off, before any output */
    rc = rc ? rc : hmd_forces_rebuild(&md->fs, &md->sys.atoms, &md->sys.box);
    return rc ? rc : restore_positions(md);
}

int md_setup(struct md *md)
{
    return set_up_system(md);
}
