/* The Deep Potential as a device force provider (cuda_api.h hmd_cuda_dp_provider_create) over
 * the evaluation context of nnp/dp_eval.cu, and the host adapter that runs any device provider
 * on host arrays (hmd_cuda_offload_create). */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

#include <vector>

namespace
{

struct dp_device {
    hmd_cuda_dp *dp;           /* owned */
    const hmd_dp_model *model; /* borrowed */
    double skin;               /* Å: the list cut-off is rcut + skin */
};

double dp_cutoff(const void *self)
{
    return ((const dp_device *)self)->model->rcut;
}

int dp_terms(const void *self, const char **names)
{
    (void)self;
    names[0] = "Deep Potential";
    return 1;
}

int dp_prepare(void *self, const hmd_force_io *io)
{
    dp_device *d = (dp_device *)self;
    cudaStream_t st = (cudaStream_t)io->stream;
    int rc = hmd_cuda_dp_bind_stream(d->dp, st);
    if (rc) {
        return rc;
    }
    if (!io->host) {
        return hmd_error_set(HMD_ESOFTWARE, "deep-potential (GPU): prepare without the host's "
                                            "copy of the atoms");
    }
    /* the fitting nets group the home atoms by type, the cell list bins the atoms: both from
     * the host's copy, which the list step has just made */
    rc = hmd_cuda_dp_prepare(d->dp, io->nlocal, io->nall, io->host->type, io->type0);
    double lo[3], hi[3];
    hmd_cuda_bounds(io->nall, io->host->x, lo, hi);
    return rc ? rc
              : hmd_cuda_dp_build_list(d->dp, io->nlocal, io->nall, io->x, lo, hi,
                                       d->model->rcut + d->skin);
}

int dp_compute(void *self, const hmd_force_io *io)
{
    dp_device *d = (dp_device *)self;
    const hmd_cuda_dp_io dio = {io->x, io->type, io->f, io->ev, io->terms, io->atom_energy};
    return hmd_cuda_dp_evaluate(d->dp, &dio, io->nlocal, io->nall, io->ncount);
}

size_t dp_device_bytes(const void *self)
{
    return hmd_cuda_dp_device_bytes(((const dp_device *)self)->dp);
}

unsigned long dp_generation(const void *self)
{
    return hmd_cuda_dp_generation(((const dp_device *)self)->dp);
}

void dp_destroy(void *self)
{
    dp_device *d = (dp_device *)self;
    if (d) {
        hmd_cuda_dp_destroy(d->dp);
        delete d;
    }
}

const hmd_force_provider_ops dp_ops = {
    "deep-potential", HMD_FORCE_DEVICE, dp_cutoff,     dp_terms,   dp_prepare,
    dp_compute,       dp_device_bytes,  dp_generation, dp_destroy,
};

} // namespace

extern "C" int hmd_cuda_dp_provider_create(struct hmd_force_provider *p,
                                           const struct hmd_dp_model *m, double skin, bool mixed)
{
    hmd_cuda_dp *dp = NULL;
    int rc = hmd_cuda_dp_create(&dp, m, mixed);
    if (rc) {
        return rc;
    }
    dp_device *d = new dp_device();
    d->dp = dp;
    d->model = m;
    d->skin = skin;
    p->ops = &dp_ops;
    p->self = d;
    return HMD_OK;
}

/* ---- a device provider on host arrays ---- */

namespace
{

struct offload {
    hmd_force_provider_ops ops; /* the host adapter's, named after the device provider */
    hmd_force_provider device;  /* owned */
    hmd_cuda_state *state;      /* owned: the atoms on the device */
    double *ev;                 /* [HMD_FORCE_NEV + HMD_FORCE_MAX_TERMS] device accumulators */
    double *atom_energy;        /* [cap_energy] device */
    int cap_energy;
    std::vector<double> f_host, ev_host, e_host;
};

/* The device io over the state's arrays. */
hmd_force_io device_io(const offload *o, const hmd_force_io *io)
{
    const hmd_cuda_atoms a = hmd_cuda_state_atoms(o->state);
    hmd_force_io d = *io;
    d.x = a.x;
    d.type = a.type;
    d.id = io->id ? (const int64_t *)a.id : NULL;
    d.nl = NULL;
    d.f = a.f;
    d.ev = o->ev;
    d.terms = io->terms ? o->ev + HMD_FORCE_NEV : NULL;
    d.atom_energy = io->atom_energy ? o->atom_energy : NULL;
    d.atom_virial = NULL;
    d.stream = a.stream;
    d.host = NULL;
    return d;
}

/* Host atoms seen as struct hmd_atoms, for the state's upload. */
hmd_atoms host_view(const hmd_force_io *io)
{
    hmd_atoms a = {};
    a.nlocal = io->nlocal;
    a.nghost = io->nall - io->nlocal;
    a.x = (double *)io->x;
    a.type = (int *)io->type;
    a.id = (int64_t *)io->id;
    return a;
}

double offload_cutoff(const void *self)
{
    return hmd_force_provider_cutoff(&((const offload *)self)->device);
}

int offload_terms(const void *self, const char **names)
{
    return hmd_force_provider_terms(&((const offload *)self)->device, names);
}

int offload_prepare(void *self, const hmd_force_io *io)
{
    offload *o = (offload *)self;
    int rc = hmd_cuda_state_reserve(o->state, io->nlocal, io->nall);
    if (!rc && io->nlocal > o->cap_energy) {
        cudaFree(o->atom_energy);
        o->atom_energy = NULL;
        o->cap_energy = 0;
        HMD_CUDA_CHECK(cudaMalloc((void **)&o->atom_energy, sizeof(double) * io->nlocal));
        o->cap_energy = io->nlocal;
    }
    const hmd_atoms a = host_view(io);
    const unsigned fields = HMD_FIELD_BIT(HMD_FIELD_X) | HMD_FIELD_BIT(HMD_FIELD_TYPE) |
                            (io->id ? HMD_FIELD_BIT(HMD_FIELD_ID) : 0);
    rc = rc ? rc : hmd_cuda_state_upload(o->state, &a, fields);
    if (rc) {
        return rc;
    }
    hmd_force_io d = device_io(o, io);
    d.host = &a;
    return hmd_force_provider_prepare(&o->device, &d);
}

int offload_compute(void *self, const hmd_force_io *io)
{
    offload *o = (offload *)self;
    const hmd_atoms a = host_view(io);
    int rc = hmd_cuda_state_upload(o->state, &a, HMD_FIELD_BIT(HMD_FIELD_X));
    if (rc) {
        return rc;
    }
    const hmd_force_io d = device_io(o, io);
    cudaStream_t st = (cudaStream_t)d.stream;
    const size_t nall = (size_t)io->nall, nev = HMD_FORCE_NEV + HMD_FORCE_MAX_TERMS;
    HMD_CUDA_CHECK(cudaMemsetAsync(d.f, 0, sizeof(double) * 3 * nall, st));
    HMD_CUDA_CHECK(cudaMemsetAsync(o->ev, 0, sizeof(double) * nev, st));
    if (d.atom_energy) {
        HMD_CUDA_CHECK(cudaMemsetAsync(d.atom_energy, 0, sizeof(double) * io->nlocal, st));
    }
    rc = hmd_force_provider_compute(&o->device, &d);
    if (rc) {
        return rc;
    }
    o->f_host.resize(3 * nall + 1);
    o->ev_host.resize(nev);
    o->e_host.resize((size_t)io->nlocal + 1);
    HMD_CUDA_CHECK(cudaMemcpyAsync(o->f_host.data(), d.f, sizeof(double) * 3 * nall,
                                   cudaMemcpyDeviceToHost, st));
    HMD_CUDA_CHECK(cudaMemcpyAsync(o->ev_host.data(), o->ev, sizeof(double) * nev,
                                   cudaMemcpyDeviceToHost, st));
    if (d.atom_energy) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(o->e_host.data(), d.atom_energy, sizeof(double) * io->nlocal,
                                       cudaMemcpyDeviceToHost, st));
    }
    HMD_CUDA_CHECK(cudaStreamSynchronize(st));
    for (size_t e = 0; e < 3 * nall; e++) {
        io->f[e] += o->f_host[e];
    }
    for (int k = 0; k < HMD_FORCE_NEV; k++) {
        io->ev[k] += o->ev_host[k];
    }
    const char *names[HMD_FORCE_MAX_TERMS];
    const int nterms = hmd_force_provider_terms(&o->device, names);
    for (int t = 0; t < nterms && io->terms; t++) {
        io->terms[t] += o->ev_host[HMD_FORCE_NEV + t];
    }
    for (int i = 0; i < io->nlocal && io->atom_energy; i++) {
        io->atom_energy[i] += o->e_host[i];
    }
    return HMD_OK;
}

size_t offload_device_bytes(const void *self)
{
    const offload *o = (const offload *)self;
    return hmd_force_provider_device_bytes(&o->device) + hmd_cuda_state_device_bytes(o->state);
}

void offload_destroy(void *self)
{
    offload *o = (offload *)self;
    if (o) {
        hmd_force_provider_destroy(&o->device);
        hmd_cuda_state_destroy(o->state);
        cudaFree(o->ev);
        cudaFree(o->atom_energy);
        delete o;
    }
}

const hmd_force_provider_ops offload_ops = {
    NULL,
    HMD_FORCE_HOST,
    offload_cutoff,
    offload_terms,
    offload_prepare,
    offload_compute,
    offload_device_bytes,
    NULL,
    offload_destroy,
};

} // namespace

extern "C" int hmd_cuda_offload_create(struct hmd_force_provider *host,
                                       struct hmd_force_provider device)
{
    offload *o = new offload();
    o->device = device;
    o->ops = offload_ops;
    o->ops.name = hmd_force_provider_name(&device);
    host->ops = &o->ops;
    host->self = o;
    int rc = hmd_cuda_state_create(&o->state, NULL);
    if (!rc && cudaMalloc((void **)&o->ev,
                          sizeof(double) * (HMD_FORCE_NEV + HMD_FORCE_MAX_TERMS)) != cudaSuccess) {
        rc = hmd_error_set(HMD_ENOMEM, "GPU: no room for the energy accumulators");
    }
    if (rc) {
        offload_destroy(o);
        host->ops = NULL;
        host->self = NULL;
    }
    return rc;
}
