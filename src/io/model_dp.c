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
#include <poll.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"
#include "core/timer.h"
#include "io/dp_tree.h"
#include "nnp/se_e2_a.h"

static int read_se_e2_a(struct hmd_dp_reader *r, json_t *desc)
{
    static const char *const known[] = {"davg", "dstd", NULL};
    const char *where = "model.descriptor";
    struct hmd_dp_model *m = r->m;
    struct hmd_se_e2_a *se = &m->se;
    const int nt = m->ntypes;
    int nsel = 0;
    json_t *env, *emb;
    int rc = hmd_dp_check_variables(r, desc, where, known);
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, desc, "spin", where, "spin model");
    }
    if (!rc) {
        rc = hmd_dp_get_double(r, desc, "rcut", where, &m->rcut);
    }
    if (!rc) {
        rc = hmd_dp_get_double(r, desc, "rcut_smth", where, &m->rcut_smth);
    }
    if (!rc) {
        rc = hmd_dp_get_int_list(r, desc, "sel", where, &se->sel, &nsel);
    }
    if (!rc) {
        rc = hmd_dp_get_int_list(r, desc, "neuron", where, &se->neuron, &se->nneuron);
    }
    if (!rc) {
        rc = hmd_dp_get_int(r, desc, "axis_neuron", where, &se->M2);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "type_one_side", where, false, &se->type_one_side);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "resnet_dt", where, false, &se->resnet_dt);
    }
    if (!rc) {
        rc = hmd_dp_read_type_pairs(r, desc, "exclude_types", where, &se->exclude);
    }
    if (rc) {
        return rc;
    }
    hmd_dp_opt_string(desc, "activation_function", se->activation, sizeof se->activation);
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
        return hmd_dp_bad(r, where, "sel has %d entries for %d types", nsel, nt);
    }
    if (!(m->rcut > 0) || !(m->rcut_smth >= 0) || m->rcut_smth >= m->rcut) {
        return hmd_dp_bad(r, where, "rcut %g and rcut_smth %g are inconsistent", m->rcut,
                          m->rcut_smth);
    }
    if (se->nneuron < 1) {
        return hmd_dp_bad(r, where, "empty embedding 'neuron' list");
    }
    se->sel_offset = hmd_arena_alloc(&m->arena, (nt + 1) * sizeof *se->sel_offset);
    if (!se->sel_offset) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int t = 0; t < nt; t++) {
        if (se->sel[t] < 0) {
            return hmd_dp_bad(r, where, "sel[%d] is negative", t);
        }
        se->sel_offset[t + 1] = se->sel_offset[t] + se->sel[t];
    }
    se->nnei = se->sel_offset[nt];
    se->M = se->neuron[se->nneuron - 1];
    if (se->M2 < 1 || se->M2 > se->M) {
        return hmd_dp_bad(r, where, "axis_neuron %d must lie in 1..%d", se->M2, se->M);
    }
    const size_t nstat = (size_t)nt * se->nnei * 4;
    rc = hmd_dp_read_array(r, desc, "davg", where, nstat, false, &se->davg, NULL);
    if (!rc) {
        rc = hmd_dp_read_array(r, desc, "dstd", where, nstat, false, &se->dstd, NULL);
    }
    if (!rc) {
        rc = hmd_dp_get_object(r, desc, "embeddings", where, &emb);
    }
    if (rc) {
        return rc;
    }
    for (size_t k = 0; k < nstat; k++) {
        if (!(se->dstd[k] != 0)) {
            return hmd_dp_bad(r, where, "dstd has a zero or NaN entry (index %zu)", k);
        }
    }
    se->nemb = se->type_one_side ? nt : nt * nt;
    rc = hmd_dp_read_collection(r, emb, "model.descriptor.embeddings", se->nemb, 1, true, &se->emb);
    if (rc) {
        return rc;
    }
    for (int k = 0; k < se->nemb; k++) {
        const struct hmd_mlp *net = &se->emb[k];
        if (net->nlayers == 0) {
            continue;
        }
        if (net->nlayers != se->nneuron || net->n_out != se->M) {
            return hmd_dp_bad(
                r, "model.descriptor.embeddings",
                "network %d has %d layers of output %d; neuron says %d layers ending %d", k,
                net->nlayers, net->n_out, se->nneuron, se->M);
        }
        m->nparams += hmd_mlp_param_count(net);
    }
    for (int ti = 0; ti < nt && !se->type_one_side; ti++) {
        for (int tau = 0; tau < nt; tau++) {
            if (se->emb[ti + tau * nt].nlayers == 0 && !se->exclude[ti * nt + tau]) {
                return hmd_dp_bad(r, "model.descriptor.embeddings",
                                  "network %d (types %d, %d) is missing", ti + tau * nt, ti, tau);
            }
        }
    }
    for (int tau = 0; tau < nt && se->type_one_side; tau++) {
        if (se->emb[tau].nlayers == 0) {
            return hmd_dp_bad(r, "model.descriptor.embeddings", "network %d is missing", tau);
        }
    }
    m->dim_descrpt = se->M * se->M2;
    json_t *compress = json_object_get(desc, "compress");
    if (compress && !json_is_null(compress)) {
        rc = hmd_dp_read_tables(r, compress, "model.descriptor.compress", se->nemb, se->M,
                                &se->table);
    }
    /* the padding's share of T, by the tables when there are any */
    return rc ? rc : hmd_se_e2_a_prepare(m);
}

static int read_descriptor(struct hmd_dp_reader *r, json_t *model)
{
    json_t *desc;
    int rc = hmd_dp_get_object(r, model, "descriptor", "model", &desc);
    if (!rc) {
        rc = hmd_dp_get_string(r, desc, "type", "model.descriptor", r->m->descriptor_name,
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
        r->m->kind = HMD_DESCRIPTOR_DPA1;
        return hmd_dp_read_dpa1(r, desc);
    }
    return hmd_error_set(HMD_ENOTSUP,
                         "%s: model.descriptor: descriptor '%s' is not supported; supported: "
                         "se_e2_a, dpa1 (se_atten, se_atten_v2)",
                         r->path, type);
}

static int read_fitting(struct hmd_dp_reader *r, json_t *model)
{
    static const char *const known[] = {"bias_atom_e", NULL};
    const char *where = "model.fitting";
    struct hmd_dp_model *m = r->m;
    json_t *fit, *nets;
    char type[32];
    int dim_descrpt = 0, dim_out = 1;
    bool mixed = false;
    int rc = hmd_dp_get_object(r, model, "fitting", "model", &fit);
    if (!rc) {
        rc = hmd_dp_get_string(r, fit, "type", where, type, sizeof type);
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
    rc = hmd_dp_check_variables(r, fit, where, known);
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, fit, "numb_fparam", where, "frame parameters");
    }
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, fit, "numb_aparam", where, "atomic parameters");
    }
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, fit, "dim_case_embd", where, "case embedding (multi-task)");
    }
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, fit, "atom_ener", where, "vacuum energy removal");
    }
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, fit, "spin", where, "spin model");
    }
    if (!rc) {
        rc = hmd_dp_get_int(r, fit, "dim_descrpt", where, &dim_descrpt);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, fit, "mixed_types", where, false, &mixed);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, fit, "resnet_dt", where, false, &m->fit_resnet_dt);
    }
    if (!rc) {
        rc = hmd_dp_get_int_list(r, fit, "neuron", where, &m->fit_neuron, &m->fit_nneuron);
    }
    if (!rc) {
        rc = hmd_dp_read_type_list(r, fit, "exclude_types", where, m->fit_exclude);
    }
    if (!rc) {
        rc = hmd_dp_get_object(r, fit, "nets", where, &nets);
    }
    if (rc) {
        return rc;
    }
    hmd_dp_opt_string(fit, "activation_function", m->fit_activation, sizeof m->fit_activation);
    if (dim_out != 1) {
        return hmd_dp_bad(r, where, "dim_out is %d; an energy fitting has 1", dim_out);
    }
    if (dim_descrpt != m->dim_descrpt) {
        return hmd_dp_bad(r, where, "dim_descrpt %d does not match the descriptor width %d",
                          dim_descrpt, m->dim_descrpt);
    }
    m->nfit = mixed ? 1 : m->ntypes;
    rc = hmd_dp_read_collection(r, nets, "model.fitting.nets", m->nfit, m->dim_descrpt, false,
                                &m->fit);
    if (!rc) {
        rc = hmd_dp_read_array(r, fit, "bias_atom_e", where, (size_t)m->ntypes, true,
                               &m->bias_atom_e, NULL);
    }
    if (rc) {
        return rc;
    }
    for (int k = 0; k < m->nfit; k++) {
        if (m->fit[k].n_out != 1) {
            return hmd_dp_bad(r, "model.fitting.nets", "network %d has %d outputs, expected 1", k,
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

/* The file's top-level @variables.min_nbor_dist (written by `dp train` when it measures the
 * data, needed to tabulate the model), or 0 when absent. */
static int read_min_nbor_dist(struct hmd_dp_reader *r, json_t *root)
{
    static const char *const known[] = {"min_nbor_dist", NULL};
    double *v = NULL;
    int rc = hmd_dp_check_variables(r, root, "(root)", known);
    if (!rc) {
        rc = hmd_dp_read_array(r, root, "min_nbor_dist", "(root)", 1, true, &v, NULL);
    }
    if (!rc && v) {
        r->m->min_nbor_dist = *v;
        if (!(*v > 0) || !isfinite(*v)) {
            rc = hmd_dp_bad(r, "(root)", "min_nbor_dist %g is not a positive distance", *v);
        }
    }
    return rc;
}

static int read_model(struct hmd_dp_reader *r, json_t *root)
{
    static const char *const known[] = {"out_bias", "out_std", NULL};
    struct hmd_dp_model *m = r->m;
    json_t *model, *tmap;
    char mtype[32] = "standard", klass[32];
    int rc = hmd_dp_get_object(r, root, "model", "(root)", &model);
    if (rc) {
        return rc;
    }
    hmd_dp_opt_string(root, "software", m->software, sizeof m->software);
    hmd_dp_opt_string(root, "version", m->version, sizeof m->version);
    hmd_dp_opt_string(root, "backend", m->backend, sizeof m->backend);
    hmd_dp_opt_string(model, "@class", klass, sizeof klass);
    json_t *t = json_object_get(model, "type");
    if (json_is_string(t)) {
        snprintf(mtype, sizeof mtype, "%s", json_string_value(t));
    }
    if (strncmp(mtype, "spin", 4) == 0) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: model: spin models (type '%s') are not supported; halomd "
                             "runs standard energy models",
                             r->path, mtype);
    }
    if (strcmp(klass, "Model") != 0 || strcmp(mtype, "standard") != 0) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: model: model class '%s' of type '%s' is not supported; halomd "
                             "runs standard energy models",
                             r->path, klass, mtype);
    }
    rc = hmd_dp_check_variables(r, model, "model", known);
    if (!rc) {
        rc = hmd_dp_get_member(r, model, "type_map", "model", &tmap);
    }
    if (!rc) {
        rc = read_min_nbor_dist(r, root);
    }
    if (rc) {
        return rc;
    }
    if (!json_is_array(tmap) || json_array_size(tmap) == 0) {
        return hmd_dp_bad(r, "model", "'type_map' is not a non-empty list");
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
            return hmd_dp_bad(r, "model", "type_map[%d] is not a short string", i);
        }
        strcpy(m->type_map[i], json_string_value(s));
    }
    rc = hmd_dp_read_type_list(r, model, "atom_exclude_types", "model", m->atom_exclude);
    if (!rc) {
        rc = hmd_dp_read_type_pairs(r, model, "pair_exclude_types", "model", &m->pair_exclude);
    }
    if (!rc) {
        rc = read_descriptor(r, model);
    }
    if (!rc) {
        rc = read_fitting(r, model);
    }
    if (!rc) {
        size_t n;
        rc = hmd_dp_read_array(r, model, "out_bias", "model", 0, true, &m->out_bias, &n);
        if (!rc && m->out_bias && n != (size_t)m->ntypes) {
            rc = hmd_dp_bad(r, "model",
                            "out_bias has %zu elements, expected %d (one energy per type)", n,
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
static int read_json_attribute(struct hmd_dp_reader *r, char **text)
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
        if (size > r->file_bytes) {
            rc = hmd_error_set(HMD_EDATA,
                               "%s: root attribute 'json' claims %zu bytes, more than the file's "
                               "%llu: the file is damaged",
                               r->path, size, r->file_bytes);
            goto out;
        }
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
 * Outside strings, replace them with null (NaN with 0) padded by spaces; no value we read can
 * be one. */
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
                /* "null" is longer than "NaN": there a 0 (a NaN at the end of the text made
                 * the 4-byte copy run past it: found by fuzzing) */
                memset(p, ' ', n);
                memcpy(p, n >= 4 ? "null" : "0", n >= 4 ? 4 : 1);
                p += n - 1;
                break;
            }
        }
    }
}

/* The reading itself, in this process. */
static int read_dp(const char *path, struct hmd_dp_model *model, int progress_fd)
{
    struct hmd_dp_reader r = {.path = path, .m = model, .progress_fd = progress_fd};
    char *text = NULL;
    json_t *root = NULL;
    json_error_t jerr;
    int rc;

    struct stat st;
    FILE *probe = fopen(path, "rb");
    if (!probe || fstat(fileno(probe), &st) != 0) {
        int e = errno;
        if (probe) {
            fclose(probe);
        }
        return hmd_error_set(HMD_ENOINPUT, "cannot open model %s: %s", path, strerror(e));
    }
    fclose(probe);
    r.file_bytes = (unsigned long long)st.st_size;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (H5Fis_hdf5(path) <= 0) {
        const char *dot = strrchr(path, '.');
        return hmd_error_set(
            HMD_EDATA, "%s: not an HDF5 file, so not a DeePMD-kit .dp model%s", path,
            (dot && (!strcmp(dot, ".pth") || !strcmp(dot, ".pb") || !strcmp(dot, ".pt")))
                ? "; convert it with `dp convert-backend model.pth model.dp`"
                : "");
    }
    hmd_dp_progress(&r, "the HDF5 superblock and root group");
    r.file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (r.file < 0) {
        return hmd_error_set(HMD_EDATA, "%s: cannot open as HDF5", path);
    }
    hmd_dp_progress(&r, "the root attribute 'json'");
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

/* ---- the probe: the file read once in a child process ----
 *
 * HDF5 1.10 (Debian 12's) can crash or loop on a damaged file inside its own metadata parsing
 * (H5HG_read on the global heap behind the 'json' attribute, object headers), where no check
 * before the call can help. So the model is first read in a forked child that announces each
 * dataset it opens on a pipe and reports its status at the end; only if it got through is the
 * file read here. A child killed by a signal, or silent beyond PROBE_SECONDS, means a damaged
 * file, reported with the last thing it was reading. HALOMD_MODEL_PROBE=0 reads in-process
 * only (the fuzz harness uses it to see halomd's own faults); HALOMD_MODEL_PROBE_SECONDS sets
 * the silence allowed (1 to 86400 s, PROBE_SECONDS by default; the tests shorten it). */

#define PROBE_SECONDS 120

/* The silence allowed to the probe's child, in s: HALOMD_MODEL_PROBE_SECONDS when it is a whole
 * number from 1 to 86400, else PROBE_SECONDS. */
static int probe_seconds(void)
{
    const char *env = getenv("HALOMD_MODEL_PROBE_SECONDS");
    if (env && *env) {
        char *end = NULL;
        errno = 0;
        const long v = strtol(env, &end, 10);
        if (errno == 0 && *end == '\0' && v >= 1 && v <= 86400) {
            return (int)v;
        }
    }
    return PROBE_SECONDS;
}

/* The child: reads, then writes "\001<status> <message>" and leaves without atexit handlers
 * (MPI, CUDA and stdio belong to the parent). */
static void probe_child(const char *path, int fd)
{
    struct hmd_dp_model tmp;
    memset(&tmp, 0, sizeof tmp);
    hmd_error_clear();
    int rc = read_dp(path, &tmp, fd);
    char line[sizeof "\001-00 " + 2048];
    int n = snprintf(line, sizeof line, "\001%d %s", rc, rc ? hmd_error_msg() : "");
    if (n > 0 && write(fd, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0) {
        _exit(3);
    }
    _exit(0);
}

/* Reads the child's announcements until it closes the pipe or stays silent for `seconds`;
 * keeps the last line and the final report. Returns false on timeout. The silence is measured
 * on the monotonic clock (hmd_wtime) from the last bytes read, so that signals (which interrupt
 * poll) do not restart it. */
static bool probe_listen(int fd, int seconds, char *last, size_t last_len, char *report,
                         size_t report_len)
{
    char buf[4096], line[512];
    size_t len = 0;
    last[0] = report[0] = '\0';
    bool in_report = false;
    size_t rlen = 0;
    double heard = hmd_wtime();
    for (;;) {
        const double left = seconds - (hmd_wtime() - heard);
        if (left <= 0.0) {
            return false;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, (int)ceil(left * 1000.0));
        if (ready == 0) {
            return false;
        }
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        ssize_t got = ready < 0 ? 0 : read(fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return true;
        }
        heard = hmd_wtime();
        for (ssize_t k = 0; k < got; k++) {
            const char c = buf[k];
            if (in_report) {
                if (rlen + 1 < report_len) {
                    report[rlen++] = c;
                    report[rlen] = '\0';
                }
            } else if (c == '\001') {
                in_report = true;
            } else if (c == '\n') {
                line[len < sizeof line ? len : sizeof line - 1] = '\0';
                snprintf(last, last_len, "%s", line);
                len = 0;
            } else if (len + 1 < sizeof line) {
                line[len++] = c;
            }
        }
    }
}

/* HMD_OK when the child read the file without fault; its error, or one naming the crash,
 * otherwise. */
static int probe(const char *path)
{
    int fds[2];
    if (pipe(fds) != 0) {
        return HMD_OK; /* no probe possible: read in-process as before */
    }
    fflush(NULL);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return HMD_OK;
    }
    if (pid == 0) {
#ifdef __linux__
        /* a child stuck in HDF5 must not outlive a parent that was killed while it waited */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() != parent) {
            _exit(4); /* it died before the request took effect */
        }
#endif
        close(fds[0]);
        probe_child(path, fds[1]);
    }
    close(fds[1]);
    char last[512], report[2100];
    const int seconds = probe_seconds();
    const bool in_time = probe_listen(fds[0], seconds, last, sizeof last, report, sizeof report);
    close(fds[0]);
    if (!in_time) {
        kill(pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const char *at = last[0] ? last : "the file";
    if (!in_time) {
        return hmd_error_set(HMD_EDATA,
                             "%s: reading the model did not end within %d s (HDF5 stuck in %s): "
                             "the file is damaged; use an intact copy",
                             path, seconds, at);
    }
    if (WIFSIGNALED(status)) {
        return hmd_error_set(HMD_EDATA,
                             "%s: the file is damaged: HDF5 crashed (signal %d) reading %s; use "
                             "an intact copy of the model",
                             path, WTERMSIG(status), at);
    }
    int rc = 0, off = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(report, "%d %n", &rc, &off) < 1) {
        return hmd_error_set(HMD_EDATA, "%s: the file is damaged: reading %s failed", path, at);
    }
    return rc ? hmd_error_set(rc, "%s", report + off) : HMD_OK;
}

int hmd_model_read_dp(const char *path, struct hmd_dp_model *model)
{
    const char *env = getenv("HALOMD_MODEL_PROBE");
    if (!(env && strcmp(env, "0") == 0)) {
        int rc = probe(path);
        if (rc) {
            return rc;
        }
    }
    return read_dp(path, model, -1);
}
