/* The MD step resident on the GPU (cuda_api.h hmd_cuda_md): the atoms are the state's
 * (cuda/md/state.cu), forces come from device providers, ghosts from a device halo transport; a
 * step that keeps its neighbour list is one CUDA graph (first half step, forward halo, forces
 * cleared once and added by every provider, reverse halo, second half step, thermostat,
 * centre-of-mass motion, predicted displacement). Twins of md/integrate.c and
 * md/thermostat.c, with the same random numbers (core/rng_draw.h, core/vrescale_draw.h); sums
 * run in a fixed order. */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

#include <algorithm>
#include <string.h>
#include <vector>

extern "C" {
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
    hmd_cuda_state *state;         /* borrowed */
    hmd_force_provider *providers; /* borrowed [nproviders] */
    int nproviders;
    hmd_halo_transport *halo; /* borrowed */
    hmd_cuda_md_config c;
    int nlocal, cap_local;
    int term_offset[HMD_CUDA_MAX_TERMS + 1]; /* provider k's energy terms in ev + HMD_FORCE_NEV */
    int nterms;
    double *k, *x_build;      /* [cap_local] dt/2m, [cap_local][3] positions at the list */
    double *scal, *part, *ev; /* scalars, reduction partials, energies (device) */
    double *pinned;           /* host copy of the scalars and energies */
    hmd_box box;              /* the cell of the forward halo */
    size_t bytes;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
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

/* Second half step, thermostat, centre-of-mass motion, predicted displacement. */
int launch_second_half(hmd_cuda_md *md)
{
    const hmd_cuda_md_config &c = md->c;
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    const int n = md->nlocal;
    cudaStream_t st = stream_of(md);
    second_half<<<blocks(3 * n), THREADS, 0, st>>>(n, md->k, a.f, a.v);
    HMD_CUDA_LAUNCHED("second_half");
    const unsigned np = parts(n);
    if (c.tcoupl == HMD_CUDA_TCOUPL_VRESCALE || c.tcoupl == HMD_CUDA_TCOUPL_LANGEVIN) {
        const bool vr = c.tcoupl == HMD_CUDA_TCOUPL_VRESCALE;
        const double kin_ref = 0.5 * c.ndof * HMD_BOLTZMANN * c.ref_t;
        const double c1 = exp(-c.dt / c.tau_t);
        partial_sums<<<np, THREADS, 0, st>>>(n, 0, a.mass, a.v, md->part);
        HMD_CUDA_LAUNCHED("partial_sums");
        kinetic_and_vrescale<<<1, 1, 0, st>>>(md->part, (int)np, vr, kin_ref, c.ndof, c1, c.seed,
                                              a.step, md->scal);
        HMD_CUDA_LAUNCHED("kinetic_and_vrescale");
        if (vr) {
            scale_velocities<<<blocks(3 * n), THREADS, 0, st>>>(n, md->scal, a.v);
            HMD_CUDA_LAUNCHED("scale_velocities");
        } else {
            langevin<<<blocks(n), THREADS, 0, st>>>(n, c1, sqrt(1.0 - c1 * c1),
                                                    HMD_BOLTZMANN * c.ref_t, c.seed, a.step, a.id,
                                                    a.mass, a.v);
            HMD_CUDA_LAUNCHED("langevin");
            partial_sums<<<np, THREADS, 0, st>>>(n, 0, a.mass, a.v, md->part);
            HMD_CUDA_LAUNCHED("partial_sums");
            langevin_work<<<1, 1, 0, st>>>(md->part, (int)np, md->scal);
            HMD_CUDA_LAUNCHED("langevin_work");
        }
    }
    if (c.nstcomm > 0) {
        partial_sums<<<np, THREADS, 0, st>>>(n, 1, a.mass, a.v, md->part);
        HMD_CUDA_LAUNCHED("partial_sums");
        com_velocity<<<1, 1, 0, st>>>(md->part, (int)np, c.nstcomm, a.step, md->scal);
        HMD_CUDA_LAUNCHED("com_velocity");
        remove_com<<<blocks(3 * n), THREADS, 0, st>>>(n, md->scal, a.v);
        HMD_CUDA_LAUNCHED("remove_com");
    }
    return launch_predict(md);
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

/* Forces cleared once, every provider adds, ghost forces folded onto their owners. */
int launch_forces(hmd_cuda_md *md)
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
    return rc ? rc : hmd_halo_transport_reverse(md->halo, a.f, 3, a.stream);
}

/* The whole step of a kept list, as recorded in the graph. */
int launch_step(hmd_cuda_md *md)
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(md->state);
    int rc = launch_first_half(md);
    rc = rc ? rc : hmd_halo_transport_forward(md->halo, a.x, &md->box, a.stream);
    rc = rc ? rc : launch_forces(md);
    return rc ? rc : launch_second_half(md);
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
    cudaStream_t st = stream_of(md);
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
    md->graph_key = graph_key(md);
    return HMD_OK;
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
    for (int k = 0; k < n; k++) {
        const char *names[HMD_FORCE_MAX_TERMS];
        md->term_offset[k] = md->nterms;
        md->nterms += hmd_force_provider_terms(&providers[k], names);
        if (!hmd_force_provider_on_device(&providers[k]) || md->nterms > HMD_CUDA_MAX_TERMS) {
            return hmd_error_set(HMD_ENOTSUP,
                                 "the device step: %s is not a device provider, or "
                                 "more than %d energy terms",
                                 hmd_force_provider_name(&providers[k]), HMD_CUDA_MAX_TERMS);
        }
    }
    md->term_offset[n] = md->nterms;
    int rc = alloc(md, &md->scal, S_NSCALAR);
    rc = rc ? rc : alloc(md, &md->part, 4 * (size_t)MAX_PARTS);
    rc = rc ? rc : alloc(md, &md->ev, HMD_FORCE_NEV + HMD_CUDA_MAX_TERMS);
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

extern "C" int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, struct hmd_atoms *a,
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
    rc = hmd_cuda_state_download(md->state, a,
                                 HMD_FIELD_BIT(HMD_FIELD_X) | HMD_FIELD_BIT(HMD_FIELD_V));
    *max_disp = sqrt(md->pinned[S_MAXD2]);
    return rc;
}

extern "C" int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, const struct hmd_atoms *a,
                                            const struct hmd_halo_plan *plan,
                                            const struct hmd_box *box, bool initial,
                                            double *forces_s)
{
    const int nlocal = a->nlocal, nall = hmd_atoms_nall(a);
    md->box = *box;
    int rc = hmd_cuda_state_reserve(md->state, nlocal, nall);
    rc = rc ? rc : reserve_local(md, nlocal);
    const unsigned fields = HMD_FIELD_BIT(HMD_FIELD_X) | HMD_FIELD_BIT(HMD_FIELD_V) |
                            HMD_FIELD_BIT(HMD_FIELD_MASS) | HMD_FIELD_BIT(HMD_FIELD_TYPE) |
                            HMD_FIELD_BIT(HMD_FIELD_ID);
    rc = rc ? rc : hmd_cuda_state_upload(md->state, a, fields);
    if (rc) {
        return rc;
    }
    md->nlocal = nlocal;
    const hmd_cuda_atoms d = hmd_cuda_state_atoms(md->state);
    cudaStream_t st = (cudaStream_t)d.stream;
    std::vector<double> k(nlocal + 1);
    for (int i = 0; i < nlocal; i++) {
        k[i] = 0.5 * md->c.dt / (a->mass[i] * HMD_MVV2E); /* as integrate.c */
    }
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->k, k.data(), sizeof(double) * nlocal, cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(md->x_build, a->x, sizeof(double) * 3 * nlocal,
                                   cudaMemcpyHostToDevice, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(md->scal + S_MAXD2, 0, sizeof(double), st));
    const hmd_halo_arrays arrays = {plan, box, nall, d.x, d.f, d.stream};
    rc = hmd_halo_transport_setup(md->halo, &arrays);
    for (int p = 0; p < md->nproviders && !rc; p++) {
        hmd_force_io io = device_io(md, p);
        io.host = a;
        rc = hmd_force_provider_prepare(&md->providers[p], &io);
    }
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
    HMD_CUDA_CHECK(cudaStreamSynchronize(st)); /* `k` goes out of scope */
    if (!rc && forces_s) {
        float ms = 0.0f;
        HMD_CUDA_CHECK(cudaEventElapsedTime(&ms, md->forces_begin, md->forces_end));
        *forces_s = 1e-3 * ms;
    }
    return rc;
}

extern "C" int hmd_cuda_md_step(struct hmd_cuda_md *md, const struct hmd_box *box)
{
    if (memcmp(md->box.h, box->h, sizeof md->box.h)) {
        md->box = *box;
        drop_graph(md); /* the halo records its shifts for the cell it was given */
    }
    if (!md->exec || md->graph_key != graph_key(md)) {
        int rc = make_graph(md);
        if (rc) {
            return rc;
        }
    }
    HMD_CUDA_CHECK(cudaGraphLaunch(md->exec, stream_of(md)));
    return HMD_OK;
}

extern "C" int hmd_cuda_md_wait(struct hmd_cuda_md *md)
{
    HMD_CUDA_CHECK(cudaStreamSynchronize(stream_of(md)));
    return HMD_OK;
}

extern "C" int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp)
{
    cudaStream_t st = stream_of(md);
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(md->pinned, md->scal, sizeof(double), cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    *disp = sqrt(md->pinned[S_MAXD2]);
    return HMD_OK;
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
    void *arrays[] = {md->k, md->x_build, md->scal, md->part, md->ev};
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
