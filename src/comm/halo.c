/* Halo exchange over the domain grid.
 *
 * Borders, for each cell vector d in turn (a, b, c) that is periodic or split between ranks,
 * with c_d = cutoff / (distance between the cell faces normal to d) in fractional units and
 * [lo, hi) this rank's slab along d:
 *   "down": pulse 1 sends every atom present so far (home atoms and the ghosts made along
 *   earlier vectors) with s_d < lo + c_d to the rank below, which keeps them as ghosts above
 *   its slab; pulse p forwards the atoms received by pulse p-1 that still satisfy s_d < lo + c_d.
 *   Crossing the periodic boundary (sent by the lowest slab) shifts them by +h[d].
 *   "up": the same with s_d >= hi - c_d, to the rank above, shift -h[d] from the highest slab.
 * Pulses continue while any rank sent something, so all ranks agree on the number of swaps.
 * The ghosts then cover every atom or image within `cutoff` of the subdomain. With one rank
 * along d the peer is this rank and lo = 0, hi = 1: periodic images.
 */
#include "comm/halo.h"

#include <stdint.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "dd/domain.h"

enum {
    TAG_BORDERS_COUNT = 101,
    TAG_BORDERS = 102,
    TAG_FORWARD = 103,
    TAG_REVERSE = 104,
    TAG_MIGRATE_COUNT = 105,
    TAG_MIGRATE = 106,
};

enum { GHOST_RECORD = 5, MIGRANT_RECORD = 9 }; /* doubles per atom in the messages */

static double frac(const struct hmd_box *box, const double *x, int d)
{
    return x[0] * box->hinv[0][d] + x[1] * box->hinv[1][d] + x[2] * box->hinv[2][d];
}

/* Sends n records of `rec` doubles to `to` and receives from `from`; returns records received.
 * Record counts travel first so the receiver can size its buffer. */
static int exchange_records(struct hmd_halo_plan *plan, int to, int n, int from, int rec,
                            int tag_count, int tag_data, int *status)
{
    int nrecv = 0;
    hmd_comm_exchange(to, &n, to < 0 ? 0 : sizeof n, from, &nrecv, from < 0 ? 0 : sizeof nrecv,
                      tag_count);
    *status = hmd_halo_plan_reserve_buffers(plan, (size_t)(nrecv > n ? nrecv : n) * rec);
    if (*status) {
        return 0;
    }
    hmd_comm_exchange(to, plan->sendbuf, to < 0 ? 0 : sizeof(double) * rec * n, from, plan->recvbuf,
                      from < 0 ? 0 : sizeof(double) * rec * nrecv, tag_data);
    return from < 0 ? 0 : nrecv;
}

/* One pulse of one direction along d: selects from atoms [first, last), exchanges, appends
 * the ghosts. Returns the number sent (through *nsent) and the status. */
static int borders_pulse(struct hmd_halo_plan *plan, struct hmd_atoms *a, const struct hmd_box *box,
                         const struct hmd_domain *dd, int d, int dir, int pulse, double c,
                         int first, int last, int *nsent)
{
    const int to = dd->neighbor[d][dir], from = dd->neighbor[d][1 - dir];
    double shift[3] = {0.0, 0.0, 0.0};
    const bool wraps =
        dd->periodic[d] && (dir == 0 ? dd->coord[d] == 0 : dd->coord[d] == dd->grid[d] - 1);
    for (int k = 0; k < 3 && wraps; k++) {
        shift[k] = (dir == 0 ? 1.0 : -1.0) * box->h[d][k];
    }
    const int nall = hmd_atoms_nall(a);
    int rc = hmd_halo_plan_add_swap(plan, d, dir, pulse, to, from, shift, nall);
    if (rc < 0) {
        return rc;
    }
    rc = HMD_OK;
    for (int k = first; k < last && to >= 0 && !rc; k++) {
        const double s = frac(box, a->x + 3 * k, d);
        if (dir == 0 ? s < dd->lo[d] + c : s >= dd->hi[d] - c) {
            rc = hmd_halo_plan_add_send(plan, k);
        }
    }
    struct hmd_halo_swap *sw = &plan->swap[plan->nswap - 1];
    if (!rc) {
        rc = hmd_halo_plan_reserve_buffers(plan, (size_t)sw->nsend * GHOST_RECORD);
    }
    if (rc) {
        return rc;
    }
    for (int n = 0; n < sw->nsend; n++) {
        const int k = plan->send_list[sw->send_offset + n];
        double *r = plan->sendbuf + (size_t)n * GHOST_RECORD;
        for (int q = 0; q < 3; q++) {
            r[q] = a->x[3 * k + q] + shift[q];
        }
        r[3] = (double)a->id[k];
        r[4] = (double)a->type[k];
    }
    const int nrecv = exchange_records(plan, to, sw->nsend, from, GHOST_RECORD, TAG_BORDERS_COUNT,
                                       TAG_BORDERS, &rc);
    sw = &plan->swap[plan->nswap - 1];
    if (!rc) {
        rc = hmd_atoms_reserve(a, nall + nrecv);
    }
    if (rc) {
        return rc;
    }
    for (int n = 0; n < nrecv; n++) {
        const double *r = plan->recvbuf + (size_t)n * GHOST_RECORD;
        const int g = nall + n;
        memcpy(a->x + 3 * g, r, sizeof(double) * 3);
        a->id[g] = (int64_t)r[3];
        a->type[g] = (int)r[4];
    }
    sw->nrecv = nrecv;
    a->nghost += nrecv;
    *nsent = sw->nsend;
    return HMD_OK;
}

int hmd_halo_borders(struct hmd_halo_plan *plan, struct hmd_atoms *a, const struct hmd_box *box,
                     const struct hmd_domain *dd, double cutoff)
{
    double face[3];
    hmd_box_face_distances(box, face);
    hmd_halo_plan_clear(plan);
    plan->cutoff = cutoff;
    a->nghost = 0;
    for (int d = 0; d < 3; d++) {
        if (!box->periodic[d] && dd->grid[d] == 1) {
            continue;
        }
        const double c = cutoff / face[d];
        const double thin = dd->hi[d] - dd->lo[d];
        int too_thin = box->periodic[d] && c > HMD_HALO_MAX_PULSES * thin;
        hmd_comm_max_int(&too_thin, 1);
        if (too_thin) {
            return hmd_error_set(HMD_EDATA,
                                 "the cell is %.4g Å thick along %c (%.4g Å per subdomain), too "
                                 "small for the neighbour cut-off %.4g Å (at least %.4g Å per "
                                 "subdomain is needed); use a larger box or fewer ranks",
                                 face[d], "abc"[d], face[d] * thin, cutoff,
                                 cutoff / HMD_HALO_MAX_PULSES);
        }
        const int n_before = hmd_atoms_nall(a);
        for (int dir = 0; dir < 2; dir++) {
            int first = 0, last = n_before;
            for (int pulse = 1;; pulse++) {
                const int before = hmd_atoms_nall(a);
                int nsent = 0;
                int rc = borders_pulse(plan, a, box, dd, d, dir, pulse, c, first, last, &nsent);
                if (rc) {
                    return rc;
                }
                int more = nsent > 0;
                hmd_comm_max_int(&more, 1);
                if (!more) {
                    break;
                }
                first = before;
                last = hmd_atoms_nall(a);
            }
        }
    }
    /* the reverse halo sends up to 9 values per atom (atomic virials) */
    int most = 0;
    for (int s = 0; s < plan->nswap; s++) {
        most = plan->swap[s].nsend > most ? plan->swap[s].nsend : most;
        most = plan->swap[s].nrecv > most ? plan->swap[s].nrecv : most;
    }
    return hmd_halo_plan_reserve_buffers(plan, (size_t)most * 9);
}

void hmd_halo_forward_x(struct hmd_halo_plan *plan, double *x)
{
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        for (int n = 0; n < sw->nsend; n++) {
            const double *src = x + 3 * (size_t)send[n];
            double *dst = plan->sendbuf + 3 * (size_t)n;
            dst[0] = src[0] + sw->shift[0];
            dst[1] = src[1] + sw->shift[1];
            dst[2] = src[2] + sw->shift[2];
        }
        /* received straight into the ghost slots: they are contiguous */
        hmd_comm_exchange(sw->to, plan->sendbuf, sw->to < 0 ? 0 : sizeof(double) * 3 * sw->nsend,
                          sw->from, x + 3 * (size_t)sw->recv_offset,
                          sw->from < 0 ? 0 : sizeof(double) * 3 * sw->nrecv, TAG_FORWARD);
    }
}

void hmd_halo_reverse(struct hmd_halo_plan *plan, double *v, int ncomp)
{
    for (int s = plan->nswap - 1; s >= 0; s--) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        /* the ghosts' values go back to the rank they came from */
        hmd_comm_exchange(sw->from, v + (size_t)ncomp * sw->recv_offset,
                          sw->from < 0 ? 0 : sizeof(double) * ncomp * sw->nrecv, sw->to,
                          plan->recvbuf, sw->to < 0 ? 0 : sizeof(double) * ncomp * sw->nsend,
                          TAG_REVERSE);
        for (int n = 0; n < sw->nsend && sw->to >= 0; n++) {
            const double *src = plan->recvbuf + (size_t)ncomp * n;
            double *dst = v + (size_t)ncomp * send[n];
            for (int c = 0; c < ncomp; c++) {
                dst[c] += src[c];
            }
        }
    }
}

/* Removes home atom k by moving the last home atom into its place. */
static void remove_home(struct hmd_atoms *a, int k)
{
    const int last = a->nlocal - 1;
    if (k != last) {
        memcpy(a->x + 3 * k, a->x + 3 * last, sizeof(double) * 3);
        memcpy(a->v + 3 * k, a->v + 3 * last, sizeof(double) * 3);
        a->mass[k] = a->mass[last];
        a->type[k] = a->type[last];
        a->id[k] = a->id[last];
    }
    a->nlocal--;
}

/* One exchange along d in direction dir of the home atoms outside the slab. */
static int migrate_direction(struct hmd_halo_plan *scratch, struct hmd_atoms *a,
                             const struct hmd_box *box, const struct hmd_domain *dd, int d, int dir,
                             int *moved)
{
    const int to = dd->neighbor[d][dir], from = dd->neighbor[d][1 - dir];
    int n = 0, rc = HMD_OK;
    for (int k = a->nlocal - 1; k >= 0 && to >= 0 && to != dd->rank; k--) {
        const double s = frac(box, a->x + 3 * k, d);
        if (dir == 0 ? s < dd->lo[d] : s >= dd->hi[d]) {
            rc = hmd_halo_plan_reserve_buffers(scratch, (size_t)(n + 1) * MIGRANT_RECORD);
            if (rc) {
                return rc;
            }
            double *r = scratch->sendbuf + (size_t)n * MIGRANT_RECORD;
            memcpy(r, a->x + 3 * k, sizeof(double) * 3);
            memcpy(r + 3, a->v + 3 * k, sizeof(double) * 3);
            r[6] = a->mass[k];
            r[7] = (double)a->type[k];
            r[8] = (double)a->id[k];
            remove_home(a, k);
            n++;
        }
    }
    if (to == dd->rank) {
        return HMD_OK; /* one rank along d: wrapping alone keeps atoms home */
    }
    const int nrecv =
        exchange_records(scratch, to, n, from, MIGRANT_RECORD, TAG_MIGRATE_COUNT, TAG_MIGRATE, &rc);
    if (!rc) {
        rc = hmd_atoms_reserve(a, a->nlocal + nrecv);
    }
    if (rc) {
        return rc;
    }
    for (int q = 0; q < nrecv; q++) {
        const double *r = scratch->recvbuf + (size_t)q * MIGRANT_RECORD;
        const int k = a->nlocal++;
        memcpy(a->x + 3 * k, r, sizeof(double) * 3);
        memcpy(a->v + 3 * k, r + 3, sizeof(double) * 3);
        a->mass[k] = r[6];
        a->type[k] = (int)r[7];
        a->id[k] = (int64_t)r[8];
    }
    *moved += n;
    return HMD_OK;
}

int hmd_halo_migrate(struct hmd_atoms *a, const struct hmd_box *box, const struct hmd_domain *dd)
{
    struct hmd_halo_plan scratch = {0};
    int rc = HMD_OK;
    for (int d = 0; d < 3 && !rc; d++) {
        if (dd->grid[d] == 1) {
            continue;
        }
        /* an atom crosses at most one slab per round; repeat until nobody moves */
        for (int round = 0; round < dd->grid[d] && !rc; round++) {
            int moved = 0;
            rc = migrate_direction(&scratch, a, box, dd, d, 0, &moved);
            if (!rc) {
                rc = migrate_direction(&scratch, a, box, dd, d, 1, &moved);
            }
            int any = moved > 0;
            hmd_comm_max_int(&any, 1);
            if (!any) {
                break;
            }
        }
    }
    hmd_halo_plan_free(&scratch);
    return rc;
}
