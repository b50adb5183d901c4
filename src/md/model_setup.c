#include "md/model_setup.h"

#include "core/error.h"
#include "io/model_dp.h"
#include "nnp/compress.h"
#include "nnp/se_e2_a.h"

/* Back to the networks: the tables of a compressed file are set aside (the networks are always
 * stored with them). */
static int drop_tables(struct hmd_dp_model *m)
{
    if (!m->compression.on) {
        return HMD_OK;
    }
    m->compression = (struct hmd_compression){0};
    m->dpa1.table = NULL;
    if (m->kind == HMD_DESCRIPTOR_SE_E2_A && m->se.table) {
        m->se.table = NULL;
        return hmd_se_e2_a_prepare(m);
    }
    return HMD_OK;
}

int hmd_model_setup(const char *path, const struct hmd_params *p, struct hmd_dp_model *model)
{
    int rc = hmd_model_read_dp(path, model);
    if (rc) {
        return rc;
    }
    if (p->model_compress == HMD_COMPRESS_NO) {
        return drop_tables(model);
    }
    if (p->model_compress == HMD_COMPRESS_YES) {
        const struct hmd_compress_opts opts = {
            .extrapolate = p->compress_extrapolate,
            .stride0 = p->compress_stride,
            .stride1 = 10 * p->compress_stride,
            .min_nbor_dist = p->compress_min_nbor_dist,
        };
        rc = hmd_model_compress(model, &opts);
        if (rc) {
            hmd_error_prefix(rc, "%s: ", path);
        }
    }
    return rc;
}
