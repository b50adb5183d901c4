/* Force providers: the seam between the MD step and whatever computes forces (the Deep
 * Potential on the CPU or the GPU, a classical force field, the sum of both for ML/MM).
 *
 * The step clears the forces and the energy/virial accumulators once; every provider ADDS its
 * share to them. A provider sees this rank's atoms: nlocal home atoms (the centres) followed by
 * their ghosts, which are neighbours only; forces it puts on ghosts reach their owners through
 * the reverse halo, which the caller runs after every provider. The halo's cut-off is the
 * largest provider cut-off plus the Verlet buffer.
 *
 * Where the arrays live is the provider's kind: a host provider (HMD_FORCE_HOST) gets host
 * pointers and the host neighbour list; a device provider (HMD_FORCE_DEVICE) gets device
 * pointers and a stream, queues its work on that stream without host synchronisation,
 * allocation or copies in `compute` (so that a step can be captured into a CUDA graph and
 * replayed), and builds what it needs from the device arrays in `prepare`.
 *
 * Callers go through the inline wrappers below, never through ops directly.
 */
#ifndef HMD_FF_PROVIDER_H
#define HMD_FF_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/box.h"
#include "nbr/nbr_list.h"

/* Doubles of the energy/virial accumulator: the virial (3x3 row-major, eV; W_ab = sum_k
 * F_k,a x_k,b over all nall atoms, DeePMD-kit's sign), the potential energy (eV), then the count
 * of neighbours a model left out of its descriptors (beyond sel; a whole number). */
enum { HMD_FORCE_EV_VIRIAL = 0, HMD_FORCE_EV_ENERGY = 9, HMD_FORCE_EV_DROPPED = 10, HMD_FORCE_NEV };

/* Largest number of energy terms one provider reports (GROMACS-style: "LJ (SR)", "Bond", ...). */
#define HMD_FORCE_MAX_TERMS 16

enum hmd_force_kind {
    HMD_FORCE_HOST,   /* arrays in host memory, the host neighbour list given */
    HMD_FORCE_DEVICE, /* arrays in device memory, work queued on `stream` */
};

/* What a provider reads and adds to. Units: Å, eV, eV/Å. */
struct hmd_force_io {
    int nlocal;        /* home atoms: centres 0..nlocal-1 */
    int nall;          /* home atoms and ghosts */
    int ncount;        /* centres i < ncount count towards energy and virial (the replicated
                          scheme evaluates its halo atoms as centres that do not); nlocal else */
    const double *x;   /* [nall][3] positions, ghosts as images (unwrapped) */
    const int *type;   /* [nall] model type index */
    const int64_t *id; /* [nall] global atom id (0-based order of the input), or NULL */
    const struct hmd_box *box;     /* the cell (host memory) */
    const struct hmd_nbr_list *nl; /* host providers: full list of the nlocal centres with
                                      cut-off rlist >= every provider's cut-off; device: NULL */
    double *f;           /* [nall][3] forces: ADDED to */
    double *ev;          /* [HMD_FORCE_NEV] energy/virial accumulator: ADDED to */
    double *terms;       /* [the provider's term count] energies per term: ADDED to, or NULL */
    double *atom_energy; /* [nlocal] per-atom energies: ADDED to, or NULL when not wanted */
    double *atom_virial; /* [nall][9] per-atom virials: ADDED to, or NULL (host only) */
    void *stream;        /* device providers: the cudaStream_t to queue on; NULL on the host */
};

struct hmd_force_provider_ops {
    const char *name;         /* "deep-potential", "classical", ... (logs, errors) */
    enum hmd_force_kind kind; /* where its io arrays live */
    /* Interaction cut-off (Å): the halo and the neighbour list cover it plus the buffer. */
    double (*cutoff)(const void *self);
    /* Energy terms it reports into io->terms, names into names[] (static strings, at most
     * HMD_FORCE_MAX_TERMS); returns their count. */
    int (*terms)(const void *self, const char **names);
    /* At neighbour-list steps, after the ghosts and the host list are new: sizes scratch for
     * io's atoms (home atoms may have changed owner and order). The only place a provider may
     * allocate. io->f and io->ev may be NULL here. Returns HMD_OK or an HMD_E* status with the
     * message set. */
    int (*prepare)(void *self, const struct hmd_force_io *io);
    /* Adds forces, energies and virial of the atoms of the last prepare (positions may have
     * moved) to io's accumulators. No allocation; a device provider queues on io->stream only. */
    int (*compute)(void *self, const struct hmd_force_io *io);
    /* Device memory the provider holds (bytes; 0 for a host provider). */
    size_t (*device_bytes)(const void *self);
    /* Frees self. */
    void (*destroy)(void *self);
};

/* A provider: its operations and its state (owned by whoever holds the provider). */
struct hmd_force_provider {
    const struct hmd_force_provider_ops *ops;
    void *self;
};

static inline const char *hmd_force_provider_name(const struct hmd_force_provider *p)
{
    return p->ops->name;
}

static inline bool hmd_force_provider_on_device(const struct hmd_force_provider *p)
{
    return p->ops->kind == HMD_FORCE_DEVICE;
}

static inline double hmd_force_provider_cutoff(const struct hmd_force_provider *p)
{
    return p->ops->cutoff(p->self);
}

static inline int hmd_force_provider_terms(const struct hmd_force_provider *p, const char **names)
{
    return p->ops->terms(p->self, names);
}

static inline int hmd_force_provider_prepare(struct hmd_force_provider *p,
                                             const struct hmd_force_io *io)
{
    return p->ops->prepare(p->self, io);
}

static inline int hmd_force_provider_compute(struct hmd_force_provider *p,
                                             const struct hmd_force_io *io)
{
    return p->ops->compute(p->self, io);
}

static inline size_t hmd_force_provider_device_bytes(const struct hmd_force_provider *p)
{
    return p->ops->device_bytes ? p->ops->device_bytes(p->self) : 0;
}

/* Destroys the provider's state (a provider without ops is fine) and zeroes *p. */
static inline void hmd_force_provider_destroy(struct hmd_force_provider *p)
{
    if (p->ops && p->ops->destroy) {
        p->ops->destroy(p->self);
    }
    p->ops = NULL;
    p->self = NULL;
}

#endif /* HMD_FF_PROVIDER_H */
