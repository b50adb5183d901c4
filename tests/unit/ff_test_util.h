/* Helpers of the classical force-field tests: one rank's atoms (home atoms and ghosts that are
 * periodic images or copies of other ranks' atoms) built the simple way, every image within
 * reach, so that the tests do not depend on the halo code they are meant to be checked with.
 * Valid C and C++ (tests/ff/ff_twin.cu uses it too). */
#ifndef HMD_TESTS_FF_TEST_UTIL_H
#define HMD_TESTS_FF_TEST_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/box.h"
#include "ff/provider.h"
#include "nbr/nbr_list.h"

/* A rank's atoms: x [nall][3], id [nall] (global atom), home atoms first. */
struct ff_rank {
    int nlocal, nall;
    double *x;
    int64_t *id;
};

static inline void ff_rank_free(struct ff_rank *r)
{
    free(r->x);
    free(r->id);
    memset(r, 0, sizeof *r);
}

static inline void ff_rank_add(struct ff_rank *r, int *cap, const double *x, int64_t id)
{
    if (r->nall == *cap) {
        *cap = 2 * *cap + 64;
        r->x = (double *)realloc(r->x, sizeof *r->x * 3 * (size_t)*cap);
        r->id = (int64_t *)realloc(r->id, sizeof *r->id * (size_t)*cap);
    }
    memcpy(r->x + 3 * r->nall, x, sizeof *x * 3);
    r->id[r->nall++] = id;
}

/* The rank owning the atoms whose wrapped fractional coordinates lie in [lo, hi) of each cell
 * vector, among the n atoms at x (Å; any image), with as ghosts every image (other than the home
 * copies) within fractional distance rlist / face of that slab. lo = 0, hi = 1: one rank. */
static inline void ff_rank_make(struct ff_rank *r, const struct hmd_box *box, int n,
                                const double *x, const double lo[3], const double hi[3],
                                double rlist)
{
    memset(r, 0, sizeof *r);
    int cap = 0;
    double face[3], w[3];
    int reach[3];
    hmd_box_face_distances(box, face);
    for (int d = 0; d < 3; d++) {
        w[d] = rlist / face[d];
        reach[d] = (int)ceil(w[d]) + 1;
    }
    double *s = (double *)malloc(sizeof *s * 3 * (size_t)n);
    for (int i = 0; i < n; i++) {
        double xi[3] = {x[3 * i], x[3 * i + 1], x[3 * i + 2]};
        hmd_box_wrap(box, xi, NULL);
        hmd_box_to_frac(box, xi, s + 3 * i);
        bool home = true;
        for (int d = 0; d < 3; d++) {
            home = home && s[3 * i + d] >= lo[d] && s[3 * i + d] < hi[d];
        }
        if (home) {
            ff_rank_add(r, &cap, xi, i);
        }
    }
    r->nlocal = r->nall;
    for (int i = 0; i < n; i++) {
        for (int a = -reach[0]; a <= reach[0]; a++) {
            for (int b = -reach[1]; b <= reach[1]; b++) {
                for (int c = -reach[2]; c <= reach[2]; c++) {
                    const int img[3] = {a, b, c};
                    bool inside = true, home = true;
                    double t[3];
                    for (int d = 0; d < 3; d++) {
                        t[d] = s[3 * i + d] + img[d];
                        inside = inside && t[d] >= lo[d] - w[d] && t[d] < hi[d] + w[d];
                        home = home && t[d] >= lo[d] && t[d] < hi[d];
                    }
                    if (!inside || home) {
                        continue;
                    }
                    double xg[3];
                    hmd_box_to_cart(box, t, xg);
                    ff_rank_add(r, &cap, xg, i);
                }
            }
        }
    }
    free(s);
}

/* One rank holding all n atoms (every image within rlist a ghost) and its full list `nl`
 * (zeroed first). Returns the list's status. */
static inline int ff_rank_one(struct ff_rank *r, struct hmd_nbr_list *nl, const struct hmd_box *box,
                              int n, const double *x, double rlist)
{
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    ff_rank_make(r, box, n, x, lo, hi, rlist);
    memset(nl, 0, sizeof *nl);
    return hmd_nbr_list_build(nl, box, r->nlocal, r->nall, r->x, rlist);
}

/* The provider io of rank r: centres 0..ncentre-1 (host arrays), its home atoms counted. */
static inline struct hmd_force_io ff_rank_io(const struct ff_rank *r, int ncentre,
                                             const struct hmd_box *box,
                                             const struct hmd_nbr_list *nl, double *f, double *ev)
{
    struct hmd_force_io io;
    memset(&io, 0, sizeof io);
    io.nlocal = ncentre;
    io.nall = r->nall;
    io.ncount = r->nlocal;
    io.x = r->x;
    io.id = r->id;
    io.box = box;
    io.nl = nl;
    io.f = f;
    io.ev = ev;
    return io;
}

/* Largest |a - b| over n values. */
static inline double ff_max_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t k = 0; k < n; k++) {
        m = fmax(m, fabs(a[k] - b[k]));
    }
    return m;
}

static inline double ff_max_abs(const double *a, size_t n)
{
    double m = 0;
    for (size_t k = 0; k < n; k++) {
        m = fmax(m, fabs(a[k]));
    }
    return m;
}

#endif /* HMD_TESTS_FF_TEST_UTIL_H */
