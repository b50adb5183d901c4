/* The classical force field on the GPU (cuda/ff_classical.h), the twin of ff/classical.c.
 *
 * prepare: positions and ids to the host, the host's plan (ff/ff_plan.c, full mode, with its
 * tables: each atom's force slots of the bonded interactions it is in, each home atom's energy
 * shares) from a host neighbour list, uploaded. compute, all on the caller's stream:
 *   pairs   one thread per centre: its pair forces summed in list order onto f[i]; half of
 *           each pair's energy and virial (counted centres), the self term; per-atom energies
 *   terms   one thread per bonded interaction: forces into its slots, energies, virial
 *   gather  one thread per atom: its slots summed in a fixed order onto f[k]
 *   shares  one thread per home atom (when per-atom energies are asked for)
 *   reduce  one block: energies by term and the virial in a fixed tree, added to ev and terms
 */
#include <float.h>
#include <math.h>
#include <new>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/ff/classical.h"

extern "C" {
#include "ff/ff_kernels.h"
#include "ff/ff_plan.h"
#include "nbr/nbr_list.h"
}

#include <cuda_runtime.h>

namespace
{

constexpr int THREADS = 128;
constexpr int REDUCE_THREADS = 256;
constexpr int NRED = HMD_FF_NTERMS + 9; /* energies by term, then the virial */

int check(cudaError_t e, const char *what)
{
    return e == cudaSuccess
               ? HMD_OK
               : hmd_error_set(HMD_ESOFTWARE, "classical force field on the GPU: %s: %s", what,
                               cudaGetErrorString(e));
}

/* A device array that only grows (at prepare). */
struct dbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

int grow(dbuf &b, size_t bytes, size_t &total)
{
    if (bytes <= b.bytes) {
        return HMD_OK;
    }
    if (b.p) {
        cudaFree(b.p);
        total -= b.bytes;
        b.p = nullptr;
        b.bytes = 0;
    }
    const size_t n = bytes + bytes / 2;
    int rc = check(cudaMalloc(&b.p, n), "cudaMalloc");
    if (!rc) {
        b.bytes = n;
        total += n;
    }
    return rc;
}

int upload(dbuf &b, const void *src, size_t bytes, cudaStream_t s, size_t &total)
{
    int rc = grow(b, bytes, total);
    if (!rc && bytes) {
        rc = check(cudaMemcpyAsync(b.p, src, bytes, cudaMemcpyHostToDevice, s), "upload");
    }
    return rc;
}

template <class T> T *ptr(const dbuf &b)
{
    return static_cast<T *>(b.p);
}

/* What the pair kernel reads (device pointers). */
struct pair_args {
    int nlocal, ncount, ntypes;
    const double *x, *q, *c6, *c12;
    const int *type, *start, *pair;
    double *f, *centre, *ae;
};

__global__ void pairs_kernel(pair_args a, hmd_ff_nb nb)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.nlocal) {
        return;
    }
    hmd_ff_centre_sum sum;
    hmd_ff_centre_pairs(&nb, a.x, a.q, a.type, a.ntypes, a.c6, a.c12, a.pair, a.start[i],
                        a.start[i + 1], i, &sum);
    for (int c = 0; c < 3; c++) {
        a.f[3 * i + c] += sum.f[c];
    }
    const double self = hmd_ff_self(&nb, a.q[i]);
    if (a.ae) {
        a.ae[i] += 0.5 * (sum.vc + sum.vlj) + self;
    }
    const double k = i < a.ncount ? 1.0 : 0.0; /* does centre i count? */
    double *out = a.centre + 8 * i;
    out[0] = k * (0.5 * sum.vc + self);
    out[1] = k * 0.5 * sum.vlj;
    for (int c = 0; c < 6; c++) {
        out[2 + c] = k * 0.5 * sum.w[c];
    }
}

struct term_args {
    int nterm;
    const double *x;
    const hmd_top_interaction *inter;
    const hmd_ff_local *term;
    double *tf, *te, *tv; /* [nterm][4][3], [nterm][2], [nterm][9] */
};

__global__ void terms_kernel(term_args a)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= a.nterm) {
        return;
    }
    const hmd_ff_local loc = a.term[t];
    const hmd_top_interaction &in = a.inter[loc.inter];
    const double *xs[4];
    for (int k = 0; k < 4; k++) {
        xs[k] = a.x + 3 * loc.atom[k < hmd_ff_kind_atoms(in.kind) ? k : 0];
    }
    double f[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, v[2] = {0, 0};
    double w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    hmd_ff_term(in.kind, in.p, xs, f, v, w);
    const double k = (loc.flags & HMD_FF_COUNTED) ? 1.0 : 0.0;
    for (int q = 0; q < 12; q++) {
        a.tf[12 * t + q] = f[q / 3][q % 3];
    }
    a.te[2 * t] = k * v[0];
    a.te[2 * t + 1] = k * v[1];
    for (int q = 0; q < 9; q++) {
        a.tv[9 * t + q] = k * w[q];
    }
}

__global__ void gather_kernel(int nall, const int *start, const int *slot, const double *tf,
                              double *f)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nall) {
        return;
    }
    double s[3] = {0, 0, 0};
    for (int e = start[i]; e < start[i + 1]; e++) {
        for (int c = 0; c < 3; c++) {
            s[c] += tf[3 * slot[e] + c];
        }
    }
    for (int c = 0; c < 3; c++) {
        f[3 * i + c] += s[c];
    }
}

__global__ void shares_kernel(int nhome, const int *start, const hmd_ff_local *share,
                              const hmd_top_interaction *inter, const double *x, double *ae)
{
    const int h = blockIdx.x * blockDim.x + threadIdx.x;
    if (h >= nhome) {
        return;
    }
    double sum = 0;
    for (int s = start[h]; s < start[h + 1]; s++) {
        const hmd_ff_local loc = share[s];
        const hmd_top_interaction &in = inter[loc.inter];
        const int n = hmd_ff_kind_atoms(in.kind);
        const double *xs[4];
        for (int k = 0; k < 4; k++) {
            xs[k] = x + 3 * loc.atom[k < n ? k : 0];
        }
        double f[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, v[2] = {0, 0};
        hmd_ff_bonded(in.kind, in.p, xs, f, v);
        sum += (v[0] + v[1]) / n;
    }
    ae[h] += sum;
}

struct reduce_args {
    int nlocal, nterm;
    const double *centre, *te, *tv;
    const hmd_ff_local *term;
    const hmd_top_interaction *inter;
    double *ev, *terms;
    int slot[HMD_FF_NTERMS];
};

__global__ void reduce_kernel(reduce_args a)
{
    __shared__ double part[NRED][REDUCE_THREADS];
    const int tid = threadIdx.x;
    double acc[NRED];
    for (int q = 0; q < NRED; q++) {
        acc[q] = 0;
    }
    for (int i = tid; i < a.nlocal; i += REDUCE_THREADS) {
        const double *c = a.centre + 8 * i;
        acc[HMD_FF_TERM_COUL_SR] += c[0];
        acc[HMD_FF_TERM_LJ_SR] += c[1];
        for (int q = 0; q < 9; q++) {
            acc[HMD_FF_NTERMS + q] += c[2 + hmd_ff_sym6(q)];
        }
    }
    for (int t = tid; t < a.nterm; t += REDUCE_THREADS) {
        const int kind = a.inter[a.term[t].inter].kind;
        acc[hmd_ff_term_of_kind(kind)] += a.te[2 * t];
        if (kind == HMD_FF_KIND_PAIR) {
            acc[HMD_FF_TERM_COUL14] += a.te[2 * t + 1];
        }
        for (int q = 0; q < 9; q++) {
            acc[HMD_FF_NTERMS + q] += a.tv[9 * t + q];
        }
    }
    for (int q = 0; q < NRED; q++) {
        part[q][tid] = acc[q];
    }
    __syncthreads();
    for (int half = REDUCE_THREADS / 2; half > 0; half /= 2) {
        if (tid < half) {
            for (int q = 0; q < NRED; q++) {
                part[q][tid] += part[q][tid + half];
            }
        }
        __syncthreads();
    }
    if (tid == 0) {
        double total = 0;
        for (int t = 0; t < HMD_FF_NTERMS; t++) {
            total += part[t][0];
            if (a.terms && a.slot[t] >= 0) {
                a.terms[a.slot[t]] += part[t][0];
            }
        }
        a.ev[HMD_FORCE_EV_ENERGY] += total;
        for (int q = 0; q < 9; q++) {
            a.ev[HMD_FORCE_EV_VIRIAL + q] += part[HMD_FF_NTERMS + q][0];
        }
    }
}

int blocks(int n)
{
    return (n + THREADS - 1) / THREADS;
}

/* The provider's state. */
struct ffc {
    hmd_ff_model m{};
    hmd_ff_plan plan{};
    hmd_nbr_list nl{};
    double rlist = 0;
    int nlocal = 0, nall = 0, ncount = 0, nterm = 0, nshare = 0;
    /* every prepare makes a new plan whose counts compute's launches carry: a recorded graph is
     * stale after each (hmd_force_provider_ops.generation) */
    unsigned long generation = 0;
    /* host staging */
    double *hx = nullptr;
    int64_t *hid = nullptr;
    int cap_host = 0;
    /* device */
    size_t bytes = 0;
    dbuf c6, c12, inter, q, type, pair_start, pair, term, share, share_start, dgstart, dgslot;
    dbuf centre, tf, te, tv;
};

double cutoff(const void *self)
{
    return static_cast<const ffc *>(self)->m.cutoff;
}

int terms(const void *self, const char **names)
{
    const ffc *c = static_cast<const ffc *>(self);
    memcpy(names, c->m.names, sizeof *names * (size_t)c->m.nterms);
    return c->m.nterms;
}

int prepare(void *self, const hmd_force_io *io)
{
    ((ffc *)self)->generation++;
    ffc &c = *static_cast<ffc *>(self);
    cudaStream_t s = static_cast<cudaStream_t>(io->stream);
    if (!io->x || !io->id) {
        return hmd_error_set(HMD_ESOFTWARE, "classical force field on the GPU: prepare needs "
                                            "the positions and the global ids");
    }
    int rc = HMD_OK;
    if (io->nall > c.cap_host) {
        const int cap = io->nall + io->nall / 4 + 16;
        double *hx = (double *)realloc(c.hx, sizeof(double) * 3 * (size_t)cap);
        c.hx = hx ? hx : c.hx;
        int64_t *hid = (int64_t *)realloc(c.hid, sizeof(int64_t) * (size_t)cap);
        c.hid = hid ? hid : c.hid;
        rc = hx && hid ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
        c.cap_host = rc ? c.cap_host : cap;
    }
    const size_t nall = (size_t)io->nall;
    if (!rc && nall) {
        rc = check(
            cudaMemcpyAsync(c.hx, io->x, sizeof(double) * 3 * nall, cudaMemcpyDeviceToHost, s),
            "positions to the host");
    }
    if (!rc && nall) {
        rc =
            check(cudaMemcpyAsync(c.hid, io->id, sizeof(int64_t) * nall, cudaMemcpyDeviceToHost, s),
                  "ids to the host");
    }
    if (!rc) {
        rc = check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    }
    if (!rc) {
        rc = hmd_nbr_list_build(&c.nl, io->box, io->nlocal, io->nall, c.hx, c.rlist);
    }
    if (!rc) {
        rc = hmd_ff_plan_build(&c.plan, &c.m, true, io->nlocal, io->nall, io->ncount, c.hx, c.hid,
                               io->box, &c.nl);
    }
    const hmd_ff_plan &pl = c.plan;
    size_t &b = c.bytes;
    if (!rc) {
        rc = upload(c.q, pl.q, sizeof(double) * nall, s, b);
    }
    if (!rc) {
        rc = upload(c.type, pl.type, sizeof(int) * nall, s, b);
    }
    if (!rc) {
        rc = upload(c.pair_start, pl.pair_start, sizeof(int) * ((size_t)pl.nlocal + 1), s, b);
    }
    if (!rc) {
        rc = upload(c.pair, pl.pair, sizeof(int) * pl.npair, s, b);
    }
    if (!rc) {
        rc = upload(c.term, pl.term, sizeof(hmd_ff_local) * (size_t)pl.nterm, s, b);
    }
    if (!rc) {
        rc = upload(c.share, pl.share, sizeof(hmd_ff_local) * (size_t)pl.nshare, s, b);
    }
    if (!rc) {
        rc = upload(c.share_start, pl.share_start, sizeof(int) * ((size_t)pl.ncount + 1), s, b);
    }
    if (!rc) {
        rc = upload(c.dgstart, pl.slot_start, sizeof(int) * (nall + 1), s, b);
    }
    if (!rc) {
        rc = upload(c.dgslot, pl.slot, sizeof(int) * (size_t)pl.slot_start[nall], s, b);
    }
    if (!rc) {
        rc = grow(c.centre, sizeof(double) * 8 * (size_t)pl.nlocal, b);
    }
    if (!rc) {
        rc = grow(c.tf, sizeof(double) * 12 * (size_t)pl.nterm, b);
    }
    if (!rc) {
        rc = grow(c.te, sizeof(double) * 2 * (size_t)pl.nterm, b);
    }
    if (!rc) {
        rc = grow(c.tv, sizeof(double) * 9 * (size_t)pl.nterm, b);
    }
    if (!rc) {
        rc = check(cudaStreamSynchronize(s), "cudaStreamSynchronize"); /* host tables reused */
    }
    c.nlocal = rc ? -1 : pl.nlocal;
    c.nall = pl.nall;
    c.ncount = pl.ncount;
    c.nterm = pl.nterm;
    c.nshare = pl.nshare;
    return rc;
}

int compute(void *self, const hmd_force_io *io)
{
    ffc &c = *static_cast<ffc *>(self);
    if (io->nlocal != c.nlocal || io->nall != c.nall || io->ncount != c.ncount) {
        return hmd_error_set(HMD_ESOFTWARE,
                             "classical force field on the GPU: compute on %d/%d "
                             "atoms after a prepare for %d/%d",
                             io->nlocal, io->nall, c.nlocal, c.nall);
    }
    if (io->atom_virial) {
        return hmd_error_set(HMD_ENOTSUP, "classical force field on the GPU: no per-atom virials");
    }
    cudaStream_t s = static_cast<cudaStream_t>(io->stream);
    if (c.nlocal > 0) {
        pair_args a = {c.nlocal,
                       c.ncount,
                       c.m.ntypes,
                       io->x,
                       ptr<double>(c.q),
                       ptr<double>(c.c6),
                       ptr<double>(c.c12),
                       ptr<int>(c.type),
                       ptr<int>(c.pair_start),
                       ptr<int>(c.pair),
                       io->f,
                       ptr<double>(c.centre),
                       io->atom_energy};
        pairs_kernel<<<blocks(c.nlocal), THREADS, 0, s>>>(a, c.m.nb);
    }
    if (c.nterm > 0) {
        term_args a = {c.nterm,
                       io->x,
                       ptr<hmd_top_interaction>(c.inter),
                       ptr<hmd_ff_local>(c.term),
                       ptr<double>(c.tf),
                       ptr<double>(c.te),
                       ptr<double>(c.tv)};
        terms_kernel<<<blocks(c.nterm), THREADS, 0, s>>>(a);
        gather_kernel<<<blocks(c.nall), THREADS, 0, s>>>(
            c.nall, ptr<int>(c.dgstart), ptr<int>(c.dgslot), ptr<double>(c.tf), io->f);
    }
    if (io->atom_energy && c.ncount > 0 && c.nshare > 0) {
        shares_kernel<<<blocks(c.ncount), THREADS, 0, s>>>(
            c.ncount, ptr<int>(c.share_start), ptr<hmd_ff_local>(c.share),
            ptr<hmd_top_interaction>(c.inter), io->x, io->atom_energy);
    }
    reduce_args r;
    r.nlocal = c.nlocal;
    r.nterm = c.nterm;
    r.centre = ptr<double>(c.centre);
    r.te = ptr<double>(c.te);
    r.tv = ptr<double>(c.tv);
    r.term = ptr<hmd_ff_local>(c.term);
    r.inter = ptr<hmd_top_interaction>(c.inter);
    r.ev = io->ev;
    r.terms = io->terms;
    memcpy(r.slot, c.m.slot, sizeof r.slot);
    reduce_kernel<<<1, REDUCE_THREADS, 0, s>>>(r);
    return check(cudaGetLastError(), "a kernel launch");
}

unsigned long generation(const void *self)
{
    return ((const ffc *)self)->generation;
}

size_t device_bytes(const void *self)
{
    return static_cast<const ffc *>(self)->bytes;
}

void destroy(void *self)
{
    ffc *c = static_cast<ffc *>(self);
    if (!c) {
        return;
    }
    for (dbuf *b : {&c->c6, &c->c12, &c->inter, &c->q, &c->type, &c->pair_start, &c->pair, &c->term,
                    &c->share, &c->share_start, &c->dgstart, &c->dgslot, &c->centre, &c->tf, &c->te,
                    &c->tv}) {
        cudaFree(b->p);
    }
    hmd_ff_model_free(&c->m);
    hmd_ff_plan_free(&c->plan);
    hmd_nbr_list_free(&c->nl);
    free(c->hx);
    free(c->hid);
    delete c;
}

const hmd_force_provider_ops ops = {
    "classical", HMD_FORCE_DEVICE, cutoff,     terms,   prepare,
    compute,     device_bytes,     generation, destroy,
};

} // namespace

extern "C" int hmd_ff_classical_create_cuda(struct hmd_force_provider *p,
                                            const struct hmd_topology *top,
                                            const struct hmd_ff_settings *s, double rlist)
{
    p->ops = nullptr;
    p->self = nullptr;
    ffc *c = new (std::nothrow) ffc;
    if (!c) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
    }
    int rc = s->nnp_group
                 ? hmd_error_set(HMD_ENOTSUP, "the GPU's classical force field takes no nnp-group "
                                              "(it keeps the group's self terms); hybrid runs "
                                              "compute it on the host")
                 : hmd_ff_model_create(&c->m, top, s);
    if (!rc && !(rlist >= c->m.cutoff)) {
        rc = hmd_error_set(HMD_ECONFIG,
                           "classical force field on the GPU: the list cut-off %g Å is below "
                           "the force field's cut-off %g Å",
                           rlist, c->m.cutoff);
    }
    c->rlist = rlist;
    const size_t nt = (size_t)c->m.ntypes * (size_t)c->m.ntypes;
    if (!rc) {
        rc = upload(c->c6, c->m.c6, sizeof(double) * nt, 0, c->bytes);
    }
    if (!rc) {
        rc = upload(c->c12, c->m.c12, sizeof(double) * nt, 0, c->bytes);
    }
    if (!rc) {
        rc = upload(c->inter, c->m.inter, sizeof(hmd_top_interaction) * (size_t)c->m.ninter, 0,
                    c->bytes);
    }
    if (!rc) {
        rc = check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
    }
    c->nlocal = -1; /* no prepare yet */
    if (rc) {
        destroy(c);
        return rc;
    }
    p->ops = &ops;
    p->self = c;
    return HMD_OK;
}
