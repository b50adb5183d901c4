/* The MD step on the host (backend = cpu), one call per phase, each inside its timer:
 *
 *   integrate_first_half        v += f/m dt/2 ; x += v dt
 *   neighbour-list step?        load balance, wrap, migrate, borders, neighbour list
 *   otherwise                   forward halo (positions to ghosts)
 *   compute_forces              every provider; reverse halo (ghost forces onto owners)
 *   integrate_second_half       v += f/m dt/2 ; thermostat ; centre-of-mass motion
 *   output step?                energies, log, trajectory
 */
#include "md/run_internal.h"

#include <inttypes.h>

#include "comm/comm.h"
#include "core/error.h"
#include "md/integrate.h"
#include "nnp/compress.h"

static void integrate_first_half(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_INTEGRATE);
    hmd_integrate_first_half_cpu(&md->sys.atoms, md->p.dt);
    hmd_timer_stop(&md->timers, HMD_TIMER_INTEGRATE);
}

/* Whether this step rebuilds the neighbour list: every nstlist steps when nstlist is set,
 * else when an atom has moved more than half the buffer. With nstlist set, an atom that moved
 * that far before its rebuild would have missed neighbours: the run stops. Collective. */
int md_moved_too_far(const struct md *md, int64_t id, double moved)
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
    /* a changed cell moves the ghosts' images too (pressure coupling) */
    const double moved =
        hmd_forces_max_displacement(&md->fs, &md->sys.atoms, &id) + md_barostat_drift(md);
    const double half = 0.5 * md->p.verlet_buffer;
    if (md->p.nstlist > 0) {
        if (moved > half) {
            return md_moved_too_far(md, id, moved);
        }
        *rebuild = md->step % md->p.nstlist == 0;
        return HMD_OK;
    }
    *rebuild = moved > half;
    return HMD_OK;
}

static int rebuild_neighbors(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_NEIGHBOR);
    hmd_dd_dlb_balance(&md->dlb, &md->sys.dd, md->fs.t_force - md->t_force_mark, md->p.dlb,
                       md->p.dlb_threshold);
    md->t_force_mark = md->fs.t_force;
    int rc = hmd_forces_rebuild(&md->fs, &md->sys.atoms, &md->sys.box);
    md_note_list_build(md);
    hmd_timer_stop(&md->timers, HMD_TIMER_NEIGHBOR);
    return rc;
}

static void halo_forward(struct md *md)
{
    hmd_timer_start(&md->timers, HMD_TIMER_HALO);
    hmd_forces_update_ghosts(&md->fs, &md->sys.atoms, &md->sys.box);
    hmd_timer_stop(&md->timers, HMD_TIMER_HALO);
}

/* The Deep Potential is timed as Force, the reverse halo and the reductions as Halo. */
static int compute_forces(struct md *md)
{
    const double t0 = hmd_wtime(), dp0 = md->fs.t_force;
    int rc = hmd_forces_compute(&md->fs, &md->sys.atoms, &md->sys.box, false);
    const double dp = md->fs.t_force - dp0, all = hmd_wtime() - t0;
    hmd_timer_add_call(&md->timers, HMD_TIMER_FORCE, dp);
    hmd_timer_add(&md->timers, HMD_TIMER_HALO, all - dp);
    if (!rc) {
        md_note_dropped(md);
    }
    return rc ? rc : md_check_energy(md);
}

/* DeePMD-kit's check_frequency: every compress-check-frequency steps, count the table inputs
 * of this step beyond the tables' fine part and beyond their end, and log them when there are
 * any. Collective. */
static void check_tables(struct md *md)
{
    const int freq = md->p.compress_check_frequency;
    if (freq <= 0 || md->step % freq != 0 || !md->model.compression.on || md->fs.replicated) {
        return;
    }
    long counts[2] = {0, 0};
    hmd_compress_overflow(&md->model, md->sys.atoms.nlocal, md->sys.atoms.x, md->sys.atoms.type,
                          &md->fs.nl, counts);
    int64_t sum[2] = {counts[0], counts[1]};
    hmd_comm_sum_i64(sum, 2);
    if (md->out.log && (sum[0] || sum[1])) {
        fprintf(md->out.log,
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
    if (md->p.com_mode == HMD_COM_LINEAR && md->step % md->p.nstcomm == 0) {
        hmd_integrate_remove_com(&md->sys.atoms);
    }
    hmd_timer_stop(&md->timers, HMD_TIMER_INTEGRATE);
}

int md_step_host(struct md *md)
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
        rc = md_write_outputs(md);
    }
    return rc;
}

int md_start_host(struct md *md)
{
    return compute_forces(md);
}
