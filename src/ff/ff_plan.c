/* A rank's share of the classical force field (ff/ff_plan.h). */
#include "ff/ff_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/threads.h"

static int reserve(void **p, size_t n, size_t *cap, size_t size)
{
    if (n <= *cap) {
        return HMD_OK;
    }
    size_t c = n + n / 2 + 64;
    void *q = realloc(*p, c * size);
    if (!q) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field's lists");
    }
    *p = q;
    *cap = c;
    return HMD_OK;
}

static int reserve_int(void **p, int n, int *cap, size_t size)
{
    size_t c = (size_t)*cap;
    int rc = reserve(p, (size_t)n, &c, size);
    *cap = (int)c;
    return rc;
}

/* The arrays by global id, reset where the last build wrote them. */
static int reset_ids(struct hmd_ff_plan *plan, int natoms)
{
    if (plan->natoms != natoms || !plan->head) {
        free(plan->head);
        free(plan->home);
        plan->head = malloc(sizeof *plan->head * ((size_t)natoms + 1));
        plan->home = malloc(sizeof *plan->home * ((size_t)natoms + 1));
        if (!plan->head || !plan->home) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
        }
        for (int g = 0; g < natoms; g++) {
            plan->head[g] = plan->home[g] = -1;
        }
        plan->natoms = natoms;
        plan->nseen = 0;
    }
    for (int k = 0; k < plan->nseen; k++) {
        plan->head[plan->seen[k]] = plan->home[plan->seen[k]] = -1;
    }
    plan->nseen = 0;
    return HMD_OK;
}

static double dist2(const double *a, const double *b)
{
    const double d0 = a[0] - b[0], d1 = a[1] - b[1], d2 = a[2] - b[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* The copy of global atom g nearest to position xo, or -1 when this rank has none. */
static int nearest(const struct hmd_ff_plan *plan, const double *x, int g, const double *xo,
                   double *d2)
{
    int best = -1;
    *d2 = INFINITY;
    for (int k = plan->head[g]; k >= 0; k = plan->next[k]) {
        const double d = dist2(x + 3 * k, xo);
        if (d < *d2) {
            *d2 = d;
            best = k;
        }
    }
    return best;
}

/* Local atoms of interaction t for a rank where local atom `ref` is at home, each other atom
 * the copy nearest to it. Returns HMD_OK, 1 when the interaction cannot be resolved here (an
 * atom missing or beyond rlist), with *far the offending distance. */
static int resolve(const struct hmd_ff_plan *plan, const struct hmd_ff_model *m, const double *x,
                   const int64_t *id, int t, int ref, double rlist2, struct hmd_ff_local *out,
                   double *far)
{
    const struct hmd_top_interaction *in = &m->inter[t];
    const int n = hmd_top_kind_atoms(in->kind);
    out->inter = t;
    out->atom[0] = out->atom[1] = out->atom[2] = out->atom[3] = -1;
    *far = 0;
    for (int a = 0; a < n; a++) {
        double d2 = 0;
        out->atom[a] =
            in->atom[a] == id[ref] ? ref : nearest(plan, x, in->atom[a], x + 3 * ref, &d2);
        if (out->atom[a] < 0 || d2 > rlist2) {
            *far = sqrt(d2);
            return 1;
        }
    }
    return HMD_OK;
}

static int unreachable(const struct hmd_ff_model *m, int t, double far, double rlist)
{
    const struct hmd_top_interaction *in = &m->inter[t];
    char atoms[96] = "";
    for (int a = 0; a < hmd_top_kind_atoms(in->kind); a++) {
        snprintf(atoms + strlen(atoms), sizeof atoms - strlen(atoms), " %d", in->atom[a] + 1);
    }
    if (isinf(far)) {
        return hmd_error_set(HMD_EDATA,
                             "classical force field: the %s of atoms%s has an atom this rank "
                             "does not hold (the halo of %g Å does not reach it)",
                             hmd_top_kind_name(in->kind), atoms, rlist);
    }
    return hmd_error_set(HMD_EDATA,
                         "classical force field: the %s of atoms%s spans %.3g Å, more than the "
                         "neighbour-list cut-off (%g Å) that brings its atoms together; are "
                         "the structure and the topology the same system?",
                         hmd_top_kind_name(in->kind), atoms, far, rlist);
}

/* Resolves, for each centre i < n (global atom g = id[i]), the interactions
 * list[start[g] .. start[g + 1]) with its atoms nearest to i, into *out in centre order (*nout
 * of them, growing *cap), in parallel (the result does not depend on the threads). Shares
 * (`share`: target i, flags 0) must all resolve; terms (target -1, counted below ncount) that
 * cannot are dropped for a replicated halo centre (i >= ncount), an error otherwise (the first
 * in order). */
static int resolve_all(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, const double *x,
                       const int64_t *id, double rlist, int n, const int *start, const int *list,
                       bool share, struct hmd_ff_local **out, int *nout, int *cap)
{
    int *at = malloc(sizeof *at * ((size_t)n + 1));
    if (!at) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field's lists");
    }
    at[0] = 0;
    for (int i = 0; i < n; i++) {
        at[i + 1] = at[i] + start[id[i] + 1] - start[id[i]];
    }
    int rc = reserve_int((void **)out, at[n] + 1, cap, sizeof **out);
    if (rc) {
        free(at);
        return rc;
    }
    const double rlist2 = rlist * rlist;
    struct hmd_ff_local *o = *out;
    /* a thread per 6,144 centres at most: the loop runs once per list step, tens of steps
     * apart, and waking 16 threads that slept since cost more than they saved (24,576 atoms on
     * an H100 node: the whole plan took 2.9 ms on 16 threads, 1.2 on 4, 1.7 on 1) */
    int threads = n / 6144;
    threads = threads < 1 ? 1 : (threads > hmd_thread_count() ? hmd_thread_count() : threads);
    (void)threads; /* without OpenMP */
#pragma omp parallel for schedule(dynamic, 256) num_threads(threads)
    for (int i = 0; i < n; i++) {
        const int g = (int)id[i];
        for (int k = start[g]; k < start[g + 1]; k++) {
            struct hmd_ff_local *loc = o + at[i] + (k - start[g]);
            double far;
            const int bad = resolve(plan, m, x, id, list[k], i, rlist2, loc, &far);
            loc->flags = bad ? -1 : share || i >= plan->ncount ? 0 : HMD_FF_COUNTED;
            loc->target = bad || share ? i : -1; /* a failure keeps its centre for the message */
        }
    }
    int kept = 0;
    for (int e = 0; e < at[n] && !rc; e++) {
        const struct hmd_ff_local loc = o[e];
        if (loc.flags >= 0) {
            o[kept++] = loc;
        } else if (share || loc.target < plan->ncount) {
            struct hmd_ff_local again;
            double far;
            resolve(plan, m, x, id, loc.inter, loc.target, rlist2, &again, &far);
            rc = unreachable(m, loc.inter, far, rlist);
        } /* else a replicated halo centre's interaction reaching out of the halo */
    }
    *nout = kept;
    free(at);
    return rc;
}

/* The bonded interactions of the rank's centres and, when `shares`, the shares of its home
 * atoms. */
static int bonded(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, const double *x,
                  const int64_t *id, double rlist, bool shares)
{
    plan->nterm = plan->nshare = 0;
    int rc = resolve_all(plan, m, x, id, rlist, plan->nlocal, m->own_start, m->own, false,
                         &plan->term, &plan->nterm, &plan->cap_term);
    if (!rc && shares) {
        rc = resolve_all(plan, m, x, id, rlist, plan->ncount, m->member_start, m->member, true,
                         &plan->share, &plan->nshare, &plan->cap_share);
    }
    return rc;
}

static int push(int **list, size_t *n, size_t *cap, int value)
{
    int rc = reserve((void **)list, *n + 1, cap, sizeof **list);
    if (!rc) {
        (*list)[(*n)++] = value;
    }
    return rc;
}

/* The nonbonded pairs of the rank's centres from the full list. */
static int pairs(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, const int64_t *id,
                 const struct hmd_nbr_list *nl)
{
    plan->npair = plan->nshadow = 0;
    for (int i = 0; i < plan->nlocal; i++) {
        plan->pair_start[i] = (int)plan->npair;
        plan->shadow_start[i] = (int)plan->nshadow;
        const int gi = (int)id[i], ti = plan->type[i];
        for (int e = nl->offset[i]; e < nl->offset[i + 1]; e++) {
            const int j = nl->index[e], gj = (int)id[j];
            if (gj == gi || hmd_ff_model_both_in_group(m, gi, gj)) {
                continue; /* an image of itself: beyond the cut-off (checked); the DP's pair */
            }
            const bool excl = hmd_ff_model_excluded(m, gi, gj);
            const size_t tt = (size_t)ti * (size_t)m->ntypes + (size_t)plan->type[j];
            const bool charged = plan->q[i] * plan->q[j] != 0.0;
            if (!charged && (excl || (m->c6[tt] == 0.0 && m->c12[tt] == 0.0))) {
                continue; /* nothing to compute */
            }
            const int code = excl ? -(j + 1) : j;
            int rc = HMD_OK;
            if (plan->full || gi < gj) {
                rc = push(&plan->pair, &plan->npair, &plan->cap_pair, code);
            } else if (j >= plan->nlocal) {
                rc = push(&plan->shadow, &plan->nshadow, &plan->cap_shadow, code);
            }
            if (rc) {
                return rc;
            }
        }
    }
    plan->pair_start[plan->nlocal] = (int)plan->npair;
    plan->shadow_start[plan->nlocal] = (int)plan->nshadow;
    if (plan->npair > (size_t)2147483647 || plan->nshadow > (size_t)2147483647) {
        return hmd_error_set(HMD_ENOMEM, "classical force field: more than 2^31 pairs on a rank");
    }
    return HMD_OK;
}

/* The full mode's index tables (see struct hmd_ff_plan). */
static int slot_tables(struct hmd_ff_plan *plan, const struct hmd_ff_model *m)
{
    int rc = reserve((void **)&plan->slot_start, (size_t)plan->nall + 1, &plan->cap_slot_start,
                     sizeof(int));
    if (!rc) {
        rc = reserve((void **)&plan->share_start, (size_t)plan->ncount + 1, &plan->cap_share_start,
                     sizeof(int));
    }
    if (rc) {
        return rc;
    }
    memset(plan->slot_start, 0, sizeof(int) * ((size_t)plan->nall + 1));
    size_t nslot = 0;
    for (int t = 0; t < plan->nterm; t++) {
        const int n = hmd_top_kind_atoms(m->inter[plan->term[t].inter].kind);
        for (int a = 0; a < n; a++) {
            plan->slot_start[plan->term[t].atom[a] + 1]++;
        }
        nslot += (size_t)n;
    }
    for (int k = 0; k < plan->nall; k++) {
        plan->slot_start[k + 1] += plan->slot_start[k];
    }
    if ((rc = reserve((void **)&plan->slot, nslot + 1, &plan->cap_slot, sizeof(int)))) {
        return rc;
    }
    /* fill in term order, each atom's next free place counted from its start */
    int *fill = malloc(sizeof *fill * ((size_t)plan->nall + 1));
    if (!fill) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field's lists");
    }
    memcpy(fill, plan->slot_start, sizeof *fill * (size_t)plan->nall);
    for (int t = 0; t < plan->nterm; t++) {
        const int n = hmd_top_kind_atoms(m->inter[plan->term[t].inter].kind);
        for (int a = 0; a < n; a++) {
            plan->slot[fill[plan->term[t].atom[a]]++] = 4 * t + a;
        }
    }
    free(fill);
    memset(plan->share_start, 0, sizeof(int) * ((size_t)plan->ncount + 1));
    for (int k = 0; k < plan->nshare; k++) {
        plan->share_start[plan->share[k].target + 1]++;
    }
    for (int h = 0; h < plan->ncount; h++) {
        plan->share_start[h + 1] += plan->share_start[h];
    }
    return HMD_OK;
}

/* hmd_ff_plan_build, or without pairs when nl is NULL (the bonded interactions resolved within
 * rlist); the energy shares when `shares`. */
static int build(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, bool full, int nlocal,
                 int nall, int ncount, const double *x, const int64_t *id,
                 const struct hmd_box *box, const struct hmd_nbr_list *nl, double rlist,
                 bool shares)
{
    if (rlist < m->cutoff) {
        return hmd_error_set(HMD_ECONFIG,
                             "the neighbour list's cut-off (%g Å) is shorter than the classical "
                             "force field's (%g Å)",
                             rlist, m->cutoff);
    }
    if (box) {
        double face[3];
        hmd_box_face_distances(box, face);
        for (int d = 0; d < 3; d++) {
            if (box->periodic[d] && 2.0 * m->cutoff >= face[d]) {
                return hmd_error_set(HMD_ECONFIG,
                                     "the cut-off (%g Å) is longer than half the cell's width "
                                     "along cell vector %d (%g Å): an atom would meet its own "
                                     "image; use a larger cell or shorter rcoulomb and rvdw",
                                     m->cutoff, d + 1, face[d]);
            }
        }
    }
    int rc = reset_ids(plan, m->natoms);
    if (!rc && nall > plan->cap_all) {
        int cap = nall + nall / 4 + 16;
        double *q = realloc(plan->q, sizeof *q * (size_t)cap);
        plan->q = q ? q : plan->q;
        int *t = realloc(plan->type, sizeof *t * (size_t)cap);
        plan->type = t ? t : plan->type;
        int *next = realloc(plan->next, sizeof *next * (size_t)cap);
        plan->next = next ? next : plan->next;
        int64_t *seen = realloc(plan->seen, sizeof *seen * (size_t)cap);
        plan->seen = seen ? seen : plan->seen;
        rc = q && t && next && seen ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
        plan->cap_all = rc ? plan->cap_all : cap;
    }
    if (!rc && nlocal + 1 > plan->cap_centre) {
        int cap = nlocal + nlocal / 4 + 16;
        int *a = realloc(plan->pair_start, sizeof *a * (size_t)cap);
        plan->pair_start = a ? a : plan->pair_start;
        int *b = realloc(plan->shadow_start, sizeof *b * (size_t)cap);
        plan->shadow_start = b ? b : plan->shadow_start;
        rc = a && b ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
        plan->cap_centre = rc ? plan->cap_centre : cap;
    }
    if (rc) {
        return rc;
    }
    plan->full = full;
    plan->nlocal = nlocal;
    plan->nall = nall;
    plan->ncount = ncount;
    for (int k = 0; k < nall; k++) {
        const int64_t g = id[k];
        if (g < 0 || g >= m->natoms) {
            plan->nall = plan->nlocal = 0;
            return hmd_error_set(HMD_EDATA,
                                 "atom id %lld is outside the topology's %d atoms; the "
                                 "structure and the topology must be the same system",
                                 (long long)g, m->natoms);
        }
        if (k < ncount && plan->home[g] >= 0) {
            plan->nall = plan->nlocal = 0;
            return hmd_error_set(HMD_ESOFTWARE, "atom id %lld is a home atom twice on one rank",
                                 (long long)g);
        }
        plan->seen[plan->nseen++] = g;
        plan->next[k] = plan->head[g];
        plan->head[g] = k;
        if (k < ncount) {
            plan->home[g] = k;
        }
        plan->q[k] = m->charge[g];
        plan->type[k] = m->type[g];
    }
    if (nl) {
        rc = pairs(plan, m, id, nl);
    } else {
        plan->npair = plan->nshadow = 0;
        memset(plan->pair_start, 0, sizeof *plan->pair_start * ((size_t)nlocal + 1));
        memset(plan->shadow_start, 0, sizeof *plan->shadow_start * ((size_t)nlocal + 1));
    }
    if (!rc) {
        rc = bonded(plan, m, x, id, rlist, shares);
    }
    if (!rc && full) {
        rc = slot_tables(plan, m);
    }
    if (rc) {
        plan->nall = plan->nlocal = 0;
    }
    return rc;
}

int hmd_ff_plan_build(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, bool full, int nlocal,
                      int nall, int ncount, const double *x, const int64_t *id,
                      const struct hmd_box *box, const struct hmd_nbr_list *nl)
{
    if (!id || !nl || nl->ncentre < nlocal) {
        return hmd_error_set(HMD_ESOFTWARE, "classical force field: prepare needs the atoms' "
                                            "global ids and the full list of the home atoms");
    }
    return build(plan, m, full, nlocal, nall, ncount, x, id, box, nl, nl->rlist, true);
}

int hmd_ff_plan_build_bonded(struct hmd_ff_plan *plan, const struct hmd_ff_model *m, int nlocal,
                             int nall, int ncount, const double *x, const int64_t *id,
                             const struct hmd_box *box, double rlist, bool shares)
{
    if (!id) {
        return hmd_error_set(HMD_ESOFTWARE, "classical force field: prepare needs the atoms' "
                                            "global ids");
    }
    return build(plan, m, true, nlocal, nall, ncount, x, id, box, NULL, rlist, shares);
}

void hmd_ff_plan_free(struct hmd_ff_plan *plan)
{
    free(plan->q);
    free(plan->type);
    free(plan->pair_start);
    free(plan->pair);
    free(plan->shadow_start);
    free(plan->shadow);
    free(plan->term);
    free(plan->share);
    free(plan->slot_start);
    free(plan->slot);
    free(plan->share_start);
    free(plan->head);
    free(plan->home);
    free(plan->next);
    free(plan->seen);
    memset(plan, 0, sizeof *plan);
}
