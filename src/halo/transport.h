/* Halo transports: how a halo plan (dd/halo_plan.h) is replayed every step, on host or device
 * arrays. One interface for all of them, chosen at run time (md/backend.c is the registry):
 *   host     host arrays; swaps over comm/comm.h (MPI point-to-point, or copies on one rank);
 *   self     device arrays of a one-rank plan (periodic images): one kernel each way;
 *   mpi      device arrays, any plan: kernels pack and fold, MPI moves the bytes (host-staged);
 *   nvshmem  device arrays on the NVSHMEM symmetric heap: GPU-initiated, fused kernels.
 * forward copies positions from owners to ghosts, swap by swap in plan order, each sent
 * position plus the swap's periodic shift in the cell passed to that call (so a changing box is
 * honoured); reverse adds per-atom values of ghosts onto their owners, swaps in reverse order,
 * in a fixed order of additions (no atomics): results are bitwise reproducible and equal for
 * every transport, the host's order being the reference.
 *
 * Callers go through the inline wrappers, never through ops directly.
 * Collective: setup, forward and reverse are called by every rank in the same order.
 */
#ifndef HMD_HALO_TRANSPORT_H
#define HMD_HALO_TRANSPORT_H

#include <stdbool.h>

#include "core/box.h"
#include "dd/halo_plan.h"

/* Most values one global sum adds (struct hmd_halo_transport_ops.sum). */
#define HMD_HALO_MAX_SUM 16

/* What a transport replays the plan on, given at every neighbour-list step. */
struct hmd_halo_arrays {
    const struct hmd_halo_plan *plan; /* borrowed until the next setup */
    const struct hmd_box *box;        /* the cell now (a forward may pass another) */
    int nall;                         /* home atoms and ghosts */
    double *x, *f; /* [cap][3] positions and forces the calls will pass: a device transport may
                      require these very arrays (nvshmem: on the symmetric heap) */
    void *stream;  /* device transports: the stream the set-up's copies are queued on */
};

struct hmd_halo_transport_ops {
    const char *name; /* "host", "self", "mpi", "nvshmem" */
    bool device;      /* arrays live on the device; calls take a stream */
    bool capturable;  /* forward and reverse may be recorded into a CUDA graph */
    /* At neighbour-list steps: the new plan; may allocate. Collective. */
    int (*setup)(void *t, const struct hmd_halo_arrays *a);
    /* x [nall][3]: owners -> ghosts, shifts from `box`. Device: queued on `stream`. */
    int (*forward)(void *t, double *x, const struct hmd_box *box, void *stream);
    /* v [nall][ncomp] (ncomp 3, or up to 9 for the host): ghosts -> owners, added. */
    int (*reverse)(void *t, double *v, int ncomp, void *stream);
    /* Device transports: total[0..n) = the sum over ranks of local[0..n) (device arrays, n <=
     * HMD_HALO_MAX_SUM), added in rank order so that every rank gets the same bits: the global
     * sums of the step on the device (kinetic energy, momentum). Collective. */
    int (*sum)(void *t, const double *local, double *total, int n, void *stream);
    /* Bytes of device memory it holds. */
    size_t (*device_bytes)(const void *t);
    /* Device transports: changes whenever the device arrays forward and reverse use move (a
     * CUDA graph recorded from them is then stale). NULL: never. */
    unsigned long (*generation)(const void *t);
    void (*destroy)(void *t);
    /* Device transports whose kernels wait on other ranks: a failure they recorded (a wait that
     * ran out), reported once the stream has been synchronised. NULL: none can happen. */
    int (*check)(void *t);
    /* waited[0], waited[1]: seconds this rank's forward and reverse calls have spent so far
     * waiting for other ranks' data (device transports: read once the stream has been
     * synchronised). Returns false when it cannot tell. NULL: not measured. */
    bool (*waited)(void *t, double waited[2]);
};

struct hmd_halo_transport {
    const struct hmd_halo_transport_ops *ops; /* NULL: none opened */
    void *self;
};

/* Opens the host transport into *t. HMD_ENOMEM. */
int hmd_halo_transport_open_host(struct hmd_halo_transport *t);

static inline const char *hmd_halo_transport_name(const struct hmd_halo_transport *t)
{
    return t->ops->name;
}

static inline bool hmd_halo_transport_on_device(const struct hmd_halo_transport *t)
{
    return t->ops->device;
}

static inline bool hmd_halo_transport_capturable(const struct hmd_halo_transport *t)
{
    return t->ops->capturable;
}

static inline int hmd_halo_transport_setup(struct hmd_halo_transport *t,
                                           const struct hmd_halo_arrays *a)
{
    return t->ops->setup(t->self, a);
}

static inline int hmd_halo_transport_forward(struct hmd_halo_transport *t, double *x,
                                             const struct hmd_box *box, void *stream)
{
    return t->ops->forward(t->self, x, box, stream);
}

static inline int hmd_halo_transport_reverse(struct hmd_halo_transport *t, double *v, int ncomp,
                                             void *stream)
{
    return t->ops->reverse(t->self, v, ncomp, stream);
}

static inline int hmd_halo_transport_sum(struct hmd_halo_transport *t, const double *local,
                                         double *total, int n, void *stream)
{
    return t->ops->sum(t->self, local, total, n, stream);
}

static inline size_t hmd_halo_transport_device_bytes(const struct hmd_halo_transport *t)
{
    return t->ops && t->ops->device_bytes ? t->ops->device_bytes(t->self) : 0;
}

static inline unsigned long hmd_halo_transport_generation(const struct hmd_halo_transport *t)
{
    return t->ops && t->ops->generation ? t->ops->generation(t->self) : 0;
}

/* After the stream was synchronised: HMD_OK, or the failure a device wait recorded. */
static inline int hmd_halo_transport_check(struct hmd_halo_transport *t)
{
    return t->ops && t->ops->check ? t->ops->check(t->self) : 0;
}

/* Seconds forward [0] and reverse [1] spent waiting for other ranks so far (ops.waited); false
 * (and zeros) when the transport does not measure it. */
static inline bool hmd_halo_transport_waited(struct hmd_halo_transport *t, double waited[2])
{
    waited[0] = waited[1] = 0.0;
    return t->ops && t->ops->waited && t->ops->waited(t->self, waited);
}

/* Closes the transport (one never opened is fine) and zeroes *t. */
static inline void hmd_halo_transport_close(struct hmd_halo_transport *t)
{
    if (t->ops && t->ops->destroy) {
        t->ops->destroy(t->self);
    }
    t->ops = NULL;
    t->self = NULL;
}

#endif /* HMD_HALO_TRANSPORT_H */
