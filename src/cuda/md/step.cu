/* The MD step resident on the GPU (cuda_api.h hmd_cuda_md): the atoms are the state's
 * (cuda/md/state.cu), forces come from device providers, ghosts from a device halo transport; a
 * step is a program of pieces (first half step, forward halo, forces cleared once and added by
 * every provider, reverse halo, second half step, thermostat and centre-of-mass motion with
 * their global sums, predicted displacement); with a transport whose calls can be recorded
 * (self, nvshmem) a step that keeps its neighbour list is one CUDA graph, with one that cannot
 * (mpi: the host moves the bytes) the device pieces between two transport calls are one graph
 * each. Twins of md/integrate.c and
 * md/thermostat.c, with the same random numbers (core/rng_draw.h, core/vrescale_draw.h); sums
 * run in a fixed order. */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

#include <algorithm>
#include <functional>
#include <string.h>
#include <vector>

extern "C" {
#include "comm/comm.h"
#include "core/timer.h"
#include "core/units.h"
}
#include "core/rng_draw.h"
#include "core/vrescale_draw.h"

namespace
{

constexpr int THREADS = 256;
constexpr int MAX_PARTS = 1024; /* blocks of a reduction's first stage */

/* device scalars */
enum {
    S_MAXD2, /* largest squared displacement from the list positions (bits of a double) */
    S_WORK,  /* kinetic energy the thermostat added since the start (eV) */
    S_KE,    /* kinetic energy of the last reduction (eV) */
    S_ALPHA, /* v-rescale factor of this step */
    S_COM,   /* centre-of-mass velocity, 3 values */
    S_NSCALAR = S_COM + 3,
};

unsigned blocks(size_t n)
{
    return (unsigned)std::max<size_t>(1, (n + THREADS - 1) / THREADS);
}

unsigned parts(size_t n)
{
    return std::min<unsigned>(blocks(n), MAX_PARTS);
}

__global__ void advance_step(long long *step)
{
    *step += 1;
}

/* The halo clock (config halo_clock): clock[0] the last stamp; a stamp into CLOCK_* adds the
 * time since the last stamp there (ns of the GPU's global timer); CLOCK_START only stamps. */
enum {
    CLOCK_START,
    CLOCK_FORWARD,
    CLOCK_PROVIDERS,
    CLOCK_REVERSE,
    CLOCK_FORWARDS, /* forward halos timed */
    CLOCK_REVERSES, /* reverse halos timed */
    CLOCK_N
};

__global__ void clock_stamp(unsigned long long *clock, int into)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (into != CLOCK_START) {
        clock[into] += t - clock[CLOCK_START];
    }
    if (into == CLOCK_FORWARD || into == CLOCK_REVERSE) {
        clock[into == CLOCK_FORWARD ? CLOCK_FORWARDS : CLOCK_REVERSES] += 1;
    }
    clock[CLOCK_START] = t;
}

__global__ void first_half(int n, double dt, const double *k, const double *f, double *v, double *x)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * n) {
        v[e] += k[e / 3] * f[e];
        x[e] += dt * v[e];
    }
}

__global__ void second_half(int n, const double *k, const double *f, double *v)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * n) {
        v[e] += k[e / 3] * f[e];
    }
}

/* A fixed-order sum over atoms, in one launch: block b writes its partials part[b][c], and
 * the last block to finish (counted in *done, which it sets back to zero for the next launch)
 * adds them in block order into loc[c], so the result does not depend on which block ends
 * last. what = 0: kinetic energy sum m v.v (1 value); what = 1: momentum m v and mass (4
 * values). This rank's sums; the global sum over ranks follows (struct
 * hmd_halo_transport_ops.sum). Only at steps that are multiples of `every` (the others leave
 * loc as it was: nothing reads it then). */
__global__ void local_sums(int n, int what, const double *mass, const double *v, double *part,
                           unsigned *done, double *loc, const long long *step, int every)
{
    __shared__ double sh[4][THREADS];
    __shared__ bool last;
    if (every > 1 && *step % every != 0) { /* the same for every block: none counts */
        return;
    }
    double acc[4] = {0, 0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const double m = mass[i], *vi = v + 3 * i;
        if (what == 0) {
            acc[0] += m * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
        } else {
            acc[0] += m * vi[0];
            acc[1] += m * vi[1];
            acc[2] += m * vi[2];
            acc[3] += m;
        }
    }
    for (int c = 0; c < 4; c++) {
        sh[c][threadIdx.x] = acc[c];
    }
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) {
            for (int c = 0; c < 4; c++) {
                sh[c][threadIdx.x] += sh[c][threadIdx.x + w];
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        for (int c = 0; c < 4; c++) {
            part[4 * blockIdx.x + c] = sh[c][0];
        }
        __threadfence(); /* the partials are seen before the count that says they are there */
        last = atomicAdd(done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x < 4) {
        __threadfence();
        double s = 0.0;
        for (unsigned b = 0; b < gridDim.x; b++) {
            s += __ldcg(&part[4 * b + threadIdx.x]); /* from L2: other blocks wrote them */
        }
        loc[threadIdx.x] = s;
        if (threadIdx.x == 0) {
            *done = 0;
        }
    }
}

/* The kinetic energy into S_KE from the global sum tot[0] of m v.v; v-rescale's factor into
 * S_ALPHA and its work into S_WORK (thermostat.c hmd_thermostat_vrescale_cpu). One thread. */
__global__ void kinetic_and_vrescale(const double *tot, bool vrescale, double kin_ref, double ndof,
                                     double c, unsigned long long seed, const long long *step,
                                     double *scal)
{
    const double kin = 0.5 * HMD_MVV2E * tot[0];
    scal[S_KE] = kin;
    if (!vrescale) {
        return;
    }
    double alpha = 1.0;
    if (kin > 0.0 && ndof > 0.0) {
        double kin_new = hmd_vrescale_kinetic_draw(kin, kin_ref, ndof, c, seed, *step);
        kin_new = kin_new < 0.0 ? 0.0 : kin_new;
        alpha = sqrt(kin_new / kin);
        scal[S_WORK] += kin_new - kin;
    }
    scal[S_ALPHA] = alpha;
}

__global__ void scale_velocities(int n, const double *scal, double *v)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * n) {
        v[e] *= scal[S_ALPHA];
    }
}

/* Langevin friction and noise (thermostat.c hmd_thermostat_langevin_cpu). */
__global__ void langevin(int n, double c1, double c2, double kt, unsigned long long seed,
                         const long long *step, const long long *id, const double *mass, double *v)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double xi[3];
        hmd_rng_normals_draw(seed, (uint64_t)id[i], (uint64_t)*step, HMD_RNG_LANGEVIN, 3, xi);
        const double sigma = sqrt(kt / (mass[i] * HMD_MVV2E));
        for (int d = 0; d < 3; d++) {
            v[3 * i + d] = c1 * v[3 * i + d] + c2 * sigma * xi[d];
        }
    }
}

/* After Langevin's noise: its work is the kinetic energy now (from the global sum tot[0]) minus
 * S_KE (before). */
__global__ void langevin_work(const double *tot, double *scal)
{
    const double kin = 0.5 * HMD_MVV2E * tot[0];
    scal[S_WORK] += kin - scal[S_KE];
}

/* Centre-of-mass velocity into S_COM on steps that are multiples of nstcomm, else zero, from
 * the global sums tot of the momentum (3) and the mass. */
__global__ void com_velocity(const double *tot, int nstcomm, const long long *step, double *scal)
{
    const double mtot = tot[3];
    const bool now = *step % nstcomm == 0 && mtot > 0.0;
    for (int d = 0; d < 3; d++) {
        scal[S_COM + d] = now ? tot[d] / mtot : 0.0;
    }
}

/* v minus the centre-of-mass velocity (com_velocity's, zero at other steps: skipped). */
__global__ void remove_com(int n, const double *scal, const long long *step, int nstcomm, double *v)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * n && *step % nstcomm == 0) {
        v[e] -= scal[S_COM + e % 3];
    }
}

/* Largest squared distance the next first half step will move an atom from its position at
 * the last list build, kept as the maximum since that build (non-negative doubles order as
 * their bits). The block's maximum first, then one atomic per block: one atomic per atom on
 * the same word took 20 us at 24,576 atoms (H200). Launched with THREADS per block. */
__global__ void predict_displacement(int n, double dt, const double *k, const double *f,
                                     const double *v, const double *x, const double *x_build,
                                     double *scal)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long bits = 0; /* 0.0 */
    if (i < n) {
        double d2 = 0.0;
        for (int d = 0; d < 3; d++) {
            const double vn = v[3 * i + d] + k[i] * f[3 * i + d];
            const double dx = x[3 * i + d] + dt * vn - x_build[3 * i + d];
            d2 += dx * dx;
        }
        bits = (unsigned long long)__double_as_longlong(d2);
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, bits, o);
        bits = other > bits ? other : bits;
    }
    __shared__ unsigned long long warp_max[THREADS / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        warp_max[warp] = bits;
    }
    __syncthreads();
    if (warp == 0) {
        bits = lane < THREADS / 32 ? warp_max[lane] : 0ull;
        for (int o = 16; o > 0; o >>= 1) {
            const unsigned long long other = __shfl_down_sync(0xffffffffu, bits, o);
            bits = other > bits ? other : bits;
        }
        if (lane == 0 && bits > 0) {
            atomicMax((unsigned long long *)&scal[S_MAXD2], bits);
        }
    }
}

} // namespace

/* A piece of the step: device work that may be recorded into a graph, or a transport call that
 * the host must make itself (a transport that cannot be recorded). */
struct step_piece {
    bool host;
    std::function<int()> run;
};

struct hmd_cuda_md {
    hmd_cuda_state *state;         /* borrowed */
    hmd_force_provider *providers; /* borrowed [nproviders] */
    int nproviders;
    hmd_halo_transport *halo; /* borrowed */
    hmd_cuda_md_config c;
    int nlocal, cap_local;
    int term_offset[HMD_CUDA_MAX_TERMS + 1]; /* provider k's energy terms in ev + HMD_FORCE_NEV */
    int nterms;
    double *k, *x_build;       /* [cap_local] dt/2m, [cap_local][3] positions at the list */
    double *scal, *part, *ev;  /* scalars, reduction partials, energies (device) */
    unsigned *done;            /* local_sums' count of finished blocks (device, zero between) */
    double *loc, *tot;         /* [4] this rank's sums and the global ones (device) */
    double *pinned;            /* host copy of the scalars and energies */
    unsigned long long *clock; /* [CLOCK_N] the halo clock (device), NULL when off */
    hmd_box box;               /* the cell of the forward halo */
    size_t bytes;
    /* the recorded step: graphs of its device pieces, and the order of graphs (>= 0) and host
     * pieces (-1 - index into `program`) */
    std::vector<step_piece> program;
    std::vector<cudaGraph_t> graphs;
    std::vector<cudaGraphExec_t> execs;
    std::vector<int> schedule;
    cudaEvent_t forces_begin, forces_end; /* a list step's forces and second half */
    std::vector<unsigned long> graph_key; /* the generations and counts it was made for */
};

namespace
{

constexpr int PINNED = S_NSCALAR + HMD_FORCE_NEV + HMD_CUDA_MAX_TERMS;

template <typename T> int alloc(hmd_cuda_md *md, T **p, size_t n)
{
    HMD_CUDA_CHECK(cudaMalloc((void **)p, std::max<size_t>(n, 1) * sizeof(T)));
    md->bytes += n * sizeof(T);
    return HMD_OK;
}

cudaStream_t stream_of(const hmd_cuda_md *md)
{
    return (cudaStream_t)hmd_cuda_state_atoms(md->state).stream;
}

/* The providers' io over the state. */
hmd_force_io device_io(const hmd_cuda_md *md, int k)
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    hmd_force_io io = {};
    io.nlocal = a.nlocal;
    io.nall = a.nall;
    io.ncount = a.nlocal;
    io.x = a.x;
    io.type = a.type;
    io.id = (const int64_t *)a.id;
    io.type0 = md->c.type0;
    io.box = &md->box;
    io.f = a.f;
    io.ev = md->ev;
    io.terms = md->ev + HMD_FORCE_NEV + md->term_offset[k];
    io.stream = a.stream;
    return io;
}

/* ---- the pieces ---- */

/* Queues a stamp of the halo clock (nothing when it is off). */
int stamp(hmd_cuda_md *md, int into)
{
    if (md->clock) {
        clock_stamp<<<1, 1, 0, stream_of(md)>>>(md->clock, into);
        HMD_CUDA_LAUNCHED("clock_stamp");
    }
    return HMD_OK;
}

int launch_first_half(hmd_cuda_md *md)
{
    cudaStream_t st = stream_of(md);
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    advance_step<<<1, 1, 0, st>>>(a.step);
    HMD_CUDA_LAUNCHED("advance_step");
    first_half<<<blocks(3 * md->nlocal), THREADS, 0, st>>>(md->nlocal, md->c.dt, md->k, a.f, a.v,
                                                           a.x);
    HMD_CUDA_LAUNCHED("first_half");
    return HMD_OK;
}

/* Forces cleared once, every provider adds. */
int launch_providers(hmd_cuda_md *md)
{
    cudaStream_t st = stream_of(md);
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    /* over the capacity, so that the recorded size stays right while the arrays stay */
    HMD_CUDA_CHECK(cudaMemsetAsync(a.f, 0, sizeof(double) * 3 * a.cap_all, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(md->ev, 0, sizeof(double) * (HMD_FORCE_NEV + md->nterms), st));
    int rc = HMD_OK;
    for (int k = 0; k < md->nproviders && !rc; k++) {
        const hmd_force_io io = device_io(md, k);
        rc = hmd_force_provider_compute(&md->providers[k], &io);
    }
    return rc;
}

/* This rank's sums of m v.v (what = 0) or of the momentum and mass (what = 1) into md->loc. */
int launch_local_sums(hmd_cuda_md *md, int what)
{
    cudaStream_t st = stream_of(md);
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    const unsigned np = parts(md->nlocal);
    /* the kinetic energy at every step, the momentum at centre-of-mass steps */
    local_sums<<<np, THREADS, 0, st>>>(md->nlocal, what, a.mass, a.v, md->part, md->done, md->loc,
                                       a.step, what == 1 ? md->c.nstcomm : 1);
    HMD_CUDA_LAUNCHED("local_sums");
    return HMD_OK;
}

/* Queues predict_displacement over the home atoms, from their positions, velocities and forces
 * after a second half step (or after the first evaluation). */
int launch_predict(hmd_cuda_md *md)
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    predict_displacement<<<blocks(md->nlocal), THREADS, 0, stream_of(md)>>>(
        md->nlocal, md->c.dt, md->k, a.f, a.v, a.x, md->x_build, md->scal);
    HMD_CUDA_LAUNCHED("predict_displacement");
    return HMD_OK;
}

/* The pieces from the forces to the end of the step (initial: the forces of the first step and
 * the prediction only): providers, reverse halo, second half step, thermostat, centre-of-mass
 * motion, predicted displacement. */
void forces_and_second_half(hmd_cuda_md *md, bool initial, std::vector<step_piece> &prog)
{
    const hmd_cuda_md_config &c = md->c;
    hmd_halo_transport *halo = md->halo;
    auto dev = [&](std::function<int()> fn) { prog.push_back({false, fn}); };
    auto coll = [&](std::function<int()> fn) {
        prog.push_back({!hmd_halo_transport_capturable(halo), fn});
    };
    auto sum = [md, halo]() -> int {
        return hmd_halo_transport_sum(halo, md->loc, md->tot, 4,
                                      hmd_cuda_state_atoms(md->state).stream);
    };
    dev([md]() {
        const int rc = launch_providers(md);
        return rc ? rc : stamp(md, CLOCK_PROVIDERS);
    });
    coll([md, halo]() -> int {
        const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
        return hmd_halo_transport_reverse(halo, a.f, 3, a.stream);
    });
    dev([md]() { return stamp(md, CLOCK_REVERSE); });
    if (initial) {
        dev([md]() { return launch_predict(md); });
        return;
    }
    dev([md]() -> int {
        const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
        second_half<<<blocks(3 * md->nlocal), THREADS, 0, stream_of(md)>>>(md->nlocal, md->k, a.f,
                                                                           a.v);
        HMD_CUDA_LAUNCHED("second_half");
        return HMD_OK;
    });
    if (c.tcoupl == HMD_CUDA_TCOUPL_VRESCALE || c.tcoupl == HMD_CUDA_TCOUPL_LANGEVIN) {
        const bool vr = c.tcoupl == HMD_CUDA_TCOUPL_VRESCALE;
        dev([md]() { return launch_local_sums(md, 0); });
        coll(sum);
        dev([md, vr]() -> int {
            const hmd_cuda_md_config &c = md->c;
            const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
            cudaStream_t st = stream_of(md);
            const int n = md->nlocal;
            const double kin_ref = 0.5 * c.ndof * HMD_BOLTZMANN * c.ref_t;
            const double c1 = exp(-c.dt / c.tau_t);
            kinetic_and_vrescale<<<1, 1, 0, st>>>(md->tot, vr, kin_ref, c.ndof, c1, c.seed, a.step,
                                                  md->scal);
            HMD_CUDA_LAUNCHED("kinetic_and_vrescale");
            if (vr) {
                scale_velocities<<<blocks(3 * n), THREADS, 0, st>>>(n, md->scal, a.v);
                HMD_CUDA_LAUNCHED("scale_velocities");
                return HMD_OK;
            }
            langevin<<<blocks(n), THREADS, 0, st>>>(n, c1, sqrt(1.0 - c1 * c1),
                                                    HMD_BOLTZMANN * c.ref_t, c.seed, a.step, a.id,
                                                    a.mass, a.v);
            HMD_CUDA_LAUNCHED("langevin");
            return launch_local_sums(md, 0);
        });
        if (!vr) {
            coll(sum);
            dev([md]() -> int {
                langevin_work<<<1, 1, 0, stream_of(md)>>>(md->tot, md->scal);
                HMD_CUDA_LAUNCHED("langevin_work");
                return HMD_OK;
            });
        }
    }
    if (c.nstcomm > 0) {
        dev([md]() { return launch_local_sums(md, 1); });
        coll(sum);
        dev([md]() -> int {
            const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
            cudaStream_t st = stream_of(md);
            com_velocity<<<1, 1, 0, st>>>(md->tot, md->c.nstcomm, a.step, md->scal);
            HMD_CUDA_LAUNCHED("com_velocity");
            remove_com<<<blocks(3 * md->nlocal), THREADS, 0, st>>>(md->nlocal, md->scal, a.step,
                                                                   md->c.nstcomm, a.v);
            HMD_CUDA_LAUNCHED("remove_com");
            return HMD_OK;
        });
    }
    dev([md]() { return launch_predict(md); });
}

/* The whole step of a kept list. */
std::vector<step_piece> step_program(hmd_cuda_md *md)
{
    std::vector<step_piece> prog;
    hmd_halo_transport *halo = md->halo;
    prog.push_back({false, [md]() {
                        const int rc = launch_first_half(md);
                        return rc ? rc : stamp(md, CLOCK_START);
                    }});
    prog.push_back({!hmd_halo_transport_capturable(halo), [md, halo]() -> int {
                        const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
                        return hmd_halo_transport_forward(halo, a.x, &md->box, a.stream);
                    }});
    prog.push_back({false, [md]() { return stamp(md, CLOCK_FORWARD); }});
    forces_and_second_half(md, false, prog);
    return prog;
}

/* Runs pieces one after another, as they come (no graph). */
int run_eagerly(const std::vector<step_piece> &prog)
{
    int rc = HMD_OK;
    for (size_t p = 0; p < prog.size() && !rc; p++) {
        rc = prog[p].run();
    }
    return rc;
}

/* What a recorded graph depends on: where the arrays are and the home atoms' count. */
std::vector<unsigned long> graph_key(const hmd_cuda_md *md)
{
    std::vector<unsigned long> key = {hmd_cuda_state_generation(md->state),
                                      hmd_halo_transport_generation(md->halo),
                                      (unsigned long)md->nlocal};
    for (int k = 0; k < md->nproviders; k++) {
        key.push_back(hmd_force_provider_generation(&md->providers[k]));
    }
    return key;
}

void drop_graph(hmd_cuda_md *md)
{
    for (cudaGraphExec_t e : md->execs) {
        cudaGraphExecDestroy(e);
    }
    for (cudaGraph_t g : md->graphs) {
        cudaGraphDestroy(g);
    }
    md->execs.clear();
    md->graphs.clear();
    md->schedule.clear();
    md->program.clear();
}

/* Records device pieces [p0, p1) of md->program into one more graph; `old` (or NULL), an
 * executable graph of an earlier recording, is updated to it where the two have the same
 * shape (kernel arguments and sizes may differ), which costs less than making a new one, and
 * is destroyed otherwise. */
int record(hmd_cuda_md *md, size_t p0, size_t p1, cudaGraphExec_t old)
{
    cudaStream_t st = stream_of(md);
    cudaError_t began = cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
    if (began != cudaSuccess) {
        if (old) {
            cudaGraphExecDestroy(old);
        }
        HMD_CUDA_CHECK(began);
    }
    int rc = HMD_OK;
    for (size_t p = p0; p < p1 && !rc; p++) {
        rc = md->program[p].run();
    }
    cudaGraph_t g = NULL;
    const cudaError_t end = cudaStreamEndCapture(st, &g);
    if (rc || end != cudaSuccess) {
        if (g) {
            cudaGraphDestroy(g);
        }
        if (old) {
            cudaGraphExecDestroy(old);
        }
        HMD_CUDA_CHECK(end);
        return rc;
    }
    md->graphs.push_back(g);
    cudaGraphExec_t e = NULL;
    if (old) {
        cudaGraphExecUpdateResultInfo info;
        if (cudaGraphExecUpdate(old, g, &info) == cudaSuccess) {
            e = old;
        } else {
            (void)cudaGetLastError(); /* not updatable: a new one */
            cudaGraphExecDestroy(old);
        }
    }
    if (!e) {
        HMD_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
    }
    md->execs.push_back(e);
    md->schedule.push_back((int)md->execs.size() - 1);
    return HMD_OK;
}

/* Records the step: a graph for every run of device pieces, host pieces in between (again when
 * the arrays it points to moved), updating the executable graphs of the last recording where
 * it can. */
int make_graph(hmd_cuda_md *md)
{
    std::vector<cudaGraphExec_t> old;
    old.swap(md->execs);
    drop_graph(md);
    md->program = step_program(md);
    size_t p0 = 0, used = 0;
    int rc = HMD_OK;
    for (size_t p = 0; p <= md->program.size() && !rc; p++) {
        const bool end = p == md->program.size();
        if (end || md->program[p].host) {
            if (p > p0) {
                rc = record(md, p0, p, used < old.size() ? old[used] : NULL);
                used++;
            }
            if (!end) {
                md->schedule.push_back(-1 - (int)p);
            }
            p0 = p + 1;
        }
    }
    for (size_t k = used; k < old.size(); k++) {
        cudaGraphExecDestroy(old[k]);
    }
    if (!rc) {
        md->graph_key = graph_key(md);
    } else {
        drop_graph(md);
    }
    return rc;
}

/* The cell of the forward halo, between steps with nothing queued: a recorded step may hold
 * a copy of the previous cell's shifts (cuda/halo/shifts.cuh), so a new cell drops it. */
void set_box(hmd_cuda_md *md, const hmd_box *box)
{
    if (memcmp(md->box.h, box->h, sizeof md->box.h)) {
        drop_graph(md);
    }
    md->box = *box;
}

/* Room for the home atoms' step arrays. */
int reserve_local(hmd_cuda_md *md, int nlocal)
{
    if (nlocal <= md->cap_local && md->k) {
        return HMD_OK;
    }
    cudaFree(md->k);
    cudaFree(md->x_build);
    md->bytes -= (size_t)md->cap_local * 4 * sizeof(double);
    md->k = md->x_build = NULL;
    md->cap_local = 0;
    const int cap = nlocal + nlocal / 2 + 16;
    int rc = alloc(md, &md->k, cap);
    rc = rc ? rc : alloc(md, &md->x_build, 3 * (size_t)cap);
    md->cap_local = rc ? 0 : cap;
    return rc;
}

} // namespace

extern "C" int hmd_cuda_md_create(struct hmd_cuda_md **out, struct hmd_cuda_state *state,
                                  struct hmd_force_provider *providers, int n,
                                  struct hmd_halo_transport *halo,
                                  const struct hmd_cuda_md_config *c)
{
    hmd_cuda_md *md = new hmd_cuda_md();
    *out = md;
    md->state = state;
    md->providers = providers;
    md->nproviders = n;
    md->halo = halo;
    md->c = *c;
    if (!hmd_halo_transport_on_device(halo) || !halo->ops->sum) {
        return hmd_error_set(HMD_ENOTSUP,
                             "the device step: halo transport %s is not a device "
                             "transport",
                             hmd_halo_transport_name(halo));
    }
    for (int k = 0; k < n; k++) {
        const char *names[HMD_FORCE_MAX_TERMS];
        md->term_offset[k] = md->nterms;
        md->nterms += hmd_force_provider_terms(&providers[k], names);
        if (!hmd_force_provider_on_device(&providers[k]) || md->nterms > HMD_CUDA_MAX_TERMS) {
            return hmd_error_set(HMD_ENOTSUP,
                                 "the device step: %s is not a device provider, or more than %d "
                                 "energy terms",
                                 hmd_force_provider_name(&providers[k]), HMD_CUDA_MAX_TERMS);
        }
    }
    md->term_offset[n] = md->nterms;
    int rc = alloc(md, &md->scal, S_NSCALAR);
    rc = rc ? rc : alloc(md, &md->part, 4 * (size_t)MAX_PARTS);
    rc = rc ? rc : alloc(md, &md->ev, HMD_FORCE_NEV + HMD_CUDA_MAX_TERMS);
    rc = rc ? rc : alloc(md, &md->loc, 4);
    rc = rc ? rc : alloc(md, &md->done, 1);
    if (!rc) {
        HMD_CUDA_CHECK(cudaMemset(md->done, 0, sizeof(unsigned)));
    }
    if (c->halo_clock) {
        rc = rc ? rc : alloc(md, &md->clock, CLOCK_N);
        if (!rc) {
            HMD_CUDA_CHECK(cudaMemset(md->clock, 0, sizeof(unsigned long long) * CLOCK_N));
        }
    }
    /* one rank: the global sums are this rank's own (the transport's sum does nothing) */
    if (hmd_comm_size() == 1) {
        md->tot = md->loc;
    } else {
        rc = rc ? rc : alloc(md, &md->tot, 4);
    }
    if (rc) {
        return rc;
    }
    HMD_CUDA_CHECK(cudaMallocHost((void **)&md->pinned, sizeof(double) * PINNED));
    HMD_CUDA_CHECK(cudaEventCreate(&md->forces_begin));
    HMD_CUDA_CHECK(cudaEventCreate(&md->forces_end));
    HMD_CUDA_CHECK(cudaMemset(md->scal, 0, sizeof(double) * S_NSCALAR));
    HMD_CUDA_CHECK(cudaMemset(md->ev, 0, sizeof(double) * (HMD_FORCE_NEV + HMD_CUDA_MAX_TERMS)));
    HMD_CUDA_CHECK(
        cudaMemcpy(md->scal + S_WORK, &c->thermostat_work, sizeof(double), cudaMemcpyHostToDevice));
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(state);
    HMD_CUDA_CHECK(cudaMemcpy(a.step, &c->first_step, sizeof(long long), cudaMemcpyHostToDevice));
    return HMD_OK;
}

extern "C" int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, struct hmd_atoms *a, bool moving,
                                           double *max_disp)
{
    cudaStream_t st = stream_of(md);
    int rc = launch_first_half(md);
    if (rc) {
        return rc;
    }
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->pinned, md->scal, sizeof(double) * S_NSCALAR,
                                   cudaMemcpyDeviceToHost, st));
    /* what migration moves and the device changed */
    rc = hmd_cuda_state_download(
        md->state, a, HMD_FIELD_BIT(HMD_FIELD_X) | (moving ? HMD_FIELD_BIT(HMD_FIELD_V) : 0u));
    *max_disp = sqrt(md->pinned[S_MAXD2]);
    return rc;
}

extern "C" int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, const struct hmd_atoms *a,
                                            const struct hmd_halo_plan *plan,
                                            const struct hmd_box *box, bool initial, bool moving,
                                            struct hmd_cuda_list_times *t)
{
    const int nlocal = a->nlocal, nall = hmd_atoms_nall(a);
    double t0 = hmd_wtime();
    const double start = t0;
    hmd_cuda_list_times spent = {};
    auto lap = [&t0](double *into) {
        const double now = hmd_wtime();
        *into += now - t0;
        t0 = now;
    };
    set_box(md, box);
    moving = moving || initial || nlocal != md->nlocal;
    int rc = hmd_cuda_state_reserve(md->state, nlocal, nall);
    rc = rc ? rc : reserve_local(md, nlocal);
    /* the ghosts are new at every list step; the home atoms only where migration moved some */
    const unsigned fields =
        HMD_FIELD_BIT(HMD_FIELD_X) | HMD_FIELD_BIT(HMD_FIELD_TYPE) | HMD_FIELD_BIT(HMD_FIELD_ID) |
        (moving ? HMD_FIELD_BIT(HMD_FIELD_V) | HMD_FIELD_BIT(HMD_FIELD_MASS) : 0u);
    rc = rc ? rc : hmd_cuda_state_upload(md->state, a, fields);
    if (rc) {
        return rc;
    }
    md->nlocal = nlocal;
    const hmd_cuda_atoms d = hmd_cuda_state_atoms(md->state);
    cudaStream_t st = (cudaStream_t)d.stream;
    std::vector<double> k;
    if (moving) {
        k.resize(nlocal + 1);
        for (int i = 0; i < nlocal; i++) {
            k[i] = 0.5 * md->c.dt / (a->mass[i] * HMD_MVV2E); /* as integrate.c */
        }
        HMD_CUDA_CHECK(
            cudaMemcpyAsync(md->k, k.data(), sizeof(double) * nlocal, cudaMemcpyHostToDevice, st));
    }
    /* the positions the displacement is measured from: the home atoms' just uploaded */
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->x_build, d.x, sizeof(double) * 3 * nlocal,
                                   cudaMemcpyDeviceToDevice, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(md->scal + S_MAXD2, 0, sizeof(double), st));
    lap(&spent.upload_s);
    const hmd_halo_arrays arrays = {plan, box, nall, d.x, d.f, d.stream};
    rc = hmd_halo_transport_setup(md->halo, &arrays);
    lap(&spent.halo_s);
    for (int p = 0; p < md->nproviders && !rc; p++) {
        hmd_force_io io = device_io(md, p);
        io.host = a;
        rc = hmd_force_provider_prepare(&md->providers[p], &io);
    }
    lap(&spent.prepare_s);
    double *forces_s = t ? &spent.forces_s : NULL;
    if (!rc && forces_s) {
        HMD_CUDA_CHECK(cudaEventRecord(md->forces_begin, st));
    }
    if (!rc) { /* the host made the ghosts: no forward halo */
        rc = stamp(md, CLOCK_START);
    }
    if (!rc) {
        std::vector<step_piece> prog;
        forces_and_second_half(md, initial, prog);
        rc = run_eagerly(prog);
    }
    if (!rc && forces_s) {
        HMD_CUDA_CHECK(cudaEventRecord(md->forces_end, st));
    }
    HMD_CUDA_CHECK(cudaStreamSynchronize(st)); /* `k` goes out of scope */
    if (!rc && forces_s) {
        float ms = 0.0f;
        HMD_CUDA_CHECK(cudaEventElapsedTime(&ms, md->forces_begin, md->forces_end));
        *forces_s = 1e-3 * ms;
    }
    if (t) {
        spent.rest_s = hmd_wtime() - start - spent.upload_s - spent.halo_s - spent.prepare_s;
        *t = spent;
    }
    return rc;
}

extern "C" int hmd_cuda_md_step(struct hmd_cuda_md *md, const struct hmd_box *box)
{
    if (memcmp(md->box.h, box->h, sizeof md->box.h)) {
        md->box = *box;
        /* the halo records its shifts for the cell it was given, from a buffer the queued steps
         * may still read: they finish first */
        HMD_CUDA_CHECK(cudaStreamSynchronize(stream_of(md)));
        drop_graph(md);
    }
    if (md->schedule.empty() || md->graph_key != graph_key(md)) {
        int rc = make_graph(md);
        if (rc) {
            return rc;
        }
    }
    cudaStream_t st = stream_of(md);
    for (int item : md->schedule) {
        if (item >= 0) {
            HMD_CUDA_CHECK(cudaGraphLaunch(md->execs[item], st));
        } else {
            const int rc = md->program[-1 - item].run();
            if (rc) {
                return rc;
            }
        }
    }
    return HMD_OK;
}

extern "C" int hmd_cuda_md_wait(struct hmd_cuda_md *md)
{
    HMD_CUDA_CHECK(cudaStreamSynchronize(stream_of(md)));
    return hmd_halo_transport_check(md->halo);
}

extern "C" int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp)
{
    cudaStream_t st = stream_of(md);
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->pinned, md->scal, sizeof(double), cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    *disp = sqrt(md->pinned[S_MAXD2]);
    return hmd_halo_transport_check(md->halo);
}

extern "C" int hmd_cuda_md_fetch(struct hmd_cuda_md *md, struct hmd_atoms *a, unsigned fields,
                                 struct hmd_cuda_md_scalars *s)
{
    cudaStream_t st = stream_of(md);
    double *ev = md->pinned + S_NSCALAR;
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->pinned, md->scal, sizeof(double) * S_NSCALAR,
                                   cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(ev, md->ev, sizeof(double) * (HMD_FORCE_NEV + md->nterms),
                                   cudaMemcpyDeviceToHost, st));
    int rc = fields ? hmd_cuda_state_download(md->state, a, fields) : HMD_OK;
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    rc = rc ? rc : hmd_halo_transport_check(md->halo);
    if (!rc && s) {
        memcpy(s->virial, ev + HMD_FORCE_EV_VIRIAL, sizeof s->virial);
        s->energy = ev[HMD_FORCE_EV_ENERGY];
        s->dropped = ev[HMD_FORCE_EV_DROPPED];
        s->thermostat_work = md->pinned[S_WORK];
        s->nterms = md->nterms;
        memcpy(s->terms, ev + HMD_FORCE_NEV, sizeof(double) * md->nterms);
    }
    return rc;
}

extern "C" int hmd_cuda_md_list_state(struct hmd_cuda_md *md, double *x_build, double *maxd2)
{
    cudaStream_t st = stream_of(md);
    HMD_CUDA_CHECK(cudaMemcpyAsync(x_build, md->x_build, sizeof(double) * 3 * md->nlocal,
                                   cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->pinned, md->scal, sizeof(double), cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    *maxd2 = md->pinned[S_MAXD2];
    return hmd_halo_transport_check(md->halo);
}

extern "C" int hmd_cuda_md_resume(struct hmd_cuda_md *md, const double *x,
                                  const struct hmd_box *box, double maxd2)
{
    cudaStream_t st = stream_of(md);
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    set_box(md, box);
    const double d2 = maxd2 > 0.0 ? maxd2 : 0.0;
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(a.x, x, sizeof(double) * 3 * md->nlocal, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->scal + S_MAXD2, &d2, sizeof(double), cudaMemcpyHostToDevice, st));
    int rc = hmd_halo_transport_forward(md->halo, a.x, &md->box, a.stream);
    rc = rc ? rc : stamp(md, CLOCK_START);
    if (!rc) {
        std::vector<step_piece> prog;
        forces_and_second_half(md, true, prog);
        rc = run_eagerly(prog);
    }
    HMD_CUDA_CHECK(cudaStreamSynchronize(st)); /* x and d2 are the caller's and this frame's */
    return rc ? rc : hmd_halo_transport_check(md->halo);
}

extern "C" int hmd_cuda_md_halo_times(struct hmd_cuda_md *md, struct hmd_cuda_md_times *t)
{
    memset(t, 0, sizeof *t);
    if (!md->clock) {
        return HMD_OK;
    }
    unsigned long long c[CLOCK_N];
    HMD_CUDA_CHECK(cudaMemcpyAsync(c, md->clock, sizeof c, cudaMemcpyDeviceToHost, stream_of(md)));
    HMD_CUDA_CHECK(cudaStreamSynchronize(stream_of(md)));
    t->forward_s = 1e-9 * (double)c[CLOCK_FORWARD];
    t->providers_s = 1e-9 * (double)c[CLOCK_PROVIDERS];
    t->reverse_s = 1e-9 * (double)c[CLOCK_REVERSE];
    t->forwards = (long long)c[CLOCK_FORWARDS];
    t->reverses = (long long)c[CLOCK_REVERSES];
    return HMD_OK;
}

extern "C" size_t hmd_cuda_md_device_bytes(const struct hmd_cuda_md *md)
{
    return md ? md->bytes : 0;
}

extern "C" void hmd_cuda_md_destroy(struct hmd_cuda_md *md)
{
    if (!md) {
        return;
    }
    drop_graph(md);
    void *arrays[] = {md->k,    md->x_build, md->scal,
                      md->part, md->done,    md->ev,
                      md->loc,  md->clock,   md->tot != md->loc ? md->tot : NULL};
    for (void *p : arrays) {
        cudaFree(p);
    }
    cudaFreeHost(md->pinned);
    if (md->forces_begin) {
        cudaEventDestroy(md->forces_begin);
    }
    if (md->forces_end) {
        cudaEventDestroy(md->forces_end);
    }
    delete md;
}
