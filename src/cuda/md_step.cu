/* The MD step resident on the GPU (one rank): positions, velocities, forces, types, neighbour
 * list and the model live on the device; a step that keeps its neighbour list is one CUDA
 * graph (first half step, ghosts from their owners, Deep Potential, ghost forces onto owners,
 * second half step, thermostat, centre-of-mass motion, predicted displacement). Twins of
 * md/integrate.c and md/thermostat.c, with the same random numbers (core/rng_draw.h,
 * md/vrescale_draw.h); sums run in a fixed order. */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

#include <algorithm>
#include <string.h>
#include <vector>

extern "C" {
#include "core/units.h"
}
#include "core/rng_draw.h"
#include "md/vrescale_draw.h"

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

__global__ void forward_ghosts(int nlocal, const int *nghost, const int *src, const double *shift,
                               double *x)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * *nghost) {
        const int g = e / 3, d = e % 3;
        x[3 * nlocal + e] = x[3 * src[g] + d] + shift[e];
    }
}

__global__ void reverse_ghosts(int nlocal, const int *nghost, const int *src, double *f)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * *nghost) {
        const int g = e / 3, d = e % 3;
        atomicAdd(&f[3 * src[g] + d], f[3 * nlocal + e]);
    }
}

/* First stage of a fixed-order sum over atoms: part[b][c] for block b. what = 0: kinetic
 * energy sum m v.v (1 value); what = 1: momentum m v and mass (4 values). */
__global__ void partial_sums(int n, int what, const double *mass, const double *v, double *part)
{
    __shared__ double sh[4][THREADS];
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
    }
}

/* Second stage, one thread: sum of the nparts partials, component c. */
__device__ double sum_parts(const double *part, int nparts, int c)
{
    double s = 0.0;
    for (int b = 0; b < nparts; b++) {
        s += part[4 * b + c];
    }
    return s;
}

/* The kinetic energy into S_KE; v-rescale's factor into S_ALPHA and its work into S_WORK
 * (thermostat.c hmd_thermostat_vrescale_cpu). One thread. */
__global__ void kinetic_and_vrescale(const double *part, int nparts, bool vrescale, double kin_ref,
                                     double ndof, double c, unsigned long long seed,
                                     const long long *step, double *scal)
{
    const double kin = 0.5 * HMD_MVV2E * sum_parts(part, nparts, 0);
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

/* After Langevin's noise: its work is the kinetic energy now minus S_KE (before). */
__global__ void langevin_work(const double *part, int nparts, double *scal)
{
    const double kin = 0.5 * HMD_MVV2E * sum_parts(part, nparts, 0);
    scal[S_WORK] += kin - scal[S_KE];
}

/* Centre-of-mass velocity into S_COM on steps that are multiples of nstcomm, else zero. */
__global__ void com_velocity(const double *part, int nparts, int nstcomm, const long long *step,
                             double *scal)
{
    const double mtot = sum_parts(part, nparts, 3);
    const bool now = *step % nstcomm == 0 && mtot > 0.0;
    for (int d = 0; d < 3; d++) {
        scal[S_COM + d] = now ? sum_parts(part, nparts, d) / mtot : 0.0;
    }
}

__global__ void remove_com(int n, const double *scal, double *v)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < 3 * n) {
        v[e] -= scal[S_COM + e % 3];
    }
}

/* Largest squared distance the next first half step will move an atom from its position at
 * the last list build, kept as the maximum since that build (non-negative doubles order as
 * their bits). */
__global__ void predict_displacement(int n, double dt, const double *k, const double *f,
                                     const double *v, const double *x, const double *x_build,
                                     double *scal)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double d2 = 0.0;
        for (int d = 0; d < 3; d++) {
            const double vn = v[3 * i + d] + k[i] * f[3 * i + d];
            const double dx = x[3 * i + d] + dt * vn - x_build[3 * i + d];
            d2 += dx * dx;
        }
        atomicMax((unsigned long long *)&scal[S_MAXD2],
                  (unsigned long long)__double_as_longlong(d2));
    }
}

} // namespace

struct hmd_cuda_md {
    hmd_cuda_dp *dp; /* borrowed */
    hmd_cuda_md_config c;
    int nlocal, cap_ghost;
    double *v, *k, *mass, *x_build, *scal, *part;
    long long *id, *step;
    int *nghost, *ghost_src;
    double *ghost_shift;
    double *pinned; /* host copy of the scalars */
    size_t bytes;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaEvent_t forces_begin, forces_end; /* a list step's forces and second half */
    unsigned long graph_generation;       /* dp generation + ghost reallocations it was made for */
    unsigned long ghost_generation;
};

namespace
{

template <typename T> int alloc(hmd_cuda_md *md, T **p, size_t n)
{
    HMD_CUDA_CHECK(cudaMalloc((void **)p, std::max<size_t>(n, 1) * sizeof(T)));
    md->bytes += n * sizeof(T);
    return HMD_OK;
}

/* Queues predict_displacement over the home atoms, from their positions, velocities and forces
 * after a second half step (or after the first evaluation). */
int launch_predict(hmd_cuda_md *md)
{
    const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
    predict_displacement<<<blocks(md->nlocal), THREADS, 0, hmd_cuda_dp_stream(md->dp)>>>(
        md->nlocal, md->c.dt, md->k, a.f, md->v, a.x, md->x_build, md->scal);
    HMD_CUDA_LAUNCHED("predict_displacement");
    return HMD_OK;
}

/* Second half step, thermostat, centre-of-mass motion, predicted displacement. */
int launch_second_half(hmd_cuda_md *md)
{
    const hmd_cuda_md_config &c = md->c;
    const int n = md->nlocal;
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    const double *f = hmd_cuda_dp_device_atoms(md->dp).f;
    second_half<<<blocks(3 * n), THREADS, 0, st>>>(n, md->k, f, md->v);
    HMD_CUDA_LAUNCHED("second_half");
    const unsigned np = parts(n);
    if (c.tcoupl == HMD_CUDA_TCOUPL_VRESCALE || c.tcoupl == HMD_CUDA_TCOUPL_LANGEVIN) {
        const bool vr = c.tcoupl == HMD_CUDA_TCOUPL_VRESCALE;
        const double kin_ref = 0.5 * c.ndof * HMD_BOLTZMANN * c.ref_t;
        const double c1 = exp(-c.dt / c.tau_t);
        partial_sums<<<np, THREADS, 0, st>>>(n, 0, md->mass, md->v, md->part);
        HMD_CUDA_LAUNCHED("partial_sums");
        kinetic_and_vrescale<<<1, 1, 0, st>>>(md->part, (int)np, vr, kin_ref, c.ndof, c1, c.seed,
                                              md->step, md->scal);
        HMD_CUDA_LAUNCHED("kinetic_and_vrescale");
        if (vr) {
            scale_velocities<<<blocks(3 * n), THREADS, 0, st>>>(n, md->scal, md->v);
            HMD_CUDA_LAUNCHED("scale_velocities");
        } else {
            langevin<<<blocks(n), THREADS, 0, st>>>(n, c1, sqrt(1.0 - c1 * c1),
                                                    HMD_BOLTZMANN * c.ref_t, c.seed, md->step,
                                                    md->id, md->mass, md->v);
            HMD_CUDA_LAUNCHED("langevin");
            partial_sums<<<np, THREADS, 0, st>>>(n, 0, md->mass, md->v, md->part);
            HMD_CUDA_LAUNCHED("partial_sums");
            langevin_work<<<1, 1, 0, st>>>(md->part, (int)np, md->scal);
            HMD_CUDA_LAUNCHED("langevin_work");
        }
    }
    if (c.nstcomm > 0) {
        partial_sums<<<np, THREADS, 0, st>>>(n, 1, md->mass, md->v, md->part);
        HMD_CUDA_LAUNCHED("partial_sums");
        com_velocity<<<1, 1, 0, st>>>(md->part, (int)np, c.nstcomm, md->step, md->scal);
        HMD_CUDA_LAUNCHED("com_velocity");
        remove_com<<<blocks(3 * n), THREADS, 0, st>>>(n, md->scal, md->v);
        HMD_CUDA_LAUNCHED("remove_com");
    }
    return launch_predict(md);
}

int launch_first_half(hmd_cuda_md *md)
{
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
    advance_step<<<1, 1, 0, st>>>(md->step);
    HMD_CUDA_LAUNCHED("advance_step");
    first_half<<<blocks(3 * md->nlocal), THREADS, 0, st>>>(md->nlocal, md->c.dt, md->k, a.f, md->v,
                                                           a.x);
    HMD_CUDA_LAUNCHED("first_half");
    return HMD_OK;
}

/* Deep Potential and the ghost forces folded onto their owners. */
int launch_forces(hmd_cuda_md *md)
{
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    int rc = hmd_cuda_dp_evaluate(md->dp, md->nlocal, md->nlocal);
    if (!rc) {
        const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
        reverse_ghosts<<<blocks(3 * (size_t)md->cap_ghost), THREADS, 0, st>>>(
            md->nlocal, md->nghost, md->ghost_src, a.f);
        HMD_CUDA_LAUNCHED("reverse_ghosts");
    }
    return rc;
}

/* The whole step of a kept list, as recorded in the graph. */
int launch_step(hmd_cuda_md *md)
{
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    int rc = launch_first_half(md);
    if (!rc) {
        const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
        forward_ghosts<<<blocks(3 * (size_t)md->cap_ghost), THREADS, 0, st>>>(
            md->nlocal, md->nghost, md->ghost_src, md->ghost_shift, a.x);
        HMD_CUDA_LAUNCHED("forward_ghosts");
        rc = launch_forces(md);
    }
    return rc ? rc : launch_second_half(md);
}

unsigned long generation(const hmd_cuda_md *md)
{
    return hmd_cuda_dp_generation(md->dp) * 65599ul + md->ghost_generation;
}

void drop_graph(hmd_cuda_md *md)
{
    if (md->exec) {
        cudaGraphExecDestroy(md->exec);
    }
    if (md->graph) {
        cudaGraphDestroy(md->graph);
    }
    md->exec = NULL;
    md->graph = NULL;
}

/* Records launch_step into a graph (again when the arrays it points to moved). */
int make_graph(hmd_cuda_md *md)
{
    drop_graph(md);
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    HMD_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    const int rc = launch_step(md);
    cudaGraph_t g = NULL;
    const cudaError_t end = cudaStreamEndCapture(st, &g);
    if (rc) {
        if (g) {
            cudaGraphDestroy(g);
        }
        return rc;
    }
    HMD_CUDA_CHECK(end);
    md->graph = g;
    HMD_CUDA_CHECK(cudaGraphInstantiate(&md->exec, g, 0));
    md->graph_generation = generation(md);
    return HMD_OK;
}

} // namespace

extern "C" int hmd_cuda_md_create(struct hmd_cuda_md **out, struct hmd_cuda_dp *dp,
                                  const struct hmd_cuda_md_config *c, const double *mass,
                                  const int64_t *id, const double *v)
{
    hmd_cuda_md *md = new hmd_cuda_md();
    *out = md;
    md->dp = dp;
    md->c = *c;
    const int n = c->nlocal;
    md->nlocal = n;
    std::vector<double> k(n);
    for (int i = 0; i < n; i++) {
        k[i] = 0.5 * c->dt / (mass[i] * HMD_MVV2E); /* as integrate.c */
    }
    int rc = alloc(md, &md->v, 3 * (size_t)n);
    rc = rc ? rc : alloc(md, &md->k, n);
    rc = rc ? rc : alloc(md, &md->mass, n);
    rc = rc ? rc : alloc(md, &md->x_build, 3 * (size_t)n);
    rc = rc ? rc : alloc(md, &md->scal, S_NSCALAR);
    rc = rc ? rc : alloc(md, &md->part, 4 * (size_t)MAX_PARTS);
    rc = rc ? rc : alloc(md, &md->id, n);
    rc = rc ? rc : alloc(md, &md->step, 1);
    rc = rc ? rc : alloc(md, &md->nghost, 1);
    if (rc) {
        return rc;
    }
    HMD_CUDA_CHECK(cudaMallocHost((void **)&md->pinned, sizeof(double) * 16));
    HMD_CUDA_CHECK(cudaEventCreate(&md->forces_begin));
    HMD_CUDA_CHECK(cudaEventCreate(&md->forces_end));
    static_assert(sizeof(long long) == sizeof(int64_t), "ids are 64-bit");
    HMD_CUDA_CHECK(cudaMemcpy(md->v, v, sizeof(double) * 3 * n, cudaMemcpyHostToDevice));
    HMD_CUDA_CHECK(cudaMemcpy(md->k, k.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    HMD_CUDA_CHECK(cudaMemcpy(md->mass, mass, sizeof(double) * n, cudaMemcpyHostToDevice));
    HMD_CUDA_CHECK(cudaMemcpy(md->id, id, sizeof(int64_t) * n, cudaMemcpyHostToDevice));
    HMD_CUDA_CHECK(cudaMemset(md->scal, 0, sizeof(double) * S_NSCALAR));
    HMD_CUDA_CHECK(
        cudaMemcpy(md->scal + S_WORK, &c->thermostat_work, sizeof(double), cudaMemcpyHostToDevice));
    HMD_CUDA_CHECK(cudaMemcpy(md->step, &c->first_step, sizeof(long long), cudaMemcpyHostToDevice));
    HMD_CUDA_CHECK(cudaMemset(md->nghost, 0, sizeof(int)));
    return HMD_OK;
}

extern "C" int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, double *x_home, double *max_disp)
{
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    int rc = launch_first_half(md);
    if (rc) {
        return rc;
    }
    const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(x_home, a.x, sizeof(double) * 3 * md->nlocal, cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->pinned, md->scal, sizeof(double) * S_NSCALAR,
                                   cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    *max_disp = sqrt(md->pinned[S_MAXD2]);
    return HMD_OK;
}

extern "C" int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, int nall, const double *x,
                                            const int *type, const int *ghost_src,
                                            const double *ghost_shift, double rlist, bool initial,
                                            double *forces_s)
{
    const int nlocal = md->nlocal, nghost = nall - nlocal;
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    int rc = hmd_cuda_dp_prepare(md->dp, nlocal, nall, type, md->c.type0);
    if (!rc && nghost > md->cap_ghost) {
        const int cap = nghost + nghost / 2 + 16;
        cudaFree(md->ghost_src);
        cudaFree(md->ghost_shift);
        md->bytes -= (size_t)md->cap_ghost * (sizeof(int) + 3 * sizeof(double));
        md->ghost_src = NULL;
        md->ghost_shift = NULL;
        md->cap_ghost = 0;
        rc = alloc(md, &md->ghost_src, cap);
        rc = rc ? rc : alloc(md, &md->ghost_shift, 3 * (size_t)cap);
        md->cap_ghost = rc ? 0 : cap;
        md->ghost_generation++;
    }
    if (rc) {
        return rc;
    }
    const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
    HMD_CUDA_CHECK(cudaMemcpyAsync(a.x, x, sizeof(double) * 3 * nall, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(a.type, type, sizeof(int) * nall, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->nghost, &nghost, sizeof(int), cudaMemcpyHostToDevice, st));
    if (nghost > 0) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(md->ghost_src, ghost_src, sizeof(int) * nghost,
                                       cudaMemcpyHostToDevice, st));
        HMD_CUDA_CHECK(cudaMemcpyAsync(md->ghost_shift, ghost_shift, sizeof(double) * 3 * nghost,
                                       cudaMemcpyHostToDevice, st));
    }
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->x_build, x, sizeof(double) * 3 * nlocal, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(md->scal + S_MAXD2, 0, sizeof(double), st));
    double lo[3], hi[3];
    hmd_cuda_bounds(nall, x, lo, hi);
    rc = hmd_cuda_dp_build_list(md->dp, nlocal, nall, lo, hi, rlist);
    if (!rc && forces_s) {
        HMD_CUDA_CHECK(cudaEventRecord(md->forces_begin, st));
    }
    rc = rc ? rc : launch_forces(md);
    if (!rc) { /* the second half ends with the prediction; the first list has none */
        rc = initial ? launch_predict(md) : launch_second_half(md);
    }
    if (!rc && forces_s) {
        HMD_CUDA_CHECK(cudaEventRecord(md->forces_end, st));
    }
    /* the host arrays are the caller's again when this returns */
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    if (!rc && forces_s) {
        float ms = 0.0f;
        HMD_CUDA_CHECK(cudaEventElapsedTime(&ms, md->forces_begin, md->forces_end));
        *forces_s = 1e-3 * ms;
    }
    return rc;
}

extern "C" int hmd_cuda_md_step(struct hmd_cuda_md *md)
{
    if (!md->exec || md->graph_generation != generation(md)) {
        int rc = make_graph(md);
        if (rc) {
            return rc;
        }
    }
    HMD_CUDA_CHECK(cudaGraphLaunch(md->exec, hmd_cuda_dp_stream(md->dp)));
    return HMD_OK;
}

extern "C" int hmd_cuda_md_wait(struct hmd_cuda_md *md)
{
    HMD_CUDA_CHECK(cudaStreamSynchronize(hmd_cuda_dp_stream(md->dp)));
    return HMD_OK;
}

extern "C" int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp)
{
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->pinned, md->scal, sizeof(double), cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    *disp = sqrt(md->pinned[S_MAXD2]);
    return HMD_OK;
}

extern "C" int hmd_cuda_md_fetch(struct hmd_cuda_md *md, double *x, double *v, double *f,
                                 struct hmd_cuda_md_scalars *s)
{
    cudaStream_t st = hmd_cuda_dp_stream(md->dp);
    const hmd_cuda_dp_atoms a = hmd_cuda_dp_device_atoms(md->dp);
    const size_t bytes = sizeof(double) * 3 * md->nlocal;
    if (x) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(x, a.x, bytes, cudaMemcpyDeviceToHost, st));
    }
    if (v) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(v, md->v, bytes, cudaMemcpyDeviceToHost, st));
    }
    if (f) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(f, a.f, bytes, cudaMemcpyDeviceToHost, st));
    }
    static_assert(HMD_CUDA_NEV + 1 <= 16, "the pinned buffer holds ev and the work");
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->pinned, a.ev, sizeof(double) * HMD_CUDA_NEV,
                                   cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->pinned + HMD_CUDA_NEV, md->scal + S_WORK, sizeof(double),
                                   cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    if (s) {
        memcpy(s->virial, md->pinned, sizeof s->virial);
        s->energy = md->pinned[9];
        s->dropped = md->pinned[10];
        s->thermostat_work = md->pinned[HMD_CUDA_NEV];
    }
    return HMD_OK;
}

extern "C" size_t hmd_cuda_md_device_bytes(const struct hmd_cuda_md *md)
{
    return md ? md->bytes + hmd_cuda_dp_device_bytes(md->dp) : 0;
}

extern "C" void hmd_cuda_md_destroy(struct hmd_cuda_md *md)
{
    if (!md) {
        return;
    }
    drop_graph(md);
    void *arrays[] = {md->v,  md->k,    md->mass,   md->x_build,   md->scal,       md->part,
                      md->id, md->step, md->nghost, md->ghost_src, md->ghost_shift};
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
