/* gpu.ff_twin: the classical force field's device provider (cuda/ff_classical.h) against the
 * CPU provider (ff/classical.h) on fresh random systems: random topologies (chains of 4 to 7
 * atoms with every interaction kind, random parameters and charges, exclusions from nrexcl 3,
 * ions) in random triclinic cells, under every Coulomb and Lennard-Jones setting (one with an
 * nnp-group, hybrid ML/MM's: the group's own terms left out), on one rank,
 * on 2 x 2 x 1 subdomains and in the replicated scheme (emulated: tests/unit/ff_test_util.h).
 * Energies, every term, the virial, the forces (ghost forces summed onto their owners by id)
 * and per-atom energies within 1e-12 relative. Then determinism: a second compute and a replay
 * of the compute captured in a CUDA graph give bitwise the same forces and energies.
 *
 * With the argument "pairs" (gpu.ff_pairs): the device pair list (cuda/ff/pair_list.cuh)
 * against the host plan's, as sets, on upright and triclinic random boxes, and the same order
 * from a second build.
 *
 * Self-contained (no topology files, no force-field folder). Exit 0 when all agree, 1 otherwise,
 * 77 (skipped) without a CUDA device. The seed (the clock's unless HMD_TEST_SEED) is printed.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda/cuda_internal.cuh"
#include "cuda/ff/classical.h"
#include "cuda/ff/pair_list.cuh"
extern "C" {
#include "core/error.h"
#include "ff/classical.h"
#include "ff/ff_plan.h"
#include "ff_test_util.h"
#include "io/topology.h"
#include "nbr/nbr_list.h"
}

namespace
{

uint64_t rng = 1;

double uniform()
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

double between(double a, double b)
{
    return a + (b - a) * uniform();
}

int failures = 0;

void expect(bool ok, const char *what, double err)
{
    if (!ok) {
        printf("FAIL: %s (%.3e)\n", what, err);
        failures++;
    }
}

#define CUDA_OK(call)                                                                              \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            printf("CUDA error %s: %s\n", #call, cudaGetErrorString(e_));                          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* A random system: topology and positions x [natoms][3] (Å) in box. */
struct test_system {
    hmd_topology top;
    hmd_box box;
    double *x;
};

void add_inter(hmd_topology &t, int &cap, int kind, const int *atoms, const double *p)
{
    if (t.ninter == cap) {
        cap = 2 * cap + 64;
        t.inter = (hmd_top_interaction *)realloc(t.inter, sizeof *t.inter * (size_t)cap);
    }
    hmd_top_interaction &in = t.inter[t.ninter++];
    memset(&in, 0, sizeof in);
    in.kind = kind;
    memcpy(in.atom, atoms, sizeof(int) * (size_t)hmd_top_kind_atoms(kind));
    memcpy(in.p, p, sizeof in.p);
    t.count[kind]++;
}

bool too_close(const test_system &s, const double *y, int n, int skip, double dmin)
{
    for (int k = 0; k < n; k++) {
        if (k == skip) {
            continue;
        }
        double d[3], f[3];
        for (int c = 0; c < 3; c++) {
            d[c] = y[c] - s.x[3 * k + c];
        }
        hmd_box_to_frac(&s.box, d, f);
        for (int c = 0; c < 3; c++) {
            f[c] -= nearbyint(f[c]);
        }
        hmd_box_to_cart(&s.box, f, d);
        if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < dmin * dmin) {
            return true;
        }
    }
    return false;
}

void make_system(test_system &s, int nmol, int nion, bool tilted = true)
{
    memset(&s, 0, sizeof s);
    hmd_topology &t = s.top;
    const double L = 30.0, k = tilted ? 1.0 : 0.0;
    double h[3][3] = {
        {L, 0, 0}, {k * between(-6, 6), L, 0}, {k * between(-6, 6), k * between(-6, 6), L}};
    const bool periodic[3] = {true, true, true};
    hmd_box_init(&s.box, h, periodic);
    /* Lennard-Jones types: comb-rule 2 of random sigma (Å) and epsilon (eV) */
    t.ntypes = 4;
    double sig[4], eps[4];
    for (int k = 0; k < 4; k++) {
        sig[k] = between(2.4, 3.4);
        eps[k] = k == 3 ? 0.0 : between(0.002, 0.02); /* a type without Lennard-Jones */
    }
    t.c6 = (double *)malloc(sizeof(double) * 16);
    t.c12 = (double *)malloc(sizeof(double) * 16);
    for (int a = 0; a < 4; a++) {
        for (int b = 0; b < 4; b++) {
            const double sg = 0.5 * (sig[a] + sig[b]), e = sqrt(eps[a] * eps[b]);
            t.c6[4 * a + b] = 4 * e * pow(sg, 6);
            t.c12[4 * a + b] = 4 * e * pow(sg, 12);
        }
    }
    t.fudge_qq = 0.8333;
    const int cap_atoms = nmol * 7 + nion;
    t.charge = (double *)calloc((size_t)cap_atoms, sizeof(double));
    t.mass = (double *)calloc((size_t)cap_atoms, sizeof(double));
    t.type = (int *)calloc((size_t)cap_atoms, sizeof(int));
    s.x = (double *)malloc(sizeof(double) * 3 * (size_t)cap_atoms);
    int(*bonds)[2] = (int(*)[2])malloc(sizeof(int[2]) * (size_t)cap_atoms);
    int nbonds = 0, cap = 0, n = 0;
    const double deg = 3.14159265358979323846 / 180;
    for (int m = 0; m < nmol; m++) {
        const int len = 4 + (int)(uniform() * 4), first = n;
        double q = 0;
        for (int a = 0; a < len; a++, n++) {
            double y[3];
            int tries = 0;
            do {
                if (a == 0) {
                    const double f[3] = {uniform(), uniform(), uniform()};
                    hmd_box_to_cart(&s.box, f, y);
                } else {
                    double u[3] = {between(-1, 1), between(-1, 1), between(-1, 1)};
                    const double r = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
                    for (int c = 0; c < 3; c++) {
                        y[c] = s.x[3 * (n - 1) + c] + 1.4 * u[c] / r;
                    }
                }
            } while (too_close(s, y, n, a ? n - 1 : -1, a ? 1.8 : 3.0) && ++tries < 200);
            memcpy(s.x + 3 * n, y, sizeof y);
            t.type[n] = (int)(uniform() * 4);
            t.charge[n] = a + 1 < len ? between(-0.6, 0.6) : -q;
            q += t.charge[n];
            t.mass[n] = 12;
        }
        for (int a = first; a + 1 < n; a++) {
            const int at[2] = {a, a + 1};
            const double p[4] = {between(1.2, 1.6), between(10, 40), 0, 0};
            add_inter(t, cap, HMD_TOP_BOND, at, p);
            bonds[nbonds][0] = a;
            bonds[nbonds++][1] = a + 1;
        }
        for (int a = first; a + 2 < n; a++) {
            const int at[3] = {a, a + 1, a + 2};
            const double p[4] = {between(100, 125) * deg, between(2, 8), between(2.2, 2.6),
                                 between(5, 20)};
            add_inter(t, cap, uniform() < 0.5 ? HMD_TOP_ANGLE : HMD_TOP_UREY_BRADLEY, at, p);
        }
        for (int a = first; a + 3 < n; a++) {
            const int at[4] = {a, a + 1, a + 2, a + 3};
            const int nterms = 1 + (int)(uniform() * 3);
            for (int k = 0; k < nterms; k++) {
                const double p[4] = {between(-180, 180) * deg, between(0.01, 0.2),
                                     (double)(1 + (int)(uniform() * 4)), 0};
                add_inter(t, cap, HMD_TOP_PROPER, at, p);
            }
            const int pr[2] = {a, a + 3};
            const double pp[4] = {between(1, 10), between(1e3, 5e3), 0, 0};
            add_inter(t, cap, HMD_TOP_PAIR, pr, pp);
        }
        const int imp[4] = {first + 1, first, first + 2, first + 3};
        const double pi[4] = {between(-30, 30) * deg, between(0.5, 3), 0, 0};
        add_inter(t, cap, HMD_TOP_IMPROPER, imp, pi);
        const double pp[4] = {180 * deg, between(0.05, 0.3), 2, 0};
        add_inter(t, cap, HMD_TOP_PERIODIC_IMPROPER, imp, pp);
    }
    for (int k = 0; k < nion; k++, n++) {
        double y[3];
        do {
            const double f[3] = {uniform(), uniform(), uniform()};
            hmd_box_to_cart(&s.box, f, y);
        } while (too_close(s, y, n, -1, 3.0));
        memcpy(s.x + 3 * n, y, sizeof y);
        t.type[n] = k % 3;
        t.charge[n] = k % 2 ? -1.0 : 1.0;
        t.mass[n] = 23;
    }
    t.natoms = n;
    hmd_topology_exclusions(n, nbonds, (const int(*)[2])bonds, 3, 0, NULL, &t.excl_start, &t.excl);
    free(bonds);
}

/* Sums of one evaluation over the ranks of a grid (like a run: ghost forces onto owners). */
struct sums {
    double e, terms[HMD_FORCE_MAX_TERMS], w[9];
    double *f, *ae;
};

/* One rank's evaluation on the host (dev = false) or the device. */
int rank_eval(hmd_force_provider *p, bool dev, const ff_rank &r, int ncentre, const hmd_box *box,
              double rlist, cudaStream_t stream, double *f, double *ev, double *terms, double *ae)
{
    const int nall = r.nall, nterms = HMD_FORCE_MAX_TERMS;
    if (!dev) {
        hmd_nbr_list nl = {};
        int rc = hmd_nbr_list_build(&nl, box, ncentre, nall, r.x, rlist);
        hmd_force_io io = ff_rank_io(&r, ncentre, box, &nl, f, ev);
        io.terms = terms;
        io.atom_energy = ae;
        if (!rc) {
            rc = hmd_force_provider_prepare(p, &io);
        }
        if (!rc) {
            rc = hmd_force_provider_compute(p, &io);
        }
        hmd_nbr_list_free(&nl);
        return rc;
    }
    double *dx, *df, *dev_ev, *dterms, *dae;
    int64_t *did;
    CUDA_OK(cudaMalloc(&dx, sizeof(double) * 3 * nall + 8));
    CUDA_OK(cudaMalloc(&did, sizeof(int64_t) * nall + 8));
    CUDA_OK(cudaMalloc(&df, sizeof(double) * 3 * nall + 8));
    CUDA_OK(cudaMalloc(&dev_ev, sizeof(double) * HMD_FORCE_NEV));
    CUDA_OK(cudaMalloc(&dterms, sizeof(double) * nterms));
    CUDA_OK(cudaMalloc(&dae, sizeof(double) * ncentre + 8));
    CUDA_OK(cudaMemcpy(dx, r.x, sizeof(double) * 3 * nall, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(did, r.id, sizeof(int64_t) * nall, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(df, 0, sizeof(double) * 3 * nall + 8));
    CUDA_OK(cudaMemset(dev_ev, 0, sizeof(double) * HMD_FORCE_NEV));
    CUDA_OK(cudaMemset(dterms, 0, sizeof(double) * nterms));
    CUDA_OK(cudaMemset(dae, 0, sizeof(double) * ncentre + 8));
    hmd_force_io io = ff_rank_io(&r, ncentre, box, NULL, df, dev_ev); /* then device arrays */
    io.x = dx;
    io.id = did;
    io.terms = dterms;
    io.atom_energy = dae;
    io.stream = stream;
    int rc = hmd_force_provider_prepare(p, &io);
    if (!rc) {
        rc = hmd_force_provider_compute(p, &io);
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(f, df, sizeof(double) * 3 * nall, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(ev, dev_ev, sizeof(double) * HMD_FORCE_NEV, cudaMemcpyDeviceToHost));
    /* added, as the host provider adds: the caller sums the terms over subdomains */
    double mine[HMD_FORCE_MAX_TERMS];
    CUDA_OK(cudaMemcpy(mine, dterms, sizeof(double) * nterms, cudaMemcpyDeviceToHost));
    for (int t = 0; t < nterms; t++) {
        terms[t] += mine[t];
    }
    CUDA_OK(cudaMemcpy(ae, dae, sizeof(double) * ncentre, cudaMemcpyDeviceToHost));
    for (void *q :
         {(void *)dx, (void *)did, (void *)df, (void *)dev_ev, (void *)dterms, (void *)dae}) {
        cudaFree(q);
    }
    return rc;
}

void evaluate(hmd_force_provider *p, bool dev, const test_system &s, const int grid[3],
              bool replicated, double rlist, cudaStream_t stream, sums &out)
{
    const int n = s.top.natoms;
    memset(&out, 0, sizeof out);
    out.f = (double *)calloc(3 * (size_t)n, sizeof(double));
    out.ae = (double *)calloc((size_t)n, sizeof(double));
    for (int c = 0; c < grid[0] * grid[1] * grid[2]; c++) {
        const int cell[3] = {c % grid[0], c / grid[0] % grid[1], c / (grid[0] * grid[1])};
        double lo[3], hi[3];
        for (int d = 0; d < 3; d++) {
            lo[d] = (double)cell[d] / grid[d];
            hi[d] = (double)(cell[d] + 1) / grid[d];
        }
        ff_rank r;
        ff_rank_make(&r, &s.box, n, s.x, lo, hi, replicated ? 2 * rlist : rlist);
        const int ncentre = replicated ? r.nall : r.nlocal;
        double *f = (double *)calloc(3 * (size_t)r.nall + 3, sizeof(double));
        double *ae = (double *)calloc((size_t)ncentre + 1, sizeof(double));
        double ev[HMD_FORCE_NEV] = {0};
        if (rank_eval(p, dev, r, ncentre, &s.box, rlist, stream, f, ev, out.terms, ae)) {
            printf("FAIL: %s evaluation: %s\n", dev ? "GPU" : "CPU", hmd_error_msg());
            exit(1);
        }
        for (int k = 0; k < r.nall; k++) {
            if (k < r.nlocal || !replicated) {
                for (int q = 0; q < 3; q++) {
                    out.f[3 * r.id[k] + q] += f[3 * k + q];
                }
            }
            if (k < r.nlocal) {
                out.ae[r.id[k]] += ae[k];
            }
        }
        out.e += ev[HMD_FORCE_EV_ENERGY];
        for (int q = 0; q < 9; q++) {
            out.w[q] += ev[HMD_FORCE_EV_VIRIAL + q];
        }
        free(f);
        free(ae);
        ff_rank_free(&r);
    }
}

void compare(const sums &g, const sums &c, int n, int nterms, const char *what)
{
    const double ee = fabs(g.e - c.e) / fabs(c.e);
    double et = 0, scale = 0;
    for (int t = 0; t < nterms; t++) {
        et = fmax(et, fabs(g.terms[t] - c.terms[t]));
        scale += fabs(c.terms[t]);
    }
    et /= scale;
    const double ef = ff_max_diff(g.f, c.f, 3 * (size_t)n) / ff_max_abs(c.f, 3 * (size_t)n);
    const double ew = ff_max_diff(g.w, c.w, 9) / ff_max_abs(c.w, 9);
    const double ea = ff_max_diff(g.ae, c.ae, (size_t)n) / ff_max_abs(c.ae, (size_t)n);
    printf("  %s: energy %.1e, terms %.1e, forces %.1e, virial %.1e, atom energies %.1e\n", what,
           ee, et, ef, ew, ea);
    expect(ee <= 1e-12, "energy", ee);
    expect(et <= 1e-12, "terms", et);
    expect(ef <= 1e-12, "forces", ef);
    expect(ew <= 1e-12, "virial", ew);
    expect(ea <= 1e-12, "atom energies", ea);
}

/* Determinism on one rank: compute twice, and replay the compute as a CUDA graph. */
void check_bitwise(hmd_force_provider *p, const test_system &s, double rlist, cudaStream_t stream)
{
    const int n = s.top.natoms;
    ff_rank r;
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    ff_rank_make(&r, &s.box, n, s.x, lo, hi, rlist);
    const size_t fbytes = sizeof(double) * 3 * r.nall;
    double *dx, *df, *dev_ev, *dterms, *dae;
    int64_t *did;
    CUDA_OK(cudaMalloc(&dx, fbytes));
    CUDA_OK(cudaMalloc(&did, sizeof(int64_t) * r.nall));
    CUDA_OK(cudaMalloc(&df, fbytes));
    CUDA_OK(cudaMalloc(&dev_ev, sizeof(double) * HMD_FORCE_NEV));
    CUDA_OK(cudaMalloc(&dterms, sizeof(double) * HMD_FORCE_MAX_TERMS));
    CUDA_OK(cudaMalloc(&dae, sizeof(double) * n));
    CUDA_OK(cudaMemcpy(dx, r.x, fbytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(did, r.id, sizeof(int64_t) * r.nall, cudaMemcpyHostToDevice));
    hmd_force_io io = ff_rank_io(&r, r.nlocal, &s.box, NULL, df, dev_ev);
    io.x = dx;
    io.id = did;
    io.terms = dterms;
    io.atom_energy = dae;
    io.stream = stream;
    if (hmd_force_provider_prepare(p, &io)) {
        printf("FAIL: prepare: %s\n", hmd_error_msg());
        exit(1);
    }
    const size_t nout = 3 * (size_t)r.nall + HMD_FORCE_NEV + HMD_FORCE_MAX_TERMS + (size_t)n;
    double *out[3];
    for (int run = 0; run < 3; run++) {
        CUDA_OK(cudaMemsetAsync(df, 0, fbytes, stream));
        CUDA_OK(cudaMemsetAsync(dev_ev, 0, sizeof(double) * HMD_FORCE_NEV, stream));
        CUDA_OK(cudaMemsetAsync(dterms, 0, sizeof(double) * HMD_FORCE_MAX_TERMS, stream));
        CUDA_OK(cudaMemsetAsync(dae, 0, sizeof(double) * n, stream));
        if (run < 2) {
            if (hmd_force_provider_compute(p, &io)) {
                printf("FAIL: compute: %s\n", hmd_error_msg());
                exit(1);
            }
        } else {
            cudaGraph_t graph;
            cudaGraphExec_t exec;
            CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
            const int rc = hmd_force_provider_compute(p, &io);
            CUDA_OK(cudaStreamEndCapture(stream, &graph));
            if (rc) {
                printf("FAIL: compute under capture: %s\n", hmd_error_msg());
                exit(1);
            }
            CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaGraphExecDestroy(exec));
            CUDA_OK(cudaGraphDestroy(graph));
        }
        CUDA_OK(cudaStreamSynchronize(stream));
        out[run] = (double *)malloc(sizeof(double) * nout);
        CUDA_OK(cudaMemcpy(out[run], df, fbytes, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(out[run] + 3 * r.nall, dev_ev, sizeof(double) * HMD_FORCE_NEV,
                           cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(out[run] + 3 * r.nall + HMD_FORCE_NEV, dterms,
                           sizeof(double) * HMD_FORCE_MAX_TERMS, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(out[run] + 3 * r.nall + HMD_FORCE_NEV + HMD_FORCE_MAX_TERMS, dae,
                           sizeof(double) * n, cudaMemcpyDeviceToHost));
    }
    const bool again = !memcmp(out[0], out[1], sizeof(double) * nout);
    const bool graph = !memcmp(out[0], out[2], sizeof(double) * nout);
    printf("  bitwise: second compute %s, CUDA graph replay %s; %zu bytes on the device\n",
           again ? "identical" : "DIFFERENT", graph ? "identical" : "DIFFERENT",
           hmd_force_provider_device_bytes(p));
    expect(again, "a second compute differs", 0);
    expect(graph, "the graph replay differs", 0);
    for (int run = 0; run < 3; run++) {
        free(out[run]);
    }
    for (void *q :
         {(void *)dx, (void *)did, (void *)df, (void *)dev_ev, (void *)dterms, (void *)dae}) {
        cudaFree(q);
    }
    ff_rank_free(&r);
}

/* One rank's device pair list (cuda/ff/pair_list.cuh) against the host plan's full-mode pairs
 * (ff/ff_plan.c from the host neighbour list) as sets, centre by centre, excluded partners
 * coded alike; then a second build gives the same list in the same order. */
void check_pairs(const test_system &s, const hmd_ff_settings &set, const int grid[3],
                 const char *what, cudaStream_t stream)
{
    const int n = s.top.natoms;
    const double rlist = fmax(set.rcoulomb, set.rvdw) + 1.0;
    hmd_ff_model m;
    if (hmd_ff_model_create(&m, &s.top, &set)) {
        printf("FAIL: model: %s\n", hmd_error_msg());
        failures++;
        return;
    }
    for (int c = 0; c < grid[0] * grid[1] * grid[2]; c++) {
        const int cell[3] = {c % grid[0], c / grid[0] % grid[1], c / (grid[0] * grid[1])};
        double lo[3], hi[3];
        for (int d = 0; d < 3; d++) {
            lo[d] = (double)cell[d] / grid[d];
            hi[d] = (double)(cell[d] + 1) / grid[d];
        }
        ff_rank r;
        ff_rank_make(&r, &s.box, n, s.x, lo, hi, rlist);
        hmd_nbr_list nl = {};
        hmd_ff_plan plan = {};
        if (hmd_nbr_list_build(&nl, &s.box, r.nlocal, r.nall, r.x, rlist) ||
            hmd_ff_plan_build(&plan, &m, true, r.nlocal, r.nall, r.nlocal, r.x, r.id, &s.box,
                              &nl)) {
            printf("FAIL: host plan: %s\n", hmd_error_msg());
            failures++;
            return;
        }
        double *dx;
        int64_t *did;
        CUDA_OK(cudaMalloc(&dx, sizeof(double) * 3 * r.nall + 8));
        CUDA_OK(cudaMalloc(&did, sizeof(int64_t) * r.nall + 8));
        CUDA_OK(cudaMemcpy(dx, r.x, sizeof(double) * 3 * r.nall, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(did, r.id, sizeof(int64_t) * r.nall, cudaMemcpyHostToDevice));
        hmd_ff_pair_list pl;
        double blo[3], bhi[3];
        hmd_cuda_bounds(r.nall, r.x, blo, bhi);
        std::vector<int> first, count(r.nlocal);
        bool same_order = true;
        for (int build = 0; build < 2; build++) {
            bool moved = false;
            if ((build == 0 && hmd_ff_pair_list_init(&pl, &m)) ||
                hmd_ff_pair_list_build(&pl, r.nlocal, r.nall, dx, did, blo, bhi, rlist, stream,
                                       &moved)) {
                printf("FAIL: device pair list: %s\n", hmd_error_msg());
                failures++;
                return;
            }
            std::vector<int> entry((size_t)r.nlocal * pl.cap);
            CUDA_OK(
                cudaMemcpy(count.data(), pl.count, sizeof(int) * r.nlocal, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(entry.data(), pl.entry, sizeof(int) * entry.size(),
                               cudaMemcpyDeviceToHost));
            if (build == 0) {
                first = entry;
                continue;
            }
            same_order = entry == first;
        }
        int bad = 0;
        for (int i = 0; i < r.nlocal; i++) {
            std::vector<int> want(plan.pair + plan.pair_start[i],
                                  plan.pair + plan.pair_start[i + 1]);
            std::vector<int> got(first.begin() + (size_t)i * pl.cap,
                                 first.begin() + (size_t)i * pl.cap + count[i]);
            std::sort(want.begin(), want.end());
            std::sort(got.begin(), got.end());
            if (want != got && bad++ == 0) {
                printf("FAIL: %s, rank %d: centre %d has %zu partners on the GPU, %zu on the "
                       "host\n",
                       what, c, i, got.size(), want.size());
            }
        }
        failures += bad ? 1 : 0;
        if (!same_order) {
            printf("FAIL: %s, rank %d: a second build ordered the partners differently\n", what, c);
            failures++;
        }
        hmd_ff_pair_list_free(&pl);
        cudaFree(dx);
        cudaFree(did);
        hmd_ff_plan_free(&plan);
        hmd_nbr_list_free(&nl);
        ff_rank_free(&r);
    }
    hmd_ff_model_free(&m);
}

/* gpu.ff_pairs: the device pair list against the host's on random boxes, upright and
 * triclinic, on one rank and on 2 x 2 x 1 subdomains. */
int pairs_main(cudaStream_t stream)
{
    const hmd_ff_settings set = {HMD_FF_COULOMB_REACTION_FIELD, true, 9.0, 1.0,    0.0,
                                 HMD_FF_VDW_FORCE_SWITCH,       9.0,  7.5, nullptr};
    for (int tilted = 0; tilted < 2; tilted++) {
        for (int rep = 0; rep < 2; rep++) {
            test_system s;
            make_system(s, 200 + (int)(uniform() * 100), 20, tilted);
            const int one[3] = {1, 1, 1}, four[3] = {2, 2, 1};
            char what[96];
            snprintf(what, sizeof what, "%s box %d (%d atoms), one rank",
                     tilted ? "triclinic" : "upright", rep, s.top.natoms);
            check_pairs(s, set, one, what, stream);
            snprintf(what, sizeof what, "%s box %d (%d atoms), 2 x 2 x 1",
                     tilted ? "triclinic" : "upright", rep, s.top.natoms);
            check_pairs(s, set, four, what, stream);
            free(s.x);
            hmd_topology_free(&s.top);
        }
    }
    printf("gpu.ff_pairs: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}

} // namespace

/* No argument: gpu.ff_twin; "pairs": gpu.ff_pairs. */
int main(int argc, char **argv)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("gpu.ff_twin: no CUDA device, skipped\n");
        return 77;
    }
    const char *seed = getenv("HMD_TEST_SEED");
    rng = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    rng = rng ? rng : 1;
    printf("gpu.ff_%s: seed %llu (set HMD_TEST_SEED to repeat)\n", argc > 1 ? argv[1] : "twin",
           (unsigned long long)rng);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    if (argc > 1 && !strcmp(argv[1], "pairs")) {
        return pairs_main(stream);
    }
    struct {
        const char *name;
        hmd_ff_settings s;
        bool group; /* hybrid ML/MM: the first third of the atoms as the nnp-group */
    } cases[] = {
        {"reaction field (infinity), force-switch",
         {HMD_FF_COULOMB_REACTION_FIELD, true, 9.0, 1.0, 0.0, HMD_FF_VDW_FORCE_SWITCH, 9.0, 7.5,
          nullptr},
         false},
        {"reaction field (infinity), force-switch, nnp-group",
         {HMD_FF_COULOMB_REACTION_FIELD, true, 9.0, 1.0, 0.0, HMD_FF_VDW_FORCE_SWITCH, 9.0, 7.5,
          nullptr},
         true},
        {"reaction field 78, potential-switch",
         {HMD_FF_COULOMB_REACTION_FIELD, true, 9.0, 1.0, 78.0, HMD_FF_VDW_POTENTIAL_SWITCH, 9.0,
          7.0, nullptr},
         false},
        {"cut-off, potential-shift, epsilon-r 2",
         {HMD_FF_COULOMB_CUTOFF, true, 8.0, 2.0, 0.0, HMD_FF_VDW_POTENTIAL_SHIFT, 9.0, 0.0,
          nullptr},
         false},
        {"cut-off, no modifiers",
         {HMD_FF_COULOMB_CUTOFF, false, 9.0, 1.0, 0.0, HMD_FF_VDW_NONE, 8.5, 0.0, nullptr},
         false},
    };
    for (const auto &k : cases) {
        test_system s;
        make_system(s, 260, 20);
        printf("%s: %d atoms, %d interactions\n", k.name, s.top.natoms, s.top.ninter);
        hmd_force_provider cpu, gpu;
        const double rlist = fmax(k.s.rcoulomb, k.s.rvdw) + 1.0;
        hmd_ff_settings set = k.s;
        std::vector<unsigned char> group((size_t)s.top.natoms, 0);
        if (k.group) {
            std::fill(group.begin(), group.begin() + s.top.natoms / 3, (unsigned char)1);
            set.nnp_group = group.data();
        }
        if (hmd_ff_classical_create(&cpu, &s.top, &set) ||
            hmd_ff_classical_create_cuda(&gpu, &s.top, &set, rlist, true)) {
            printf("FAIL: create: %s\n", hmd_error_msg());
            return 1;
        }
        const char *names[HMD_FORCE_MAX_TERMS];
        const int nterms = hmd_force_provider_terms(&cpu, names);
        const struct {
            int grid[3];
            bool replicated;
            const char *what;
        } layouts[] = {{{1, 1, 1}, false, "one rank"},
                       {{2, 2, 1}, false, "2 x 2 x 1 subdomains"},
                       {{2, 1, 1}, true, "2 x 1 x 1, replicated"}};
        for (const auto &l : layouts) {
            sums c, g;
            evaluate(&cpu, false, s, l.grid, l.replicated, rlist, stream, c);
            evaluate(&gpu, true, s, l.grid, l.replicated, rlist, stream, g);
            compare(g, c, s.top.natoms, nterms, l.what);
            free(c.f);
            free(c.ae);
            free(g.f);
            free(g.ae);
        }
        check_bitwise(&gpu, s, rlist, stream);
        hmd_force_provider_destroy(&cpu);
        hmd_force_provider_destroy(&gpu);
        free(s.x);
        hmd_topology_free(&s.top);
    }
    cudaStreamDestroy(stream);
    printf("gpu.ff_twin: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
