/* Deep Potential evaluation in four passes:
 *   1. per home atom (threads): select neighbours into slots, descriptor forward (T, D);
 *   2. per fitting net, blocks of atoms (threads): fitting forward and backward, E_i and dE/dD;
 *   3. per home atom (threads): descriptor backward, dE/dd_ij per slot;
 *   4. serial: forces, virial and atomic virial summed in atom order (thread-count independent).
 * The embedding forward is recomputed in pass 3 rather than stored: per atom it would be
 * nnei x sum(neuron) doubles (about 190 kB for the water model).
 */
#include "nnp/dp_eval.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/threads.h"
#include "nnp/se_e2_a.h"

enum { FIT_BLOCK = 32 }; /* atoms per fitting batch: one weight pass serves this many rows */

struct candidate {
    double r2; /* squared distance (Å^2) */
    int j;     /* index into the nall arrays */
};

static int by_distance(const void *pa, const void *pb)
{
    const struct candidate *a = pa, *b = pb;
    if (a->r2 != b->r2) {
        return a->r2 < b->r2 ? -1 : 1;
    }
    return (a->j > b->j) - (a->j < b->j);
}

/* Fills slots[nnei] for centre i from its neighbour list entries (see dp_eval.h for the rule).
 * `cand` has room for the centre's list length. */
static void format_neighbors(const struct hmd_dp_model *m, int i, const double *x,
                             const int *type, const int *list, int nlist, struct candidate *cand,
                             int *slots)
{
    const struct hmd_se_e2_a *se = &m->se;
    const int nt = m->ntypes, ti = type[i];
    const double rc2 = m->rcut * m->rcut;
    int n = 0;
    for (int k = 0; k < nlist; k++) {
        int j = list[k];
        if (m->pair_exclude[ti * nt + type[j]]) {
            continue;
        }
        double dx = x[3 * j] - x[3 * i], dy = x[3 * j + 1] - x[3 * i + 1];
        double dz = x[3 * j + 2] - x[3 * i + 2];
        double r2 = dx * dx + dy * dy + dz * dz;
        if (r2 <= rc2) {
            cand[n].r2 = r2;
            cand[n].j = j;
            n++;
        }
    }
    qsort(cand, (size_t)n, sizeof *cand, by_distance);
    if (n > se->nnei) {
        n = se->nnei;
    }
    int count[64] = {0}; /* ntypes is checked <= 64 at the top of hmd_dp_compute_cpu */
    for (int j = 0; j < se->nnei; j++) {
        slots[j] = -1;
    }
    for (int k = 0; k < n; k++) {
        int t = type[cand[k].j];
        if (count[t] < se->sel[t]) {
            slots[se->sel_offset[t] + count[t]++] = cand[k].j;
        }
    }
}

static size_t fit_doubles(const struct hmd_dp_model *m)
{
    const struct hmd_mlp *net = &m->fit[0];
    size_t rows = FIT_BLOCK;
    return rows * m->dim_descrpt * 2 + 2 * hmd_mlp_work_size(net, (int)rows) + rows +
           hmd_mlp_backward_work_size(net, (int)rows);
}

static int max_list_length(const struct hmd_nbr_list *nl, int nlocal)
{
    int mx = 0;
    for (int i = 0; i < nlocal; i++) {
        int len = nl->offset[i + 1] - nl->offset[i];
        mx = len > mx ? len : mx;
    }
    return mx;
}

static int grow(void **p, size_t bytes)
{
    void *q = realloc(*p, bytes ? bytes : 1);
    if (!q) {
        return hmd_error_set(HMD_ENOMEM, "out of memory (%zu bytes for the DP workspace)", bytes);
    }
    *p = q;
    return HMD_OK;
}

static int workspace_reserve(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws,
                             int nlocal, int max_list)
{
    const int nnei = m->se.nnei;
    int rc = HMD_OK;
    if (nlocal > ws->cap_local) {
        size_t n = (size_t)nlocal;
        rc = grow((void **)&ws->slots, n * nnei * sizeof(int));
        if (!rc) {
            rc = grow((void **)&ws->T, n * m->se.M * 4 * sizeof(double));
        }
        if (!rc) {
            rc = grow((void **)&ws->D, n * m->dim_descrpt * sizeof(double));
        }
        if (!rc) {
            rc = grow((void **)&ws->atom_e, n * sizeof(double));
        }
        if (!rc) {
            rc = grow((void **)&ws->grad, n * nnei * 3 * sizeof(double));
        }
        if (!rc) {
            rc = grow((void **)&ws->order, n * sizeof(int));
        }
        if (rc) {
            return rc;
        }
        ws->cap_local = nlocal;
    }
    const int nthreads = hmd_thread_count();
    size_t dbl = hmd_se_e2_a_scratch_doubles(m);
    size_t fd = fit_doubles(m);
    dbl = dbl > fd ? dbl : fd;
    /* candidate buffer for neighbour formatting, in doubles (struct of double + int) */
    size_t cand = ((size_t)max_list * sizeof(struct candidate) + sizeof(double) - 1) /
                  sizeof(double);
    dbl = dbl > cand ? dbl : cand;
    size_t ints = hmd_se_e2_a_scratch_ints(m);
    if (nthreads > ws->nthreads || dbl > ws->thread_doubles || ints > ws->thread_ints) {
        rc = grow((void **)&ws->thread_dbuf, (size_t)nthreads * dbl * sizeof(double));
        if (!rc) {
            rc = grow((void **)&ws->thread_ibuf, (size_t)nthreads * ints * sizeof(int));
        }
        if (rc) {
            return rc;
        }
        ws->nthreads = nthreads;
        ws->thread_doubles = dbl;
        ws->thread_ints = ints;
    }
    return HMD_OK;
}

/* True when the energy of an atom of type t does not depend on coordinates. */
static bool no_gradient(const struct hmd_dp_model *m, int t)
{
    return m->fit_exclude[t] || m->atom_exclude[t];
}

static void descriptor_pass(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws, int nlocal,
                            const double *x, const int *type, const struct hmd_nbr_list *nl)
{
    const int nnei = m->se.nnei, M = m->se.M;
#pragma omp parallel
    {
        const int tid = hmd_thread_id();
        double *dbuf = ws->thread_dbuf + (size_t)tid * ws->thread_doubles;
        int *ibuf = ws->thread_ibuf + (size_t)tid * ws->thread_ints;
        struct hmd_se_e2_a_scratch s;
        hmd_se_e2_a_scratch_init(&s, m, dbuf, ibuf);
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < nlocal; i++) {
            int *slots = ws->slots + (size_t)i * nnei;
            /* the candidate buffer shares dbuf: formatting finishes before the forward starts */
            format_neighbors(m, i, x, type, nl->index + nl->offset[i],
                             nl->offset[i + 1] - nl->offset[i], (struct candidate *)dbuf, slots);
            hmd_se_e2_a_forward(m, i, type[i], slots, x, &s, ws->T + (size_t)i * M * 4,
                                ws->D + (size_t)i * m->dim_descrpt);
        }
    }
}

/* Fitting forward and backward for the atoms order[0..n) of net `k`: atomic energies and
 * dE/dD (written over D). */
static void fitting_pass(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws, int k,
                         const int *order, int n)
{
    const struct hmd_mlp *net = &m->fit[k];
    const int dim = m->dim_descrpt;
    const int nblocks = (n + FIT_BLOCK - 1) / FIT_BLOCK;
#pragma omp parallel
    {
        const int tid = hmd_thread_id();
        double *in = ws->thread_dbuf + (size_t)tid * ws->thread_doubles;
        double *dx = in + (size_t)FIT_BLOCK * dim;
        double *work = dx + (size_t)FIT_BLOCK * dim;
        double *saved = work + hmd_mlp_work_size(net, FIT_BLOCK);
        double *dy = saved + hmd_mlp_work_size(net, FIT_BLOCK);
        double *bwork = dy + FIT_BLOCK;
#pragma omp for schedule(dynamic, 1)
        for (int b = 0; b < nblocks; b++) {
            const int r0 = b * FIT_BLOCK;
            const int rows = (n - r0 < FIT_BLOCK) ? n - r0 : FIT_BLOCK;
            for (int r = 0; r < rows; r++) {
                memcpy(in + (size_t)r * dim, ws->D + (size_t)order[r0 + r] * dim,
                       sizeof(double) * dim);
                dy[r] = 1.0;
            }
            const double *e = hmd_mlp_forward(net, rows, in, work, saved);
            hmd_mlp_backward(net, rows, saved, dy, dx, bwork);
            for (int r = 0; r < rows; r++) {
                const int i = order[r0 + r];
                ws->atom_e[i] = e[r];
                memcpy(ws->D + (size_t)i * dim, dx + (size_t)r * dim, sizeof(double) * dim);
            }
        }
    }
}

static void backward_pass(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws, int nlocal,
                          const double *x, const int *type)
{
    const int nnei = m->se.nnei, M = m->se.M;
#pragma omp parallel
    {
        const int tid = hmd_thread_id();
        struct hmd_se_e2_a_scratch s;
        hmd_se_e2_a_scratch_init(&s, m, ws->thread_dbuf + (size_t)tid * ws->thread_doubles,
                                 ws->thread_ibuf + (size_t)tid * ws->thread_ints);
#pragma omp for schedule(dynamic, 8)
        for (int i = 0; i < nlocal; i++) {
            double *grad = ws->grad + (size_t)i * nnei * 3;
            if (no_gradient(m, type[i])) {
                memset(grad, 0, sizeof(double) * nnei * 3);
                continue;
            }
            hmd_se_e2_a_backward(m, i, type[i], ws->slots + (size_t)i * nnei, x, &s,
                                 ws->T + (size_t)i * M * 4, ws->D + (size_t)i * m->dim_descrpt,
                                 grad);
        }
    }
}

static void scatter_pass(const struct hmd_dp_model *m, const struct hmd_dp_workspace *ws,
                         int nlocal, int nall, const double *x, struct hmd_dp_output *out)
{
    const int nnei = m->se.nnei;
    memset(out->force, 0, sizeof(double) * 3 * (size_t)nall);
    memset(out->virial, 0, sizeof out->virial);
    if (out->atom_virial) {
        memset(out->atom_virial, 0, sizeof(double) * 9 * (size_t)nall);
    }
    for (int i = 0; i < nlocal; i++) {
        const int *slots = ws->slots + (size_t)i * nnei;
        const double *grad = ws->grad + (size_t)i * nnei * 3;
        for (int s = 0; s < nnei; s++) {
            const int j = slots[s];
            if (j < 0) {
                continue;
            }
            const double *g = grad + 3 * s;
            double d[3];
            for (int k = 0; k < 3; k++) {
                d[k] = x[3 * j + k] - x[3 * i + k];
                out->force[3 * j + k] -= g[k];
                out->force[3 * i + k] += g[k];
            }
            for (int a = 0; a < 3; a++) {
                for (int b = 0; b < 3; b++) {
                    double w = -g[a] * d[b];
                    out->virial[3 * a + b] += w;
                    if (out->atom_virial) {
                        out->atom_virial[9 * (size_t)j + 3 * a + b] += w;
                    }
                }
            }
        }
    }
}

int hmd_dp_compute_cpu(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws, int nlocal,
                       int nall, const double *x, const int *type, const struct hmd_nbr_list *nl,
                       struct hmd_dp_output *out)
{
    if (m->ntypes > 64) {
        return hmd_error_set(HMD_ENOTSUP, "models with more than 64 types are not supported");
    }
    int rc = workspace_reserve(m, ws, nlocal, max_list_length(nl, nlocal));
    if (rc) {
        return rc;
    }
    descriptor_pass(m, ws, nlocal, x, type, nl);
    for (int k = 0; k < m->nfit; k++) {
        int n = 0;
        for (int i = 0; i < nlocal; i++) {
            if ((m->nfit == 1 || type[i] == k) && !no_gradient(m, type[i])) {
                ws->order[n++] = i;
            }
        }
        if (n) {
            fitting_pass(m, ws, k, ws->order, n);
        }
    }
    out->energy = 0.0;
    for (int i = 0; i < nlocal; i++) {
        const int t = type[i];
        /* order of deepmd/pt: fitting mask, then out_bias, then the model's atom mask */
        double e = m->fit_exclude[t] ? 0.0 : ws->atom_e[i] + m->bias_atom_e[t];
        e = m->atom_exclude[t] ? 0.0 : e + m->out_bias[t];
        out->energy += e;
        if (out->atom_energy) {
            out->atom_energy[i] = e;
        }
    }
    backward_pass(m, ws, nlocal, x, type);
    scatter_pass(m, ws, nlocal, nall, x, out);
    return HMD_OK;
}

void hmd_dp_workspace_free(struct hmd_dp_workspace *ws)
{
    free(ws->slots);
    free(ws->T);
    free(ws->D);
    free(ws->atom_e);
    free(ws->grad);
    free(ws->thread_dbuf);
    free(ws->thread_ibuf);
    free(ws->order);
    memset(ws, 0, sizeof *ws);
}
