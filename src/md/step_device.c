/* The MD step kept on the GPU (backend = cuda, md/device_run.h): the host joins at
 * neighbour-list steps (decided by nstlist, or by the displacement the device predicted for
 * this step) and output steps. The performance table's Force is the device's time for the
 * steps (integration and the providers), Halo the part of it the device's halo clock gave the
 * halo (several ranks: md_device_account), Neighbour list the list steps' own work (their
 * first half step, positions to the host, migration, ghosts, the lists). */
#include "md/run_internal.h"

#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"

/* A device step that failed on this rank while the others may be waiting for it in an
 * exchange: with several ranks the whole job ends here, saying which rank and why (a run never
 * hangs); with one, the error goes up as usual. */
static int fail_alone(const struct md *md, int rc)
{
    if (rc && hmd_comm_size() > 1) {
        fprintf(stderr, "halomd: error on rank %d at step %lld: %s\n", hmd_comm_rank(),
                (long long)md->step, hmd_error_msg());
        if (md->out.log) {
            fprintf(md->out.log, "\nhalomd: error on rank %d at step %lld: %s\n", hmd_comm_rank(),
                    (long long)md->step, hmd_error_msg());
            fflush(md->out.log);
        }
        hmd_comm_abort(hmd_status_exit_code(rc));
    }
    return rc;
}

/* The times of the list step at `step` into the run's: to_host (first half, positions to the
 * host), host (migration and ghosts), and the device's part t; the slowest one kept apart (a
 * one-off cost, such as a first build's allocations, shows there and not only in the mean). */
static void md_list_times_add(struct md_list_times *l, int64_t step, double to_host, double host,
                              const struct hmd_cuda_list_times *t)
{
    const double whole = to_host + host + t->upload_s + t->halo_s + t->prepare_s + t->rest_s;
    if (l->steps == 0 || whole > l->slowest_s) {
        l->slowest_s = whole;
        l->slowest_step = step;
    }
    l->steps++;
    l->to_host_s += to_host;
    l->host_s += host;
    l->device.upload_s += t->upload_s;
    l->device.halo_s += t->halo_s;
    l->device.prepare_s += t->prepare_s;
    l->device.rest_s += t->rest_s;
    l->device.forces_s += t->forces_s;
}

/* backend = cuda: waits for the steps queued on the device, so that their time counts as Force
 * and not as the phase that next needs the device (a list step, an output step): the host
 * timers of the other phases then hold only their own work. */
int md_device_wait(struct md *md)
{
    const double t0 = hmd_wtime();
    const int rc = hmd_device_run_wait(&md->gpu);
    hmd_timer_add(&md->timers, HMD_TIMER_FORCE, hmd_wtime() - t0);
    return rc;
}

/* backend = cuda, after md_device_wait: the halo clock's time since the last accounting moves
 * from Force to Halo, and adds up in md->halo; `start` only takes the clock's reading. */
int md_device_account(struct md *md, bool start)
{
    struct hmd_cuda_md_times t;
    double waited[2];
    bool has_waited;
    const int rc = hmd_device_run_halo_times(&md->gpu, &t, waited, &has_waited);
    if (rc) {
        return rc;
    }
    const struct hmd_cuda_md_times *m = &md->halo_mark;
    if (start) {
        memset(&md->halo, 0, sizeof md->halo);
        memset(&md->list, 0, sizeof md->list);
        md->halo.has_wait = has_waited;
    } else {
        const double fwd = t.forward_s - m->forward_s, rev = t.reverse_s - m->reverse_s;
        md->halo.forward_s += fwd;
        md->halo.reverse_s += rev;
        md->halo.forwards += t.forwards - m->forwards;
        md->halo.reverses += t.reverses - m->reverses;
        md->halo.has_wait = md->halo.has_wait && has_waited;
        for (int k = 0; k < 2 && md->halo.has_wait; k++) {
            md->halo.wait_s[k] += waited[k] - md->halo_wait_mark[k];
        }
        hmd_timer_add(&md->timers, HMD_TIMER_FORCE, -(fwd + rev));
        hmd_timer_add(&md->timers, HMD_TIMER_HALO, fwd + rev);
    }
    md->halo_mark = t;
    md->halo_wait_mark[0] = waited[0];
    md->halo_wait_mark[1] = waited[1];
    return HMD_OK;
}

/* backend = cuda: what this output step writes, copied from the device. */
int md_device_fetch(struct md *md, bool energy, bool frame)
{
    if (!energy && !frame) {
        return HMD_OK;
    }
    int rc = md_device_wait(md);
    if (rc) {
        return rc;
    }
    hmd_timer_start(&md->timers, HMD_TIMER_OUTPUT);
    rc = hmd_device_run_fetch(&md->gpu, &md->fs, &md->sys.atoms, frame, true, frame,
                              &md->thermostat_work);
    hmd_timer_stop(&md->timers, HMD_TIMER_OUTPUT);
    if (!rc) {
        md_note_dropped(md); /* on the GPU the host sees the count at output steps */
    }
    return rc ? rc : md_check_energy(md);
}

/* backend = cuda: the step on the device; the host joins at neighbour-list steps (decided by
 * nstlist, or by the displacement the device predicted for this step) and output steps. The
 * performance table's Force is the device's time for the steps (integration, halo and the Deep
 * Potential), Neighbour list the list steps' own work (their first half step, positions to the
 * host, ghosts, the list). */
int md_step_device(struct md *md)
{
    const double half = 0.5 * md->p.verlet_buffer;
    const double drift = md_barostat_drift(md); /* a changed cell moves the ghosts' images too */
    const bool rebuild =
        md->p.nstlist > 0 ? md->step % md->p.nstlist == 0 : md->next_disp + drift > half;
    int rc;
    if (rebuild) {
        rc = md_device_wait(md);
        rc = rc ? rc : md_device_account(md, false);
        if (rc) {
            return rc;
        }
        hmd_timer_start(&md->timers, HMD_TIMER_NEIGHBOR);
        double moved = 0.0;
        struct hmd_cuda_list_times t = {0};
        /* the force time since the last balancing moves the boundaries (several ranks) */
        const double spent = md->timers.total[HMD_TIMER_FORCE] - md->t_force_mark;
        md->t_force_mark = md->timers.total[HMD_TIMER_FORCE];
        hmd_dd_dlb_balance(&md->dlb, &md->sys.dd, spent, md->p.dlb, md->p.dlb_threshold);
        const double t0 = hmd_wtime();
        rc = fail_alone(md, hmd_device_run_begin_list_step(&md->gpu, &md->sys.atoms, &moved));
        const double t1 = hmd_wtime();
        if (!rc && md->p.nstlist > 0 && moved + drift > half) {
            rc = md_moved_too_far(md, -1, moved + drift);
        }
        if (!rc) {
            rc = hmd_forces_rebuild(&md->fs, &md->sys.atoms, &md->sys.box);
            md_note_list_build(md);
        }
        const double t2 = hmd_wtime();
        if (!rc) {
            rc = fail_alone(md, hmd_device_run_finish_list_step(&md->gpu, &md->fs, &md->sys.atoms,
                                                                &md->sys.box, &t));
        }
        hmd_timer_stop(&md->timers, HMD_TIMER_NEIGHBOR);
        hmd_timer_add(&md->timers, HMD_TIMER_NEIGHBOR, -t.forces_s);
        hmd_timer_add_call(&md->timers, HMD_TIMER_FORCE, t.forces_s);
        md_list_times_add(&md->list, md->step, t1 - t0, t2 - t1, &t);
    } else {
        hmd_timer_start(&md->timers, HMD_TIMER_FORCE);
        rc = fail_alone(md, hmd_device_run_step(&md->gpu, &md->sys.box));
        hmd_timer_stop(&md->timers, HMD_TIMER_FORCE);
    }
    if (!rc && md->p.nstlist == 0) { /* waits for the step: its time, not another call */
        const double t0 = hmd_wtime();
        rc = hmd_device_run_next_displacement(&md->gpu, &md->next_disp);
        hmd_timer_add(&md->timers, HMD_TIMER_FORCE, hmd_wtime() - t0);
    }
    return rc ? rc : md_write_outputs(md);
}

/* backend = cuda: the forces of step 0 on the device, which keeps the atoms from now on. */
int md_start_device(struct md *md)
{
    int rc = hmd_device_run_start(&md->gpu, &md->fs, &md->sys.atoms, &md->sys.box, &md->th, &md->p,
                                  md->first_step, md->thermostat_work);
    rc = fail_alone(md, rc);
    if (!rc) {
        /* the halo transport chosen, in the log, the table and the run record */
        const size_t used = strlen(md->backend);
        snprintf(md->backend + used, sizeof md->backend - used, "; halo %s", md->gpu.transport);
        md_note_dropped(md);
        rc = md_device_resume(md); /* -cpi at a step that was not a list step */
        rc = rc ? rc : hmd_device_run_next_displacement(&md->gpu, &md->next_disp);
    }
    rc = rc ? rc : md_device_account(md, true);
    if (!rc && md->out.log) {
        const double bytes = (double)hmd_device_run_bytes(&md->gpu, &md->fs);
        fprintf(md->out.log,
                "halo transport: %s\nGPU memory after step 0 (rank 0): %.1f MiB, %.0f bytes per "
                "home atom\n\n",
                md->gpu.transport, bytes / 1048576.0,
                bytes / (md->sys.atoms.nlocal > 0 ? md->sys.atoms.nlocal : 1));
    }
    return rc;
}
