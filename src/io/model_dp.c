/* DeePMD-kit .dp reader: HDF5 root attribute `json` (the model tree) + root datasets (arrays).
 *
 * The tree is walked with a "where" string that names the node being read
 * ("model.fitting.nets.networks[0].layers[2]"), so every error says where in the file it is.
 * Arrays are read as double whatever their stored type (float32 or float64); the stored type
 * of the first weight matrix is reported as the model precision. Unknown arrays under
 * "@variables" are refused: they carry math we would silently ignore.
 */
#include "io/model_dp.h"

#include <errno.h>
#include <hdf5.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "nnp/se_e2_a.h"

struct reader {
    const char *path;       /* file name, for messages */
    hid_t file;             /* open HDF5 file */
    struct hmd_dp_model *m; /* model being filled */
    bool precision_known;   /* m->precision set from a weight matrix */
};

/* ---- JSON access with messages naming the node ---- */

static int bad(struct reader *r, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct reader *r, const char *where, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hmd_error_set(HMD_EDATA, "%s: %s: %s", r->path, where, what);
}

static int get_member(struct reader *r, json_t *obj, const char *key, const char *where,
                      json_t **out)
{
    json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    if (!v) {
        return bad(r, where, "missing key '%s'", key);
    }
    *out = v;
    return HMD_OK;
}

static int get_object(struct reader *r, json_t *obj, const char *key, const char *where,
                      json_t **out)
{
    int rc = get_member(r, obj, key, where, out);
    if (rc == HMD_OK && !json_is_object(*out)) {
        return bad(r, where, "'%s' is not an object", key);
    }
    return rc;
}

static int get_double(struct reader *r, json_t *obj, const char *key, const char *where,
                      double *out)
{
    json_t *v;
    int rc = get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_number(v)) {
        return bad(r, where, "'%s' is not a number", key);
    }
    *out = json_number_value(v);
    return HMD_OK;
}

static int get_int(struct reader *r, json_t *obj, const char *key, const char *where, int *out)
{
    json_t *v;
    int rc = get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_integer(v)) {
        return bad(r, where, "'%s' is not an integer", key);
    }
    *out = (int)json_integer_value(v);
    return HMD_OK;
}

/* Booleans default to `dflt` when the key is absent (older files omit some flags). */
static int get_bool(struct reader *r, json_t *obj, const char *key, const char *where, bool dflt,
                    bool *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return HMD_OK;
    }
    if (!json_is_boolean(v)) {
        return bad(r, where, "'%s' is not a boolean", key);
    }
    *out = json_is_true(v);
    return HMD_OK;
}

static int get_string(struct reader *r, json_t *obj, const char *key, const char *where, char *out,
                      size_t size)
{
    json_t *v;
    int rc = get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_string(v)) {
        return bad(r, where, "'%s' is not a string", key);
    }
    if (strlen(json_string_value(v)) >= size) {
        return bad(r, where, "'%s' is too long", key);
    }
    strcpy(out, json_string_value(v));
    return HMD_OK;
}

/* Copies an optional string member (empty when absent or not a string). */
static void opt_string(json_t *obj, const char *key, char *out, size_t size)
{
    json_t *v = json_object_get(obj, key);
    out[0] = '\0';
    if (json_is_string(v)) {
        snprintf(out, size, "%s", json_string_value(v));
    }
}

/* An integer list member, allocated in the model arena. */
static int get_int_list(struct reader *r, json_t *obj, const char *key, const char *where,
                        int **out, int *n)
{
    json_t *v;
    int rc = get_member(r, obj, key, where, &v);
    if (rc) {
        return rc;
    }
    if (!json_is_array(v)) {
        return bad(r, where, "'%s' is not a list", key);
    }
    *n = (int)json_array_size(v);
    *out = hmd_arena_alloc(&r->m->arena, (*n + 1) * sizeof **out);
    if (!*out) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int i = 0; i < *n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e)) {
            return bad(r, where, "'%s'[%d] is not an integer", key, i);
        }
        (*out)[i] = (int)json_integer_value(e);
    }
    return HMD_OK;
}

/* Fails with HMD_ENOTSUP when `key` is present and neither null, false, 0 nor an empty list. */
static int refuse_if_set(struct reader *r, json_t *obj, const char *key, const char *where,
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
static int check_variables(struct reader *r, json_t *node, const char *where,
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
static int read_array(struct reader *r, json_t *node, const char *key, const char *where,
                      size_t count, bool optional, double **out, size_t *n)
{
    *out = NULL;
    json_t *vars = json_object_get(node, "@variables");
    json_t *ref = vars ? json_object_get(vars, key) : NULL;
    if (!ref || json_is_null(ref)) {
        return optional ? HMD_OK : bad(r, where, "missing array '%s'", key);
    }
    if (!json_is_string(ref)) {
        return bad(r, where, "array '%s' is not a dataset path", key);
    }
    const char *dset_path = json_string_value(ref);
    int rc = HMD_OK;
    hid_t dset = H5I_INVALID_HID, space = H5I_INVALID_HID, type = H5I_INVALID_HID;
    if (H5Lexists(r->file, dset_path, H5P_DEFAULT) <= 0 ||
        (dset = H5Dopen2(r->file, dset_path, H5P_DEFAULT)) < 0) {
        return bad(r, where, "array '%s': dataset %s is missing from the file", key, dset_path);
    }
    space = H5Dget_space(dset);
    type = H5Dget_type(dset);
    hssize_t npoints = H5Sget_simple_extent_npoints(space);
    if (npoints < 0 || H5Tget_class(type) != H5T_FLOAT) {
        rc = bad(r, where, "array '%s' (%s) is not a floating-point dataset", key, dset_path);
        goto out_close;
    }
    if (count && (size_t)npoints != count) {
        rc = bad(r, where, "array '%s' (%s) has %lld elements, expected %zu", key, dset_path,
                 (long long)npoints, count);
        goto out_close;
    }
    *out = hmd_arena_alloc(&r->m->arena, (size_t)(npoints ? npoints : 1) * sizeof(double));
    if (!*out) {
        rc = hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
        goto out_close;
    }
    if (npoints && H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0) {
        rc = bad(r, where, "array '%s' (%s) cannot be read", key, dset_path);
        goto out_close;
    }
    if (n) {
        *n = (size_t)npoints;
    }
    if (strcmp(key, "w") == 0 && !r->precision_known) {
        snprintf(r->m->precision, sizeof r->m->precision, "float%zu", 8 * H5Tget_size(type));
        r->precision_known = true;
    }
out_close:
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(dset);
    return rc;
}

/* ---- networks ---- */

static int parse_activation(struct reader *r, const char *name, const char *where,
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
        return bad(r, where, "activation function name too long");
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

static int read_layer(struct reader *r, json_t *node, const char *where, int n_in,
                      struct hmd_dense *L)
{
    static const char *const known[] = {"w", "b", "idt", NULL};
    char act[64];
    bool resnet = false, has_bias = true;
    size_t nw;
    int rc = check_variables(r, node, where, known);
    if (!rc) {
        rc = get_string(r, node, "activation_function", where, act, sizeof act);
    }
    if (!rc) {
        rc = parse_activation(r, act, where, &L->act, &L->silut);
    }
    if (!rc) {
        rc = get_bool(r, node, "resnet", where, false, &resnet);
    }
    if (!rc) {
        rc = get_bool(r, node, "bias", where, true, &has_bias);
    }
    if (!rc) {
        rc = read_array(r, node, "w", where, 0, false, &L->w, &nw);
    }
    if (rc) {
        return rc;
    }
    if (n_in <= 0 || nw % (size_t)n_in != 0) {
        return bad(r, where, "weight matrix of %zu elements does not match input width %d", nw,
                   n_in);
    }
    L->n_in = n_in;
    L->n_out = (int)(nw / (size_t)n_in);
    rc = read_array(r, node, "b", where, (size_t)L->n_out, !has_bias, &L->b, NULL);
    if (!rc) {
        rc = read_array(r, node, "idt", where, (size_t)L->n_out, true, &L->idt, NULL);
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
static int read_mlp(struct reader *r, json_t *node, const char *where, int n_in,
                    struct hmd_mlp *net)
{
    json_t *layers = NULL;
    char sub[1024];
    int rc = get_member(r, node, "layers", where, &layers);
    if (rc) {
        return rc;
    }
    if (!json_is_array(layers) || json_array_size(layers) == 0) {
        return bad(r, where, "'layers' is not a non-empty list");
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
            return bad(r, where, "nesting too deep");
        }
        rc = read_layer(r, json_array_get(layers, l), sub, width, &net->layers[l]);
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
static int read_collection(struct reader *r, json_t *node, const char *where, int expect, int n_in,
                           bool allow_null, struct hmd_mlp **nets)
{
    json_t *list;
    char sub[1024];
    int rc = get_member(r, node, "networks", where, &list);
    if (rc) {
        return rc;
    }
    if (!json_is_array(list) || (int)json_array_size(list) != expect) {
        return bad(r, where, "'networks' should be a list of %d networks", expect);
    }
    *nets = hmd_arena_alloc(&r->m->arena, expect * sizeof **nets);
    if (!*nets) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int i = 0; i < expect; i++) {
        json_t *net = json_array_get(list, i);
        if (snprintf(sub, sizeof sub, "%s.networks[%d]", where, i) >= (int)sizeof sub) {
            return bad(r, where, "nesting too deep");
        }
        if (json_is_null(net) && allow_null) {
            continue;
        }
        rc = read_mlp(r, net, sub, n_in, &(*nets)[i]);
        if (rc) {
            return rc;
        }
    }
    return HMD_OK;
}

/* ---- model parts ---- */

/* Fills a [ntypes * ntypes] symmetric flag matrix from a list of [ti, tj] pairs. */
static int read_type_pairs(struct reader *r, json_t *obj, const char *key, const char *where,
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
        return bad(r, where, "'%s' is not a list", key);
    }
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *pair = json_array_get(list, k);
        json_t *a = json_array_get(pair, 0), *b = json_array_get(pair, 1);
        if (json_array_size(pair) != 2 || !json_is_integer(a) || !json_is_integer(b) ||
            json_integer_value(a) < 0 || json_integer_value(a) >= nt || json_integer_value(b) < 0 ||
            json_integer_value(b) >= nt) {
            return bad(r, where, "'%s'[%zu] is not a pair of type indices", key, k);
        }
        int ti = (int)json_integer_value(a), tj = (int)json_integer_value(b);
        (*flags)[ti * nt + tj] = (*flags)[tj * nt + ti] = true;
    }
    return HMD_OK;
}

/* Marks the types of an integer list (atom_exclude_types, fitting exclude_types). */
static int read_type_list(struct reader *r, json_t *obj, const char *key, const char *where,
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
            return bad(r, where, "'%s'[%zu] is not a type index", key, k);
        }
        flags[json_integer_value(e)] = true;
    }
    return HMD_OK;
}

static int read_se_e2_a(struct reader *r, json_t *desc)
{
    static const char *const known[] = {"davg", "dstd", NULL};
    const char *where = "model.descriptor";
    struct hmd_dp_model *m = r->m;
    struct hmd_se_e2_a *se = &m->se;
    const int nt = m->ntypes;
    int nsel = 0;
    json_t *env, *emb;
    int rc = check_variables(r, desc, where, known);
    if (!rc) {
        rc = refuse_if_set(r, desc, "spin", where, "spin model");
    }
    if (!rc) {
        rc = json_object_get(desc, "compress")
                 ? hmd_error_set(HMD_ENOTSUP,
                                 "%s: %s: compressed se_e2_a tables ('compress') are not "
                                 "supported yet; convert the uncompressed model",
                                 r->path, where)
                 : HMD_OK;
    }
    if (!rc) {
        rc = get_double(r, desc, "rcut", where, &m->rcut);
    }
    if (!rc) {
        rc = get_double(r, desc, "rcut_smth", where, &m->rcut_smth);
    }
    if (!rc) {
        rc = get_int_list(r, desc, "sel", where, &se->sel, &nsel);
    }
    if (!rc) {
        rc = get_int_list(r, desc, "neuron", where, &se->neuron, &se->nneuron);
    }
    if (!rc) {
        rc = get_int(r, desc, "axis_neuron", where, &se->M2);
    }
    if (!rc) {
        rc = get_bool(r, desc, "type_one_side", where, false, &se->type_one_side);
    }
    if (!rc) {
        rc = get_bool(r, desc, "resnet_dt", where, false, &se->resnet_dt);
    }
    if (!rc) {
        rc = read_type_pairs(r, desc, "exclude_types", where, &se->exclude);
    }
    if (rc) {
        return rc;
    }
    opt_string(desc, "activation_function", se->activation, sizeof se->activation);
    m->env_protection = 0.0;
    json_t *prot = json_object_get(desc, "env_protection");
    if (json_is_number(prot)) {
        m->env_protection = json_number_value(prot);
    }
    if (json_is_object(env = json_object_get(desc, "env_mat")) &&
        json_is_true(json_object_get(env, "use_exp_switch"))) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: %s.env_mat: the exponential switch (use_exp_switch) is not "
                             "supported",
                             r->path, where);
    }
    if (nsel != nt) {
        return bad(r, where, "sel has %d entries for %d types", nsel, nt);
    }
    if (!(m->rcut > 0) || !(m->rcut_smth >= 0) || m->rcut_smth >= m->rcut) {
        return bad(r, where, "rcut %g and rcut_smth %g are inconsistent", m->rcut, m->rcut_smth);
    }
    if (se->nneuron < 1) {
        return bad(r, where, "empty embedding 'neuron' list");
    }
    se->sel_offset = hmd_arena_alloc(&m->arena, (nt + 1) * sizeof *se->sel_offset);
    if (!se->sel_offset) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int t = 0; t < nt; t++) {
        if (se->sel[t] < 0) {
            return bad(r, where, "sel[%d] is negative", t);
        }
        se->sel_offset[t + 1] = se->sel_offset[t] + se->sel[t];
    }
    se->nnei = se->sel_offset[nt];
    se->M = se->neuron[se->nneuron - 1];
    if (se->M2 < 1 || se->M2 > se->M) {
        return bad(r, where, "axis_neuron %d must lie in 1..%d", se->M2, se->M);
    }
    const size_t nstat = (size_t)nt * se->nnei * 4;
    rc = read_array(r, desc, "davg", where, nstat, false, &se->davg, NULL);
    if (!rc) {
        rc = read_array(r, desc, "dstd", where, nstat, false, &se->dstd, NULL);
    }
    if (!rc) {
        rc = get_object(r, desc, "embeddings", where, &emb);
    }
    if (rc) {
        return rc;
    }
    for (size_t k = 0; k < nstat; k++) {
        if (!(se->dstd[k] != 0)) {
            return bad(r, where, "dstd has a zero or NaN entry (index %zu)", k);
        }
    }
    se->nemb = se->type_one_side ? nt : nt * nt;
    rc = read_collection(r, emb, "model.descriptor.embeddings", se->nemb, 1, true, &se->emb);
    if (rc) {
        return rc;
    }
    for (int k = 0; k < se->nemb; k++) {
        const struct hmd_mlp *net = &se->emb[k];
        if (net->nlayers == 0) {
            continue;
        }
        if (net->nlayers != se->nneuron || net->n_out != se->M) {
            return bad(r, "model.descriptor.embeddings",
                       "network %d has %d layers of output %d; neuron says %d layers ending %d", k,
                       net->nlayers, net->n_out, se->nneuron, se->M);
        }
        m->nparams += hmd_mlp_param_count(net);
    }
    for (int ti = 0; ti < nt && !se->type_one_side; ti++) {
        for (int tau = 0; tau < nt; tau++) {
            if (se->emb[ti + tau * nt].nlayers == 0 && !se->exclude[ti * nt + tau]) {
                return bad(r, "model.descriptor.embeddings", "network %d (types %d, %d) is missing",
                           ti + tau * nt, ti, tau);
            }
        }
    }
    for (int tau = 0; tau < nt && se->type_one_side; tau++) {
        if (se->emb[tau].nlayers == 0) {
            return bad(r, "model.descriptor.embeddings", "network %d is missing", tau);
        }
    }
    m->dim_descrpt = se->M * se->M2;
    return hmd_se_e2_a_prepare(m);
}

static int read_descriptor(struct reader *r, json_t *model)
{
    json_t *desc;
    int rc = get_object(r, model, "descriptor", "model", &desc);
    if (!rc) {
        rc = get_string(r, desc, "type", "model.descriptor", r->m->descriptor_name,
                        sizeof r->m->descriptor_name);
    }
    if (rc) {
        return rc;
    }
    const char *type = r->m->descriptor_name;
    if (strcmp(type, "se_e2_a") == 0 || strcmp(type, "se_a") == 0) {
        r->m->kind = HMD_DESCRIPTOR_SE_E2_A;
        return read_se_e2_a(r, desc);
    }
    if (strcmp(type, "dpa1") == 0 || strcmp(type, "se_atten") == 0 ||
        strcmp(type, "se_atten_v2") == 0) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: model.descriptor: descriptor '%s' (DPA-1) is not supported by "
                             "this version of halomd; supported: se_e2_a",
                             r->path, type);
    }
    return hmd_error_set(HMD_ENOTSUP,
                         "%s: model.descriptor: descriptor '%s' is not supported; supported: "
                         "se_e2_a",
                         r->path, type);
}

static int read_fitting(struct reader *r, json_t *model)
{
    static const char *const known[] = {"bias_atom_e", NULL};
    const char *where = "model.fitting";
    struct hmd_dp_model *m = r->m;
    json_t *fit, *nets;
    char type[32];
    int dim_descrpt = 0, dim_out = 1;
    bool mixed = false;
    int rc = get_object(r, model, "fitting", "model", &fit);
    if (!rc) {
        rc = get_string(r, fit, "type", where, type, sizeof type);
    }
    if (rc) {
        return rc;
    }
    if (strcmp(type, "ener") != 0) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: %s: fitting '%s' is not supported; halomd runs energy models "
                             "('ener')",
                             r->path, where, type);
    }
    json_t *v = json_object_get(fit, "dim_out");
    if (json_is_integer(v)) {
        dim_out = (int)json_integer_value(v);
    }
    rc = check_variables(r, fit, where, known);
    if (!rc) {
        rc = refuse_if_set(r, fit, "numb_fparam", where, "frame parameters");
    }
    if (!rc) {
        rc = refuse_if_set(r, fit, "numb_aparam", where, "atomic parameters");
    }
    if (!rc) {
        rc = refuse_if_set(r, fit, "dim_case_embd", where, "case embedding (multi-task)");
    }
    if (!rc) {
        rc = refuse_if_set(r, fit, "atom_ener", where, "vacuum energy removal");
    }
    if (!rc) {
        rc = refuse_if_set(r, fit, "spin", where, "spin model");
    }
    if (!rc) {
        rc = get_int(r, fit, "dim_descrpt", where, &dim_descrpt);
    }
    if (!rc) {
        rc = get_bool(r, fit, "mixed_types", where, false, &mixed);
    }
    if (!rc) {
        rc = get_bool(r, fit, "resnet_dt", where, false, &m->fit_resnet_dt);
    }
    if (!rc) {
        rc = get_int_list(r, fit, "neuron", where, &m->fit_neuron, &m->fit_nneuron);
    }
    if (!rc) {
        rc = read_type_list(r, fit, "exclude_types", where, m->fit_exclude);
    }
    if (!rc) {
        rc = get_object(r, fit, "nets", where, &nets);
    }
    if (rc) {
        return rc;
    }
    opt_string(fit, "activation_function", m->fit_activation, sizeof m->fit_activation);
    if (dim_out != 1) {
        return bad(r, where, "dim_out is %d; an energy fitting has 1", dim_out);
    }
    if (dim_descrpt != m->dim_descrpt) {
        return bad(r, where, "dim_descrpt %d does not match the descriptor width %d", dim_descrpt,
                   m->dim_descrpt);
    }
    m->nfit = mixed ? 1 : m->ntypes;
    rc = read_collection(r, nets, "model.fitting.nets", m->nfit, m->dim_descrpt, false, &m->fit);
    if (!rc) {
        rc = read_array(r, fit, "bias_atom_e", where, (size_t)m->ntypes, true, &m->bias_atom_e,
                        NULL);
    }
    if (rc) {
        return rc;
    }
    for (int k = 0; k < m->nfit; k++) {
        if (m->fit[k].n_out != 1) {
            return bad(r, "model.fitting.nets", "network %d has %d outputs, expected 1", k,
                       m->fit[k].n_out);
        }
        m->nparams += hmd_mlp_param_count(&m->fit[k]);
    }
    if (!m->bias_atom_e) {
        m->bias_atom_e = hmd_arena_alloc(&m->arena, m->ntypes * sizeof(double));
        if (!m->bias_atom_e) {
            return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
        }
    }
    return HMD_OK;
}

static int read_model(struct reader *r, json_t *root)
{
    static const char *const known[] = {"out_bias", "out_std", NULL};
    struct hmd_dp_model *m = r->m;
    json_t *model, *tmap;
    char mtype[32] = "standard", klass[32];
    int rc = get_object(r, root, "model", "(root)", &model);
    if (rc) {
        return rc;
    }
    opt_string(root, "software", m->software, sizeof m->software);
    opt_string(root, "version", m->version, sizeof m->version);
    opt_string(root, "backend", m->backend, sizeof m->backend);
    opt_string(model, "@class", klass, sizeof klass);
    json_t *t = json_object_get(model, "type");
    if (json_is_string(t)) {
        snprintf(mtype, sizeof mtype, "%s", json_string_value(t));
    }
    if (strcmp(klass, "Model") != 0 || strcmp(mtype, "standard") != 0) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: model: model class '%s' of type '%s' is not supported; halomd "
                             "runs standard energy models",
                             r->path, klass, mtype);
    }
    rc = check_variables(r, model, "model", known);
    if (!rc) {
        rc = get_member(r, model, "type_map", "model", &tmap);
    }
    if (rc) {
        return rc;
    }
    if (!json_is_array(tmap) || json_array_size(tmap) == 0) {
        return bad(r, "model", "'type_map' is not a non-empty list");
    }
    m->ntypes = (int)json_array_size(tmap);
    m->type_map = hmd_arena_alloc(&m->arena, m->ntypes * sizeof *m->type_map);
    m->atom_exclude = hmd_arena_alloc(&m->arena, m->ntypes * sizeof *m->atom_exclude);
    m->fit_exclude = hmd_arena_alloc(&m->arena, m->ntypes * sizeof *m->fit_exclude);
    if (!m->type_map || !m->atom_exclude || !m->fit_exclude) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int i = 0; i < m->ntypes; i++) {
        json_t *s = json_array_get(tmap, i);
        if (!json_is_string(s) || strlen(json_string_value(s)) >= sizeof m->type_map[i]) {
            return bad(r, "model", "type_map[%d] is not a short string", i);
        }
        strcpy(m->type_map[i], json_string_value(s));
    }
    rc = read_type_list(r, model, "atom_exclude_types", "model", m->atom_exclude);
    if (!rc) {
        rc = read_type_pairs(r, model, "pair_exclude_types", "model", &m->pair_exclude);
    }
    if (!rc) {
        rc = read_descriptor(r, model);
    }
    if (!rc) {
        rc = read_fitting(r, model);
    }
    if (!rc) {
        size_t n;
        rc = read_array(r, model, "out_bias", "model", 0, true, &m->out_bias, &n);
        if (!rc && m->out_bias && n != (size_t)m->ntypes) {
            rc = bad(r, "model", "out_bias has %zu elements, expected %d (one energy per type)", n,
                     m->ntypes);
        }
    }
    if (!rc && !m->out_bias) {
        m->out_bias = hmd_arena_alloc(&m->arena, m->ntypes * sizeof(double));
        rc = m->out_bias ? HMD_OK : hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    return rc;
}

/* Reads the root attribute "json" (a variable- or fixed-length string) into a new string. */
static int read_json_attribute(struct reader *r, char **text)
{
    int rc = HMD_OK;
    hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID, mem = H5I_INVALID_HID;
    if (H5Aexists(r->file, "json") <= 0) {
        return hmd_error_set(HMD_EDATA,
                             "%s: not a DeePMD-kit .dp model (no root attribute 'json'); make one "
                             "with `dp convert-backend model.pth model.dp`",
                             r->path);
    }
    attr = H5Aopen(r->file, "json", H5P_DEFAULT);
    type = H5Aget_type(attr);
    if (H5Tget_class(type) != H5T_STRING) {
        rc = hmd_error_set(HMD_EDATA, "%s: root attribute 'json' is not a string", r->path);
        goto out;
    }
    if (H5Tis_variable_str(type) > 0) {
        mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, H5T_VARIABLE);
        H5Tset_cset(mem, H5Tget_cset(type));
        char *vl = NULL;
        if (H5Aread(attr, mem, &vl) < 0 || !vl) {
            rc = hmd_error_set(HMD_EDATA, "%s: cannot read root attribute 'json'", r->path);
            goto out;
        }
        *text = strdup(vl);
        H5free_memory(vl);
    } else {
        size_t size = H5Tget_size(type);
        mem = H5Tcopy(type);
        *text = calloc(size + 1, 1);
        if (*text && H5Aread(attr, mem, *text) < 0) {
            free(*text);
            *text = NULL;
            rc = hmd_error_set(HMD_EDATA, "%s: cannot read root attribute 'json'", r->path);
            goto out;
        }
    }
    if (!*text) {
        rc = hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
out:
    if (mem >= 0) {
        H5Tclose(mem);
    }
    H5Tclose(type);
    H5Aclose(attr);
    return rc;
}

/* Python's json.dumps writes NaN, Infinity and -Infinity, which strict JSON (jansson) rejects.
 * Outside strings, replace them with null padded by spaces; no value we read can be one. */
static void neutralise_nonfinite(char *text)
{
    static const char *const words[] = {"-Infinity", "Infinity", "NaN"};
    bool in_string = false;
    for (char *p = text; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1]) {
                p++;
            } else if (*p == '"') {
                in_string = false;
            }
            continue;
        }
        if (*p == '"') {
            in_string = true;
            continue;
        }
        for (int w = 0; w < 3; w++) {
            size_t n = strlen(words[w]);
            if (strncmp(p, words[w], n) == 0) {
                memset(p, ' ', n);
                memcpy(p, "null", 4);
                p += n - 1;
                break;
            }
        }
    }
}

int hmd_model_read_dp(const char *path, struct hmd_dp_model *model)
{
    struct reader r = {.path = path, .m = model};
    char *text = NULL;
    json_t *root = NULL;
    json_error_t jerr;
    int rc;

    FILE *probe = fopen(path, "rb");
    if (!probe) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open model %s: %s", path, strerror(errno));
    }
    fclose(probe);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (H5Fis_hdf5(path) <= 0) {
        const char *dot = strrchr(path, '.');
        return hmd_error_set(
            HMD_EDATA, "%s: not an HDF5 file, so not a DeePMD-kit .dp model%s", path,
            (dot && (!strcmp(dot, ".pth") || !strcmp(dot, ".pb") || !strcmp(dot, ".pt")))
                ? "; convert it with `dp convert-backend model.pth model.dp`"
                : "");
    }
    r.file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (r.file < 0) {
        return hmd_error_set(HMD_EDATA, "%s: cannot open as HDF5", path);
    }
    rc = read_json_attribute(&r, &text);
    if (rc) {
        goto out_close;
    }
    neutralise_nonfinite(text);
    root = json_loads(text, 0, &jerr);
    if (!root) {
        rc = hmd_error_set(HMD_EDATA,
                           "%s: root attribute 'json' is not valid JSON (line %d, column %d: %s)",
                           path, jerr.line, jerr.column, jerr.text);
        goto out_free_text;
    }
    rc = read_model(&r, root);
    json_decref(root);
out_free_text:
    free(text);
out_close:
    H5Fclose(r.file);
    return rc;
}
