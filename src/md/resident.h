/* The MD step of a one-rank run kept on the GPU (backend = cuda; cuda/cuda_api.h
 * hmd_cuda_md): the glue between the host's atoms, halo plan and parameters and the device.
 * The host arrays (struct hmd_atoms) are current only after hmd_resident_fetch, and their
 * positions after hmd_resident_begin_list_step. */
#ifndef HMD_MD_RESIDENT_H
#define HMD_MD_RESIDENT_H

#include <stdbool.h>

#include "core/atoms.h"
#include "core/params.h"
#include "md/forces.h"
#include "md/thermostat.h"

struct hmd_resident {
    struct hmd_cuda_md *dev; /* NULL: the step runs on the host */
    int *ghost_src;          /* [cap_ghost] home atom each ghost is an image of */
    double *ghost_shift;     /* [cap_ghost][3] its lattice shift (Å) */
    int cap_ghost;
};

/* Starts the device step for the atoms of `atoms` (after the first hmd_forces_rebuild, one
 * rank, fs on the cuda backend) at step `first_step` (0, or a checkpoint's) with the thermostat
 * work done before it, and computes the forces of that step on the device: fs->energy and
 * fs->virial are set. Returns HMD_OK, HMD_ENOMEM or the device's error. */
int hmd_resident_start(struct hmd_resident *r, struct hmd_forces *fs, struct hmd_atoms *atoms,
                       const struct hmd_thermostat *th, const struct hmd_params *p,
                       int64_t first_step, double thermostat_work);

/* First part of a neighbour-list step: the step's first half on the device, then its home
 * positions into atoms->x; *moved is the largest displacement since the last list (Å). */
int hmd_resident_begin_list_step(struct hmd_resident *r, struct hmd_atoms *atoms, double *moved);

/* Second part, after hmd_forces_rebuild made the ghosts: uploads them, builds the list,
 * computes forces and finishes the step on the device; *forces_s is the device's time from the
 * forces to the end of the step (s). */
int hmd_resident_finish_list_step(struct hmd_resident *r, struct hmd_forces *fs,
                                  struct hmd_atoms *atoms, double *forces_s);

/* A step that keeps the list (one CUDA graph); asynchronous. */
int hmd_resident_step(struct hmd_resident *r);

/* Waits until the device has done the steps queued on it. */
int hmd_resident_wait(struct hmd_resident *r);

/* The largest distance any atom will have moved since the last list once the next step's
 * first half is done (Å): whether that step rebuilds. Synchronises. */
int hmd_resident_next_displacement(struct hmd_resident *r, double *disp);

/* Copies what an output step needs to the host: always the energy and virial (into fs) and
 * the thermostat's total work; positions, velocities and forces of the home atoms when asked. */
int hmd_resident_fetch(struct hmd_resident *r, struct hmd_forces *fs, struct hmd_atoms *atoms,
                       bool x, bool v, bool f, double *thermostat_work);

/* Device memory of the run (bytes). */
size_t hmd_resident_device_bytes(const struct hmd_resident *r);

/* Frees what r owns and zeroes it. */
void hmd_resident_free(struct hmd_resident *r);

#endif /* HMD_MD_RESIDENT_H */
