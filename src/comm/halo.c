/* Self-transport halo. Borders, for each periodic cell vector d in turn (a, b, c):
 *   c_d = cutoff / (distance between the faces normal to d), in fractional units;
 *   direction +: pulse 1 sends every atom present so far (home atoms and the ghosts made along
 *   earlier vectors) with fractional coordinate s_d < c_d, shifted by +h[d]; pulse p sends
 *   the atoms received by pulse p-1 that still satisfy s_d < c_d (their s_d counts the shift);
 *   direction -: the same with s_d >= 1 - c_d and shift -h[d].
 * The ghosts then cover s_d in [-c_d, 1 + c_d): every image within `cutoff` of the cell.
 */
#include "comm/halo.h"

#include <string.h>

#include "core/error.h"

static double frac(const struct hmd_box *box, const double *x, int d)
{
    return x[0] * box->hinv[0][d] + x[1] * box->hinv[1][d] + x[2] * box->hinv[2][d];
}

/* Copies atom k to ghost slot g with the shift (positions, type, id). */
static void make_ghost(struct hmd_atoms *a, int k, int g, const double shift[3])
{
    for (int c = 0; c < 3; c++) {
        a->x[3 * g + c] = a->x[3 * k + c] + shift[c];
    }
    a->type[g] = a->type[k];
    a->id[g] = a->id[k];
}

/* One direction of one cell vector: pulses until nothing is left to send. Candidates of the
 * first pulse are atoms [0, n_before). */
static int borders_direction(struct hmd_halo_plan *plan, struct hmd_atoms *a,
                             const struct hmd_box *box, int d, int dir, double c, int n_before)
{
    double shift[3];
    for (int k = 0; k < 3; k++) {
        shift[k] = dir * box->h[d][k];
    }
    int first = 0, last = n_before; /* candidates of the current pulse */
    for (int pulse = 1; first < last; pulse++) {
        const int nall = hmd_atoms_nall(a);
        int rc = hmd_halo_plan_add_swap(plan, d, dir, pulse, 0, shift, nall);
        if (rc < 0) {
            return rc;
        }
        for (int k = first; k < last; k++) {
            double s = frac(box, a->x + 3 * k, d);
            if (dir > 0 ? s < c : s >= 1.0 - c) {
                rc = hmd_halo_plan_add_send(plan, k);
                if (rc) {
                    return rc;
                }
            }
        }
        const struct hmd_halo_swap *sw = &plan->swap[plan->nswap - 1];
        rc = hmd_atoms_reserve(a, nall + sw->nsend);
        if (rc) {
            return rc;
        }
        for (int n = 0; n < sw->nsend; n++) {
            make_ghost(a, plan->send_list[sw->send_offset + n], nall + n, shift);
        }
        a->nghost += sw->nsend;
        first = nall;
        last = nall + sw->nsend;
    }
    return HMD_OK;
}

int hmd_halo_borders_self(struct hmd_halo_plan *plan, struct hmd_atoms *a,
                          const struct hmd_box *box, double cutoff)
{
    double face[3];
    hmd_box_face_distances(box, face);
    hmd_halo_plan_clear(plan);
    plan->cutoff = cutoff;
    a->nghost = 0;
    for (int d = 0; d < 3; d++) {
        if (!box->periodic[d]) {
            continue;
        }
        double c = cutoff / face[d];
        if (c > HMD_HALO_MAX_PULSES) {
            return hmd_error_set(HMD_EDATA,
                                 "the cell is %.4g Å thick along %c, too small for the neighbour "
                                 "cut-off %.4g Å (at least %.4g Å is needed); use a larger box",
                                 face[d], "abc"[d], cutoff, cutoff / HMD_HALO_MAX_PULSES);
        }
        const int n_before = hmd_atoms_nall(a);
        int rc = borders_direction(plan, a, box, d, +1, c, n_before);
        if (!rc) {
            rc = borders_direction(plan, a, box, d, -1, c, n_before);
        }
        if (rc) {
            return rc;
        }
    }
    return HMD_OK;
}

void hmd_halo_forward_x(const struct hmd_halo_plan *plan, double *x)
{
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        for (int n = 0; n < sw->nsend; n++) {
            double *dst = x + 3 * (size_t)(sw->recv_offset + n);
            const double *src = x + 3 * (size_t)send[n];
            dst[0] = src[0] + sw->shift[0];
            dst[1] = src[1] + sw->shift[1];
            dst[2] = src[2] + sw->shift[2];
        }
    }
}

void hmd_halo_reverse(const struct hmd_halo_plan *plan, double *v, int ncomp)
{
    for (int s = plan->nswap - 1; s >= 0; s--) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        for (int n = 0; n < sw->nsend; n++) {
            const double *src = v + (size_t)ncomp * (sw->recv_offset + n);
            double *dst = v + (size_t)ncomp * send[n];
            for (int c = 0; c < ncomp; c++) {
                dst[c] += src[c];
            }
        }
    }
}
