/* JSON results of `halomd eval`, with DeePMD-kit's names (dp test / DeepPot.eval):
 *   {"program": "halomd", "version": ..., "model": path, "structure": path,
 *    "units": {"energy": "eV", "atom_energy": "eV", "force": "eV/Angstrom", "virial": "eV"},
 *    "type_map": [...], "frames": [{"natoms": N, "energy": E, "atom_energy": [N],
 *    "force": [[fx, fy, fz] x N], "virial": [[3] x 3]}, ...]}
 * Numbers are written with 17 significant digits so they read back exactly.
 */
#ifndef HMD_IO_EVAL_JSON_H
#define HMD_IO_EVAL_JSON_H

#include <stdio.h>

struct hmd_eval_frame_result {
    int natoms;
    double energy;             /* eV */
    const double *atom_energy; /* [natoms] eV */
    const double *force;       /* [natoms][3] eV/Å */
    const double *virial;      /* [9] eV, row-major */
};

struct hmd_eval_json;

/* Starts a document for `model_path`, `structure_path` and the model's type map. Returns NULL
 * when out of memory. */
struct hmd_eval_json *hmd_eval_json_create(const char *model_path, const char *structure_path,
                                           const char *const *type_map, int ntypes);

/* Appends one frame's results. HMD_ENOMEM on failure. */
int hmd_eval_json_add(struct hmd_eval_json *doc, const struct hmd_eval_frame_result *res);

/* Writes the document to `out` (named `name` in messages). HMD_EIO on failure. */
int hmd_eval_json_write(const struct hmd_eval_json *doc, FILE *out, const char *name);

/* Frees the document; NULL is fine. */
void hmd_eval_json_destroy(struct hmd_eval_json **doc);

#endif /* HMD_IO_EVAL_JSON_H */
