/* What `halomd eval` does with labelled data and with several models, over the single-point
 * evaluator (md/evaluator.h):
 *
 * hmd_eval_test: `dp test`. Every frame of every DeePMD-kit system under a folder, errors
 *   against the labels per system and weighted over all (nnp/test_errors.h), reported as
 *   dp test logs them and as JSON (io/test_report.h).
 * hmd_eval_devi: `dp model-devi`. Every frame of a structure file or of the systems under a
 *   folder, evaluated by each model; the model deviation of each frame (nnp/model_devi.h)
 *   written to model_devi.out (io/model_devi_out.h) and, at full precision, as JSON.
 *
 * Collective: every rank calls them; files are read and written on rank 0.
 */
#ifndef HMD_API_EVAL_DATA_H
#define HMD_API_EVAL_DATA_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "md/evaluator.h"

/* `dp test` of the model of `ev` (opened from `model_path`) on the systems under `root`
 * (io/deepmd_data.h hmd_deepmd_find_systems). Writes the text report to `report` (rank 0) and
 * returns the JSON record in *doc (rank 0; the caller's, json_decref it), or NULL elsewhere.
 * Errors name the system and frame: those of the data reader and the evaluator. */
int hmd_eval_test(struct hmd_evaluator *ev, const char *model_path, const char *root, FILE *report,
                  json_t **doc);

/* What a deviation is made of and where it goes. */
struct hmd_eval_devi_options {
    int nmodels;                    /* >= 2 */
    struct hmd_evaluator *models;   /* [nmodels] opened evaluators; models[0] drives */
    const char *const *model_paths; /* [nmodels] their files, for messages and the record */
    const char *conf;               /* a structure file (io/structure.h), or NULL */
    const char *root;               /* or a folder of DeePMD-kit systems */
    int64_t freq;                   /* step of frame f: f * freq (dp model-devi -f) */
    double relative, relative_v;    /* level parameters, 0 = absolute (nnp/model_devi.h) */
    bool atomic;                    /* per-atom force deviations in the table */
    const char *out;                /* model_devi.out to write (backed up when it exists) */
};

/* Checks that the models go together (hmd_model_devi_check), evaluates every frame with every
 * model, and writes o->out: one block per system (header: its path) or one for the structure
 * file (header: its path). *doc (rank 0, the caller's) receives the same at full precision:
 * {"program", "version", "models", "blocks": [{"source", "natoms", "steps": [...],
 * "max_devi_v": [...], ..., "devi_e": [...], "atm_devi_f": [[...], ...] (atomic only)}]}.
 * The file is created only once every frame has been evaluated. */
int hmd_eval_devi(const struct hmd_eval_devi_options *o, json_t **doc);

#endif /* HMD_API_EVAL_DATA_H */
