/* The report of `halomd eval -s` (errors against labelled data, nnp/test_errors.h): text lines
 * as DeePMD-kit's `dp test` logs them, and the JSON record.
 *
 * Text, one block per system and one for the weighted average:
 *   # ---------------output of dp test---------------
 *   # testing system : <path>
 *   # number of test data : <frames>
 *   Energy MAE         : 1.234568e-01 eV
 *   ...
 * JSON: {"program", "version", "model", "systems": [{"system", "natoms", "nframes",
 *        "errors": {"mae_e": ..., "rmse_e": ...}, "weights": {"mae_e": ...}}],
 *        "weighted_average": {"nsystems", "errors", "weights"}, "units": {...}}
 * with DeePMD-kit's keys (mae_e, rmse_e, mae_ea, rmse_ea, mae_f, rmse_f, mae_v, rmse_v,
 * mae_va, rmse_va, mae_s, rmse_s) and numbers with 17 significant digits.
 */
#ifndef HMD_IO_TEST_REPORT_H
#define HMD_IO_TEST_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "nnp/test_errors.h"

/* The error lines of `err` in dp test's words and order (quantities without values are left
 * out). Returns HMD_EIO when writing fails. */
int hmd_test_report_errors(FILE *fp, const struct hmd_test_errors *err);

/* {"errors": {...}, "weights": {...}} members added to `obj` for `err`. HMD_ENOMEM. */
int hmd_test_report_json_errors(json_t *obj, const struct hmd_test_errors *err);

#endif /* HMD_IO_TEST_REPORT_H */
