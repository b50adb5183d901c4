#include "io/test_report.h"

#include "core/error.h"

/* dp test's labels (EnerTester.report), by quantity: MAE line, RMSE line, unit. */
static const struct {
    const char *mae, *rmse, *unit;
} lines[HMD_TEST_NQ] = {
    [HMD_TEST_E] = {"Energy MAE         ", "Energy RMSE        ", "eV"},
    [HMD_TEST_EA] = {"Energy MAE/Natoms  ", "Energy RMSE/Natoms ", "eV"},
    [HMD_TEST_F] = {"Force  MAE         ", "Force  RMSE        ", "eV/Å"},
    [HMD_TEST_V] = {"Virial MAE         ", "Virial RMSE        ", "eV"},
    [HMD_TEST_VA] = {"Virial MAE/Natoms  ", "Virial RMSE/Natoms ", "eV"},
    [HMD_TEST_S] = {"Stress MAE         ", "Stress RMSE        ", "eV/Å³"},
};

int hmd_test_report_errors(FILE *fp, const struct hmd_test_errors *err)
{
    int bad = 0;
    for (int q = 0; q < HMD_TEST_NQ; q++) {
        double mae, rmse;
        if (hmd_test_errors_get(err, (enum hmd_test_quantity)q, &mae, &rmse)) {
            bad |= fprintf(fp, "%s: %e %s\n%s: %e %s\n", lines[q].mae, mae, lines[q].unit,
                           lines[q].rmse, rmse, lines[q].unit) < 0;
        }
    }
    return bad ? hmd_error_set(HMD_EIO, "cannot write the test report") : HMD_OK;
}

int hmd_test_report_json_errors(json_t *obj, const struct hmd_test_errors *err)
{
    json_t *errors = json_object(), *weights = json_object();
    int bad = !errors || !weights;
    for (int q = 0; q < HMD_TEST_NQ && !bad; q++) {
        double mae, rmse;
        if (!hmd_test_errors_get(err, (enum hmd_test_quantity)q, &mae, &rmse)) {
            continue;
        }
        char key[16];
        const char *name = hmd_test_quantity_name((enum hmd_test_quantity)q);
        snprintf(key, sizeof key, "mae_%s", name);
        bad |= json_object_set_new(errors, key, json_real(mae));
        bad |= json_object_set_new(weights, key, json_real(err->weight[q]));
        snprintf(key, sizeof key, "rmse_%s", name);
        bad |= json_object_set_new(errors, key, json_real(rmse));
        bad |= json_object_set_new(weights, key, json_real(err->weight[q]));
    }
    bad |= json_object_set_new(obj, "errors", errors);
    bad |= json_object_set_new(obj, "weights", weights);
    return bad ? hmd_error_set(HMD_ENOMEM, "out of memory for the test report") : HMD_OK;
}
