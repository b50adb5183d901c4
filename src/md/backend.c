#include "md/backend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "cuda/cuda_api.h"
#include "cuda/ff/classical.h"
#include "ff/classical.h"
#include "ff/dp.h"
#include "ff/subset.h"
#include "nvshmem/nvshmem_api.h"

/* precision = mixed where the CPU would compute: refused, with auto's reason `why` (or NULL) */
static int mixed_needs_gpu(const char *why)
{
    return hmd_error_set(HMD_ENOTSUP,
                         "precision = mixed runs on the GPU only (backend = cuda)%s%s; the CPU "
                         "computes in double (precision = double)",
                         why ? ", and the GPU cannot be used: " : "", why ? why : "");
}

/* The Deep Potential (on the nnp-group's atoms alone for hybrid ML/MM), then the classical
 * force field. */
static int setup_cpu(struct hmd_forces *fs, const struct hmd_backend_request *req)
{
    int rc = HMD_OK;
    if (req->model) {
        struct hmd_force_provider dp = {0};
        rc = hmd_ff_dp_create(&dp, req->model);
        const unsigned char *group = req->top ? req->ff->nnp_group : NULL;
        if (!rc && group) {
            struct hmd_force_provider all = dp;
            rc = hmd_ff_subset_create(&dp, all, group, req->top->natoms, req->group_type0);
        }
        rc = rc ? rc : hmd_forces_add_provider(fs, dp);
    }
    if (!rc && req->top) {
        struct hmd_force_provider mm = {0};
        rc = hmd_ff_classical_create(&mm, req->top, req->ff);
        rc = rc ? rc : hmd_forces_add_provider(fs, mm);
    }
    return rc;
}

/* A device provider behind the host adapter when the step stays on the host. */
static int add_device_provider(struct hmd_forces *fs, const struct hmd_backend_request *req,
                               struct hmd_force_provider p)
{
    int rc = HMD_OK;
    if (!req->resident || fs->replicated) {
        struct hmd_force_provider host = {0};
        rc = hmd_cuda_offload_create(&host, p);
        p = host;
    }
    return rc ? rc : hmd_forces_add_provider(fs, p);
}

/* Hybrid ML/MM with the GPU: the Deep Potential on the device behind the host adapter and
 * ff/subset (the nnp-group's atoms are picked on the host at every step), the classical force
 * field on the device behind the host adapter too (its model leaves the group's own terms
 * out), so the step stays on the host. */
static int setup_cuda_hybrid(struct hmd_forces *fs, const struct hmd_backend_request *req)
{
    struct hmd_force_provider dev = {0}, host = {0}, dp = {0}, mm = {0}, mm_host = {0};
    int rc = hmd_cuda_dp_provider_create(&dev, req->model, fs->skin,
                                         req->precision == HMD_PRECISION_MIXED);
    rc = rc ? rc : hmd_cuda_offload_create(&host, dev);
    rc = rc ? rc
            : hmd_ff_subset_create(&dp, host, req->ff->nnp_group, req->top->natoms,
                                   req->group_type0);
    rc = rc ? rc : hmd_forces_add_provider(fs, dp);
    const double cutoff = fmax(fmax(req->ff->rcoulomb, req->ff->rvdw), req->model->rcut);
    rc = rc ? rc : hmd_ff_classical_create_cuda(&mm, req->top, req->ff, cutoff + fs->skin, true);
    rc = rc ? rc : hmd_cuda_offload_create(&mm_host, mm);
    return rc ? rc : hmd_forces_add_provider(fs, mm_host);
}

/* The GPU of this rank (by its rank on the node), then the providers: on the device for a
 * resident run, behind the host adapter for single points and for the replicated scheme (its
 * halo is the host's all-gather every step: the baseline as arXiv 2604.07276 runs it). */
static int setup_cuda(struct hmd_forces *fs, const struct hmd_backend_request *req)
{
    int rc = hmd_cuda_select_device(hmd_comm_local_rank(), NULL, NULL);
    if (!rc && req->top && req->ff->nnp_group) {
        return setup_cuda_hybrid(fs, req);
    }
    double cutoff = req->top ? fmax(req->ff->rcoulomb, req->ff->rvdw) : 0.0;
    if (!rc && req->model) {
        struct hmd_force_provider dp = {0};
        rc = hmd_cuda_dp_provider_create(&dp, req->model, fs->skin,
                                         req->precision == HMD_PRECISION_MIXED);
        rc = rc ? rc : add_device_provider(fs, req, dp);
        cutoff = fmax(cutoff, req->model->rcut);
    }
    if (!rc && req->top) {
        /* its pair lists cover the run's list cut-off, the longest provider cut-off + buffer */
        struct hmd_force_provider mm = {0};
        /* per-atom energies only from the host adapter (a resident step asks for none) */
        const bool offloaded = !req->resident || fs->replicated;
        rc = hmd_ff_classical_create_cuda(&mm, req->top, req->ff, cutoff + fs->skin, offloaded);
        rc = rc ? rc : add_device_provider(fs, req, mm);
    }
    return rc;
}

int hmd_backend_setup(struct hmd_forces *fs, const struct hmd_backend_request *req, char *what,
                      size_t len)
{
    const bool mixed = req->precision == HMD_PRECISION_MIXED;
    snprintf(what, len, "cpu");
    if (!strcmp(req->name, "cpu")) {
        return mixed ? mixed_needs_gpu(NULL) : setup_cpu(fs, req);
    }
    char device[256] = "";
    int rc = setup_cuda(fs, req);
    if (!rc) {
        rc = hmd_cuda_device_info(device, sizeof device);
    }
    if (rc && !strcmp(req->name, "auto")) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hmd_error_msg());
        hmd_error_clear();
        hmd_forces_drop_providers(fs); /* a device provider may have come before the failure */
        if (mixed) {
            return mixed_needs_gpu(why);
        }
        snprintf(what, len, "cpu (auto: %s)", why);
        return setup_cpu(fs, req);
    }
    if (!rc) {
        snprintf(what, len, "cuda%s, %s",
                 mixed ? " (precision = mixed: fp32 descriptor networks)" : "", device);
    }
    return rc;
}

/* The nvshmem transport with its heap, or why not. */
static int open_nvshmem(struct hmd_backend_halo *h, char *what, size_t len)
{
    int rc = hmd_nvshmem_init(what, len);
    rc = rc ? rc : hmd_nvshmem_halo_open(&h->transport);
    rc = hmd_comm_agree(rc);
    if (rc) { /* on every rank: none keeps a transport or a heap the others gave up */
        hmd_halo_transport_close(&h->transport);
        return rc;
    }
    h->heap = hmd_nvshmem_heap();
    h->has_heap = true;
    return HMD_OK;
}

/* How the mpi transport moves its bytes, for the log. */
static const char *mpi_buffers(bool cuda_aware)
{
    return cuda_aware ? "device buffers (CUDA-aware MPI)" : "host-staged (MPI not CUDA-aware)";
}

int hmd_backend_open_halo(const char *name, struct hmd_backend_halo *h, char *what, size_t len)
{
    memset(h, 0, sizeof *h);
    const int nranks = hmd_comm_size();
    char found[256] = "";
    int rc;
    if (!strcmp(name, "nvshmem") || (!strcmp(name, "auto") && nranks > 1 && HMD_HAVE_NVSHMEM)) {
        rc = open_nvshmem(h, found, sizeof found);
        if (!rc) {
            snprintf(what, len, "nvshmem%s (%s%s)", strcmp(name, "auto") ? "" : ", auto", found,
                     hmd_nvshmem_halo_bulk(&h->transport)
                         ? "; stores into mapped peers by bulk copies, HMD_NVSHMEM_BULK=1"
                         : "");
            return HMD_OK;
        }
        if (strcmp(name, "auto")) {
            return rc;
        }
        /* auto: say why not, then the host-staged transport */
        char why[1024];
        snprintf(why, sizeof why, "%s", hmd_error_msg());
        hmd_error_clear();
        const bool aware = hmd_comm_cuda_aware();
        rc = hmd_cuda_halo_open_mpi(&h->transport, aware);
        snprintf(what, len, "mpi, %s (auto: nvshmem unavailable: %s)", mpi_buffers(aware), why);
        return hmd_comm_agree(rc);
    }
    const char *chosen = name, *why = "";
    if (!strcmp(name, "auto")) {
        chosen = nranks == 1 ? "self" : "mpi";
        why = nranks == 1 ? " (auto: one rank)" : " (auto: this build has no NVSHMEM)";
    }
    if (!strcmp(chosen, "self")) {
        rc = hmd_cuda_halo_open_self(&h->transport);
        snprintf(what, len, "self%s", why);
    } else {
        const bool aware = hmd_comm_cuda_aware();
        rc = hmd_cuda_halo_open_mpi(&h->transport, aware);
        snprintf(what, len, "mpi, %s%s", mpi_buffers(aware), why);
    }
    return hmd_comm_agree(rc);
}

void hmd_backend_close_halo(void)
{
    hmd_nvshmem_finalize();
}

const char *hmd_backend_list(void)
{
    return HMD_HAVE_CUDA ? "cpu, cuda (se_e2_a, DPA-1, classical)" : "cpu";
}
