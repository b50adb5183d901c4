#include "nnp/test_errors.h"

#include <math.h>

static void add(struct hmd_test_errors *err, enum hmd_test_quantity q, double diff)
{
    err->sum_abs[q] += fabs(diff);
    err->sum_sq[q] += diff * diff;
    err->weight[q] += 1.0;
}

void hmd_test_errors_add(struct hmd_test_errors *err, const struct hmd_test_frame *fr)
{
    if (fr->energy) {
        const double de = fr->pred_energy - *fr->energy;
        add(err, HMD_TEST_E, de);
        add(err, HMD_TEST_EA, de / fr->natoms);
    }
    if (fr->force) {
        for (int k = 0; k < 3 * fr->natoms; k++) {
            add(err, HMD_TEST_F, fr->pred_force[k] - fr->force[k]);
        }
    }
    if (fr->virial) {
        for (int c = 0; c < 9; c++) {
            const double dv = fr->pred_virial[c] - fr->virial[c];
            add(err, HMD_TEST_V, dv);
            add(err, HMD_TEST_VA, dv / fr->natoms);
            if (fr->volume > 0) {
                add(err, HMD_TEST_S, -dv / fr->volume);
            }
        }
    }
}

void hmd_test_errors_merge(struct hmd_test_errors *total, const struct hmd_test_errors *part)
{
    for (int q = 0; q < HMD_TEST_NQ; q++) {
        total->sum_abs[q] += part->sum_abs[q];
        total->sum_sq[q] += part->sum_sq[q];
        total->weight[q] += part->weight[q];
    }
}

bool hmd_test_errors_get(const struct hmd_test_errors *err, enum hmd_test_quantity q, double *mae,
                         double *rmse)
{
    if (!(err->weight[q] > 0)) {
        return false;
    }
    *mae = err->sum_abs[q] / err->weight[q];
    *rmse = sqrt(err->sum_sq[q] / err->weight[q]);
    return true;
}

const char *hmd_test_quantity_name(enum hmd_test_quantity q)
{
    static const char *const names[HMD_TEST_NQ] = {"e", "ea", "f", "v", "va", "s"};
    return names[q];
}
