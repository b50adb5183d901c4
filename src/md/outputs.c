/* The outputs of an MD run: the log (header, thermo lines, performance table), the energy CSV,
 * trajectories, the final structure and checkpoint, the run record. Rank 0 writes; the
 * functions that gather are collective. */
#include "md/run_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/threads.h"
#include "core/units.h"
#include "dd/collect.h"
#include "ff/nnp_group.h"
#include "hmd_buildinfo.h"
#include "io/backup.h"
#include "io/checkpoint.h"
#include "io/gro_write.h"
#include "md/integrate.h"

void md_output_path(const struct md *md, const char *suffix, char *out, size_t len)
{
    snprintf(out, len, "%s%s", md->opt->deffnm, suffix);
}

static void log_note(struct md *md, const char *note)
{
    if (note[0]) {
        fprintf(md->out.log, "%s\n", note);
        fprintf(stderr, "halomd: %s\n", note);
    }
}

static bool frames_wanted(const struct hmd_params *p)
{
    return p->nstxout > 0 || p->nstvout > 0 || p->nstfout > 0;
}

/* The classical force field: the topology's system, its interactions, the nnp-group. */
static void write_topology_summary(const struct md *md, FILE *o)
{
    const struct hmd_topology *t = &md->top;
    fprintf(o, "\n--- topology %s\n", md->opt->top);
    fprintf(o, "  system          %s\n", t->system);
    fprintf(o, "  atoms           %d in %d molecule blocks, %d atom types\n", t->natoms, t->nblocks,
            t->ntypes);
    fprintf(o, "  interactions   ");
    for (int k = 0; k < HMD_TOP_NKINDS; k++) {
        fprintf(o, " %s %d%s", hmd_top_kind_name(k), t->count[k],
                k + 1 < HMD_TOP_NKINDS ? "," : "");
    }
    fprintf(o, "\n  excluded pairs  %d\n", t->excl_start[t->natoms] / 2);
    fprintf(o, "  nonbonded       %s Coulomb to %g Å, Lennard-Jones to %g Å\n",
            md->ff.coulomb == HMD_FF_COULOMB_REACTION_FIELD ? "reaction-field" : "cut-off",
            md->ff.rcoulomb, md->ff.rvdw);
    if (md->group) {
        fprintf(o,
                "  nnp-group       %s: %d atoms on the Deep Potential, their interactions among "
                "themselves left out of the classical force field\n",
                md->p.nnp_group, hmd_nnp_group_count(md->group, t->natoms));
    }
}

static void write_log_header(struct md *md)
{
    char host[256], cpu[256], date[64];
    hmd_report_host(host, sizeof host, cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now));
    FILE *o = md->out.log;
    fprintf(o, "halomd %s (commit %s), %s build, %s, options: %s\n", HMD_VERSION, HMD_GIT_COMMIT,
            HMD_BUILD_TYPE, HMD_COMPILER, HMD_BUILD_FEATURES);
    fprintf(o, "started %s on %s (%s), %d OpenMP thread%s\n", date, host, cpu, hmd_thread_count(),
            hmd_thread_count() == 1 ? "" : "s");
    if (md->opt->cmdline) {
        fprintf(o, "command: %s\n", md->opt->cmdline);
    }
    if (md->has_model) {
        fprintf(o, "\n--- model %s (XXH3-128 %016llx%016llx)\n", md->model_path,
                (unsigned long long)md->model_hash[0], (unsigned long long)md->model_hash[1]);
        hmd_model_print_summary(&md->model, o, "  ");
    }
    if (md->has_top) {
        write_topology_summary(md, o);
    }
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

int md_open_outputs(struct md *md)
{
    return hmd_comm_agree(hmd_comm_rank() == 0 ? open_outputs_root(md) : HMD_OK);
}

static int open_outputs_root(struct md *md)
{
    char path[HMD_MD_NAME_MAX], note[HMD_MD_NAME_MAX];
    FILE *fp;
    const size_t bytes = sizeof(double) * 3 * (size_t)(md->sys.natoms > 0 ? md->sys.natoms : 1);
    md->out.gather_x = malloc(bytes);
    md->out.gather_v = malloc(bytes);
    md->out.gather_f = malloc(bytes);
    md->out.gather_xl = malloc(bytes);
    if (!md->out.gather_x || !md->out.gather_v || !md->out.gather_f || !md->out.gather_xl) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for output buffers");
    }
    md_output_path(md, ".log", path, sizeof path);
    int rc = hmd_output_open(path, &md->out.log, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    write_log_header(md);
    md_output_path(md, ".mdout.mdp", path, sizeof path);
    rc = hmd_output_open(path, &fp, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    hmd_params_write(&md->p, fp);
    if (fclose(fp)) {
        return hmd_error_set(HMD_EIO, "cannot write %s", path);
    }
    md_output_path(md, ".energy.csv", path, sizeof path);
    /* a classical force field's terms as columns (a Deep Potential alone has one: pe_eV) */
    const int nterms = md->has_top ? md->fs.term_offset[md->fs.nprovider] : 0;
    rc = hmd_energy_csv_open_terms(path, nterms, md->fs.term_name, &md->out.csv, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    md_output_path(md, ".xyz", path, sizeof path);
    rc = hmd_xyz_traj_open(path, &md->out.xyz, note, sizeof note);
    if (rc) {
        return rc;
    }
    log_note(md, note);
    if (HMD_HAVE_NETCDF && frames_wanted(&md->p)) {
        md_output_path(md, ".nc", path, sizeof path);
        const bool *pbc = md->sys.box.periodic;
        bool periodic = md->sys.has_box && (pbc[0] || pbc[1] || pbc[2]);
        rc = hmd_netcdf_traj_open(path, &md->out.nc, md->sys.natoms, md->p.nstvout > 0,
                                  md->p.nstfout > 0, periodic, HMD_VERSION, note, sizeof note);
        if (rc) {
            return rc;
        }
        log_note(md, note);
    }
    return md_devi_open(md);
}

/* Positions, velocities and forces of every atom on rank 0, ordered by global id (the order
 * of the input file). Collective. */
static int gather_state(struct md *md)
{
    const struct hmd_atoms *a = &md->sys.atoms;
    const int n = md->sys.natoms;
    int rc = hmd_collect_gather(a->id, a->x, a->nlocal, 3, md->out.gather_x, n);
    if (!rc) {
        rc = hmd_collect_gather(a->id, a->v, a->nlocal, 3, md->out.gather_v, n);
    }
    if (!rc) {
        rc = hmd_collect_gather(a->id, a->f, a->nlocal, 3, md->out.gather_f, n);
    }
    return rc;
}

/* A trajectory frame. Collective (rank 0 writes). */
static int write_frame(struct md *md)
{
    int rc = gather_state(md);
    md->out.last_frame_step = md->step;
    if (rc || hmd_comm_rank() != 0) {
        return hmd_comm_agree(rc);
    }
    const double *x = md->out.gather_x, *v = md->out.gather_v, *f = md->out.gather_f;
    const struct hmd_box *box = md->sys.has_box ? &md->sys.box : NULL;
    const double time = md->step * md->p.dt;
    rc = hmd_xyz_traj_write_frame(md->out.xyz, md->sys.natoms, md->frames[0].element, x,
                                  md->p.nstvout > 0 ? v : NULL, f, box, md->step, time,
                                  md->fs.energy);
    if (!rc && md->out.nc) {
        rc = hmd_netcdf_traj_write_frame(md->out.nc, x, md->p.nstvout > 0 ? v : NULL,
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
        .barostat_work = md->barostat_work,
        .natoms = md->sys.natoms,
        .has_box = md->sys.has_box,
        .x = md->out.gather_x,
        .v = md->out.gather_v,
        .gen_seed = md->p.gen_seed,
        .ld_seed = md->p.ld_seed,
        .model_hash = {md->model_hash[0], md->model_hash[1]},
        .list_step = md->out.list_kept ? md->list_step : -1,
        .x_list = md->out.list_kept ? md->out.gather_xl : NULL,
        .list_disp2 = md->out.list_disp2,
    };
    memcpy(c.h, md->sys.box.h, sizeof c.h);
    memcpy(c.h_list, md->h_list, sizeof c.h_list);
    snprintf(c.model, sizeof c.model, "%s", md->model_path);
    char path[HMD_MD_NAME_MAX], note[HMD_MD_NAME_MAX];
    md_output_path(md, ".cpt", path, sizeof path);
    int rc = hmd_checkpoint_write(path, &c, note, sizeof note);
    if (!rc) {
        log_note(md, note);
    }
    return rc;
}

/* The positions of the last list build, by global id, on rank 0, and md->out.list_kept: kept
 * in halo mode on every rank (the host step's list, or the device step's with its predicted
 * displacement in md->out.list_disp2), where a continued run rebuilds its list from them (same
 * ghosts, same wrapping, same later rebuilds: bitwise continuation at any step). Collective. */
static int gather_list_positions(struct md *md)
{
    const bool device = hmd_device_run_on(&md->gpu);
    const struct hmd_atoms *a = &md->sys.atoms;
    int lost = md->fs.replicated || (!device && md->fs.nl.ncentre != a->nlocal);
    hmd_comm_max_int(&lost, 1);
    md->out.list_kept = !lost;
    md->out.list_disp2 = -1.0;
    if (lost) {
        return HMD_OK;
    }
    if (!device) {
        return hmd_collect_gather(a->id, md->fs.nl.x_build, a->nlocal, 3, md->out.gather_xl,
                                  md->sys.natoms);
    }
    double *x = malloc(sizeof(double) * 3 * (size_t)(a->nlocal > 0 ? a->nlocal : 1));
    int rc = hmd_comm_agree(x ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory"));
    rc = rc ? rc : md_device_list_positions(md, x, &md->out.list_disp2);
    rc = rc ? rc : hmd_collect_gather(a->id, x, a->nlocal, 3, md->out.gather_xl, md->sys.natoms);
    free(x);
    return rc;
}

int md_write_checkpoint(struct md *md)
{
    int rc = gather_state(md);
    rc = rc ? rc : gather_list_positions(md);
    if (!rc && hmd_comm_rank() == 0) {
        rc = write_checkpoint(md);
    }
    return hmd_comm_agree(rc);
}

/* The final configuration: last trajectory frame, <deffnm>.gro and <deffnm>.cpt. Collective. */
int md_write_final(struct md *md)
{
    char path[HMD_MD_NAME_MAX], note[HMD_MD_NAME_MAX];
    int rc = md->out.last_frame_step == md->step ? gather_state(md) : write_frame(md);
    rc = rc ? rc : hmd_comm_agree(gather_list_positions(md));
    if (rc || hmd_comm_rank() != 0) {
        return hmd_comm_agree(rc);
    }
    const struct hmd_frame *f0 = &md->frames[0];
    md_output_path(md, ".gro", path, sizeof path);
    rc = hmd_gro_write(path, f0->title[0] ? f0->title : "halomd", md->sys.natoms, f0->name,
                       f0->resname, f0->resnr, md->out.gather_x, md->out.gather_v,
                       md->sys.has_box ? &md->sys.box : NULL, md->step, md->step * md->p.dt, note,
                       sizeof note);
    if (!rc) {
        log_note(md, note);
        rc = write_checkpoint(md);
    }
    return hmd_comm_agree(rc);
}

void md_close_outputs(struct md *md)
{
    hmd_energy_csv_close(md->out.csv);
    hmd_xyz_traj_close(md->out.xyz);
    hmd_netcdf_traj_close(md->out.nc);
    if (md->out.log) {
        fclose(md->out.log);
    }
    md->out.csv = NULL;
    md->out.xyz = NULL;
    md->out.nc = NULL;
    md->out.log = NULL;
    free(md->out.gather_x);
    free(md->out.gather_v);
    free(md->out.gather_f);
    free(md->out.gather_xl);
    md->out.gather_x = md->out.gather_v = md->out.gather_f = md->out.gather_xl = NULL;
}

/* A potential energy that is not finite stops the run. */
int md_check_energy(const struct md *md)
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
void md_note_dropped(struct md *md)
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
        if (md->out.log) {
            fprintf(md->out.log, fmt, "warning: ", md->step, n);
        }
        if (hmd_comm_rank() == 0) {
            fprintf(stderr, fmt, "halomd: warning: ", md->step, n);
        }
    }
    if (n > md->sel.max_dropped) {
        md->sel.max_dropped = n;
    }
}

bool md_every(int64_t step, int n)
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
    t->ke = hmd_integrate_kinetic_energy(&md->sys.atoms, ke_tensor);
    t->pe = md->fs.energy;
    t->etot = t->pe + t->ke;
    t->conserved = t->etot + md_barostat_pv(md) - md->thermostat_work - md->barostat_work;
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

int md_write_outputs(struct md *md)
{
    const bool last = md->step == md->p.nsteps;
    const bool energy =
        md_every(md->step, md->p.nstenergy) || md_every(md->step, md->p.nstlog) || last;
    const bool frame = md_every(md->step, md->p.nstxout) || md_every(md->step, md->p.nstvout) ||
                       md_every(md->step, md->p.nstfout);
    const bool devi = md_devi_step(md);
    int rc = hmd_device_run_on(&md->gpu) ? md_device_fetch(md, energy, frame || devi) : HMD_OK;
    if (rc) {
        return rc;
    }
    if (energy) {
        compute_thermo(md);
        hmd_thermo_avg_add(&md->avg, &md->last);
    }
    hmd_timer_start(&md->timers, HMD_TIMER_OUTPUT);
    if (md->out.log && (md_every(md->step, md->p.nstlog) || last)) {
        hmd_report_thermo_line(md->out.log, &md->last);
        if (md->has_top) {
            hmd_report_terms(md->out.log, md->fs.term_offset[md->fs.nprovider], md->fs.term_name,
                             md->fs.terms, md->last.pe, md->last.press);
        }
    }
    if (md->out.csv && (md_every(md->step, md->p.nstenergy) || last)) {
        const struct hmd_thermo *t = &md->last;
        struct hmd_energy_row row = {t->step, t->time,      t->temp,  t->pe,  t->ke,
                                     t->etot, t->conserved, t->press, t->vol, md->fs.terms};
        rc = hmd_energy_csv_write(md->out.csv, &row);
    }
    rc = hmd_comm_agree(rc);
    if (!rc && frame) {
        rc = write_frame(md);
    }
    if (!rc && devi) {
        rc = frame ? HMD_OK : gather_state(md);
        rc = rc ? rc : md_devi_write(md);
    }
    hmd_timer_stop(&md->timers, HMD_TIMER_OUTPUT);
    report_progress(md, last);
    return rc;
}

/* The halo clock's microseconds per step, least, mean and most over ranks (collective): the
 * forward and reverse halo and the transport's waits in each; the waits only where every rank
 * measured them. */
static void halo_stats(const struct md *md, struct hmd_perf *perf)
{
    const struct md_halo_times *h = &md->halo;
    enum { FWD, REV, WAIT_FWD, WAIT_REV, N };
    const double per_fwd = h->forwards > 0 ? 1e6 / (double)h->forwards : 0.0;
    const double per_rev = h->reverses > 0 ? 1e6 / (double)h->reverses : 0.0;
    const double v[N] = {h->forward_s * per_fwd, h->reverse_s * per_rev, h->wait_s[0] * per_fwd,
                         h->wait_s[1] * per_rev};
    double mn[N + 1], mx[N], sum[N];
    for (int k = 0; k < N; k++) {
        mn[k] = -v[k];
        mx[k] = sum[k] = v[k];
    }
    mn[N] = h->has_wait ? 0.0 : 1.0; /* max over ranks: 1 where some rank did not measure */
    hmd_comm_max(mn, N + 1);
    hmd_comm_max(mx, N);
    hmd_comm_sum(sum, N);
    double *out[N] = {perf->halo_forward_us, perf->halo_reverse_us, perf->halo_wait_forward_us,
                      perf->halo_wait_reverse_us};
    for (int k = 0; k < N; k++) {
        out[k][0] = -mn[k];
        out[k][1] = sum[k] / md->sys.dd.nranks;
        out[k][2] = mx[k];
    }
    perf->halo_forwards = h->forwards;
    perf->halo_waits = mn[N] == 0.0;
}

void md_finish(struct md *md, double wall)
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
    /* GPU memory: all ranks together, and the rank that holds the most */
    double device_sum = (double)hmd_device_run_bytes(&md->gpu, &md->fs), device_max = device_sum;
    hmd_comm_sum(&device_sum, 1);
    hmd_comm_max(&device_max, 1);
    /* list steps: ms per list step, the most over ranks */
    const struct md_list_times *l = &md->list;
    const double per = l->steps > 0 ? 1e3 / (double)l->steps : 0.0;
    double list_ms[8] = {
        l->to_host_s,        l->host_s,        l->device.upload_s, l->device.halo_s,
        l->device.prepare_s, l->device.rest_s, l->device.forces_s, 0.0};
    for (int k = 0; k < 7; k++) {
        list_ms[k] *= per;
    }
    list_ms[7] = 1e3 * l->slowest_s;
    hmd_comm_max(list_ms, 8);
    struct hmd_perf perf = {
        .natoms = md->sys.natoms,
        .nsteps = md->step - md->first_step,
        .dt = md->p.dt,
        .wall = wall,
        .nthreads = hmd_thread_count(),
        .nbuilds = md->fs.nbuilds,
        .list_steps = l->steps,
        .list_ms = {list_ms[0], list_ms[1], list_ms[2], list_ms[3], list_ms[4], list_ms[5],
                    list_ms[6], list_ms[7], (long long)l->slowest_step},
        .timers = md->timers,
        .nranks = md->sys.dd.nranks,
        .grid = {md->sys.dd.grid[0], md->sys.dd.grid[1], md->sys.dd.grid[2]},
        .replicated = md->p.dd_mode == HMD_DD_REPLICATED,
        .dlb_intervals = md->dlb.intervals,
        .dlb_moves = md->dlb.moves,
        .sel_every_step = !hmd_device_run_on(&md->gpu),
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
        .device_bytes = device_sum,
        .device_bytes_rank_max = device_max,
    };
    if (md->model_hash[0] | md->model_hash[1]) {
        snprintf(perf.model_hash, sizeof perf.model_hash, "%016llx%016llx",
                 (unsigned long long)md->model_hash[0], (unsigned long long)md->model_hash[1]);
    }
    for (int p = 0; p < HMD_TIMER_NPHASES; p++) {
        perf.phase_min[p] = -mn[p];
        perf.phase_avg[p] = sum[p] / md->sys.dd.nranks;
        perf.phase_max[p] = mx[p];
    }
    halo_stats(md, &perf);
    if (hmd_comm_rank() != 0) {
        return;
    }
    hmd_report_final(md->out.log, &perf, &md->avg);
    hmd_report_final(stdout, &perf, &md->avg);
    char path[HMD_MD_NAME_MAX];
    md_output_path(md, ".perf.json", path, sizeof path);
    /* the force field: the model, the topology (-p), or both (hybrid ML/MM) */
    char ff[2 * HMD_PATH_MAX + 16];
    snprintf(ff, sizeof ff, "%s%s%s", md->has_model ? md->model_path : "",
             md->has_model && md->has_top ? " + " : "", md->has_top ? md->opt->top : "");
    int rc = hmd_report_perf_json(path, &md->p, md->opt->conf, ff, &perf, &md->last);
    if (rc) {
        fprintf(stderr, "halomd: warning: %s\n", hmd_error_msg());
    }
}
