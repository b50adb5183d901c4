#include "io/eval_json.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "hmd_buildinfo.h"

struct hmd_eval_json {
    json_t *root;   /* owned */
    json_t *frames; /* borrowed from root */
};

struct hmd_eval_json *hmd_eval_json_create(const char *model_path, const char *structure_path,
                                           const char *const *type_map, int ntypes)
{
    struct hmd_eval_json *doc = calloc(1, sizeof *doc);
    if (!doc) {
        return NULL;
    }
    json_t *tm = json_array();
    for (int t = 0; t < ntypes; t++) {
        json_array_append_new(tm, json_string(type_map[t]));
    }
    doc->frames = json_array();
    doc->root =
        json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:o, s:O}", "program", "halomd",
                  "version", HMD_VERSION " (" HMD_GIT_COMMIT ")", "model", model_path, "structure",
                  structure_path, "units", "energy", "eV", "atom_energy", "eV", "force",
                  "eV/Angstrom", "virial", "eV", "type_map", tm, "frames", doc->frames);
    if (!doc->root) {
        json_decref(doc->frames);
        free(doc);
        return NULL;
    }
    json_decref(doc->frames); /* root holds the reference; keep a borrowed pointer */
    return doc;
}

static json_t *real_rows(const double *v, int rows, int cols)
{
    json_t *out = json_array();
    for (int r = 0; r < rows; r++) {
        json_t *row = json_array();
        for (int c = 0; c < cols; c++) {
            json_array_append_new(row, json_real(v[r * cols + c]));
        }
        json_array_append_new(out, row);
    }
    return out;
}

/* The first non-finite entry of v[0..n), or -1. */
static long first_nonfinite(const double *v, long n)
{
    for (long k = 0; k < n; k++) {
        if (!isfinite(v[k])) {
            return k;
        }
    }
    return -1;
}

int hmd_eval_json_add(struct hmd_eval_json *doc, const struct hmd_eval_frame_result *res)
{
    /* JSON has no NaN or infinity (jansson refuses them): say what is wrong instead */
    const struct {
        const char *what;
        const double *v;
        long n, per_atom;
    } parts[] = {{"energy", &res->energy, 1, 0},
                 {"atomic energy", res->atom_energy, res->natoms, 1},
                 {"force", res->force, 3 * (long)res->natoms, 3},
                 {"virial", res->virial, 9, 0}};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        const long k = first_nonfinite(parts[p].v, parts[p].n);
        if (k >= 0 && parts[p].per_atom) {
            return hmd_error_set(HMD_ESOFTWARE,
                                 "the evaluation gave a non-finite %s on atom %ld: atoms at one "
                                 "place or nearly (check the structure), or a model with NaN or "
                                 "infinite weights",
                                 parts[p].what, k / parts[p].per_atom + 1);
        }
        if (k >= 0) {
            return hmd_error_set(HMD_ESOFTWARE,
                                 "the evaluation gave a non-finite %s: atoms at one place or "
                                 "nearly (check the structure), or a model with NaN or infinite "
                                 "weights",
                                 parts[p].what);
        }
    }
    json_t *ae = json_array();
    for (int i = 0; i < res->natoms; i++) {
        json_array_append_new(ae, json_real(res->atom_energy[i]));
    }
    json_t *frame = json_pack(
        "{s:i, s:f, s:o, s:o, s:o}", "natoms", res->natoms, "energy", res->energy, "atom_energy",
        ae, "force", real_rows(res->force, res->natoms, 3), "virial", real_rows(res->virial, 3, 3));
    if (!frame || json_array_append_new(doc->frames, frame)) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the eval results");
    }
    return HMD_OK;
}

int hmd_eval_json_write(const struct hmd_eval_json *doc, FILE *out, const char *name)
{
    if (json_dumpf(doc->root, out, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) ||
        fputc('\n', out) == EOF || fflush(out)) {
        return hmd_error_set(HMD_EIO, "cannot write %s", name);
    }
    return HMD_OK;
}

void hmd_eval_json_destroy(struct hmd_eval_json **doc)
{
    if (*doc) {
        json_decref((*doc)->root);
        free(*doc);
        *doc = NULL;
    }
}
