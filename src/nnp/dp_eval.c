/* Deep Potential evaluation. Home atoms are grouped by fitting net and cut into chunks of
 * CHUNK atoms; each thread takes whole chunks and, per chunk:
 *   1. per atom: select neighbours into slots, descriptor forward (T, D);
 *   2. fitting forward and backward for the chunk's atoms as one batch per net: E_i, dE/dD;
 *   3. per atom: descriptor backward, dE/dd_ij per slot.
 * Then, serially, forces, virial and atomic virial are summed in atom order. Chunks are fixed
 * by the atom order alone, so results do not depend on the number of threads.
 * What step 3 needs from step 1 differs by descriptor: se_e2_a keeps, per real slot, the
 * embedding output, its derivative and R (about 2 * nnei * M doubles per atom, 220 kB for the
 * water model) for the chunk; DPA-1 keeps each atom's whole state (every layer's tensors,
 * megabytes per atom), so its chunks hold as many atoms as fit in DPA1_KEEP_BYTES per thread.
 */
#include "nnp/dp_eval.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/threads.h"
#include "nnp/dpa1.h"
#include "nnp/se_e2_a.h"

enum { CHUNK = 32 }; /* atoms per chunk: one pass over the fitting weights serves this many */
enum { DPA1_KEEP_BYTES = 64 << 20 }; /* DPA-1: kept forward states per thread, at most */

/* Neighbour slots per atom and width of T, whatever the descriptor. */
static int slots_of(const struct hmd_dp_model *m)
{
    return m->kind == HMD_DESCRIPTOR_DPA1 ? m->dpa1.nnei : m->se.nnei;
}

static int width_of(const struct hmd_dp_model *m)
{
    return m->kind == HMD_DESCRIPTOR_DPA1 ? m->dpa1.M : m->se.M;
}

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

/* Fills slots[nnei] for centre i from its neighbour list entries (see dp_eval.h for the rule):
 * se_e2_a splits the nearest by neighbour type, DPA-1 keeps them in one list. `cand` has room
 * for the centre's list length. Returns the neighbours within rcut that found no slot. */
static int format_neighbors(const struct hmd_dp_model *m, int i, const double *x, const int *type,
                            const int *list, int nlist, struct candidate *cand, int *slots)
{
    const int nt = m->ntypes, ti = type[i], nnei = slots_of(m);
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
    const int within = n;
    if (n > nnei) {
        n = nnei;
    }
    for (int j = 0; j < nnei; j++) {
        slots[j] = -1;
    }
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        for (int k = 0; k < n; k++) {
            slots[k] = cand[k].j;
        }
        return within - n;
    }
    const struct hmd_se_e2_a *se = &m->se;
    int count[64] = {0}; /* ntypes is checked <= 64 at the top of hmd_dp_compute_cpu */
    int kept = 0;
    for (int k = 0; k < n; k++) {
        int t = type[cand[k].j];
        if (count[t] < se->sel[t]) {
            slots[se->sel_offset[t] + count[t]++] = cand[k].j;
            kept++;
        }
    }
    return within - kept;
}

/* Per-thread doubles of the fitting batch: inputs, input gradients, work, saved state, dE/dy,
 * backward work. */
static size_t fit_doubles(const struct hmd_dp_model *m)
{
    const struct hmd_mlp *net = &m->fit[0];
    return (size_t)CHUNK * m->dim_descrpt * 2 + 2 * hmd_mlp_work_size(net, CHUNK) + CHUNK +
           hmd_mlp_backward_work_size(net, CHUNK);
}

/* Atoms per chunk: CHUNK, or for DPA-1 as many as keep their forward state within
 * DPA1_KEEP_BYTES (at least one). */
static int chunk_atoms(const struct hmd_dp_model *m)
{
    if (m->kind != HMD_DESCRIPTOR_DPA1) {
        return CHUNK;
    }
    const size_t n = DPA1_KEEP_BYTES / (hmd_dpa1_scratch_doubles(m) * sizeof(double));
    return n < 1 ? 1 : (n > CHUNK ? CHUNK : (int)n);
}

/* Descriptor scratch of one thread (DPA-1: a state per atom of the chunk), and what the se_e2_a
 * forward keeps per atom for the backward. */
static size_t descriptor_doubles(const struct hmd_dp_model *m)
{
    return m->kind == HMD_DESCRIPTOR_DPA1 ? chunk_atoms(m) * hmd_dpa1_scratch_doubles(m)
                                          : hmd_se_e2_a_scratch_doubles(m);
}

static size_t keep_doubles(const struct hmd_dp_model *m)
{
    return m->kind == HMD_DESCRIPTOR_DPA1 ? 0 : hmd_se_e2_a_keep_doubles(m);
}

static size_t descriptor_ints(const struct hmd_dp_model *m)
{
    return m->kind == HMD_DESCRIPTOR_DPA1 ? chunk_atoms(m) * hmd_dpa1_scratch_ints(m)
                                          : hmd_se_e2_a_scratch_ints(m);
}

/* Per-thread doubles: descriptor scratch, fitting batch, candidates, kept chunk state. */
static size_t thread_doubles(const struct hmd_dp_model *m, int max_list)
{
    size_t cand =
        ((size_t)max_list * sizeof(struct candidate) + sizeof(double) - 1) / sizeof(double);
    return descriptor_doubles(m) + fit_doubles(m) + cand + (size_t)CHUNK * keep_doubles(m);
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

static int workspace_reserve(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws, int nlocal,
                             int max_list)
{
    const int nnei = slots_of(m);
    int rc = HMD_OK;
    if (m->kind == HMD_DESCRIPTOR_DPA1 && !ws->pad_table) {
        rc = grow((void **)&ws->pad_table, hmd_dpa1_pad_table_doubles(m) * sizeof(double));
        if (rc) {
            return rc;
        }
        ws->pad_type = -1;
    }
    if (nlocal > ws->cap_local) {
        size_t n = (size_t)nlocal;
        rc = grow((void **)&ws->slots, n * nnei * sizeof(int));
        if (!rc) {
            rc = grow((void **)&ws->T, n * width_of(m) * 4 * sizeof(double));
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
        if (!rc) {
            rc = grow((void **)&ws->dropped, n * sizeof(int));
        }
        if (rc) {
            return rc;
        }
        ws->cap_local = nlocal;
    }
    const int nthreads = hmd_thread_count();
    size_t dbl = thread_doubles(m, max_list);
    size_t ints = descriptor_ints(m);
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

/* Thread-private buffers carved from the workspace. */
struct thread_buffers {
    struct hmd_se_e2_a_scratch se;       /* se_e2_a */
    struct hmd_dpa1_scratch dpa1[CHUNK]; /* DPA-1: the state of each atom of the chunk */
    struct candidate *cand;
    double *keep;                                /* [CHUNK][keep doubles] */
    double *in, *dx, *work, *saved, *dy, *bwork; /* fitting batch */
};

static void thread_buffers_init(struct thread_buffers *b, const struct hmd_dp_model *m,
                                struct hmd_dp_workspace *ws, int tid, int max_list)
{
    double *p = ws->thread_dbuf + (size_t)tid * ws->thread_doubles;
    int *ip = ws->thread_ibuf + (size_t)tid * ws->thread_ints;
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        const size_t nd = hmd_dpa1_scratch_doubles(m), ni = hmd_dpa1_scratch_ints(m);
        const int chunk = chunk_atoms(m);
        for (int c = 0; c < chunk; c++) {
            b->dpa1[c] = (struct hmd_dpa1_scratch){.m = m, .buf = p + c * nd, .ibuf = ip + c * ni};
        }
    } else {
        hmd_se_e2_a_scratch_init(&b->se, m, p, ip);
    }
    p += descriptor_doubles(m);
    const struct hmd_mlp *net = &m->fit[0];
    b->in = p;
    b->dx = b->in + (size_t)CHUNK * m->dim_descrpt;
    b->work = b->dx + (size_t)CHUNK * m->dim_descrpt;
    b->saved = b->work + hmd_mlp_work_size(net, CHUNK);
    b->dy = b->saved + hmd_mlp_work_size(net, CHUNK);
    b->bwork = b->dy + CHUNK;
    p = b->bwork + hmd_mlp_backward_work_size(net, CHUNK);
    b->cand = (struct candidate *)p;
    p += ((size_t)max_list * sizeof(struct candidate) + sizeof(double) - 1) / sizeof(double);
    b->keep = p;
}

/* True when the energy of an atom of type t does not depend on coordinates. */
static bool no_gradient(const struct hmd_dp_model *m, int t)
{
    return m->fit_exclude[t] || m->atom_exclude[t];
}

static int net_of(const struct hmd_dp_model *m, int t)
{
    return m->nfit == 1 ? 0 : t;
}

/* Fitting forward and backward for the atoms atoms[0..n) (all of net k): atomic energies and
 * dE/dD, written over D. */
static void fit_batch(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws,
                      struct thread_buffers *b, int k, const int *atoms, int n)
{
    const struct hmd_mlp *net = &m->fit[k];
    const int dim = m->dim_descrpt;
    for (int r = 0; r < n; r++) {
        memcpy(b->in + (size_t)r * dim, ws->D + (size_t)atoms[r] * dim, sizeof(double) * dim);
        b->dy[r] = 1.0;
    }
    const double *e = hmd_mlp_forward(net, n, b->in, b->work, b->saved);
    hmd_mlp_backward(net, n, b->saved, b->dy, b->dx, b->bwork);
    for (int r = 0; r < n; r++) {
        ws->atom_e[atoms[r]] = e[r];
        memcpy(ws->D + (size_t)atoms[r] * dim, b->dx + (size_t)r * dim, sizeof(double) * dim);
    }
}

static void descriptor_forward(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws,
                               struct thread_buffers *b, int i, int c, const double *x,
                               const int *type)
{
    const int nnei = slots_of(m), M = width_of(m);
    const int *slots = ws->slots + (size_t)i * nnei;
    double *T = ws->T + (size_t)i * M * 4, *D = ws->D + (size_t)i * m->dim_descrpt;
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        hmd_dpa1_forward(m, i, type[i], slots, x, type, ws->pad_type, ws->pad_table, &b->dpa1[c], T,
                         D);
    } else {
        hmd_se_e2_a_forward(m, i, type[i], slots, x, &b->se, T, D, b->keep + keep_doubles(m) * c);
    }
}

static void descriptor_backward(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws,
                                struct thread_buffers *b, int i, int c, const double *x,
                                const int *type)
{
    const int nnei = slots_of(m), M = width_of(m);
    const int *slots = ws->slots + (size_t)i * nnei;
    const double *dD = ws->D + (size_t)i * m->dim_descrpt;
    double *grad = ws->grad + (size_t)i * nnei * 3;
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        hmd_dpa1_backward(m, type[i], &b->dpa1[c], ws->T + (size_t)i * M * 4, dD, grad);
    } else {
        hmd_se_e2_a_backward(m, i, type[i], slots, x, &b->se, ws->T + (size_t)i * M * 4, dD,
                             b->keep + keep_doubles(m) * c, grad);
    }
}

static void chunk_pass(const struct hmd_dp_model *m, struct hmd_dp_workspace *ws,
                       struct thread_buffers *b, const int *chunk, int n, const double *x,
                       const int *type, const struct hmd_nbr_list *nl)
{
    const int nnei = slots_of(m);
    for (int c = 0; c < n; c++) {
        const int i = chunk[c];
        ws->dropped[i] = format_neighbors(m, i, x, type, nl->index + nl->offset[i],
                                          nl->offset[i + 1] - nl->offset[i], b->cand,
                                          ws->slots + (size_t)i * nnei);
        descriptor_forward(m, ws, b, i, c, x, type);
    }
    /* chunk atoms are grouped by net (see the ordering in hmd_dp_compute_cpu) */
    for (int c0 = 0; c0 < n;) {
        int c1 = c0;
        const int k = net_of(m, type[chunk[c0]]);
        while (c1 < n && net_of(m, type[chunk[c1]]) == k) {
            c1++;
        }
        int first = c0;
        while (first < c1 && no_gradient(m, type[chunk[first]])) {
            first++; /* excluded types sort first within a net; they need no fitting */
        }
        if (first < c1) {
            fit_batch(m, ws, b, k, chunk + first, c1 - first);
        }
        c0 = c1;
    }
    for (int c = 0; c < n; c++) {
        const int i = chunk[c];
        if (no_gradient(m, type[i])) {
            memset(ws->grad + (size_t)i * nnei * 3, 0, sizeof(double) * nnei * 3);
            ws->atom_e[i] = 0.0;
            continue;
        }
        descriptor_backward(m, ws, b, i, c, x, type);
    }
}

static void scatter_pass(const struct hmd_dp_model *m, const struct hmd_dp_workspace *ws,
                         int nlocal, int nall, const double *x, struct hmd_dp_output *out)
{
    const int nnei = slots_of(m);
    memset(out->virial, 0, sizeof out->virial);
    const int ncount = out->ncount > 0 ? out->ncount : nlocal;
    for (int i = 0; i < nlocal; i++) {
        const int *slots = ws->slots + (size_t)i * nnei;
        const double *grad = ws->grad + (size_t)i * nnei * 3;
        const bool counted = i < ncount;
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
            for (int a = 0; a < 3 && counted; a++) {
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
                       int nall, const double *x, const int *type, int type0,
                       const struct hmd_nbr_list *nl, struct hmd_dp_output *out)
{
    if (m->ntypes > 64) {
        return hmd_error_set(HMD_ENOTSUP, "models with more than 64 types are not supported");
    }
    const int max_list = max_list_length(nl, nlocal);
    int rc = workspace_reserve(m, ws, nlocal, max_list);
    if (rc) {
        return rc;
    }
    /* order: by fitting net, and within a net the atoms without gradient first, each group in
     * index order; chunks of this order keep fitting batches whole */
    int n = 0;
    for (int k = 0; k < m->nfit; k++) {
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < nlocal; i++) {
                if (net_of(m, type[i]) == k && no_gradient(m, type[i]) == (pass == 0)) {
                    ws->order[n++] = i;
                }
            }
        }
    }
    if (m->kind == HMD_DESCRIPTOR_DPA1 && ws->pad_type != type0) {
        struct hmd_dpa1_scratch sc = {.m = m, .buf = ws->thread_dbuf, .ibuf = ws->thread_ibuf};
        hmd_dpa1_pad_table(m, type0, &sc, ws->pad_table);
        ws->pad_type = type0;
    }
    const int chunk = chunk_atoms(m), nchunks = (nlocal + chunk - 1) / chunk;
#pragma omp parallel
    {
        struct thread_buffers b;
        thread_buffers_init(&b, m, ws, hmd_thread_id(), max_list);
#pragma omp for schedule(dynamic, 1)
        for (int c = 0; c < nchunks; c++) {
            const int c0 = c * chunk, len = (nlocal - c0 < chunk) ? nlocal - c0 : chunk;
            chunk_pass(m, ws, &b, ws->order + c0, len, x, type, nl);
        }
    }
    out->dropped = 0;
    out->energy = 0.0;
    for (int i = 0; i < (out->ncount > 0 ? out->ncount : nlocal); i++) {
        out->dropped += ws->dropped[i];
        const int t = type[i];
        /* order of deepmd/pt: fitting mask, then out_bias, then the model's atom mask */
        double e = m->fit_exclude[t] ? 0.0 : ws->atom_e[i] + m->bias_atom_e[t];
        e = m->atom_exclude[t] ? 0.0 : e + m->out_bias[t];
        out->energy += e;
        if (out->atom_energy) {
            out->atom_energy[i] += e;
        }
    }
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
    free(ws->dropped);
    free(ws->pad_table);
    memset(ws, 0, sizeof *ws);
}
