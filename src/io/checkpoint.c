/* Checkpoints as JSON (io/checkpoint.h), through jansson. */
#include "io/checkpoint.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/json_file.h"

#define SCHEMA "halomd-cpt-1"

/* [n][3] doubles as a flat JSON array; NULL when out of memory. */
static json_t *vectors(const double *a, int n)
{
    json_t *arr = json_array();
    for (int k = 0; arr && k < 3 * n; k++) {
        if (json_array_append_new(arr, json_real(a[k]))) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

int hmd_checkpoint_write(const char *path, const struct hmd_checkpoint *c, char *note,
                         size_t note_len)
{
    json_t *cell = c->has_box ? vectors(&c->h[0][0], 3) : json_null();
    json_t *x = vectors(c->x, c->natoms), *v = vectors(c->v, c->natoms);
    json_t *root = json_pack("{s:s, s:I, s:f, s:f, s:i, s:s, s:o, s:o, s:o}", "schema", SCHEMA,
                             "step", (json_int_t)c->step, "dt_ps", c->dt, "thermostat_work_eV",
                             c->thermostat_work, "natoms", c->natoms, "model", c->model, "cell",
                             cell, "positions_A", x, "velocities_A_per_ps", v);
    if (!root) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the checkpoint %s", path);
    }
    const int rc =
        hmd_json_write_file(path, root, JSON_COMPACT | JSON_REAL_PRECISION(17), note, note_len);
    json_decref(root);
    return rc;
}

/* n x 3 numbers of the array `key` into a new array *out. */
static int read_vectors(const char *path, json_t *root, const char *key, int n, double **out)
{
    json_t *arr = json_object_get(root, key);
    if (!json_is_array(arr) || json_array_size(arr) != (size_t)3 * n) {
        return hmd_error_set(HMD_EDATA, "%s: checkpoint field '%s' is not an array of %d numbers",
                             path, key, 3 * n);
    }
    *out = malloc(sizeof(double) * 3 * (n > 0 ? n : 1));
    if (!*out) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading %s", path);
    }
    for (int k = 0; k < 3 * n; k++) {
        json_t *e = json_array_get(arr, (size_t)k);
        if (!json_is_number(e)) {
            return hmd_error_set(HMD_EDATA, "%s: checkpoint field '%s' entry %d is not a number",
                                 path, key, k);
        }
        (*out)[k] = json_number_value(e);
    }
    return HMD_OK;
}

/* The fields of a parsed checkpoint into c. */
static int read_fields(const char *path, json_t *root, struct hmd_checkpoint *c)
{
    const char *schema = NULL, *model = NULL;
    json_int_t step = -1;
    json_t *cell = NULL;
    if (json_unpack(root, "{s:s, s:I, s:F, s:F, s:i, s:s, s:o}", "schema", &schema, "step", &step,
                    "dt_ps", &c->dt, "thermostat_work_eV", &c->thermostat_work, "natoms",
                    &c->natoms, "model", &model, "cell", &cell) ||
        strcmp(schema, SCHEMA) != 0) {
        return hmd_error_set(HMD_EDATA,
                             "%s: not a halomd checkpoint (%s with schema, step, dt_ps, "
                             "thermostat_work_eV, natoms, model, cell)",
                             path, SCHEMA);
    }
    if (step < 0 || c->natoms <= 0 || !(c->dt > 0)) {
        return hmd_error_set(HMD_EDATA, "%s: checkpoint step, natoms or dt_ps out of range", path);
    }
    c->step = (int64_t)step;
    snprintf(c->model, sizeof c->model, "%s", model);
    c->has_box = !json_is_null(cell);
    if (c->has_box) {
        double *h = NULL;
        int rc = read_vectors(path, root, "cell", 3, &h);
        if (!rc) {
            memcpy(c->h, h, sizeof c->h);
        }
        free(h);
        if (rc) {
            return rc;
        }
    }
    int rc = read_vectors(path, root, "positions_A", c->natoms, &c->x);
    return rc ? rc : read_vectors(path, root, "velocities_A_per_ps", c->natoms, &c->v);
}

int hmd_checkpoint_read(const char *path, struct hmd_checkpoint *c)
{
    memset(c, 0, sizeof *c);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open checkpoint %s: %s", path, strerror(errno));
    }
    json_error_t jerr;
    json_t *root = json_loadf(fp, 0, &jerr);
    fclose(fp);
    if (!root) {
        return hmd_error_set(HMD_EDATA, "%s:%d: not a halomd checkpoint: %s", path, jerr.line,
                             jerr.text);
    }
    int rc = read_fields(path, root, c);
    json_decref(root);
    if (rc) {
        hmd_checkpoint_free(c);
    }
    return rc;
}

void hmd_checkpoint_free(struct hmd_checkpoint *c)
{
    free(c->x);
    free(c->v);
    memset(c, 0, sizeof *c);
}
