/* The classical force field on the GPU (cuda/ff_classical.h), the twin of ff/classical.c.
 *
 * prepare: the nonbonded pair list built on the device (cuda/ff/pair_list.cuh: cell grid,
 * exclusion table by global id, fixed order); the bonded interactions and their tables (each
 * atom's force slots, each home atom's energy shares) from the host's copy of the atoms
 * (ff/ff_plan.c, hmd_ff_plan_build_bonded), uploaded. compute, all on the caller's stream:
 *   forces  (one launch) pairs: one warp per centre, its lanes over the partners (lane l
 *           takes l, l + 32, ...), the lanes' sums added in a fixed tree: the force on f[i];
 *           half of each pair's energy and virial (counted centres), the self term; per-atom
 *           energies. terms: one thread per bonded interaction: forces into its slots,
 *           energies, virial
 *   shares  one thread per home atom (when per-atom energies are asked for)
 *   sums    (one launch) gather: one thread per atom, its slots summed in a fixed order onto
 *           f[k]; the reduction's first stage: RED_BLOCKS blocks over the centres and terms
 *   reduce  one block over the first stage's parts: energies by term and the virial, added to
 *           ev and terms (fixed trees throughout)
 */
#include <float.h>
#include <math.h>
#include <new>
#include <vector>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/cuda_internal.cuh"
#include "cuda/ff/classical.h"
#include "cuda/ff/pair_list.cuh"

extern "C" {
#include "ff/ff_kernels.h"
#include "ff/ff_plan.h"
}

#include <cuda_runtime.h>

namespace
{

constexpr int THREADS = 128;
constexpr int REDUCE_THREADS = THREADS; /* the first stage shares sums_kernel's blocks */
constexpr int RED_BLOCKS = 64;          /* first stage of the energy and virial reduction */
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
    int nlocal, ncount, ntypes, cap;
    const double *x, *q, *c6, *c12;
    const int *type, *entry, *count;
    const int64_t *id;
    const unsigned char *group; /* by global id: no self term (the Deep Potential's), or NULL */
    double *f, *centre, *ae;
};

__device__ double warp_tree(double v)
{
    for (int off = 16; off > 0; off /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v; /* lane 0's is the sum */
}

/* Block `block` of the pairs: its warps' centres. */
__device__ void pairs_block(const pair_args &a, const hmd_ff_nb &nb, int block)
{
    const int lane = threadIdx.x % 32;
    const int i = (int)(((size_t)block * blockDim.x + threadIdx.x) / 32);
    if (i >= a.nlocal) {
        return; /* a whole warp */
    }
    const double xi[3] = {a.x[3 * i], a.x[3 * i + 1], a.x[3 * i + 2]};
    const double qi = a.q[i];
    const int row = a.type[i] * a.ntypes, n = a.count[i];
    const int *list = a.entry + (size_t)i * a.cap;
    hmd_ff_centre_sum sum;
    hmd_ff_centre_zero(&sum);
    for (int e = lane; e < n; e += 32) {
        hmd_ff_centre_entry(&nb, a.x, a.q, a.type, a.c6, a.c12, list[e], xi, qi, row, &sum);
    }
    for (int c = 0; c < 3; c++) {
        sum.f[c] = warp_tree(sum.f[c]);
    }
    for (int c = 0; c < 6; c++) {
        sum.w[c] = warp_tree(sum.w[c]);
    }
    sum.vc = warp_tree(sum.vc);
    sum.vlj = warp_tree(sum.vlj);
    if (lane != 0) {
        return;
    }
    for (int c = 0; c < 3; c++) {
        a.f[3 * i + c] += sum.f[c];
    }
    const double self = a.group && a.group[a.id[i]] ? 0.0 : hmd_ff_self(&nb, qi);
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

/* Block `block` of the bonded interactions, a thread each. */
__device__ void terms_block(const term_args &a, int block)
{
    const int t = block * blockDim.x + threadIdx.x;
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

struct gather_args {
    int nall;
    const int *start, *slot;
    const double *tf;
    double *f;
};

/* Block `block` of the atoms: each atom's slots summed in order onto f. */
__device__ void gather_block(const gather_args &g, int block)
{
    const int i = block * blockDim.x + threadIdx.x;
    if (i >= g.nall) {
        return;
    }
    const int *start = g.start, *slot = g.slot;
    const double *tf = g.tf;
    double *f = g.f;
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
    double *parts; /* [RED_BLOCKS][NRED] */
    double *ev, *terms;
    int slot[HMD_FF_NTERMS];
};

/* Sums part[q][0 .. n) into part[q][0] in a fixed tree (n a power of 2, the block's size). */
template <int N> __device__ void block_tree(double (*part)[N], int tid)
{
    __syncthreads();
    for (int half = N / 2; half > 0; half /= 2) {
        if (tid < half) {
            for (int q = 0; q < NRED; q++) {
                part[q][tid] += part[q][tid + half];
            }
        }
        __syncthreads();
    }
}

/* First stage: block b's share of the centres and terms (strided by RED_BLOCKS blocks) into
 * parts[b]. */
__device__ void parts_block(const reduce_args &a, int b)
{
    __shared__ double part[NRED][REDUCE_THREADS];
    const int tid = threadIdx.x, stride = RED_BLOCKS * REDUCE_THREADS;
    double acc[NRED];
    for (int q = 0; q < NRED; q++) {
        acc[q] = 0;
    }
    for (int i = b * REDUCE_THREADS + tid; i < a.nlocal; i += stride) {
        const double *c = a.centre + 8 * i;
        acc[HMD_FF_TERM_COUL_SR] += c[0];
        acc[HMD_FF_TERM_LJ_SR] += c[1];
        for (int q = 0; q < 9; q++) {
            acc[HMD_FF_NTERMS + q] += c[2 + hmd_ff_sym6(q)];
        }
    }
    for (int t = b * REDUCE_THREADS + tid; t < a.nterm; t += stride) {
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
    block_tree<REDUCE_THREADS>(part, tid);
    if (tid < NRED) {
        a.parts[NRED * b + tid] = part[tid][0];
    }
}

/* Blocks of pairs_kernel an SM must hold at once, a register limit (-D at build time for an A/B):
 * 0 none (90 registers, 5 blocks of 128 threads), 6 (80, 12 bytes spilled), 8 (64, 68 bytes
 * spilled). 8 by default: the kernel's latency-bound gathers gain more from the occupancy than
 * the spills cost (H200, 20 steps of 24,576 atoms under ncu: 2,161 us with none, 1,870 with 6,
 * 1,682 with 8; bench/results/classical_ab_2026-12-07_b359012.json). */
#ifndef HMD_FF_PAIR_BLOCKS_PER_SM
#define HMD_FF_PAIR_BLOCKS_PER_SM 8
#endif
#if HMD_FF_PAIR_BLOCKS_PER_SM > 0
#define HMD_FF_PAIR_BOUNDS __launch_bounds__(THREADS, HMD_FF_PAIR_BLOCKS_PER_SM)
#else
#define HMD_FF_PAIR_BOUNDS
#endif

/* The nonbonded pairs, one warp per centre, apart from the bonded interactions so that their
 * register budget can be set alone: the pairs' gathers are latency-bound, and with both in one
 * kernel (94 registers) five blocks fitted on an SM (28% occupancy, H100, 24,576 atoms). */
__global__ void HMD_FF_PAIR_BOUNDS pairs_kernel(pair_args pa, hmd_ff_nb nb)
{
    pairs_block(pa, nb, blockIdx.x);
}

/* The bonded interactions, a thread each. */
__global__ void terms_kernel(term_args ta)
{
    terms_block(ta, blockIdx.x);
}

/* After pairs_kernel and terms_kernel: the slots gathered (blocks below ngather_blocks) and the
 * first stage of the energy and virial reduction (the RED_BLOCKS others), in one launch. */
__global__ void sums_kernel(gather_args ga, reduce_args ra, int ngather_blocks)
{
    if ((int)blockIdx.x < ngather_blocks) {
        gather_block(ga, blockIdx.x);
    } else {
        parts_block(ra, blockIdx.x - ngather_blocks);
    }
}

/* Second stage, one block of RED_BLOCKS threads: the parts, added to ev and terms. */
__global__ void reduce_final(reduce_args a)
{
    __shared__ double part[NRED][RED_BLOCKS];
    const int tid = threadIdx.x;
    for (int q = 0; q < NRED; q++) {
        part[q][tid] = a.parts[NRED * tid + q];
    }
    block_tree<RED_BLOCKS>(part, tid);
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
    hmd_ff_pair_list pl{};
    double rlist = 0;
    bool atom_energies = false; /* per-atom energies may be asked for: the plan has the shares */
    int nlocal = 0, nall = 0, ncount = 0, nterm = 0, nshare = 0;
    /* changes when an array compute reads moves or a launch's size changes (a recorded graph
     * is then stale: hmd_force_provider_ops.generation); a list step that keeps both keeps it */
    unsigned long generation = 0;
    std::vector<uintptr_t> key; /* what the last generation was for */
    /* host staging (prepare without the host's copy of the atoms) */
    std::vector<double> hx;
    std::vector<int64_t> hid;
    /* device */
    size_t bytes = 0;
    dbuf inter, term, share, share_start, dgstart, dgslot, centre, tf, te, tv, parts;
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

/* The host's positions and ids of io's atoms: its host copy, else copied from the device. */
int host_atoms(ffc &c, const hmd_force_io *io, const double **x, const int64_t **id)
{
    if (io->host) {
        *x = io->host->x;
        *id = io->host->id;
        return HMD_OK;
    }
    const size_t nall = (size_t)io->nall;
    c.hx.resize(3 * nall + 1);
    c.hid.resize(nall + 1);
    cudaStream_t s = static_cast<cudaStream_t>(io->stream);
    int rc = check(
        cudaMemcpyAsync(c.hx.data(), io->x, sizeof(double) * 3 * nall, cudaMemcpyDeviceToHost, s),
        "positions to the host");
    if (!rc) {
        rc = check(cudaMemcpyAsync(c.hid.data(), io->id, sizeof(int64_t) * nall,
                                   cudaMemcpyDeviceToHost, s),
                   "ids to the host");
    }
    if (!rc) {
        rc = check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    }
    *x = c.hx.data();
    *id = c.hid.data();
    return rc;
}

/* Uploads the bonded plan's tables and sizes the scratch compute writes. */
int upload_plan(ffc &c, cudaStream_t s)
{
    const hmd_ff_plan &pl = c.plan;
    const size_t nall = (size_t)pl.nall;
    size_t &b = c.bytes;
    int rc = upload(c.term, pl.term, sizeof(hmd_ff_local) * (size_t)pl.nterm, s, b);
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
    return rc;
}

/* What compute's launches depend on: the arrays' places and the launch sizes. */
std::vector<uintptr_t> launch_key(const ffc &c)
{
    std::vector<uintptr_t> k = {(uintptr_t)c.nlocal, (uintptr_t)c.nall,   (uintptr_t)c.ncount,
                                (uintptr_t)c.nterm,  (uintptr_t)c.nshare, (uintptr_t)c.pl.cap};
    for (const dbuf *b : {&c.term, &c.share, &c.share_start, &c.dgstart, &c.dgslot, &c.centre,
                          &c.tf, &c.te, &c.tv}) {
        k.push_back((uintptr_t)b->p);
    }
    for (const void *p : {(const void *)c.pl.q, (const void *)c.pl.type, (const void *)c.pl.entry,
                          (const void *)c.pl.count}) {
        k.push_back((uintptr_t)p);
    }
    return k;
}

int prepare(void *self, const hmd_force_io *io)
{
    ffc &c = *static_cast<ffc *>(self);
    cudaStream_t s = static_cast<cudaStream_t>(io->stream);
    if (!io->x || !io->id) {
        return hmd_error_set(HMD_ESOFTWARE, "classical force field on the GPU: prepare needs "
                                            "the positions and the global ids");
    }
    c.nlocal = -1; /* until this prepare succeeds */
    const double *hx = nullptr;
    const int64_t *hid = nullptr;
    int rc = host_atoms(c, io, &hx, &hid);
    bool moved = false;
    if (!rc) { /* the device's pair list first: the host makes the bonded plan meanwhile */
        double lo[3], hi[3];
        hmd_cuda_bounds(io->nall, hx, lo, hi);
        rc = hmd_ff_pair_list_queue(&c.pl, io->nlocal, io->nall, io->x, io->id, lo, hi, c.rlist, s,
                                    &moved);
    }
    if (!rc) {
        rc = hmd_ff_plan_build_bonded(&c.plan, &c.m, io->nlocal, io->nall, io->ncount, hx, hid,
                                      io->box, c.rlist, c.atom_energies);
    }
    const int finished =
        hmd_ff_pair_list_finish(&c.pl, &moved); /* waited for even after an error */
    rc = rc ? rc : finished;
    rc = rc ? rc : upload_plan(c, s);
    if (rc) {
        c.generation++;
        return rc;
    }
    c.nlocal = c.plan.nlocal;
    c.nall = c.plan.nall;
    c.ncount = c.plan.ncount;
    c.nterm = c.plan.nterm;
    c.nshare = c.plan.nshare;
    std::vector<uintptr_t> key = launch_key(c);
    if (moved || key != c.key) {
        c.generation++;
        c.key = key;
    }
    return HMD_OK;
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
    if (io->atom_energy && !c.atom_energies) {
        return hmd_error_set(HMD_ESOFTWARE, "classical force field on the GPU: per-atom energies "
                                            "asked of a provider made without them");
    }
    cudaStream_t s = static_cast<cudaStream_t>(io->stream);
    const pair_args pa = {c.nlocal,       c.ncount, c.m.ntypes, c.pl.cap,  io->x,
                          c.pl.q,         c.pl.c6,  c.pl.c12,   c.pl.type, c.pl.entry,
                          c.pl.count,     io->id,   c.pl.group, io->f,     ptr<double>(c.centre),
                          io->atom_energy};
    const term_args ta = {c.nterm,
                          io->x,
                          ptr<hmd_top_interaction>(c.inter),
                          ptr<hmd_ff_local>(c.term),
                          ptr<double>(c.tf),
                          ptr<double>(c.te),
                          ptr<double>(c.tv)};
    const int npair_blocks = (int)(((size_t)c.nlocal * 32 + THREADS - 1) / THREADS);
    const int nterm_blocks = (c.nterm + THREADS - 1) / THREADS;
    if (npair_blocks > 0) {
        pairs_kernel<<<npair_blocks, THREADS, 0, s>>>(pa, c.m.nb);
    }
    if (nterm_blocks > 0) {
        terms_kernel<<<nterm_blocks, THREADS, 0, s>>>(ta);
    }
    if (io->atom_energy && c.ncount > 0 && c.nshare > 0) {
        shares_kernel<<<blocks(c.ncount), THREADS, 0, s>>>(
            c.ncount, ptr<int>(c.share_start), ptr<hmd_ff_local>(c.share),
            ptr<hmd_top_interaction>(c.inter), io->x, io->atom_energy);
    }
    const gather_args ga = {c.nall, ptr<int>(c.dgstart), ptr<int>(c.dgslot), ptr<double>(c.tf),
                            io->f};
    reduce_args r;
    r.nlocal = c.nlocal;
    r.nterm = c.nterm;
    r.centre = ptr<double>(c.centre);
    r.te = ptr<double>(c.te);
    r.tv = ptr<double>(c.tv);
    r.term = ptr<hmd_ff_local>(c.term);
    r.inter = ptr<hmd_top_interaction>(c.inter);
    r.parts = ptr<double>(c.parts);
    r.ev = io->ev;
    r.terms = io->terms;
    memcpy(r.slot, c.m.slot, sizeof r.slot);
    const int ngather_blocks = c.nterm > 0 ? blocks(c.nall) : 0; /* no slots without terms */
    sums_kernel<<<ngather_blocks + RED_BLOCKS, THREADS, 0, s>>>(ga, r, ngather_blocks);
    reduce_final<<<1, RED_BLOCKS, 0, s>>>(r);
    return check(cudaGetLastError(), "a kernel launch");
}

unsigned long generation(const void *self)
{
    return ((const ffc *)self)->generation;
}

size_t device_bytes(const void *self)
{
    const ffc *c = static_cast<const ffc *>(self);
    return c->bytes + c->pl.bytes;
}

void destroy(void *self)
{
    ffc *c = static_cast<ffc *>(self);
    if (!c) {
        return;
    }
    for (dbuf *b : {&c->inter, &c->term, &c->share, &c->share_start, &c->dgstart, &c->dgslot,
                    &c->centre, &c->tf, &c->te, &c->tv, &c->parts}) {
        cudaFree(b->p);
    }
    hmd_ff_pair_list_free(&c->pl);
    hmd_ff_model_free(&c->m);
    hmd_ff_plan_free(&c->plan);
    delete c;
}

const hmd_force_provider_ops ops = {
    "classical", HMD_FORCE_DEVICE, cutoff,     terms,   prepare,
    compute,     device_bytes,     generation, destroy,
};

} // namespace

extern "C" int hmd_ff_classical_create_cuda(struct hmd_force_provider *p,
                                            const struct hmd_topology *top,
                                            const struct hmd_ff_settings *s, double rlist,
                                            bool atom_energies)
{
    p->ops = nullptr;
    p->self = nullptr;
    ffc *c = new (std::nothrow) ffc;
    if (!c) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
    }
    int rc = hmd_ff_model_create(&c->m, top, s);
    if (!rc && !(rlist >= c->m.cutoff)) {
        rc = hmd_error_set(HMD_ECONFIG,
                           "classical force field on the GPU: the list cut-off %g Å is below "
                           "the force field's cut-off %g Å",
                           rlist, c->m.cutoff);
    }
    c->rlist = rlist;
    c->atom_energies = atom_energies;
    if (!rc) {
        rc = hmd_ff_pair_list_init(&c->pl, &c->m);
    }
    if (!rc) {
        rc = upload(c->inter, c->m.inter, sizeof(hmd_top_interaction) * (size_t)c->m.ninter, 0,
                    c->bytes);
    }
    if (!rc) {
        rc = grow(c->parts, sizeof(double) * NRED * RED_BLOCKS, c->bytes);
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
