/* The .dp model-tree reader's building blocks (see dp_tree.h). Arrays are read as double
 * whatever their stored type; the stored type of the first weight matrix read is reported as
 * the model precision. */
#include "io/dp_tree.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

void hmd_dp_progress(const struct hmd_dp_reader *r, const char *what)
{
    if (r->progress_fd >= 0) {
        char line[512];
        int n = snprintf(line, sizeof line, "%s\n", what);
        if (n > 0 &&
            write(r->progress_fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line) < 0) {
            /* the parent reads what it can; a lost line only makes its message vaguer */
        }
    }
}

/* ---- JSON access with messages naming the node ---- */

int hmd_dp_bad(struct hmd_dp_reader *r, const char *where, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hmd_error_set(HMD_EDATA, "%s: %s: %s", r->path, where, what);
}

int hmd_dp_get_member(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      json_t **out)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (!v) {
        return hmd_dp_bad(r, where, "missing key '%s'", key);
    }
    *out = v;
    return HMD_OK;
}

int hmd_dp_get_object(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      json_t **out)
{
    int rc = hmd_dp_get_member(r, obj, key, where, out);
    if (rc == HMD_OK && !json_is_object(*out)) {
        return hmd_dp_bad(r, where, "'%s' is not an object", key);
    }
    return rc;
}

int hmd_dp_get_double(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      double *out)
{
    json_t *v;
    int rc = hmd_dp_get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_number(v)) {
        return hmd_dp_bad(r, where, "'%s' is not a number", key);
    }
    *out = json_number_value(v);
    return HMD_OK;
}

int hmd_dp_get_int(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                   int *out)
{
    json_t *v;
    int rc = hmd_dp_get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_integer(v)) {
        return hmd_dp_bad(r, where, "'%s' is not an integer", key);
    }
    *out = (int)json_integer_value(v);
    return HMD_OK;
}

/* Booleans default to `dflt` when the key is absent (older files omit some flags). */
int hmd_dp_get_bool(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                    bool dflt, bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return HMD_OK;
    }
    if (!json_is_boolean(v)) {
        return hmd_dp_bad(r, where, "'%s' is not a boolean", key);
    }
    *out = json_is_true(v);
    return HMD_OK;
}

int hmd_dp_get_string(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      char *out, size_t size)
{
    json_t *v;
    int rc = hmd_dp_get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_string(v)) {
        return hmd_dp_bad(r, where, "'%s' is not a string", key);
    }
    if (strlen(json_string_value(v)) >= size) {
        return hmd_dp_bad(r, where, "'%s' is too long", key);
    }
    strcpy(out, json_string_value(v));
    return HMD_OK;
}

/* Copies an optional string member (empty when absent or not a string). */
void hmd_dp_opt_string(json_t *obj, const char *key, char *out, size_t size)
{
    json_t *v = json_object_get(obj, key);
    out[0] = '\0';
    if (json_is_string(v)) {
        snprintf(out, size, "%s", json_string_value(v));
    }
}

/* An integer list member, allocated in the model arena. */
int hmd_dp_get_int_list(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                        int **out, int *n)
{
    json_t *v;
    int rc = hmd_dp_get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_array(v)) {
        return hmd_dp_bad(r, where, "'%s' is not a list", key);
    }
    *n = (int)json_array_size(v);
    *out = hmd_arena_alloc(&r->m->arena, (*n + 1) * sizeof **out);
    if (!*out) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int i = 0; i < *n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e)) {
            return hmd_dp_bad(r, where, "'%s'[%d] is not an integer", key, i);
        }
        (*out)[i] = (int)json_integer_value(e);
    }
    return HMD_OK;
}

/* Fails with HMD_ENOTSUP when `key` is present and neither null, false, 0 nor an empty list. */
int hmd_dp_refuse_if_set(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                         const char *feature)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v) || json_is_false(v) ||
        (json_is_integer(v) && json_integer_value(v) == 0) ||
        (json_is_array(v) && json_array_size(v) == 0)) {
        return HMD_OK;
    }
    return hmd_error_set(HMD_ENOTSUP, "%s: %s: %s ('%s') is not supported by halomd", r->path,
                         where, feature, key);
}

/* ---- arrays ---- */

/* Checks that every non-null entry of the "@variables" object of `node` is one of `known`. */
int hmd_dp_check_variables(struct hmd_dp_reader *r, json_t *node, const char *where,
                           const char *const *known)
{
    json_t *vars = json_object_get(node, "@variables");
    if (!vars) {
        return HMD_OK;
    }
    const char *key;
    json_t *v;
    json_object_foreach(vars, key, v)
    {
        bool ok = json_is_null(v);
        for (int i = 0; known[i] && !ok; i++) {
            ok = strcmp(key, known[i]) == 0;
        }
        if (!ok) {
            return hmd_error_set(HMD_ENOTSUP,
                                 "%s: %s: array '%s' is not understood by halomd (a feature it "
                                 "does not implement)",
                                 r->path, where, key);
        }
    }
    return HMD_OK;
}

/* Reads the array named by node["@variables"][key] into the arena as double. `count` is the
 * expected number of elements (0: any, reported through *n). When `optional`, a missing or null
 * entry gives *out = NULL. */
int hmd_dp_read_array(struct hmd_dp_reader *r, json_t *node, const char *key, const char *where,
                      size_t count, bool optional, double **out, size_t *n)
{
    *out = NULL;
    json_t *vars = json_object_get(node, "@variables");
    json_t *ref = vars ? json_object_get(vars, key) : NULL;
    if (!ref || json_is_null(ref)) {
        return optional ? HMD_OK : hmd_dp_bad(r, where, "missing array '%s'", key);
    }
    return hmd_dp_read_dataset(r, ref, key, where, count, out, n);
}

int hmd_dp_read_dataset(struct hmd_dp_reader *r, json_t *ref, const char *key, const char *where,
                        size_t count, double **out, size_t *n)
{
    *out = NULL;
    if (!json_is_string(ref)) {
        return hmd_dp_bad(r, where, "array '%s' is not a dataset path", key);
    }
    const char *dset_path = json_string_value(ref);
    int rc = HMD_OK;
    hid_t dset = H5I_INVALID_HID, space = H5I_INVALID_HID, type = H5I_INVALID_HID;
    char what[400];
    snprintf(what, sizeof what, "dataset %s (%s.%s)", dset_path, where, key);
    hmd_dp_progress(r, what);
    if (H5Lexists(r->file, dset_path, H5P_DEFAULT) <= 0 ||
        (dset = H5Dopen2(r->file, dset_path, H5P_DEFAULT)) < 0) {
        return hmd_dp_bad(r, where, "array '%s': dataset %s is missing from the file", key,
                          dset_path);
    }
    space = H5Dget_space(dset);
    type = H5Dget_type(dset);
    hssize_t npoints = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
    const size_t tsize = type < 0 ? 0 : H5Tget_size(type);
    if (npoints < 0 || type < 0 || H5Tget_class(type) != H5T_FLOAT || (tsize != 4 && tsize != 8)) {
        rc = hmd_dp_bad(r, where, "array '%s' (%s) is not a float32 or float64 dataset", key,
                        dset_path);
        goto out_close;
    }
    /* The shape is checked against the file before anything is allocated or read: DeePMD-kit
     * writes every array contiguous and unfiltered, so its bytes are in the file. */
    const unsigned long long want = (unsigned long long)npoints * tsize;
    if ((unsigned long long)npoints > r->file_bytes / tsize ||
        (npoints > 0 && H5Dget_storage_size(dset) != want)) {
        rc = hmd_dp_bad(r, where,
                        "array '%s' (%s): %lld elements of %zu bytes, but the file holds %llu "
                        "bytes for it (of %llu): the file is damaged",
                        key, dset_path, (long long)npoints, tsize,
                        (unsigned long long)H5Dget_storage_size(dset), r->file_bytes);
        goto out_close;
    }
    if (count && (size_t)npoints != count) {
        rc = hmd_dp_bad(r, where, "array '%s' (%s) has %lld elements, expected %zu", key, dset_path,
                        (long long)npoints, count);
        goto out_close;
    }
    *out = hmd_arena_alloc(&r->m->arena, (size_t)(npoints ? npoints : 1) * sizeof(double));
    if (!*out) {
        rc = hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
        goto out_close;
    }
    if (npoints && H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
        rc = hmd_dp_bad(r, where, "array '%s' (%s) cannot be read", key, dset_path);
        goto out_close;
    }
    for (hssize_t k = 0; k < npoints; k++) {
        if (!isfinite((*out)[k])) {
            rc = hmd_dp_bad(r, where, "array '%s' (%s) has a non-finite value (%g at index %lld)",
                            key, dset_path, (*out)[k], (long long)k);
            goto out_close;
        }
    }
    if (n) {
        *n = (size_t)npoints;
    }
    if (strcmp(key, "w") == 0 && !r->precision_known) {
        snprintf(r->m->precision, sizeof r->m->precision, "float%zu", 8 * H5Tget_size(type));
        r->precision_known = true;
    }
out_close:
    if (type >= 0) {
        H5Tclose(type);
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    H5Dclose(dset);
    return rc;
}

/* ---- networks ---- */

int hmd_dp_parse_activation(struct hmd_dp_reader *r, const char *name, const char *where,
                            enum hmd_activation *act, struct hmd_act_silut *silut)
{
    static const struct {
        const char *name;
        enum hmd_activation act;
    } table[] = {
        {"none", HMD_ACT_NONE},       {"linear", HMD_ACT_NONE}, {"tanh", HMD_ACT_TANH},
        {"relu", HMD_ACT_RELU},       {"relu6", HMD_ACT_RELU6}, {"softplus", HMD_ACT_SOFTPLUS},
        {"sigmoid", HMD_ACT_SIGMOID}, {"silu", HMD_ACT_SILU},   {"gelu", HMD_ACT_GELU},
        {"gelu_tf", HMD_ACT_GELU},
    };
    char lower[64];
    size_t len = strlen(name);
    if (len >= sizeof lower) {
        return hmd_dp_bad(r, where, "activation function name too long");
    }
    for (size_t i = 0; i <= len; i++) {
        lower[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ? name[i] - 'A' + 'a' : name[i]);
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(lower, table[i].name) == 0) {
            *act = table[i].act;
            return HMD_OK;
        }
    }
    if (strncmp(lower, "silut", 5) == 0 || strncmp(lower, "custom_silu", 11) == 0) {
        const char *colon = strchr(lower, ':');
        double t = colon ? strtod(colon + 1, NULL) : 3.0;
        double s = hmd_sigmoid(t);
        *act = HMD_ACT_SILUT;
        silut->threshold = t;
        silut->slope = s + t * s * (1 - s);
        silut->shift = t * s;
        return HMD_OK;
    }
    return hmd_error_set(HMD_ENOTSUP, "%s: %s: activation function '%s' is not supported", r->path,
                         where, name);
}

int hmd_dp_read_layer(struct hmd_dp_reader *r, json_t *node, const char *where, int n_in,
                      struct hmd_dense *L)
{
    static const char *const known[] = {"w", "b", "idt", NULL};
    char act[64];
    bool resnet = false, has_bias = true;
    size_t nw;
    int rc = hmd_dp_check_variables(r, node, where, known);
    if (!rc) {
        rc = hmd_dp_get_string(r, node, "activation_function", where, act, sizeof act);
    }
    if (!rc) {
        rc = hmd_dp_parse_activation(r, act, where, &L->act, &L->silut);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, node, "resnet", where, false, &resnet);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, node, "bias", where, true, &has_bias);
    }
    if (!rc) {
        rc = hmd_dp_read_array(r, node, "w", where, 0, false, &L->w, &nw);
    }
    if (rc) {
        return rc;
    }
    if (n_in <= 0 || nw % (size_t)n_in != 0) {
        return hmd_dp_bad(r, where, "weight matrix of %zu elements does not match input width %d",
                          nw, n_in);
    }
    L->n_in = n_in;
    L->n_out = (int)(nw / (size_t)n_in);
    rc = hmd_dp_read_array(r, node, "b", where, (size_t)L->n_out, !has_bias, &L->b, NULL);
    if (!rc) {
        rc = hmd_dp_read_array(r, node, "idt", where, (size_t)L->n_out, true, &L->idt, NULL);
    }
    if (rc) {
        return rc;
    }
    L->resnet = HMD_RESNET_NONE;
    if (resnet && L->n_out == L->n_in) {
        L->resnet = HMD_RESNET_SAME;
    } else if (resnet && L->n_out == 2 * L->n_in) {
        L->resnet = HMD_RESNET_DOUBLE;
    }
    return HMD_OK;
}

/* Reads an EmbeddingNetwork or FittingNetwork node ("layers" list) with input width n_in. */
int hmd_dp_read_mlp(struct hmd_dp_reader *r, json_t *node, const char *where, int n_in,
                    struct hmd_mlp *net)
{
    json_t *layers = NULL;
    char sub[1024];
    int rc = hmd_dp_get_member(r, node, "layers", where, &layers);
    if (rc) {
        return rc;
    }
    if (!json_is_array(layers) || json_array_size(layers) == 0) {
        return hmd_dp_bad(r, where, "'layers' is not a non-empty list");
    }
    net->nlayers = (int)json_array_size(layers);
    net->layers = hmd_arena_alloc(&r->m->arena, net->nlayers * sizeof *net->layers);
    if (!net->layers) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    net->n_in = n_in;
    net->width_sum = 0;
    int width = n_in;
    for (int l = 0; l < net->nlayers; l++) {
        if (snprintf(sub, sizeof sub, "%s.layers[%d]", where, l) >= (int)sizeof sub) {
            return hmd_dp_bad(r, where, "nesting too deep");
        }
        rc = hmd_dp_read_layer(r, json_array_get(layers, l), sub, width, &net->layers[l]);
        if (rc) {
            return rc;
        }
        width = net->layers[l].n_out;
        net->width_sum += width;
    }
    net->n_out = width;
    return hmd_mlp_pack(net, &r->m->arena);
}

/* Reads a NetworkCollection of `expect` networks, each with input width n_in. Null entries
 * (networks of excluded type pairs) are allowed when `allow_null` and leave nlayers = 0. */
int hmd_dp_read_collection(struct hmd_dp_reader *r, json_t *node, const char *where, int expect,
                           int n_in, bool allow_null, struct hmd_mlp **nets)
{
    json_t *list;
    char sub[1024];
    int rc = hmd_dp_get_member(r, node, "networks", where, &list);
    if (rc) {
        return rc;
    }
    if (!json_is_array(list) || (int)json_array_size(list) != expect) {
        return hmd_dp_bad(r, where, "'networks' should be a list of %d networks", expect);
    }
    *nets = hmd_arena_alloc(&r->m->arena, expect * sizeof **nets);
    if (!*nets) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int i = 0; i < expect; i++) {
        json_t *net = json_array_get(list, i);
        if (snprintf(sub, sizeof sub, "%s.networks[%d]", where, i) >= (int)sizeof sub) {
            return hmd_dp_bad(r, where, "nesting too deep");
        }
        if (json_is_null(net) && allow_null) {
            continue;
        }
        rc = hmd_dp_read_mlp(r, net, sub, n_in, &(*nets)[i]);
        if (rc) {
            return rc;
        }
    }
    return HMD_OK;
}

/* ---- model parts ---- */

/* Fills a [ntypes * ntypes] symmetric flag matrix from a list of [ti, tj] pairs. */
int hmd_dp_read_type_pairs(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                           bool **flags)
{
    const int nt = r->m->ntypes;
    *flags = hmd_arena_alloc(&r->m->arena, (size_t)nt * nt * sizeof **flags);
    if (!*flags) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    json_t *list = json_object_get(obj, key);
    if (!list || json_is_null(list)) {
        return HMD_OK;
    }
    if (!json_is_array(list)) {
        return hmd_dp_bad(r, where, "'%s' is not a list", key);
    }
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *pair = json_array_get(list, k);
        json_t *a = json_array_get(pair, 0), *b = json_array_get(pair, 1);
        if (json_array_size(pair) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
            json_integer_value(a) < 0 || json_integer_value(a) >= nt || json_integer_value(b) < 0 ||
            json_integer_value(b) >= nt) {
            return hmd_dp_bad(r, where, "'%s'[%zu] is not a pair of type indices", key, k);
        }
        int ti = (int)json_integer_value(a), tj = (int)json_integer_value(b);
        (*flags)[ti * nt + tj] = (*flags)[tj * nt + ti] = true;
    }
    return HMD_OK;
}

/* Marks the types of an integer list (atom_exclude_types, fitting exclude_types). */
int hmd_dp_read_type_list(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                          bool *flags)
{
    json_t *list = json_object_get(obj, key);
    if (!list || json_is_null(list)) {
        return HMD_OK;
    }
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *e = json_array_get(list, k);
        if (!json_is_integer(e) || json_integer_value(e) < 0 ||
            json_integer_value(e) >= r->m->ntypes) {
            return hmd_dp_bad(r, where, "'%s'[%zu] is not a type index", key, k);
        }
        flags[json_integer_value(e)] = true;
    }
    return HMD_OK;
}

/* ---- compression tables ---- */

/* compress["@variables"][key] as a list of `count` entries. */
static int table_list(struct hmd_dp_reader *r, json_t *vars, const char *key, const char *where,
                      int count, json_t **list)
{
    *list = json_object_get(vars, key);
    if (!json_is_array(*list) || json_array_size(*list) != (size_t)count) {
        return hmd_dp_bad(r, where, "compress: '%s' is not a list of %d tables", key, count);
    }
    return HMD_OK;
}

int hmd_dp_read_tables(struct hmd_dp_reader *r, json_t *compress, const char *where, int count,
                       int M, struct hmd_emb_table **tables)
{
    struct hmd_dp_model *m = r->m;
    json_t *vars = json_object_get(compress, "@variables"), *data, *info;
    if (!json_is_object(vars)) {
        return hmd_dp_bad(r, where, "compress has no '@variables'");
    }
    int rc = table_list(r, vars, "compress_data", where, count, &data);
    if (!rc) {
        rc = table_list(r, vars, "compress_info", where, count, &info);
    }
    if (rc) {
        return rc;
    }
    *tables = hmd_arena_alloc(&m->arena, (size_t)count * sizeof **tables);
    if (!*tables) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    bool first = true;
    for (int k = 0; k < count; k++) {
        json_t *dref = json_array_get(data, k), *iref = json_array_get(info, k);
        double *d = NULL, *in = NULL;
        size_t n = 0;
        (*tables)[k] = (struct hmd_emb_table){0};
        if (json_is_null(dref) && json_is_null(iref)) {
            continue;
        }
        rc = hmd_dp_read_dataset(r, dref, "compress_data", where, 0, &d, &n);
        if (!rc) {
            rc = hmd_dp_read_dataset(r, iref, "compress_info", where, 6, &in, NULL);
        }
        if (!rc && n == 0) {
            continue;
        }
        if (!rc && n % (6 * (size_t)M) != 0) {
            rc = hmd_dp_bad(r, where, "compress_data[%d] has %zu numbers, not rows of 6 x %d", k, n,
                            M);
        }
        if (!rc) {
            rc = hmd_emb_table_from_data(&(*tables)[k], M, d, (int)(n / (6 * (size_t)M)), in,
                                         &m->arena);
            if (rc) {
                char why[256];
                snprintf(why, sizeof why, "%s", hmd_error_msg());
                rc = hmd_dp_bad(r, where, "compress table %d: %s", k, why);
            }
        }
        if (rc) {
            return rc;
        }
        if (first) {
            const struct hmd_emb_table *t = &(*tables)[k];
            m->compression = (struct hmd_compression){
                .on = true,
                .from_file = true,
                .geometric = true,
                .extrapolate = t->max / t->upper,
                .stride0 = t->stride0,
                .stride1 = t->stride1,
                .min_nbor_dist = m->min_nbor_dist,
            };
            first = false;
        }
    }
    return HMD_OK;
}
