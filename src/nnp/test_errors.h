/* Errors of a model against labelled data, as DeePMD-kit's `dp test` reports them
 * (deepmd/infer/model_test/ener.py, deepmd/utils/eval_metrics.py): mean absolute and root mean
 * square errors of
 *   e   the energy of each frame (eV)              ea  the same divided by natoms (eV)
 *   f   each force component (eV/Å)
 *   v   each virial component (eV)                 va  the same divided by natoms (eV)
 *   s   each stress component -W/V (eV/Å^3), frames with a cell of non-zero volume
 * The virial and stress are reported for periodic systems with virial labels only. Each error
 * carries its weight, the number of values it was taken over, so that errors of several
 * systems combine exactly (DeePMD-kit's merge_weighted_errors): the run's MAE is the mean over
 * all values, its RMSE the root of the mean square.
 */
#ifndef HMD_NNP_TEST_ERRORS_H
#define HMD_NNP_TEST_ERRORS_H

#include <stdbool.h>

enum hmd_test_quantity {
    HMD_TEST_E,  /* energy */
    HMD_TEST_EA, /* energy / natoms */
    HMD_TEST_F,  /* force components */
    HMD_TEST_V,  /* virial components */
    HMD_TEST_VA, /* virial / natoms */
    HMD_TEST_S,  /* stress components */
    HMD_TEST_NQ
};

struct hmd_test_errors {
    double sum_abs[HMD_TEST_NQ]; /* sum of |prediction - label| */
    double sum_sq[HMD_TEST_NQ];  /* sum of (prediction - label)^2 */
    double weight[HMD_TEST_NQ];  /* values summed; 0: not reported */
};

/* The labels and predictions of one frame of natoms atoms; a NULL label is absent. */
struct hmd_test_frame {
    int natoms;
    double volume;             /* cell volume (Å^3); 0 without a cell */
    const double *energy;      /* label (eV), or NULL */
    const double *force;       /* [natoms][3] labels (eV/Å), or NULL */
    const double *virial;      /* [9] labels (eV), or NULL (also when not periodic) */
    double pred_energy;        /* eV */
    const double *pred_force;  /* [natoms][3] eV/Å */
    const double *pred_virial; /* [9] eV */
};

/* Adds one frame's errors to `err` (zero it first for a new system). */
void hmd_test_errors_add(struct hmd_test_errors *err, const struct hmd_test_frame *fr);

/* Adds the sums of `part` (another system) into `total`. */
void hmd_test_errors_merge(struct hmd_test_errors *total, const struct hmd_test_errors *part);

/* MAE and RMSE of quantity q; false when it has no values. */
bool hmd_test_errors_get(const struct hmd_test_errors *err, enum hmd_test_quantity q, double *mae,
                         double *rmse);

/* DeePMD-kit's names: "e", "ea", "f", "v", "va", "s" (keys mae_<name>, rmse_<name>). */
const char *hmd_test_quantity_name(enum hmd_test_quantity q);

#endif /* HMD_NNP_TEST_ERRORS_H */
