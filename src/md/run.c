/* The MD run: set-up (every input read and checked before any output exists), the step loop,
 * and the outputs. The loop reads as the algorithm (velocity Verlet):
 *
 *   integrate_first_half        v += f/m dt/2 ; x += v dt
 *   neighbour-list step?        wrap, borders (new ghosts), neighbour list
 *   otherwise                   forward halo (positions to ghosts)
 *   compute_forces              Deep Potential on home atoms, ghosts as neighbours
 *   reverse halo                ghost forces summed onto owners
 *   integrate_second_half       v += f/m dt/2 ; thermostat
 *   output step?                energies, log, trajectory
 */
#include "md/run.h"

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/collect.h"
#include "comm/comm.h"
#include "core/error.h"
#include "core/params.h"
#include "core/rng.h"
#include "core/threads.h"
#include "core/units.h"
#include "hmd_buildinfo.h"
#include "io/backup.h"
#include "io/checkpoint.h"
#include "io/energy_csv.h"
#include "io/gro_write.h"
#include "io/structure.h"
#include "io/traj_netcdf.h"
#include "io/traj_xyz.h"
#include "md/forces.h"
#include "md/model_setup.h"
#include "nnp/compress.h"
#include "md/integrate.h"
#include "md/report.h"
#include "md/resident.h"
#include "md/system.h"
#include "md/thermostat.h"

enum { NAME_MAX_LEN = 4096 };

struct md {
    const struct hmd_run_options *opt;
    struct hmd_params p;
    char model_path[HMD_PATH_MAX];
    struct hmd_dp_model model;
    struct hmd_frame *frames; /* rank 0: frames[0] is the start configuration (names, residues) */
    int nframes;
    struct hmd_system sys; /* this rank's atoms and subdomain, the cell */
    struct hmd_forces fs;
    struct hmd_resident gpu; /* backend = cuda: the step on the GPU (gpu.dev), else empty */
    double next_disp;        /* ... displacement the next step will have (nstlist = 0) */
    struct hmd_thermostat th;
    double ndof;            /* degrees of freedom of the kinetic energy */
    double thermostat_work; /* kinetic energy added by the thermostat so far (eV) */
    int64_t step;
    int64_t first_step; /* the step the run started from: 0, or the checkpoint's (-cpi) */
    int stop_signal;    /* SIGTERM or SIGINT seen by every rank: the loop ends after the step */
    /* outputs (owned, rank 0 only) */
    double *gather_buf;  /* [natoms][3] a gathered per-atom array, ordered by global id */
    double *gather_buf2; /* [natoms][3] a second one */
    double *gather_buf3; /* [natoms][3] a third one */
    FILE *log;
    struct hmd_energy_csv *csv;
    struct hmd_xyz_traj *xyz;
    struct hmd_netcdf_traj *nc;
    int64_t last_frame_step; /* step of the last trajectory frame, -1 before any */
    char backend[512];       /* the compute backend chosen, for the log */
    /* dynamic load balancing */
    struct {
        double t_force_mark;  /* fs.t_force at the last balancing */
        long intervals;       /* intervals measured */
        long moves;           /* times the boundaries moved */
        double sum_imbalance; /* of max/avg - 1 over intervals */
        double max_imbalance;
        double last_imbalance; /* of the last interval */
        double lost;           /* seconds of force time lost waiting for the slowest rank */
    } dlb;
    /* force evaluations that left neighbours out of the descriptors (more within rcut than sel) */
    struct {
        int64_t evaluations, first_step; /* first_step -1 before any */
        long max_dropped;
    } sel;
    /* reporting */
    struct hmd_timers timers;
    struct hmd_thermo last;
    struct hmd_thermo_avg avg;
    bool progress;     /* progress line on stderr */
    bool progress_tty; /* ... rewritten in place */
    double t_start, t_last_progress;
};

/* ---- set-up: inputs only ---- */

static int read_parameters(struct md *md)
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
    const char *model = opt->model ? opt->model : md->p.model;
    if (!model[0]) {
        return hmd_error_set(HMD_EUSAGE, "no model: give -m model.dp or `model = ...` in %s",
                             opt->mdp ? opt->mdp : "the parameter file");
    }
    snprintf(md->model_path, sizeof md->model_path, "%s", model);
    snprintf(md->p.model, sizeof md->p.model, "%s", model);
    return HMD_OK;
}

static double degrees_of_freedom(const struct md *md)
{
    double ndof = 3.0 * md->sys.natoms;
    if (md->p.comm_mode == HMD_COMM_LINEAR && md->sys.natoms > 1) {
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
    memcpy(f->x, c->x, sizeof(double) * 3 * f->natoms);
    memcpy(f->v, c->v, sizeof(double) * 3 * f->natoms);
    if (c->has_box && hmd_box_init(&f->box, c->h, f->box.periodic)) {
        return hmd_error_prefix(HMD_EDATA, "%s: ", cpt);
    }
    return HMD_OK;
}

/* -cpi: reads the checkpoint on rank 0 into the structure's frame, and sets the step and the
 * thermostat work on every rank. Collective; before the atoms are distributed. */
static int apply_checkpoint(struct md *md)
{
    double state[2] = {0.0, 0.0}; /* step (exact in a double), thermostat work */
    int rc = HMD_OK;
    if (hmd_comm_rank() == 0) {
        struct hmd_checkpoint c;
        rc = hmd_checkpoint_read(md->opt->cpi, &c);
        if (!rc) {
            rc = checkpoint_into_frame(md, &c);
            state[0] = (double)c.step;
            state[1] = c.thermostat_work;
        }
        hmd_checkpoint_free(&c);
    }
    rc = hmd_comm_agree(rc);
    if (rc) {
        return rc;
    }
    hmd_comm_bcast(state, sizeof state, 0);
    md->first_step = md->step = (int64_t)state[0];
    md->thermostat_work = state[1];
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

static int set_up_system(struct md *md)
{
    const char *conf = md->opt->conf;
    /* every rank reads the model (as DeePMD-kit's LAMMPS interface does); rank 0 the rest */
    int rc = hmd_comm_agree(hmd_model_setup(md->model_path, &md->p, &md->model));
    if (!rc) {
        rc = hmd_comm_agree(hmd_params_check(&md->p, md->model.rcut));
    }
    if (!rc) {
        rc = hmd_comm_rank() == 0 ? hmd_structure_read(conf, &md->frames, &md->nframes) : HMD_OK;
        rc = hmd_comm_agree(rc);
    }
    if (!rc && md->opt->cpi) {
        rc = apply_checkpoint(md);
    }
    if (!rc) {
        rc = hmd_system_load(&md->sys, md->frames, conf, &md->model, md->opt->dd, md->p.rlist);
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
        hmd_generate_velocities(&md->sys.atoms, md->p.gen_temp, (uint64_t)md->p.gen_seed,
                                md->p.comm_mode == HMD_COMM_LINEAR, md->ndof);
    } else if (md->p.comm_mode == HMD_COMM_LINEAR && !md->opt->cpi) {
        hmd_remove_com_velocity(&md->sys.atoms); /* a checkpoint's are used as they are */
    }
    md->th = (struct hmd_thermostat){.ref_t = md->p.ref_t,
                                     .tau_t = md->p.tau_t,
                                     .dt = md->p.dt,
                                     .ndof = md->ndof,
                                     .seed = (uint64_t)md->p.ld_seed};
    hmd_forces_init(&md->fs, &md->model, &md->sys.dd, md->p.verlet_buffer, md->sys.type0,
                    md->sys.natoms);
    if (md->p.dd_mode == HMD_DD_REPLICATED) {
        hmd_forces_use_replicated(&md->fs);
    }
    rc = hmd_comm_agree(hmd_forces_select_backend(&md->fs, md->p.backend, md->p.precision,
                                                  md->backend, sizeof md->backend));
    if (rc) {
        return rc;
    }
    /* the first borders also rejects a cell too small for the cut-off, before any output */
    return hmd_forces_rebuild(&md->fs, &md->sys.atoms, &md->sys.box);
}

/* ---- outputs ---- */

static void output_path(const struct md *md, const char *suffix, char *out, size_t len)
{
    snprintf(out, len, "%s%s", md->opt->deffnm, suffix);
}

static void log_note(struct md *md, const char *note)
{
    if (note[0]) {
        fprintf(md->log, "%s\n", note);
        fprintf(stderr, "halomd: %s\n", note);
    }
}

static bool frames_wanted(const struct hmd_params *p)
{
    return p->nstxout > 0 || p->nstvout > 0 || p->nstfout > 0;
}

static void write_log_header(struct md *md)
{
    char host[256], cpu[256], date[64];
    hmd_report_host(host, sizeof host, cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    FILE *o = md->log;
    fprintf(o, "halomd %s (commit %s), %s build, %s, options: %s\n", HMD_VERSION, HMD_GIT_COMMIT,
            HMD_BUILD_TYPE, HMD_COMPILER, HMD_BUILD_FEATURES);
    fprintf(o, "started %s on %s (%s), %d OpenMP thread%s\n", date, host, cpu, hmd_thread_count(),
            hmd_thread_count() == 1 ? "" : "s");
    if (md->opt->cmdline) {
        fprintf(o, "command: %s\n", md->opt->cmdline);
    }
    fprintf(o, "\n--- model %s\n", md->model_path);
    hmd_model_print_summary(&md->model, o, "  ");
    fprintf(o, "\n--- system %s\n", md->opt->conf);
    const struct hmd_box *box = &md->sys.box;
    const struct hmd_domain *dd = &md->sys.dd;
    fprintf(o, "  atoms           %d\n", md->sys.natoms);
    if (md->sys.has_box) {
        const double(*h)[3] = box->h;
        fprintf(o, "  cell (Å)        a = (%g %g %g)  b = (%g %g %g)  c = (%g %g %g)\n", h[0][0],
                h[0][1], h[0][2], h[1][0], h[1][1], h[1][2], h[2][0], h[2][1], h[2][2]);
        fprintf(o, "  periodic        %s %s %s, volume %.6g Å^3\n", box->periodic[0] ? "a" : "-",
                box->periodic[1] ? "b" : "-", box->periodic[2] ? "c" : "-", hmd_box_volume(box));
    } else {
        fprintf(o, "  cell            none (not periodic)\n");
    }
    if (md->opt->cpi) {
        fprintf(o, "  continued from  %s at step %" PRId64 " (positions, velocities, cell)\n",
                md->opt->cpi, md->first_step);
    }
    fprintf(o, "  degrees of freedom %.0f\n", md->ndof);
    fprintf(o,
            "  neighbour list  rlist %g Å (skin %g Å), rank 0: %d home atoms, %d ghosts in %d "
            "swaps\n",
            md->fs.rlist, md->p.verlet_buffer, md->sys.atoms.nlocal, md->sys.atoms.nghost,
            md->fs.plan.nswap);
    fprintf(o, "  backend         %s\n", md->backend);
    fprintf(o, "  decomposition   %d rank%s, grid %d x %d x %d\n", dd->nranks,
            dd->nranks == 1 ? "" : "s", dd->grid[0], dd->grid[1], dd->grid[2]);
    fprintf(o, "\n--- parameters (also in %s.mdout.mdp)\n", md->opt->deffnm);
    hmd_params_write(&md->p, o);
    fprintf(o, "\n");
    fflush(o);
}

/* Rank 0 creates the outputs; every rank learns whether it could. Collective. */
static int open_outputs_root(struct md *md);

static int open_outputs(struct md *md)
{
    return hmd_comm_agree(hmd_comm_rank() == 0 ? open_outputs_root(md) : HMD_OK);
}

static int open_outputs_root(struct md *md)
{
    char path[NAME_MAX_LEN], note[NAME_MAX_LEN];
    FILE *fp;
    const size_t bytes = sizeof(double) * 3 * (size_t)(md->sys.natoms > 0 ? md->sys.natoms : 1);
    md->gather_buf = malloc(bytes);
    md->gather_buf2 = malloc(bytes);
    md->gather_buf3 = malloc(bytes);
    if (!md->gather_buf || !md->gather_buf2 || !md->gather_buf3) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for output buffers");
    }
    output_path(md, ".log", path, sizeof path);
    int rc = hmd_output_open(path, &md->log, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    write_log_header(md);
    output_path(md, ".mdout.mdp", path, sizeof path);
    rc = hmd_output_open(path, &fp, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    hmd_params_write(&md->p, fp);
    if (fclose(fp)) {
        return hmd_error_set(HMD_EIO, "cannot write %s", path);
    }
    output_path(md, ".energy.csv", path, sizeof path);
    rc = hmd_energy_csv_open(path, &md->csv, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    output_path(md, ".xyz", path, sizeof path);
    rc = hmd_xyz_traj_open(path, &md->xyz, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    if (HMD_HAVE_NETCDF && frames_wanted(&md->p)) {
        output_path(md, ".nc", path, sizeof path);
        const bool *pbc = md->sys.box.periodic;
        bool periodic = md->sys.has_box && (pbc[0] || pbc[1] || pbc[2]);
        rc = hmd_netcdf_traj_open(path, &md->nc, md->sys.natoms, md->p.nstvout > 0,
                                  md->p.nstfout > 0, periodic, HMD_VERSION, note, sizeof note);
        if (rc) {
            return rc;
        }
        log_note(md, note);
    }
    return HMD_OK;
}

/* Positions, velocities and forces of every atom on rank 0, ordered by global id (the order
 * of the input file). Collective. */
static int gather_state(struct md *md)
{
    const struct hmd_atoms *a = &md->sys.atoms;
    const int n = md->sys.natoms;
    int rc = hmd_collect_gather(a->id, a->x, a->nlocal, 3, md->gather_buf, n);
    if (!rc) {
        rc = hmd_collect_gather(a->id, a->v, a->nlocal, 3, md->gather_buf2, n);
    }
    if (!rc) {
        rc = hmd_collect_gather(a->id, a->f, a->nlocal, 3, md->gather_buf3, n);
    }
    return rc;
}

/* A trajectory frame. Collective (rank 0 writes). */
static int write_frame(struct md *md)
{
    int rc = gather_state(md);
    md->last_frame_step = md->step;
    if (rc || hmd_comm_rank() != 0) {
        return hmd_comm_agree(rc);
    }
    const double *x = md->gather_buf, *v = md->gather_buf2, *f = md->gather_buf3;
    const struct hmd_box *box = md->sys.has_box ? &md->sys.box : NULL;
    const double time = md->step * md->p.dt;
    rc = hmd_xyz_traj_write_frame(md->xyz, md->sys.natoms, md->frames[0].element, x,
                                  md->p.nstvout > 0 ? v : NULL, f, box, md->step, time,
                                  md->fs.energy);
    if (!rc && md->nc) {
        rc = hmd_netcdf_traj_write_frame(md->nc, x, md->p.nstvout > 0 ? v : NULL,
                                         md->p.nstfout > 0 ? f : NULL, box, time);
    }
    return hmd_comm_agree(rc);
}

/* <deffnm>.cpt from the gathered state (rank 0). */
static int write_checkpoint(struct md *md)
{
    struct hmd_checkpoint c = {
        .step = md->step,
        .dt = md->p.dt,
        .thermostat_work = md->thermostat_work,
        .natoms = md->sys.natoms,
        .has_box = md->sys.has_box,
        .x = md->gather_buf,
        .v = md->gather_buf2,
    };
    memcpy(c.h, md->sys.box.h, sizeof c.h);
    snprintf(c.model, sizeof c.model, "%s", md->model_path);
    char path[NAME_MAX_LEN], note[NAME_MAX_LEN];
    output_path(md, ".cpt", path, sizeof path);
    int rc = hmd_checkpoint_write(path, &c, note, sizeof note);
    if (!rc) {
        log_note(md, note);
    }
    return rc;
}

/* The final configuration: last trajectory frame, <deffnm>.gro and <deffnm>.cpt. Collective. */
static int write_final(struct md *md)
{
    char path[NAME_MAX_LEN], note[NAME_MAX_LEN];
    int rc = md->last_frame_step == md->step ? gather_state(md) : write_frame(md);
    if (rc || hmd_comm_rank() != 0) {
        return hmd_comm_agree(rc);
    }
    const struct hmd_frame *f0 = &md->frames[0];
    output_path(md, ".gro", path, sizeof path);
    rc = hmd_gro_write(path, f0->title[0] ? f0->title : "halomd", md->sys.natoms, f0->name,
                       f0->resname, f0->resnr, md->gather_buf, md->gather_buf2,
                       md->sys.has_box ? &md->sys.box : NULL, md->step, md->step * md->p.dt, note,
                       sizeof note);
    if (!rc) {
        log_note(md, note);
        rc = write_checkpoint(md);
    }
    return hmd_comm_agree(rc);
}

static void close_outputs(struct md *md)
{
    hmd_energy_csv_close(md->csv);
    hmd_xyz_traj_close(md->xyz);
    hmd_netcdf_traj_close(md->nc);
    if (md->log) {
        fclose(md->log);
    }
    md->csv = NULL;
    md->xyz = NULL;
    md->nc = NULL;
    md->log = NULL;
    free(md->gather_buf);
    free(md->gather_buf2);
    free(md->gather_buf3);
    md->gather_buf = md->gather_buf2 = md->gather_buf3 = NULL;
}

/* ---- the phases of a step ---- */

static void integrate_first_half(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_INTEGRATE);
    hmd_integrate_first_half_cpu(&md->sys.atoms, md->p.dt);
    hmd_timer_stop(&md->timers, HMD_TIMER_INTEGRATE);
}

/* Whether this step rebuilds the neighbour list: every nstlist steps when nstlist is set,
 * else when an atom has moved more than half the buffer. With nstlist set, an atom that moved
 * that far before its rebuild would have missed neighbours: the run stops. Collective. */
static int moved_too_far(const struct md *md, int64_t id, double moved)
{
    char who[64] = "an atom";
    if (id >= 0) {
        snprintf(who, sizeof who, "atom %" PRId64 " (1-based in the input)", id + 1);
    }
    return hmd_error_set(HMD_ESOFTWARE,
                         "step %" PRId64 ": %s moved %.4g Å since the last neighbour-list "
                         "update, more than half the Verlet buffer (%.4g Å), so forces missed "
                         "neighbours; increase verlet-buffer, decrease nstlist, or set nstlist = "
                         "0 to update when needed",
                         md->step, who, moved, 0.5 * md->p.verlet_buffer);
}

static int neighbor_list_step(struct md *md, bool *rebuild)
{
    int64_t id;
    const double moved = hmd_forces_max_displacement(&md->fs, &md->sys.atoms, &id);
    const double half = 0.5 * md->p.verlet_buffer;
    if (md->p.nstlist > 0) {
        if (moved > half) {
            return moved_too_far(md, id, moved);
        }
        *rebuild = md->step % md->p.nstlist == 0;
        return HMD_OK;
    }
    *rebuild = moved > half;
    return HMD_OK;
}

/* Dynamic load balancing at a neighbour-list step: the force time of every rank since the
 * last one decides how far the subdomain boundaries move (hmd_domain_balance). Records the
 * imbalance (max/avg - 1) and the time lost to it (max - avg). Collective. */
static void balance_load(struct md *md)
{
    const int nranks = md->sys.dd.nranks;
    if (nranks < 2) {
        return;
    }
    const double spent = md->fs.t_force - md->dlb.t_force_mark;
    md->dlb.t_force_mark = md->fs.t_force;
    double *load = calloc(nranks, sizeof(double));
    if (!load) {
        return; /* balancing is an optimisation; without memory the run goes on unbalanced */
    }
    load[md->sys.dd.rank] = spent;
    hmd_comm_sum(load, nranks);
    double avg = 0.0, mx = 0.0;
    for (int r = 0; r < nranks; r++) {
        avg += load[r] / nranks;
        mx = load[r] > mx ? load[r] : mx;
    }
    if (avg > 0.0) {
        const double imbalance = mx / avg - 1.0;
        md->dlb.intervals++;
        md->dlb.sum_imbalance += imbalance;
        md->dlb.last_imbalance = imbalance;
        md->dlb.max_imbalance =
            imbalance > md->dlb.max_imbalance ? imbalance : md->dlb.max_imbalance;
        md->dlb.lost += mx - avg;
        const bool on = md->p.dlb == HMD_DLB_YES ||
                        (md->p.dlb == HMD_DLB_AUTO && imbalance > md->p.dlb_threshold);
        if (on) {
            double min_frac[3];
            for (int d = 0; d < 3; d++) {
                min_frac[d] = 0.5 / md->sys.dd.grid[d]; /* no slab below half its even share */
            }
            hmd_domain_balance(&md->sys.dd, load, min_frac);
            md->dlb.moves++;
        }
    }
    free(load);
}

static int rebuild_neighbors(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_NEIGHBOR);
    balance_load(md);
    int rc = hmd_forces_rebuild(&md->fs, &md->sys.atoms, &md->sys.box);
    hmd_timer_stop(&md->timers, HMD_TIMER_NEIGHBOR);
    return rc;
}

static void halo_forward(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_HALO);
    hmd_forces_update_ghosts(&md->fs, &md->sys.atoms);
    hmd_timer_stop(&md->timers, HMD_TIMER_HALO);
}

/* A potential energy that is not finite stops the run. */
static int check_energy(const struct md *md)
{
    if (isfinite(md->fs.energy)) {
        return HMD_OK;
    }
    return hmd_error_set(HMD_ESOFTWARE,
                         "step %" PRId64 ": the potential energy is %g: the system blew up "
                         "(try a smaller dt, check the model and the structure)",
                         md->step, md->fs.energy);
}

/* Neighbours the last evaluation left out of the descriptors (more within rcut than sel, which
 * DeePMD-kit drops too): said once in the log and on stderr, then counted for the summary. */
static void note_dropped(struct md *md)
{
    const long n = md->fs.dropped;
    if (n <= 0) {
        return;
    }
    if (md->sel.evaluations++ == 0) {
        md->sel.first_step = md->step;
        const char *fmt =
            "%sstep %" PRId64 ": %ld neighbours within rcut are beyond the model's sel "
            "and left out of the descriptors (as DeePMD-kit does): the model sees "
            "fewer neighbours than there are. A denser system than the training "
            "data, or one falling apart; the log's summary counts the steps\n";
        if (md->log) {
            fprintf(md->log, fmt, "warning: ", md->step, n);
        }
        if (hmd_comm_rank() == 0) {
            fprintf(stderr, fmt, "halomd: warning: ", md->step, n);
        }
    }
    if (n > md->sel.max_dropped) {
        md->sel.max_dropped = n;
    }
}

/* The Deep Potential is timed as Force, the reverse halo and the reductions as Halo. */
static int compute_forces(struct md *md)
{
    const double t0 = hmd_wtime(), dp0 = md->fs.t_force;
    int rc = hmd_forces_compute(&md->fs, &md->sys.atoms, false);
    const double dp = md->fs.t_force - dp0, all = hmd_wtime() - t0;
    hmd_timer_add_call(&md->timers, HMD_TIMER_FORCE, dp);
    hmd_timer_add(&md->timers, HMD_TIMER_HALO, all - dp);
    if (!rc) {
        note_dropped(md);
    }
    return rc ? rc : check_energy(md);
}

/* DeePMD-kit's check_frequency: every compress-check-frequency steps, count the table inputs
 * of this step beyond the tables' fine part and beyond their end, and log them when there are
 * any. Collective. */
static void check_tables(struct md *md)
{
    const int freq = md->p.compress_check_frequency;
    if (freq <= 0 || md->step % freq != 0 || !md->model.compression.on || md->fs.replicated ||
        md->fs.cuda) {
        return;
    }
    long counts[2] = {0, 0};
    hmd_compress_overflow(&md->model, md->sys.atoms.nlocal, md->sys.atoms.x, md->sys.atoms.type,
                          &md->fs.nl, counts);
    int64_t sum[2] = {counts[0], counts[1]};
    hmd_comm_sum_i64(sum, 2);
    if (md->log && (sum[0] || sum[1])) {
        fprintf(md->log,
                "step %" PRId64 ": compressed tables: %" PRId64 " neighbour inputs beyond the "
                "fine part (closer than min_nbor_dist %.4g Å), %" PRId64 " beyond the table "
                "(extrapolated)\n",
                md->step, sum[0], md->model.compression.min_nbor_dist, sum[1]);
    }
}

static void integrate_second_half(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_INTEGRATE);
    hmd_integrate_second_half_cpu(&md->sys.atoms, md->p.dt);
    if (md->p.tcoupl == HMD_TCOUPL_VRESCALE) {
        md->thermostat_work += hmd_thermostat_vrescale_cpu(&md->th, &md->sys.atoms, md->step);
    } else if (md->p.tcoupl == HMD_TCOUPL_LANGEVIN) {
        md->thermostat_work += hmd_thermostat_langevin_cpu(&md->th, &md->sys.atoms, md->step);
    }
    if (md->p.comm_mode == HMD_COMM_LINEAR && md->step % md->p.nstcomm == 0) {
        hmd_remove_com_velocity(&md->sys.atoms);
    }
    hmd_timer_stop(&md->timers, HMD_TIMER_INTEGRATE);
}

static bool every(int64_t step, int n)
{
    return n > 0 && step % n == 0;
}

static void compute_thermo(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_THERMO);
    double ke_tensor[9];
    struct hmd_thermo *t = &md->last;
    t->step = md->step;
    t->time = md->step * md->p.dt;
    t->ke = hmd_kinetic_energy(&md->sys.atoms, ke_tensor);
    t->pe = md->fs.energy;
    t->etot = t->pe + t->ke;
    t->conserved = t->etot - md->thermostat_work;
    t->temp = md->ndof > 0 ? 2.0 * t->ke / (md->ndof * HMD_BOLTZMANN) : 0.0;
    const bool *pbc = md->sys.box.periodic;
    const bool periodic = md->sys.has_box && pbc[0] && pbc[1] && pbc[2];
    if (periodic) {
        t->vol = hmd_box_volume(&md->sys.box);
        double trace = ke_tensor[0] + ke_tensor[4] + ke_tensor[8] + md->fs.virial[0] +
                       md->fs.virial[4] + md->fs.virial[8];
        t->press = trace / (3.0 * t->vol) * HMD_EV_PER_A3_TO_BAR;
    } else {
        t->vol = NAN;
        t->press = NAN;
    }
    hmd_timer_stop(&md->timers, HMD_TIMER_THERMO);
}

static void report_progress(struct md *md, bool last)
{
    double now = hmd_wtime();
    if (!md->progress || hmd_comm_rank() != 0 || (!last && now - md->t_last_progress < 1.0)) {
        return;
    }
    md->t_last_progress = now;
    const double elapsed = now - md->t_start;
    const int64_t n = md->p.nsteps, done = md->step - md->first_step;
    double ns_day = elapsed > 0 ? done * md->p.dt * 1e-3 / (elapsed / 86400.0) : 0.0;
    char eta[64] = "";
    if (n > 0 && done > 0) {
        time_t end = time(NULL) + (time_t)(elapsed / done * (n - md->step));
        strftime(eta, sizeof eta, ", will finish %H:%M:%S", localtime(&end));
    }
    fprintf(stderr, "%sstep %" PRId64 "/%" PRId64 ", %.3g ns/day%s%s", md->progress_tty ? "\r" : "",
            md->step, n, ns_day, eta, md->progress_tty ? (last ? "\n" : "   ") : "\n");
    fflush(stderr);
}

/* backend = cuda: waits for the steps queued on the device, so that their time counts as Force
 * and not as the phase that next needs the device (a list step, an output step): the host
 * timers of the other phases then hold only their own work. */
static int wait_for_steps(struct md *md)
{
    const double t0 = hmd_wtime();
    const int rc = hmd_resident_wait(&md->gpu);
    hmd_timer_add(&md->timers, HMD_TIMER_FORCE, hmd_wtime() - t0);
    return rc;
}

/* backend = cuda: what this output step writes, copied from the device. */
static int fetch_outputs(struct md *md, bool energy, bool frame)
{
    if (!md->gpu.dev || (!energy && !frame)) {
        return HMD_OK;
    }
    int rc = wait_for_steps(md);
    if (rc) {
        return rc;
    }
    hmd_timer_start(&md->timers, HMD_TIMER_OUTPUT);
    rc = hmd_resident_fetch(&md->gpu, &md->fs, &md->sys.atoms, frame, true, frame,
                            &md->thermostat_work);
    hmd_timer_stop(&md->timers, HMD_TIMER_OUTPUT);
    if (!rc) {
        note_dropped(md); /* on the GPU the host sees the count at output steps */
    }
    return rc ? rc : check_energy(md);
}

static int write_outputs(struct md *md)
{
    const bool last = md->step == md->p.nsteps;
    const bool energy = every(md->step, md->p.nstenergy) || every(md->step, md->p.nstlog) || last;
    const bool frame = every(md->step, md->p.nstxout) || every(md->step, md->p.nstvout) ||
                       every(md->step, md->p.nstfout);
    int rc = fetch_outputs(md, energy, frame);
    if (rc) {
        return rc;
    }
    if (energy) {
        compute_thermo(md);
        hmd_thermo_avg_add(&md->avg, &md->last);
    }
    hmd_timer_start(&md->timers, HMD_TIMER_OUTPUT);
    if (md->log && (every(md->step, md->p.nstlog) || last)) {
        hmd_report_thermo_line(md->log, &md->last);
    }
    if (md->csv && (every(md->step, md->p.nstenergy) || last)) {
        const struct hmd_thermo *t = &md->last;
        struct hmd_energy_row row = {t->step, t->time,      t->temp,  t->pe, t->ke,
                                     t->etot, t->conserved, t->press, t->vol};
        rc = hmd_energy_csv_write(md->csv, &row);
    }
    rc = hmd_comm_agree(rc);
    if (!rc && frame) {
        rc = write_frame(md);
    }
    hmd_timer_stop(&md->timers, HMD_TIMER_OUTPUT);
    report_progress(md, last);
    return rc;
}

/* ---- the loop ---- */

static int md_step(struct md *md)
{
    integrate_first_half(md);
    bool rebuild = false;
    int rc = neighbor_list_step(md, &rebuild);
    if (rc) {
        return rc;
    } else if (rebuild) {
        rc = rebuild_neighbors(md);
    } else {
        halo_forward(md);
    }
    if (!rc) {
        rc = compute_forces(md);
    }
    if (!rc) {
        check_tables(md);
    }
    if (!rc) {
        integrate_second_half(md);
        rc = write_outputs(md);
    }
    return rc;
}

/* backend = cuda: the step on the device; the host joins at neighbour-list steps (decided by
 * nstlist, or by the displacement the device predicted for this step) and output steps. The
 * performance table's Force is the device's time for the steps (integration, halo and the Deep
 * Potential), Neighbour list the list steps' own work (their first half step, positions to the
 * host, ghosts, the list). */
static int md_step_gpu(struct md *md)
{
    const double half = 0.5 * md->p.verlet_buffer;
    const bool rebuild = md->p.nstlist > 0 ? md->step % md->p.nstlist == 0 : md->next_disp > half;
    int rc;
    if (rebuild) {
        rc = wait_for_steps(md);
        if (rc) {
            return rc;
        }
        hmd_timer_start(&md->timers, HMD_TIMER_NEIGHBOR);
        double moved = 0.0, forces_s = 0.0;
        rc = hmd_resident_begin_list_step(&md->gpu, &md->sys.atoms, &moved);
        if (!rc && md->p.nstlist > 0 && moved > half) {
            rc = moved_too_far(md, -1, moved);
        }
        if (!rc) {
            rc = hmd_forces_rebuild(&md->fs, &md->sys.atoms, &md->sys.box);
        }
        if (!rc) {
            rc = hmd_resident_finish_list_step(&md->gpu, &md->fs, &md->sys.atoms, &forces_s);
        }
        hmd_timer_stop(&md->timers, HMD_TIMER_NEIGHBOR);
        hmd_timer_add(&md->timers, HMD_TIMER_NEIGHBOR, -forces_s);
        hmd_timer_add_call(&md->timers, HMD_TIMER_FORCE, forces_s);
    } else {
        hmd_timer_start(&md->timers, HMD_TIMER_FORCE);
        rc = hmd_resident_step(&md->gpu);
        hmd_timer_stop(&md->timers, HMD_TIMER_FORCE);
    }
    if (!rc && md->p.nstlist == 0) { /* waits for the step: its time, not another call */
        const double t0 = hmd_wtime();
        rc = hmd_resident_next_displacement(&md->gpu, &md->next_disp);
        hmd_timer_add(&md->timers, HMD_TIMER_FORCE, hmd_wtime() - t0);
    }
    return rc ? rc : write_outputs(md);
}

/* backend = cuda: the forces of step 0 on the device, which keeps the atoms from now on. */
static int start_gpu(struct md *md)
{
    int rc = hmd_resident_start(&md->gpu, &md->fs, &md->sys.atoms, &md->th, &md->p, md->first_step,
                                md->thermostat_work);
    if (!rc) {
        note_dropped(md);
        rc = hmd_resident_next_displacement(&md->gpu, &md->next_disp);
    }
    if (!rc && md->log) {
        const double bytes = (double)hmd_resident_device_bytes(&md->gpu);
        fprintf(md->log, "GPU memory after step 0: %.1f MiB, %.0f bytes per atom\n\n",
                bytes / 1048576.0, bytes / md->sys.natoms);
    }
    return rc;
}

/* The last SIGTERM or SIGINT received, 0 before any. */
static volatile sig_atomic_t signal_seen;

static void on_stop_signal(int sig)
{
    signal_seen = sig;
}

/* SIGTERM and SIGINT (a batch system's time limit, `timeout`, Ctrl-C) end the run after the
 * current step with every output written, as GROMACS does. */
static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

/* True once a stop signal has reached some rank (checked by all ranks together every 10
 * steps, so that they all stop after the same step). Collective. */
static bool stop_requested(struct md *md)
{
    if (md->step % 10 == 0) {
        int seen = (int)signal_seen;
        hmd_comm_max_int(&seen, 1);
        md->stop_signal = seen;
    }
    return md->stop_signal != 0;
}

static int run_loop(struct md *md)
{
    int rc = md->fs.cuda ? start_gpu(md) : compute_forces(md);
    if (rc) {
        return rc;
    }
    if (md->log) {
        hmd_report_thermo_header(md->log);
    }
    rc = write_outputs(md);
    /* the performance table covers the steps only, not the set-up at step 0 */
    memset(&md->timers, 0, sizeof md->timers);
    md->fs.nbuilds = 0;
    md->t_start = md->t_last_progress = hmd_wtime();
    while (!rc && (md->p.nsteps < 0 || md->step < md->p.nsteps) && !stop_requested(md)) {
        md->step++;
        rc = md->gpu.dev ? md_step_gpu(md) : md_step(md);
    }
    if (!rc && md->stop_signal && hmd_comm_rank() == 0) {
        char path[NAME_MAX_LEN];
        output_path(md, ".cpt", path, sizeof path);
        const char *fmt = "%sstopped by signal %d after step %" PRId64 "; continue with -cpi %s\n";
        fprintf(stderr, fmt, "halomd: ", md->stop_signal, md->step, path);
        if (md->log) {
            fprintf(md->log, fmt, "\n", md->stop_signal, md->step, path);
        }
    }
    return rc;
}

static void finish(struct md *md, double wall)
{
    /* min, average and max of every phase over ranks */
    double mn[HMD_TIMER_NPHASES], mx[HMD_TIMER_NPHASES], sum[HMD_TIMER_NPHASES];
    for (int p = 0; p < HMD_TIMER_NPHASES; p++) {
        mn[p] = -md->timers.total[p];
        mx[p] = sum[p] = md->timers.total[p];
    }
    hmd_comm_max(mn, HMD_TIMER_NPHASES);
    hmd_comm_max(mx, HMD_TIMER_NPHASES);
    hmd_comm_sum(sum, HMD_TIMER_NPHASES);
    /* atoms per rank at the end: home, and the ghosts (replicated mode: the halo atoms, all
     * evaluated as centres) */
    double counts_sum[2] = {md->sys.atoms.nlocal, md->sys.atoms.nghost};
    double counts_max[2] = {md->sys.atoms.nlocal, md->sys.atoms.nghost};
    hmd_comm_sum(counts_sum, 2);
    hmd_comm_max(counts_max, 2);
    struct hmd_perf perf = {
        .natoms = md->sys.natoms,
        .nsteps = md->step - md->first_step,
        .dt = md->p.dt,
        .wall = wall,
        .nthreads = hmd_thread_count(),
        .nbuilds = md->fs.nbuilds,
        .timers = md->timers,
        .nranks = md->sys.dd.nranks,
        .grid = {md->sys.dd.grid[0], md->sys.dd.grid[1], md->sys.dd.grid[2]},
        .replicated = md->p.dd_mode == HMD_DD_REPLICATED,
        .dlb_intervals = md->dlb.intervals,
        .dlb_moves = md->dlb.moves,
        .sel_every_step = md->fs.cuda == NULL,
        .sel_steps = md->sel.evaluations,
        .sel_first_step = md->sel.first_step,
        .sel_max_dropped = md->sel.max_dropped,
        .imbalance_avg = md->dlb.intervals ? md->dlb.sum_imbalance / md->dlb.intervals : 0.0,
        .imbalance_max = md->dlb.max_imbalance,
        .imbalance_last = md->dlb.last_imbalance,
        .imbalance_lost = md->dlb.lost,
        .home_avg = counts_sum[0] / md->sys.dd.nranks,
        .home_max = counts_max[0],
        .ghost_avg = counts_sum[1] / md->sys.dd.nranks,
        .ghost_max = counts_max[1],
        .backend = md->backend,
        .device_bytes = (double)hmd_resident_device_bytes(&md->gpu),
    };
    for (int p = 0; p < HMD_TIMER_NPHASES; p++) {
        perf.phase_min[p] = -mn[p];
        perf.phase_avg[p] = sum[p] / md->sys.dd.nranks;
        perf.phase_max[p] = mx[p];
    }
    if (hmd_comm_rank() != 0) {
        return;
    }
    hmd_report_final(md->log, &perf, &md->avg);
    hmd_report_final(stdout, &perf, &md->avg);
    char path[NAME_MAX_LEN];
    output_path(md, ".perf.json", path, sizeof path);
    int rc = hmd_report_perf_json(path, &md->p, md->opt->conf, md->model_path, &perf, &md->last);
    if (rc) {
        fprintf(stderr, "halomd: warning: %s\n", hmd_error_msg());
    }
}

int hmd_run(const struct hmd_run_options *opt)
{
    struct md *md = calloc(1, sizeof *md);
    if (!md) {
        return hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    md->opt = opt;
    md->last_frame_step = -1;
    md->sel.first_step = -1;
    md->progress_tty = isatty(STDERR_FILENO);
    md->progress = opt->verbose || md->progress_tty;
    int rc = read_parameters(md);
    if (!rc) {
        rc = set_up_system(md);
    }
    if (!rc) {
        catch_stop_signals();
    }
    if (!rc) {
        rc = open_outputs(md);
    }
    if (!rc) {
        rc = run_loop(md);
        if (!rc && md->gpu.dev) { /* a stop between output steps leaves steps queued */
            rc = wait_for_steps(md);
        }
        double wall = hmd_wtime() - md->t_start; /* from after the step-0 forces */
        if (!rc && md->gpu.dev && md->last_frame_step != md->step) {
            rc = fetch_outputs(md, true, true);
        }
        if (!rc) {
            rc = write_final(md);
        }
        if (!rc) {
            finish(md, wall);
        } else if (md->log) {
            fprintf(md->log, "\nhalomd: error: %s\n", hmd_error_msg());
        }
    }
    close_outputs(md);
    hmd_resident_free(&md->gpu);
    hmd_forces_free(&md->fs);
    hmd_system_free(&md->sys);
    hmd_frames_free(md->frames, md->nframes);
    hmd_model_free(&md->model);
    free(md);
    return rc;
}
