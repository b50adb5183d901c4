/* The device side of a run whose step is kept on the GPU (backend = cuda): the glue between the
 * host's atoms, halo plan and parameters and the device (cuda/cuda_api.h): the device state, the
 * device halo transport and the device step, which borrows the force calculation's device
 * providers. The host arrays
 * (struct hmd_atoms) are current only after hmd_device_run_fetch, and their positions and
 * velocities after hmd_device_run_begin_list_step. */
#ifndef HMD_MD_DEVICE_RUN_H
#define HMD_MD_DEVICE_RUN_H

#include <stdbool.h>

#include "core/atoms.h"
#include "core/box.h"
#include "core/params.h"
#include "md/forces.h"
#include "md/thermostat.h"

#include "cuda/cuda_api.h"

struct hmd_device_run {
    struct hmd_cuda_state *state;   /* the atoms on the device (owned) */
    struct hmd_halo_transport halo; /* the device halo (owned) */
    struct hmd_cuda_md *md;         /* the step (owned); NULL: the step runs on the host */
    char transport[256];            /* the halo transport chosen, for the log */
};

/* Whether the step runs on the device. */
static inline bool hmd_device_run_on(const struct hmd_device_run *d)
{
    return d->md != NULL;
}

/* Starts the device step with fs's device providers for the atoms of `atoms` (after the first
 * hmd_forces_rebuild) at step `first_step` (0, or a checkpoint's) with the thermostat work done
 * before it, and computes the forces of that step on the device: fs->energy, fs->virial and
 * fs->terms are set, and atoms->f. Returns HMD_OK, HMD_ENOMEM or the device's error. */
int hmd_device_run_start(struct hmd_device_run *d, struct hmd_forces *fs, struct hmd_atoms *atoms,
                         const struct hmd_box *box, const struct hmd_thermostat *th,
                         const struct hmd_params *p, int64_t first_step, double thermostat_work);

/* First part of a neighbour-list step: the step's first half on the device, then its home
 * positions (and, with several ranks, where migration moves atoms, their velocities) into
 * `atoms`; *moved is the largest displacement since the last list (Å). */
int hmd_device_run_begin_list_step(struct hmd_device_run *d, struct hmd_atoms *atoms,
                                   double *moved);

/* Second part, after hmd_forces_rebuild made the ghosts and the plan: uploads them, builds the
 * lists, computes forces and finishes the step on the device; *t: where the time went
 * (cuda_api.h hmd_cuda_list_times). */
int hmd_device_run_finish_list_step(struct hmd_device_run *d, struct hmd_forces *fs,
                                    struct hmd_atoms *atoms, const struct hmd_box *box,
                                    struct hmd_cuda_list_times *t);

/* A step that keeps the list (one CUDA graph); asynchronous. */
int hmd_device_run_step(struct hmd_device_run *d, const struct hmd_box *box);

/* Waits until the device has done the steps queued on it. */
int hmd_device_run_wait(struct hmd_device_run *d);

/* The largest distance any atom will have moved since the last list once the next step's
 * first half is done (Å): whether that step rebuilds. Synchronises. */
int hmd_device_run_next_displacement(struct hmd_device_run *d, double *disp);

/* Copies what an output step needs to the host: always the energies and virial (into fs) and
 * the thermostat's total work; positions, velocities and forces of the home atoms when asked. */
int hmd_device_run_fetch(struct hmd_device_run *d, struct hmd_forces *fs, struct hmd_atoms *atoms,
                         bool x, bool v, bool f, double *thermostat_work);

/* The device's halo clock so far (cuda_api.h hmd_cuda_md_times: on with several ranks, or
 * HMD_HALO_CLOCK=1) and waited[0], waited[1], the seconds the transport's forward and reverse
 * calls waited for other ranks (*has_waited false: not measured, or the clock is off).
 * Synchronises. */
int hmd_device_run_halo_times(struct hmd_device_run *d, struct hmd_cuda_md_times *t,
                              double waited[2], bool *has_waited);

/* Device memory of the run: state, step, transport and providers (bytes). */
size_t hmd_device_run_bytes(const struct hmd_device_run *d, const struct hmd_forces *fs);

/* Frees what d owns and zeroes it. */
void hmd_device_run_free(struct hmd_device_run *d);

#endif /* HMD_MD_DEVICE_RUN_H */
