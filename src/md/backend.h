/* The one place that knows which compute backends and halo transports this build has (the
 * registry; CUDA only where HMD_HAVE_CUDA) and chooses between them once, at set-up:
 *   cpu   the host providers (ff/dp.h, ff/classical.h; for hybrid ML/MM the Deep Potential
 *         behind ff/subset.h) and the host step;
 *   cuda  the Deep Potential and the classical force field as device providers
 *         (cuda/cuda_api.h, cuda/ff/classical.h) and the step kept on the device
 *         (md/step_device.h) for a run; for single points (eval) the same providers behind a
 *         host adapter that moves the atoms to the device and the results back. Hybrid ML/MM
 *         runs the Deep Potential on the device behind that adapter and ff/subset, the
 *         classical force field on the host, and the step on the host.
 */
#ifndef HMD_MD_BACKEND_H
#define HMD_MD_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/params.h"
#include "cuda/cuda_api.h"
#include "halo/transport.h"
#include "ff/ff_model.h"
#include "io/topology.h"
#include "md/forces.h"
#include "nnp/model.h"

/* What the providers need to know of the run. */
struct hmd_backend_request {
    const char *name;                 /* "auto", "cpu" or "cuda" (the backend parameter) */
    enum hmd_precision precision;     /* mixed needs the GPU */
    bool resident;                    /* the caller keeps the step on the device (a run) rather
                                         than computing single points from host arrays (eval) */
    const struct hmd_dp_model *model; /* borrowed for the providers' life; NULL: none (-p) */
    const struct hmd_topology *top;   /* classical force field (-p), borrowed during the call;
                                         NULL: none */
    const struct hmd_ff_settings *ff; /* its settings (ff->nnp_group: hybrid ML/MM) */
    int group_type0;                  /* hybrid: the model type of the nnp-group's first atom */
};

/* Chooses the backend (auto: cuda when it can be used, else cpu, and why) and adds the
 * providers of the request to fs (after hmd_forces_init and hmd_forces_use_replicated). Writes
 * what was chosen, and auto's reason for falling back, into what[len] (for the log).
 * precision = mixed on the CPU is HMD_ENOTSUP. Returns HMD_OK, HMD_ENOTSUP (no CUDA in the
 * build, no device, a model or mode the GPU does not run) or a provider's status, with the
 * reason in the message. */
int hmd_backend_setup(struct hmd_forces *fs, const struct hmd_backend_request *req, char *what,
                      size_t len);

/* The device halo of a run whose step is on the GPU: the transport (halo/transport.h) and, for
 * one whose positions and forces must live on a heap of its own (nvshmem), that heap. */
struct hmd_backend_halo {
    struct hmd_halo_transport transport; /* owned by whoever closes it */
    bool has_heap;
    struct hmd_cuda_heap heap;
};

/* Opens the device halo transport `name` (the halo-transport parameter: auto, nvshmem, mpi,
 * self) for this run's ranks; auto is self on one rank, else nvshmem when this build and the
 * run can use it, else mpi. Writes the choice (and auto's reason) into what[len]. Collective.
 * HMD_ENOTSUP for a transport this build or run cannot use, with the reason. */
int hmd_backend_open_halo(const char *name, struct hmd_backend_halo *h, char *what, size_t len);

/* Ends what opening a device halo started (NVSHMEM), after the transport and the state made on
 * its heap are gone. Collective; fine when nothing was started. */
void hmd_backend_close_halo(void);

/* The backends this build has, for -version ("cpu, cuda (se_e2_a, DPA-1, classical)"). */
const char *hmd_backend_list(void);

#endif /* HMD_MD_BACKEND_H */
