/* The CUDA backend as the host code sees it (src/cuda; every function is a stub returning
 * HMD_ENOTSUP in a build without CUDA, HMD_HAVE_CUDA 0).
 *
 *   device atoms   hmd_cuda_state (cuda/md/state.cu): the one owner of the atoms on the device
 *                  (positions, velocities, forces, masses, types, ids, the step counter) and of
 *                  the stream the step runs on; positions and forces may live on a symmetric
 *                  heap (NVSHMEM) given at creation. Everything else gets its arrays.
 *   providers      the Deep Potential as a device force provider (cuda/ff/dp.cu; se_e2_a with
 *                  networks or compressed tables, DPA-1; double or mixed precision), and a host
 *                  adapter that runs a device provider on host arrays (single points, eval).
 *   transports     halo transports on device arrays (halo/transport.h): `self` (one rank).
 *   the step       hmd_cuda_md (cuda/md/step.cu): the MD step resident on the device; a step
 *                  that keeps its neighbour list is one CUDA graph. The host takes part at
 *                  neighbour-list steps (migration, borders, the plan) and output steps.
 *   pressure       hmd_cuda_scale (cuda/md/scale.cu): the kinetic-energy tensor and the
 *                  C-rescale scaling of the home atoms (pcoupl = c-rescale).
 */
#ifndef HMD_CUDA_CUDA_API_H
#define HMD_CUDA_CUDA_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "core/atoms.h"
#include "core/box.h"
#include "core/error.h"
#include "dd/halo_plan.h"
#include "ff/provider.h"
#include "halo/transport.h"
#include "nnp/model.h"
#ifdef __cplusplus
}
#endif

struct hmd_cuda_state;
struct hmd_cuda_md;
struct hmd_cuda_scale;

/* Where the state puts positions and forces: plain device memory (alloc NULL), or a heap of
 * its own such as NVSHMEM's symmetric heap, whose allocations are collective (every rank asks
 * for the same size at the same time). */
struct hmd_cuda_heap {
    void *(*alloc)(size_t bytes, void *ctx); /* NULL on failure */
    void (*free)(void *p, void *ctx);
    void *ctx;
};

/* The state's device arrays, for the code that computes on them (borrowed: valid until the
 * next hmd_cuda_state_reserve). */
struct hmd_cuda_atoms {
    int nlocal, nall; /* home atoms; home atoms and ghosts */
    int cap_local, cap_all;
    double *x, *f;    /* [cap_all][3] positions (Å), forces (eV/Å) */
    double *v, *mass; /* [cap_local][3] velocities (Å/ps), [cap_local] masses (g/mol) */
    int *type;        /* [cap_all] model types */
    long long *id;    /* [cap_all] global ids */
    long long *step;  /* [1] the step counter: advanced on the device, never reset */
    void *stream;     /* the cudaStream_t everything of the step is queued on */
};

enum { HMD_CUDA_TCOUPL_NO, HMD_CUDA_TCOUPL_VRESCALE, HMD_CUDA_TCOUPL_LANGEVIN };

/* What the device step needs of the run (md/integrate.h, md/thermostat.h). */
struct hmd_cuda_md_config {
    double dt;              /* ps */
    int tcoupl;             /* HMD_CUDA_TCOUPL_* */
    double ref_t;           /* K */
    double tau_t;           /* ps */
    double ndof;            /* degrees of freedom of the kinetic energy */
    uint64_t seed;          /* thermostat noise */
    int nstcomm;            /* remove the centre-of-mass velocity every nstcomm steps; 0: never */
    long long first_step;   /* the step the run starts from (a continued run: the checkpoint's) */
    int type0;              /* model type of the system's atom 0 (ff/provider.h io.type0) */
    double thermostat_work; /* kinetic energy the thermostat added before first_step (eV) */
    bool halo_clock;        /* time the halo on the device (hmd_cuda_md_halo_times) */
};

/* The halo clock of the device step (config halo_clock): seconds of the GPU's global timer
 * between stamps queued on the step's stream, summed since hmd_cuda_md_create. forward: from
 * the first half step to the ghosts' arrival (what the forward halo holds the stream, host
 * staging or peer waits included); providers: from there to the forces of the home atoms and
 * ghosts; reverse: from there to the ghost forces folded onto their owners. List steps count
 * providers and reverse only (the host made their ghosts). All zero when the clock is off. */
struct hmd_cuda_md_times {
    double forward_s, providers_s, reverse_s;
    long long forwards, reverses; /* halos timed */
};

/* Where a list step's device part went (host wall time, s): the atoms' upload, the halo's
 * set-up, the providers' preparation (their lists), then the forces and the end of the step
 * (forces_s of it the device's own time from the forces on). */
struct hmd_cuda_list_times {
    double upload_s, halo_s, prepare_s, rest_s, forces_s;
};

/* Energies of the last force computation and the thermostat's total work (eV), and the
 * neighbours within rcut that computation left out of the descriptors (beyond sel); terms
 * [nterms] the providers' energy terms in their order (eV). */
#define HMD_CUDA_MAX_TERMS 16
struct hmd_cuda_md_scalars {
    double energy, virial[9], thermostat_work, dropped;
    int nterms;
    double terms[HMD_CUDA_MAX_TERMS];
};

#if HMD_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif

/* Writes "NVIDIA H200 (132 SMs, 140.4 GiB)" of the current device into buf. Returns HMD_OK, or
 * HMD_ENOTSUP with a message when there is no usable device. */
int hmd_cuda_device_info(char *buf, size_t len);

/* Binds this rank to GPU local_rank modulo the GPUs visible (several ranks may share one; every
 * GPU stays visible, as NVSHMEM's peer access needs) and makes its context; *device and
 * *ndevices (unless NULL) say which and of how many. HMD_ENOTSUP without a device. */
int hmd_cuda_select_device(int local_rank, int *device, int *ndevices);

/* ---- device atoms ---- */

/* Makes an empty state with its stream; x and f from `heap` when not NULL (copied). */
int hmd_cuda_state_create(struct hmd_cuda_state **s, const struct hmd_cuda_heap *heap);

/* Room for nlocal home atoms and nall in all (capacities grow by a margin, contents are not
 * kept when an array moves). Neighbour-list steps only; collective with a heap. */
int hmd_cuda_state_reserve(struct hmd_cuda_state *s, int nlocal, int nall);

/* Copies the fields of `fields` (HMD_FIELD_BIT of core/atoms.h: X, F, TYPE, ID for all nall
 * atoms, V and MASS for the home atoms) from host atoms `a` (their nlocal and nghost become
 * the state's counts; reserve first). Stream-ordered; returns when the host arrays may change. */
int hmd_cuda_state_upload(struct hmd_cuda_state *s, const struct hmd_atoms *a, unsigned fields);

/* Copies the home atoms' fields of `fields` (X, V, F) into host atoms `a`. Synchronises. */
int hmd_cuda_state_download(struct hmd_cuda_state *s, struct hmd_atoms *a, unsigned fields);

/* The same for the ghosts too (X, F of all nall atoms; V of the home atoms). Synchronises. */
int hmd_cuda_state_download_all(struct hmd_cuda_state *s, struct hmd_atoms *a, unsigned fields);

/* The device arrays and counts. */
struct hmd_cuda_atoms hmd_cuda_state_atoms(const struct hmd_cuda_state *s);

/* Bumped whenever a device array moves (a CUDA graph holding the pointers is then stale). */
unsigned long hmd_cuda_state_generation(const struct hmd_cuda_state *s);

size_t hmd_cuda_state_device_bytes(const struct hmd_cuda_state *s);

/* Frees the state (NULL is fine). */
void hmd_cuda_state_destroy(struct hmd_cuda_state *s);

/* ---- force providers ---- */

/* The Deep Potential `m` (borrowed for the provider's life) as a device provider: it builds
 * its own neighbour list from the device positions with cut-off rcut + skin (Å) at every
 * prepare; `mixed` runs the descriptor's networks in fp32
 * (the se_e2_a embedding, DPA-1's embedding and attention; environment, sums, fitting nets,
 * forces and energies in double). Forces are summed exactly (integer accumulation), so they do
 * not depend on the order of the GPU's threads. Returns HMD_OK, HMD_ENOTSUP (no device, a model
 * the GPU does not run), HMD_ENOMEM. */
int hmd_cuda_dp_provider_create(struct hmd_force_provider *p, const struct hmd_dp_model *m,
                                double skin, bool mixed);

/* A host provider that runs `device` (a device provider, taken over) on the host arrays it is
 * given: the atoms go to the device, forces, energies and per-atom energies come back and are
 * added (per-atom virials are not computed: left as they are). For single points. */
int hmd_cuda_offload_create(struct hmd_force_provider *host, struct hmd_force_provider device);

/* ---- halo transports ---- */

/* The `mpi` transport: device arrays of any plan, with the host transport's arithmetic (bit for
 * bit), the swaps of a stage posted at once; the bytes of swaps with other ranks go through the
 * host (pinned buffers: the nodes' MPI is not CUDA-aware) or, with device_buffers (a CUDA-aware
 * MPI, comm/comm.h hmd_comm_cuda_aware), straight from device buffers. Its calls synchronise, so
 * a step using it is recorded as several graphs. */
int hmd_cuda_halo_open_mpi(struct hmd_halo_transport *t, bool device_buffers);

/* The `self` transport: device arrays of a plan whose swaps all stay on this rank (periodic
 * images), replayed in one kernel each way with the arithmetic and the order of additions of
 * the host transport, bit for bit. setup refuses another plan (HMD_ENOTSUP). */
int hmd_cuda_halo_open_self(struct hmd_halo_transport *t);

/* ---- the MD step ---- */

/* The step on `state` with the device providers providers[0..n-1] and transport `halo` (all
 * borrowed for the life of md). Positions and the rest come with the first
 * hmd_cuda_md_finish_list_step. On failure *md may still need hmd_cuda_md_destroy. */
int hmd_cuda_md_create(struct hmd_cuda_md **md, struct hmd_cuda_state *state,
                       struct hmd_force_provider *providers, int n, struct hmd_halo_transport *halo,
                       const struct hmd_cuda_md_config *c);

/* A neighbour-list step, first part: next step number, first half step; copies the home
 * atoms' positions, and with `moving` (migration may move atoms: several ranks) their
 * velocities, into `a`, and gives the largest displacement of any home atom since the last
 * list (Å). Synchronises. */
int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, struct hmd_atoms *a, bool moving,
                                double *max_disp);

/* Second part (and, with `initial`, the forces of step 0), after the host's migration and
 * borders made `a` (home atoms, then ghosts) and `plan`: uploads the atoms, sets up the halo,
 * prepares the providers, computes the forces and, unless initial, finishes the step. Unless
 * `moving` (and not initial), the home atoms are those of the last list step in the same order
 * with their velocities, masses and ids on the device: only positions and the ghosts go up.
 * *t (unless NULL): where the time went. The only place device memory grows. Synchronises. */
int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, const struct hmd_atoms *a,
                                 const struct hmd_halo_plan *plan, const struct hmd_box *box,
                                 bool initial, bool moving, struct hmd_cuda_list_times *t);

/* A whole step with the current list, as one CUDA graph; asynchronous. */
int hmd_cuda_md_step(struct hmd_cuda_md *md, const struct hmd_box *box);

/* Waits until the device has done the steps queued on it. Synchronises. */
int hmd_cuda_md_wait(struct hmd_cuda_md *md);

/* Largest distance any atom will have moved since the last list once the next step's first
 * half is done (Å): decides whether that step rebuilds. Synchronises. */
int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp);

/* Copies the home atoms' fields of `fields` (X, V, F) into `a` and the scalars into *s.
 * Synchronises. */
int hmd_cuda_md_fetch(struct hmd_cuda_md *md, struct hmd_atoms *a, unsigned fields,
                      struct hmd_cuda_md_scalars *s);

/* The halo clock so far into *t (zeros when config halo_clock was off). Synchronises. */
int hmd_cuda_md_halo_times(struct hmd_cuda_md *md, struct hmd_cuda_md_times *t);

/* Device memory of the step's own arrays (bytes; the state, providers and transport apart). */
size_t hmd_cuda_md_device_bytes(const struct hmd_cuda_md *md);

/* The home atoms' positions at the last list build into x_build[nlocal][3] (host, the state's
 * order) and *maxd2, the largest squared displacement from them predicted so far (Å^2, this
 * rank's): what a checkpoint needs to continue at a step that is not a list step. Waits for
 * the queued steps. */
int hmd_cuda_md_list_state(struct hmd_cuda_md *md, double *x_build, double *maxd2);

/* Continues a checkpoint written at a step that was not a list step, right after the first
 * hmd_cuda_md_finish_list_step (initial) was given the atoms at the checkpoint's list
 * positions (so that the lists and x_build are the original run's): the home atoms take the
 * positions x[nlocal][3] (the state's order), the ghosts follow by the forward halo in `box`
 * (the cell now), the forces are computed again, and the displacement so far is maxd2 (Å^2;
 * < 0: not known, counted from the list positions). Collective over the halo's ranks;
 * synchronises. */
int hmd_cuda_md_resume(struct hmd_cuda_md *md, const double *x, const struct hmd_box *box,
                       double maxd2);

/* ---- pressure coupling ---- */

/* Makes the few device and pinned buffers of the two calls below. On failure *s may still
 * need hmd_cuda_scale_destroy. */
int hmd_cuda_scale_create(struct hmd_cuda_scale **s);

/* This rank's kinetic-energy tensor ke[3a+b] = sum m v_a v_b over the home atoms (eV, twice the
 * kinetic energy on the trace: md/integrate.c before its sum over ranks). Queued after the
 * steps on the state's stream; synchronises. */
int hmd_cuda_scale_kinetic(struct hmd_cuda_scale *s, const struct hmd_cuda_state *state,
                           double ke[9]);

/* Scales the home atoms: x' = x mu, v' = v inv (inv = mu^-1; md/crescale.h), and *dkin = this
 * rank's kinetic energy change (eV). Ghosts follow at the next forward halo. Synchronises. */
int hmd_cuda_scale_apply(struct hmd_cuda_scale *s, const struct hmd_cuda_state *state,
                         const double mu[3][3], const double inv[3][3], double *dkin);

/* Frees s (NULL is fine). */
void hmd_cuda_scale_destroy(struct hmd_cuda_scale *s);

/* Frees md (NULL is fine), not what it borrows. */
void hmd_cuda_md_destroy(struct hmd_cuda_md *md);

#ifdef __cplusplus
}
#endif
#else /* no CUDA in this build */
static inline int hmd_cuda_device_info(char *buf, size_t len)
{
    (void)buf;
    (void)len;
    return hmd_error_set(HMD_ENOTSUP, "this halomd was built without CUDA (HALOMD_CUDA=OFF or no "
                                      "nvcc at build time)");
}
static inline int hmd_cuda_unavailable(void)
{
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_select_device(int local_rank, int *device, int *ndevices)
{
    (void)local_rank, (void)device, (void)ndevices;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_state_create(struct hmd_cuda_state **s, const struct hmd_cuda_heap *h)
{
    (void)h;
    *s = NULL;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_state_reserve(struct hmd_cuda_state *s, int nlocal, int nall)
{
    (void)s, (void)nlocal, (void)nall;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_state_upload(struct hmd_cuda_state *s, const struct hmd_atoms *a,
                                        unsigned fields)
{
    (void)s, (void)a, (void)fields;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_state_download(struct hmd_cuda_state *s, struct hmd_atoms *a,
                                          unsigned fields)
{
    (void)s, (void)a, (void)fields;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_state_download_all(struct hmd_cuda_state *s, struct hmd_atoms *a,
                                              unsigned fields)
{
    (void)s, (void)a, (void)fields;
    return hmd_cuda_unavailable();
}
static inline struct hmd_cuda_atoms hmd_cuda_state_atoms(const struct hmd_cuda_state *s)
{
    (void)s;
    const struct hmd_cuda_atoms none = {0};
    return none;
}
static inline size_t hmd_cuda_state_device_bytes(const struct hmd_cuda_state *s)
{
    (void)s;
    return 0;
}
static inline void hmd_cuda_state_destroy(struct hmd_cuda_state *s)
{
    (void)s;
}
static inline int hmd_cuda_dp_provider_create(struct hmd_force_provider *p,
                                              const struct hmd_dp_model *m, double skin, bool mixed)
{
    (void)p, (void)m, (void)skin, (void)mixed;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_offload_create(struct hmd_force_provider *host,
                                          struct hmd_force_provider device)
{
    (void)host;
    hmd_force_provider_destroy(&device);
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_halo_open_self(struct hmd_halo_transport *t)
{
    (void)t;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_halo_open_mpi(struct hmd_halo_transport *t, bool device_buffers)
{
    (void)t;
    (void)device_buffers;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_create(struct hmd_cuda_md **md, struct hmd_cuda_state *state,
                                     struct hmd_force_provider *providers, int n,
                                     struct hmd_halo_transport *halo,
                                     const struct hmd_cuda_md_config *c)
{
    (void)state, (void)providers, (void)n, (void)halo, (void)c;
    *md = NULL;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, struct hmd_atoms *a,
                                              bool moving, double *max_disp)
{
    (void)md, (void)a, (void)moving, (void)max_disp;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, const struct hmd_atoms *a,
                                               const struct hmd_halo_plan *plan,
                                               const struct hmd_box *box, bool initial, bool moving,
                                               struct hmd_cuda_list_times *t)
{
    (void)md, (void)a, (void)plan, (void)box, (void)initial, (void)moving, (void)t;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_step(struct hmd_cuda_md *md, const struct hmd_box *box)
{
    (void)md, (void)box;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_wait(struct hmd_cuda_md *md)
{
    (void)md;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp)
{
    (void)md, (void)disp;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_fetch(struct hmd_cuda_md *md, struct hmd_atoms *a, unsigned fields,
                                    struct hmd_cuda_md_scalars *s)
{
    (void)md, (void)a, (void)fields, (void)s;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_halo_times(struct hmd_cuda_md *md, struct hmd_cuda_md_times *t)
{
    (void)md;
    memset(t, 0, sizeof *t);
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_list_state(struct hmd_cuda_md *md, double *x_build, double *maxd2)
{
    (void)md, (void)x_build, (void)maxd2;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_md_resume(struct hmd_cuda_md *md, const double *x,
                                     const struct hmd_box *box, double maxd2)
{
    (void)md, (void)x, (void)box, (void)maxd2;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_scale_create(struct hmd_cuda_scale **s)
{
    *s = NULL;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_scale_kinetic(struct hmd_cuda_scale *s,
                                         const struct hmd_cuda_state *state, double ke[9])
{
    (void)s, (void)state, (void)ke;
    return hmd_cuda_unavailable();
}
static inline int hmd_cuda_scale_apply(struct hmd_cuda_scale *s, const struct hmd_cuda_state *state,
                                       const double mu[3][3], const double inv[3][3], double *dkin)
{
    (void)s, (void)state, (void)mu, (void)inv, (void)dkin;
    return hmd_cuda_unavailable();
}
static inline void hmd_cuda_scale_destroy(struct hmd_cuda_scale *s)
{
    (void)s;
}
static inline size_t hmd_cuda_md_device_bytes(const struct hmd_cuda_md *md)
{
    (void)md;
    return 0;
}
static inline void hmd_cuda_md_destroy(struct hmd_cuda_md *md)
{
    (void)md;
}
#endif

#endif /* HMD_CUDA_CUDA_API_H */
