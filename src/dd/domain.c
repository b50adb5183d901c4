#include "dd/domain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dd/halo_plan.h"
#include "core/error.h"

/* Ghost volume around one subdomain (Å^3), the quantity the grid choice minimises: a slab of
 * thickness f_d / p_d along each vector grows by `cutoff` on both sides of every periodic or
 * split direction. */
static double halo_volume(const double face[3], const bool periodic[3], const int p[3],
                          double cutoff)
{
    double inner = 1.0, outer = 1.0;
    for (int d = 0; d < 3; d++) {
        const double t = face[d] / p[d];
        inner *= t;
        outer *= (periodic[d] || p[d] > 1) ? t + 2.0 * cutoff : t;
    }
    return outer - inner;
}

static void set_bounds(struct hmd_domain *dd)
{
    for (int d = 0; d < 3; d++) {
        dd->lo[d] = dd->cut[d][dd->coord[d]];
        dd->hi[d] = dd->cut[d][dd->coord[d] + 1];
    }
}

int hmd_domain_rank_at(const struct hmd_domain *dd, const int c[3])
{
    int w[3];
    for (int d = 0; d < 3; d++) {
        w[d] = ((c[d] % dd->grid[d]) + dd->grid[d]) % dd->grid[d];
    }
    return (w[2] * dd->grid[1] + w[1]) * dd->grid[0] + w[0];
}

int hmd_domain_init(struct hmd_domain *dd, const struct hmd_box *box, int nranks, int rank,
                    const int request[3], double cutoff)
{
    double face[3];
    hmd_box_face_distances(box, face);
    memset(dd, 0, sizeof *dd);
    int best[3] = {nranks, 1, 1};
    if (request && request[0] > 0 && request[1] > 0 && request[2] > 0) {
        if (request[0] * request[1] * request[2] != nranks) {
            return hmd_error_set(HMD_EUSAGE, "-dd %d %d %d makes %d subdomains for %d ranks",
                                 request[0], request[1], request[2],
                                 request[0] * request[1] * request[2], nranks);
        }
        memcpy(best, request, sizeof best);
    } else {
        double best_v = INFINITY;
        for (int px = 1; px <= nranks; px++) {
            for (int py = 1; px * py <= nranks; py++) {
                if (nranks % (px * py)) {
                    continue;
                }
                const int p[3] = {px, py, nranks / (px * py)};
                const double v = halo_volume(face, box->periodic, p, cutoff);
                if (v < best_v * (1 - 1e-12)) {
                    best_v = v;
                    memcpy(best, p, sizeof best);
                }
            }
        }
    }
    dd->nranks = nranks;
    dd->rank = rank;
    memcpy(dd->grid, best, sizeof dd->grid);
    dd->coord[0] = rank % best[0];
    dd->coord[1] = (rank / best[0]) % best[1];
    dd->coord[2] = rank / (best[0] * best[1]);
    for (int d = 0; d < 3; d++) {
        dd->periodic[d] = box->periodic[d];
        const double thick = face[d] / best[d];
        if (best[d] > 1 && thick < cutoff / HMD_HALO_MAX_PULSES) {
            return hmd_error_set(HMD_EDATA,
                                 "%d subdomains along %c are %.3g Å thick, too thin for the "
                                 "cut-off %.3g Å; use fewer ranks or choose -dd",
                                 best[d], "abc"[d], thick, cutoff);
        }
        dd->cut[d] = malloc(sizeof(double) * (best[d] + 1));
        if (!dd->cut[d]) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for the domain grid");
        }
        for (int k = 0; k <= best[d]; k++) {
            dd->cut[d][k] = (double)k / best[d];
        }
        for (int side = 0; side < 2; side++) {
            int c[3] = {dd->coord[0], dd->coord[1], dd->coord[2]};
            c[d] += side ? 1 : -1;
            const bool open = !box->periodic[d] && (c[d] < 0 || c[d] >= best[d]);
            dd->neighbor[d][side] = open ? -1 : hmd_domain_rank_at(dd, c);
        }
    }
    set_bounds(dd);
    return HMD_OK;
}

/* Slab index of fractional coordinate s along d. */
static int slab_of(const struct hmd_domain *dd, int d, double s)
{
    const int n = dd->grid[d];
    if (!(s > 0.0)) {
        return 0;
    }
    if (s >= 1.0) {
        return n - 1;
    }
    int k = (int)(s * n); /* exact for even cuts; corrected below for moved ones */
    k = k < 0 ? 0 : (k >= n ? n - 1 : k);
    while (k > 0 && s < dd->cut[d][k]) {
        k--;
    }
    while (k < n - 1 && s >= dd->cut[d][k + 1]) {
        k++;
    }
    return k;
}

int hmd_domain_owner(const struct hmd_domain *dd, const double s[3])
{
    const int c[3] = {slab_of(dd, 0, s[0]), slab_of(dd, 1, s[1]), slab_of(dd, 2, s[2])};
    return hmd_domain_rank_at(dd, c);
}

void hmd_domain_balance(struct hmd_domain *dd, const double *load, const double min_frac[3])
{
    for (int d = 0; d < 3; d++) {
        const int n = dd->grid[d];
        if (n < 2) {
            continue;
        }
        double slab[HMD_DD_MAX_RANKS_PER_DIM] = {0}, total = 0.0;
        for (int r = 0; r < dd->nranks; r++) {
            const int c[3] = {r % dd->grid[0], (r / dd->grid[0]) % dd->grid[1],
                              r / (dd->grid[0] * dd->grid[1])};
            slab[c[d]] += load[r];
            total += load[r];
        }
        if (!(total > 0.0)) {
            continue;
        }
        /* cumulative load is piecewise linear in s; place cut k where it reaches k/n of the
         * total, then move only part of the way (damping) */
        double *old = dd->cut[d], target[HMD_DD_MAX_RANKS_PER_DIM + 1];
        target[0] = 0.0;
        target[n] = 1.0;
        double acc = 0.0;
        int s = 0;
        for (int k = 1; k < n; k++) {
            const double want = total * k / n;
            while (s < n - 1 && acc + slab[s] < want) {
                acc += slab[s++];
            }
            const double f = slab[s] > 0 ? (want - acc) / slab[s] : 0.5;
            target[k] = old[s] + f * (old[s + 1] - old[s]);
        }
        double next[HMD_DD_MAX_RANKS_PER_DIM + 1];
        next[0] = 0.0;
        next[n] = 1.0;
        for (int k = 1; k < n; k++) {
            const double half_lo = 0.5 * (old[k] - old[k - 1]),
                         half_hi = 0.5 * (old[k + 1] - old[k]);
            double c = old[k] + 0.7 * (target[k] - old[k]);
            c = fmax(old[k] - half_lo, fmin(old[k] + half_hi, c));
            next[k] = c;
        }
        /* keep every slab at least min_frac thick */
        for (int k = 1; k < n; k++) {
            next[k] = fmax(next[k], next[k - 1] + min_frac[d]);
        }
        for (int k = n - 1; k >= 1; k--) {
            next[k] = fmin(next[k], next[k + 1] - min_frac[d]);
        }
        memcpy(dd->cut[d], next, sizeof(double) * (n + 1));
    }
    set_bounds(dd);
}

void hmd_domain_free(struct hmd_domain *dd)
{
    for (int d = 0; d < 3; d++) {
        free(dd->cut[d]);
    }
    memset(dd, 0, sizeof *dd);
}
