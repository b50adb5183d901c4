/* The CUDA backend as the host code sees it.
 *
 * hmd_cuda_dp: a device copy of a Deep Potential model that evaluates energies, forces and
 * virial on the GPU (src/cuda/dp_eval.cu), the twin of hmd_dp_compute_cpu (nnp/dp_eval.h).
 * hmd_cuda_dp_compute moves the atoms to the device and the results back (single points); the
 * GPU builds its own neighbour list (cell list, src/cuda/nbr_list.cu) from the home atoms and
 * the ghosts the host halo made. Supported: se_e2_a (networks or compressed tables) and DPA-1
 * (src/cuda/dpa1_eval.cu), in double.
 * Other models are refused (HMD_ENOTSUP) when the context is made.
 *
 * hmd_cuda_md: the MD step of a one-rank run resident on the device (src/cuda/md_step.cu).
 * The host takes part at neighbour-list steps only (wrapping, the halo plan, the list of
 * ghost images) and at output steps (what they write).
 *
 * Without CUDA in the build (HMD_HAVE_CUDA 0) every function is a stub: hmd_cuda_dp_create
 * returns HMD_ENOTSUP.
 */
#ifndef HMD_CUDA_CUDA_API_H
#define HMD_CUDA_CUDA_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "core/error.h"
#include "nnp/dp_eval.h"
#ifdef __cplusplus
}
#endif

#include <stdbool.h>
#include <stdint.h>

struct hmd_cuda_dp;
struct hmd_cuda_md;

enum { HMD_CUDA_TCOUPL_NO, HMD_CUDA_TCOUPL_VRESCALE, HMD_CUDA_TCOUPL_LANGEVIN };

/* What the device step needs of the run (md/integrate.h, md/thermostat.h). */
struct hmd_cuda_md_config {
    int nlocal;             /* home atoms (all atoms: one rank) */
    double dt;              /* ps */
    int tcoupl;             /* HMD_CUDA_TCOUPL_* */
    double ref_t;           /* K */
    double tau_t;           /* ps */
    double ndof;            /* degrees of freedom of the kinetic energy */
    uint64_t seed;          /* thermostat noise */
    int nstcomm;            /* remove the centre-of-mass velocity every nstcomm steps; 0: never */
    int type0;              /* model type of the system's atom 0 (DPA-1's empty neighbour slots) */
    long long first_step;   /* the step the run starts from (a continued run: the checkpoint's) */
    double thermostat_work; /* kinetic energy the thermostat added before first_step (eV) */
};

/* Energies of the last force computation and the thermostat's total work (eV), and the
 * neighbours within rcut that computation left out of the descriptors (beyond sel). */
struct hmd_cuda_md_scalars {
    double energy, virial[9], thermostat_work, dropped;
};

#if HMD_HAVE_CUDA
#ifdef __cplusplus
extern "C" {
#endif

/* Writes "NVIDIA H200 (132 SMs, 140.4 GiB)" of the current device into buf. Returns HMD_OK, or
 * HMD_ENOTSUP with a message when there is no usable device. */
int hmd_cuda_device_info(char *buf, size_t len);

/* Uploads `m` (borrowed during the call) and makes the evaluation context. `mixed` (precision =
 * mixed) runs the descriptor's networks in fp32: the se_e2_a embedding (networks or tables),
 * DPA-1's embedding and attention; the environment matrix, the descriptor sums, the fitting
 * nets, forces, virial and energies stay in double. Returns HMD_OK, HMD_ENOTSUP (no device; a
 * model kind the GPU path does not have), HMD_ENOMEM. */
int hmd_cuda_dp_create(struct hmd_cuda_dp **dp, const struct hmd_dp_model *m, bool mixed);

/* hmd_dp_compute_cpu on the GPU, same arguments and results except that the neighbour list is
 * built on the device with cut-off `rlist` (>= rcut) from x. out->atom_virial must be NULL.
 * Returns HMD_OK, HMD_ENOMEM, or HMD_ESOFTWARE on a CUDA error (message names the call). */
int hmd_cuda_dp_compute(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *x,
                        const int *type, int type0, double rlist, struct hmd_dp_output *out);

/* Device memory the context holds (bytes). */
size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp);

/* Frees the context (NULL is fine). */
void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp);

/* Puts the home atoms on the device for an MD run evaluated by `dp` (borrowed for the life of
 * md): masses, global ids, velocities [nlocal][3]. Positions come with the first
 * hmd_cuda_md_finish_list_step. On failure *md may still need hmd_cuda_md_destroy. */
int hmd_cuda_md_create(struct hmd_cuda_md **md, struct hmd_cuda_dp *dp,
                       const struct hmd_cuda_md_config *c, const double *mass, const int64_t *id,
                       const double *v);

/* A neighbour-list step, first part: next step number, first half step; copies the home
 * positions to x_home [nlocal][3] and gives the largest displacement of any atom since the
 * last list (Å). Synchronises. */
int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, double *x_home, double *max_disp);

/* Second part (and, with `initial`, the forces of step 0): positions x [nall][3] (home atoms
 * wrapped, then ghosts) and types [nall] as the host halo left them, ghost g an image of home
 * atom ghost_src[g] shifted by ghost_shift[g] (dd/halo_plan.h hmd_halo_plan_self_images);
 * builds the list with cut-off rlist, computes forces and, unless initial, finishes the step.
 * *forces_s (unless NULL): the device's time from the forces to the end of the step (s), the
 * part of the list step that the performance table counts as Force. The only place device
 * memory grows. Synchronises. */
int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, int nall, const double *x, const int *type,
                                 const int *ghost_src, const double *ghost_shift, double rlist,
                                 bool initial, double *forces_s);

/* A whole step with the current list, as one CUDA graph; asynchronous. */
int hmd_cuda_md_step(struct hmd_cuda_md *md);

/* Waits until the device has done the steps queued on it. Synchronises. */
int hmd_cuda_md_wait(struct hmd_cuda_md *md);

/* Largest distance any atom will have moved since the last list once the next step's first
 * half is done (Å): decides whether that step rebuilds. Synchronises. */
int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp);

/* Copies home positions, velocities, forces [nlocal][3] (each NULL when not wanted) and the
 * scalars to the host. Synchronises. */
int hmd_cuda_md_fetch(struct hmd_cuda_md *md, double *x, double *v, double *f,
                      struct hmd_cuda_md_scalars *s);

/* Device memory of the run: the step's arrays and the model's context (bytes). */
size_t hmd_cuda_md_device_bytes(const struct hmd_cuda_md *md);

/* Frees md (NULL is fine), not the dp it borrows. */
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
static inline int hmd_cuda_dp_create(struct hmd_cuda_dp **dp, const struct hmd_dp_model *m,
                                     bool mixed)
{
    (void)m;
    (void)mixed;
    *dp = NULL;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_dp_compute(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *x,
                                      const int *type, int type0, double rlist,
                                      struct hmd_dp_output *out)
{
    (void)dp, (void)nlocal, (void)nall, (void)x, (void)type, (void)type0, (void)rlist, (void)out;
    return hmd_cuda_device_info(NULL, 0);
}
static inline size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp)
{
    (void)dp;
    return 0;
}
static inline void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp)
{
    (void)dp;
}
static inline int hmd_cuda_md_create(struct hmd_cuda_md **md, struct hmd_cuda_dp *dp,
                                     const struct hmd_cuda_md_config *c, const double *mass,
                                     const int64_t *id, const double *v)
{
    (void)dp, (void)c, (void)mass, (void)id, (void)v;
    *md = NULL;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_md_begin_list_step(struct hmd_cuda_md *md, double *x_home,
                                              double *max_disp)
{
    (void)md, (void)x_home, (void)max_disp;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_md_finish_list_step(struct hmd_cuda_md *md, int nall, const double *x,
                                               const int *type, const int *ghost_src,
                                               const double *ghost_shift, double rlist,
                                               bool initial, double *forces_s)
{
    (void)md, (void)nall, (void)x, (void)type, (void)ghost_src, (void)ghost_shift, (void)rlist,
        (void)initial, (void)forces_s;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_md_step(struct hmd_cuda_md *md)
{
    (void)md;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_md_wait(struct hmd_cuda_md *md)
{
    (void)md;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_md_next_displacement(struct hmd_cuda_md *md, double *disp)
{
    (void)md, (void)disp;
    return hmd_cuda_device_info(NULL, 0);
}
static inline int hmd_cuda_md_fetch(struct hmd_cuda_md *md, double *x, double *v, double *f,
                                    struct hmd_cuda_md_scalars *s)
{
    (void)md, (void)x, (void)v, (void)f, (void)s;
    return hmd_cuda_device_info(NULL, 0);
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
