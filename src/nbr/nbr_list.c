#include "nbr/nbr_list.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

enum { MAX_CELLS_PER_ATOM = 4 }; /* caps the bin count for sparse systems */

static int grow(void **p, size_t bytes)
{
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q) {
        return hmd_error_set(HMD_ENOMEM, "out of memory (%zu bytes for the neighbour list)", bytes);
    }
    *p = q;
    return HMD_OK;
}

struct binning {
    int n[3];        /* bins per direction */
    double lo[3];    /* fractional coordinate of the lower edge */
    double width[3]; /* fractional width of a bin */
};

/* Bins cover the fractional extent of all atoms; a bin is at least rlist thick between its
 * faces, so neighbours are within the 27 surrounding bins. */
static void plan_bins(const struct hmd_box *box, int nall, const double *x, double rlist,
                      struct binning *bn)
{
    double face[3], lo[3] = {INFINITY, INFINITY, INFINITY},
                    hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    hmd_box_face_distances(box, face);
    for (int k = 0; k < nall; k++) {
        double s[3];
        hmd_box_to_frac(box, x + 3 * k, s);
        for (int d = 0; d < 3; d++) {
            lo[d] = s[d] < lo[d] ? s[d] : lo[d];
            hi[d] = s[d] > hi[d] ? s[d] : hi[d];
        }
    }
    double cap = (double)MAX_CELLS_PER_ATOM * (nall > 1 ? nall : 1);
    for (;;) {
        double total = 1.0;
        for (int d = 0; d < 3; d++) {
            double extent = (hi[d] - lo[d]) * face[d];
            int n = (int)floor(extent / rlist);
            bn->n[d] = n < 1 ? 1 : n;
            total *= bn->n[d];
        }
        if (total <= cap) {
            break;
        }
        rlist *= 1.26; /* coarser bins until the count is bounded */
    }
    for (int d = 0; d < 3; d++) {
        bn->lo[d] = lo[d];
        double span = hi[d] - lo[d];
        bn->width[d] = (span > 0 ? span : 1.0) / bn->n[d];
    }
}

static int bin_coord(const struct binning *bn, int d, double s)
{
    int c = (int)floor((s - bn->lo[d]) / bn->width[d]);
    return c < 0 ? 0 : (c >= bn->n[d] ? bn->n[d] - 1 : c);
}

int hmd_nbr_list_build(struct hmd_nbr_list *nl, const struct hmd_box *box, int nlocal, int nall,
                       const double *x, double rlist)
{
    struct binning bn;
    plan_bins(box, nall, x, rlist, &bn);
    const int ncells = bn.n[0] * bn.n[1] * bn.n[2];
    int rc = HMD_OK;
    if (ncells > nl->cap_cells) {
        rc = grow((void **)&nl->cell_head, (size_t)ncells * sizeof(int));
        if (rc) {
            return rc;
        }
        nl->cap_cells = ncells;
    }
    if (nall > nl->cap_next) {
        rc = grow((void **)&nl->cell_next, (size_t)nall * sizeof(int));
        if (!rc) {
            rc = grow((void **)&nl->cell_of, (size_t)nall * 3 * sizeof(int));
        }
        if (rc) {
            return rc;
        }
        nl->cap_next = nall;
    }
    if (nlocal + 1 > nl->cap_centre) {
        rc = grow((void **)&nl->offset, (size_t)(nlocal + 1) * sizeof(int));
        if (!rc) {
            rc = grow((void **)&nl->x_build, (size_t)nlocal * 3 * sizeof(double));
        }
        if (rc) {
            return rc;
        }
        nl->cap_centre = nlocal + 1;
    }
    /* linked cells, filled backwards so each chain lists atoms in increasing index */
    for (int c = 0; c < ncells; c++) {
        nl->cell_head[c] = -1;
    }
    int *cell_of = nl->cell_of;
    for (int k = nall - 1; k >= 0; k--) {
        double s[3];
        hmd_box_to_frac(box, x + 3 * k, s);
        int c3[3];
        for (int d = 0; d < 3; d++) {
            c3[d] = bin_coord(&bn, d, s[d]);
            cell_of[3 * k + d] = c3[d];
        }
        int c = (c3[2] * bn.n[1] + c3[1]) * bn.n[0] + c3[0];
        nl->cell_next[k] = nl->cell_head[c];
        nl->cell_head[c] = k;
    }
    const double rl2 = rlist * rlist;
    size_t n = 0;
    for (int i = 0; i < nlocal; i++) {
        nl->offset[i] = (int)n;
        const int *ci = cell_of + 3 * i;
        for (int dz = -1; dz <= 1; dz++) {
            int cz = ci[2] + dz;
            if (cz < 0 || cz >= bn.n[2]) {
                continue;
            }
            for (int dy = -1; dy <= 1; dy++) {
                int cy = ci[1] + dy;
                if (cy < 0 || cy >= bn.n[1]) {
                    continue;
                }
                for (int dx = -1; dx <= 1; dx++) {
                    int cx = ci[0] + dx;
                    if (cx < 0 || cx >= bn.n[0]) {
                        continue;
                    }
                    for (int j = nl->cell_head[(cz * bn.n[1] + cy) * bn.n[0] + cx]; j >= 0;
                         j = nl->cell_next[j]) {
                        if (j == i) {
                            continue;
                        }
                        double ex = x[3 * j] - x[3 * i], ey = x[3 * j + 1] - x[3 * i + 1];
                        double ez = x[3 * j + 2] - x[3 * i + 2];
                        if (ex * ex + ey * ey + ez * ez > rl2) {
                            continue;
                        }
                        if (n == nl->cap_index) {
                            size_t cap = nl->cap_index ? 2 * nl->cap_index : 64 * (size_t)nlocal;
                            rc = grow((void **)&nl->index, cap * sizeof(int));
                            if (rc) {
                                return rc;
                            }
                            nl->cap_index = cap;
                        }
                        nl->index[n++] = j;
                    }
                }
            }
        }
    }
    nl->offset[nlocal] = (int)n;
    nl->ncentre = nlocal;
    nl->rlist = rlist;
    memcpy(nl->x_build, x, (size_t)nlocal * 3 * sizeof(double));
    return HMD_OK;
}

int hmd_nbr_list_mark(struct hmd_nbr_list *nl, int nlocal, const double *x, double rlist)
{
    if (nlocal + 1 > nl->cap_centre) {
        int rc = grow((void **)&nl->offset, (size_t)(nlocal + 1) * sizeof(int));
        if (!rc) {
            rc = grow((void **)&nl->x_build, (size_t)nlocal * 3 * sizeof(double));
        }
        if (rc) {
            return rc;
        }
        nl->cap_centre = nlocal + 1;
    }
    memset(nl->offset, 0, (size_t)(nlocal + 1) * sizeof(int));
    nl->ncentre = nlocal;
    nl->rlist = rlist;
    memcpy(nl->x_build, x, (size_t)nlocal * 3 * sizeof(double));
    return HMD_OK;
}

double hmd_nbr_list_max_displacement(const struct hmd_nbr_list *nl, const double *x)
{
    double mx2 = 0.0;
    for (int i = 0; i < nl->ncentre; i++) {
        double d2 = 0.0;
        for (int k = 0; k < 3; k++) {
            double d = x[3 * i + k] - nl->x_build[3 * i + k];
            d2 += d * d;
        }
        mx2 = d2 > mx2 ? d2 : mx2;
    }
    return sqrt(mx2);
}

void hmd_nbr_list_free(struct hmd_nbr_list *nl)
{
    free(nl->offset);
    free(nl->index);
    free(nl->x_build);
    free(nl->cell_head);
    free(nl->cell_next);
    free(nl->cell_of);
    memset(nl, 0, sizeof *nl);
}
