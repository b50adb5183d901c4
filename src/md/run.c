/* The MD run: set-up (md/setup.c, every input read and checked before any output exists), the
 * step loop, and the outputs (md/outputs.c). A step is the host's (md/step_host.c) or the
 * device's (md/step_device.c), chosen once at set-up by the backend. */
#include "md/run_internal.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/comm.h"
#include "core/error.h"
#include "io/structure.h"

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

/* Every 10 steps the ranks agree on the stop signals any of them received and on what rank 0's
 * clock says, as GROMACS's mdrun does: -maxh reached (0.99 x maxh hours since the start) stops
 * the run after this step; -cpt minutes passed (every 10th step with -cpt 0, never with a
 * negative -cpt) asks for a checkpoint of this step. Returns whether the run stops; sets
 * md->checkpoint_due. Collective. */
static bool poll_clock_and_signals(struct md *md)
{
    md->checkpoint_due = false;
    if (md->step % 10 != 0) {
        return md->stop_signal != 0 || md->stop_maxh;
    }
    int flags[3] = {(int)signal_seen, 0, 0};
    if (hmd_comm_rank() == 0) {
        const double elapsed = hmd_wtime() - md->t_begin, cpt = md->opt->cpt_minutes * 60.0;
        flags[1] = md->opt->maxh > 0 && elapsed >= 0.99 * md->opt->maxh * 3600.0;
        flags[2] = cpt == 0.0 || (cpt > 0 && elapsed >= (double)(md->ncheckpoints + 1) * cpt);
    }
    hmd_comm_max_int(flags, 3);
    md->stop_signal = flags[0];
    md->stop_maxh = flags[1] != 0;
    /* the first step is the checkpoint's or the start; a stop writes the final one */
    md->checkpoint_due = flags[2] && md->step != md->first_step && !md->stop_signal &&
                         !md->stop_maxh && md->step != md->p.nsteps;
    return md->stop_signal != 0 || md->stop_maxh;
}

/* A checkpoint of this step during the run (-cpt): the device's state copied first. */
static int write_periodic_checkpoint(struct md *md)
{
    md->ncheckpoints++;
    int rc = hmd_device_run_on(&md->gpu) ? md_device_fetch(md, true, true) : HMD_OK;
    hmd_timer_start(&md->timers, HMD_TIMER_OUTPUT);
    rc = rc ? rc : md_write_checkpoint(md);
    hmd_timer_stop(&md->timers, HMD_TIMER_OUTPUT);
    return rc;
}

/* How the run ended early, on stderr and in the log (rank 0). */
static void report_early_stop(const struct md *md)
{
    char path[HMD_MD_NAME_MAX], why[64];
    md_output_path(md, ".cpt", path, sizeof path);
    if (md->stop_signal) {
        snprintf(why, sizeof why, "stopped by signal %d", md->stop_signal);
    } else {
        snprintf(why, sizeof why, "stopped at 0.99 x -maxh %g h", md->opt->maxh);
    }
    const char *fmt = "%s%s after step %" PRId64 "; continue with -cpi %s\n";
    fprintf(stderr, fmt, "halomd: ", why, md->step, path);
    if (md->out.log) {
        fprintf(md->out.log, fmt, "\n", why, md->step, path);
    }
}

static int run_loop(struct md *md)
{
    /* the backend chose where the providers run; the step runs there too */
    const bool device = hmd_forces_on_device(&md->fs);
    int rc = device ? md_start_device(md) : md_start_host(md);
    if (rc) {
        return rc;
    }
    if (md->out.log) {
        hmd_report_thermo_header(md->out.log);
    }
    rc = md_write_outputs(md);
    /* the performance table covers the steps only, not the set-up at step 0 */
    memset(&md->timers, 0, sizeof md->timers);
    md->fs.nbuilds = 0;
    md->t_start = md->t_last_progress = hmd_wtime();
    while (!rc && (md->p.nsteps < 0 || md->step < md->p.nsteps) && !poll_clock_and_signals(md)) {
        if (md->checkpoint_due) {
            rc = write_periodic_checkpoint(md);
        }
        /* the pressure coupling of the step just done, after its outputs and checkpoint: a
         * checkpoint holds the state its forces were computed for, and a run continued from it
         * couples here as the uninterrupted run did */
        if (!rc) {
            rc = md_barostat_step(md);
        }
        if (!rc) {
            md->step++;
            rc = device ? md_step_device(md) : md_step_host(md);
        }
    }
    if (!rc && (md->stop_signal || md->stop_maxh) && hmd_comm_rank() == 0) {
        report_early_stop(md);
    }
    return rc;
}

int hmd_run(const struct hmd_run_options *opt)
{
    struct md *md = calloc(1, sizeof *md);
    if (!md) {
        return hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    md->opt = opt;
    md->t_begin = hmd_wtime(); /* -maxh and -cpt count from here, as mdrun's clock */
    md->out.last_frame_step = -1;
    md->sel.first_step = -1;
    md->progress_tty = isatty(STDERR_FILENO);
    md->progress = opt->verbose || md->progress_tty;
    int rc = md_read_parameters(md);
    if (!rc && md_minimizing(&md->p)) {
        rc = md_minimize(md);
        free(md);
        return rc;
    }
    if (!rc) {
        rc = md_setup(md);
    }
    if (!rc) {
        catch_stop_signals();
    }
    if (!rc) {
        rc = md_open_outputs(md);
    }
    if (!rc) {
        rc = run_loop(md);
        if (!rc && hmd_device_run_on(&md->gpu)) { /* a stop between outputs leaves steps queued */
            rc = md_device_wait(md);
            rc = rc ? rc : md_device_account(md, false);
        }
        double wall = hmd_wtime() - md->t_start; /* from after the step-0 forces */
        if (!rc && hmd_device_run_on(&md->gpu) && md->out.last_frame_step != md->step) {
            rc = md_device_fetch(md, true, true);
        }
        if (!rc) {
            rc = md_write_final(md);
        }
        if (!rc) {
            md_finish(md, wall);
        } else if (md->out.log) {
            fprintf(md->out.log, "\nhalomd: error: %s\n", hmd_error_msg());
        }
    }
    const int devi_rc = md_devi_close(md);
    rc = rc ? rc : devi_rc;
    md_close_outputs(md);
    free(md->cpt_x);
    hmd_cuda_scale_destroy(md->scale);
    hmd_device_run_free(&md->gpu);
    hmd_forces_free(&md->fs);
    hmd_system_free(&md->sys);
    hmd_frames_free(md->frames, md->nframes);
    hmd_model_free(&md->model);
    hmd_topology_free(&md->top);
    free(md->group);
    free(md);
    return rc;
}
