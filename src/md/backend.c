#include "md/backend.h"

#include <stdio.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "cuda/cuda_api.h"
#include "ff/dp.h"

/* precision = mixed where the CPU would compute: refused, with auto's reason `why` (or NULL) */
static int mixed_needs_gpu(const char *why)
{
    return hmd_error_set(HMD_ENOTSUP,
                         "precision = mixed runs on the GPU only (backend = cuda)%s%s; the CPU "
                         "computes in double (precision = double)",
                         why ? ", and the GPU cannot be used: " : "", why ? why : "");
}

static int setup_cpu(struct hmd_forces *fs, const struct hmd_backend_request *req)
{
    struct hmd_force_provider dp;
    const int rc = hmd_ff_dp_create(&dp, req->model);
    return rc ? rc : hmd_forces_add_provider(fs, dp);
}

static int setup_cuda(struct hmd_forces *fs, const struct hmd_backend_request *req)
{
    if (fs->replicated || hmd_comm_size() > 1) {
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda runs on one rank in this version (no "
                                          "mpirun, dd-mode = halo)");
    }
    struct hmd_force_provider dp;
    int rc = hmd_cuda_dp_provider_create(&dp, req->model, fs->skin,
                                         req->precision == HMD_PRECISION_MIXED);
    if (!rc && !req->resident) {
        struct hmd_force_provider host;
        rc = hmd_cuda_offload_create(&host, dp);
        dp = host;
    }
    return rc ? rc : hmd_forces_add_provider(fs, dp);
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
    int rc = hmd_cuda_device_info(device, sizeof device);
    if (!rc) {
        rc = setup_cuda(fs, req);
    }
    if (rc && !strcmp(req->name, "auto")) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hmd_error_msg());
        hmd_error_clear();
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

const char *hmd_backend_list(void)
{
    return HMD_HAVE_CUDA ? "cpu, cuda (se_e2_a, DPA-1)" : "cpu";
}
