/* Borders, for each cell vector d in turn (a, b, c) that is periodic or split between ranks,
 * with c_d = cutoff / (distance between the cell faces normal to d) in fractional units and
 * [lo, hi) this rank's slab along d:
 *   "down": pulse 1 sends every atom present so far (home atoms and the ghosts made along
 *   earlier vectors) with s_d < lo + c_d to the rank below, which keeps them as ghosts above
 *   its slab; pulse p forwards the atoms received by pulse p-1 that still satisfy s_d < lo + c_d.
 *   Crossing the periodic boundary (sent by the lowest slab) shifts them by +h[d].
 *   "up": the same with s_d >= hi - c_d, to the rank above, shift -h[d] from the highest slab.
 * Pulses continue while any rank sent something, so all ranks agree on the number of swaps.
 * The ghosts then cover every atom or image within `cutoff` of the subdomain. With one rank
 * along d the peer is this rank and lo = 0, hi = 1: periodic images. Send lists are in index
 * order, so home atoms come first and forwarded ghosts follow, grouped by the swap that
 * delivered them.
 */
#include "dd/borders.h"

#include <stdbool.h>

#include "comm/comm.h"
#include "core/error.h"
#include "dd/records.h"

static double frac(const struct hmd_box *box, const double *x, int d)
{
    return x[0] * box->hinv[0][d] + x[1] * box->hinv[1][d] + x[2] * box->hinv[2][d];
}

/* One pulse of one direction along d: selects from atoms [first, last), exchanges, appends
 * the ghosts. Returns the number sent (through *nsent) and the status. */
static int borders_pulse(struct hmd_halo_plan *plan, struct hmd_dd_buffers *buf,
                         struct hmd_atoms *a, const struct hmd_box *box,
                         const struct hmd_domain *dd, int d, int dir, int pulse, double c,
                         int first, int last, int *nsent)
{
    const int to = dd->neighbor[d][dir], from = dd->neighbor[d][1 - dir];
    int image[3] = {0, 0, 0};
    const bool wraps =
        dd->periodic[d] && (dir == 0 ? dd->coord[d] == 0 : dd->coord[d] == dd->grid[d] - 1);
    image[d] = wraps ? (dir == 0 ? 1 : -1) : 0;
    const int nall = hmd_atoms_nall(a);
    int rc = hmd_halo_plan_add_swap(plan, d, dir, pulse, to, from, image, nall);
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
    const unsigned fields = hmd_atoms_fields_with(a, HMD_FIELD_BORDER);
    double shift[3];
    hmd_halo_swap_shift(sw, box, shift);
    if (!rc && to == from && to == hmd_comm_rank()) {
        /* periodic images of this rank's own atoms: copied in place, no records */
        rc = hmd_atoms_reserve(a, nall + sw->nsend);
        if (rc) {
            return rc;
        }
        hmd_atoms_copy_images(a, plan->send_list + sw->send_offset, sw->nsend, nall, fields, shift);
        sw->nrecv = sw->nsend;
        a->nghost += sw->nsend;
        *nsent = sw->nsend;
        return HMD_OK;
    }
    const int width = hmd_atoms_record_width(fields);
    if (!rc) {
        rc = hmd_dd_buffers_reserve(buf, (size_t)sw->nsend * width);
    }
    if (rc) {
        return rc;
    }
    hmd_atoms_pack_list(a, plan->send_list + sw->send_offset, sw->nsend, fields, shift, buf->send);
    int nrecv = 0;
    rc = hmd_dd_exchange_records(buf, to, sw->nsend, from, width, HMD_TAG_BORDERS, &nrecv);
    sw = &plan->swap[plan->nswap - 1];
    if (!rc) {
        rc = hmd_atoms_reserve(a, nall + nrecv);
    }
    if (rc) {
        return rc;
    }
    hmd_atoms_unpack_list(a, nall, nrecv, fields, buf->recv);
    sw->nrecv = nrecv;
    a->nghost += nrecv;
    *nsent = sw->nsend;
    return HMD_OK;
}

static int borders(struct hmd_halo_plan *plan, struct hmd_dd_buffers *buf, struct hmd_atoms *a,
                   const struct hmd_box *box, const struct hmd_domain *dd, double cutoff)
{
    double face[3];
    hmd_box_face_distances(box, face);
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
                int rc =
                    borders_pulse(plan, buf, a, box, dd, d, dir, pulse, c, first, last, &nsent);
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
    return HMD_OK;
}

int hmd_dd_borders(struct hmd_halo_plan *plan, struct hmd_atoms *a, const struct hmd_box *box,
                   const struct hmd_domain *dd, double cutoff)
{
    struct hmd_dd_buffers buf = {0};
    hmd_halo_plan_clear(plan);
    plan->cutoff = cutoff;
    plan->nlocal = a->nlocal;
    a->nghost = 0;
    const int rc = borders(plan, &buf, a, box, dd, cutoff);
    hmd_dd_buffers_free(&buf);
    return rc;
}
