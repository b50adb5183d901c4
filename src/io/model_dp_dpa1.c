/* DPA-1 (dpa1 / se_atten / se_atten_v2) descriptor node of a .dp model tree
 * (deepmd/dpmodel/descriptor/dpa1.py::DescrptDPA1.serialize). Besides reading the weights it
 * evaluates the two constant tables the descriptor needs: the type embeddings (with the zero
 * padding row) and, in strip mode, the type-pair gate of every type pair. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/dp_tree.h"
#include "nnp/dpa1.h"

static int read_attention_layer(struct hmd_dp_reader *r, json_t *node, const char *where,
                                const struct hmd_dpa1 *d, struct hmd_attn_layer *L)
{
    static const char *const known_ln[] = {"w", "b", NULL};
    json_t *attn, *in, *out, *ln;
    char sub[1024];
    int rc = hmd_dp_get_object(r, node, "attention_layer", where, &attn);
    if (!rc) {
        rc = hmd_dp_get_object(r, attn, "in_proj", where, &in);
    }
    if (!rc) {
        rc = hmd_dp_get_object(r, attn, "out_proj", where, &out);
    }
    if (!rc) {
        rc = hmd_dp_get_object(r, node, "attn_layer_norm", where, &ln);
    }
    if (rc) {
        return rc;
    }
    int heads = 1;
    json_t *nh = json_object_get(attn, "num_heads");
    if (json_is_integer(nh)) {
        heads = (int)json_integer_value(nh);
    }
    if (heads != 1) {
        return hmd_error_set(HMD_ENOTSUP, "%s: %s: %d attention heads are not supported (1 is)",
                             r->path, where, heads);
    }
    bool smooth = d->smooth;
    rc = hmd_dp_get_bool(r, attn, "smooth", where, d->smooth, &smooth);
    if (!rc && smooth != d->smooth) {
        rc = hmd_dp_bad(r, where, "'smooth' differs from the descriptor's smooth_type_embedding");
    }
    snprintf(sub, sizeof sub, "%s.attention_layer.in_proj", where);
    if (!rc) {
        rc = hmd_dp_read_layer(r, in, sub, d->M, &L->in_proj);
    }
    snprintf(sub, sizeof sub, "%s.attention_layer.out_proj", where);
    if (!rc) {
        rc = hmd_dp_read_layer(r, out, sub, d->H, &L->out_proj);
    }
    snprintf(sub, sizeof sub, "%s.attn_layer_norm", where);
    if (!rc) {
        rc = hmd_dp_check_variables(r, ln, sub, known_ln);
    }
    if (!rc) {
        rc = hmd_dp_get_double(r, ln, "eps", sub, &L->ln_eps);
    }
    if (!rc) {
        rc = hmd_dp_read_array(r, ln, "w", sub, (size_t)d->M, false, &L->ln_w, NULL);
    }
    if (!rc) {
        rc = hmd_dp_read_array(r, ln, "b", sub, (size_t)d->M, false, &L->ln_b, NULL);
    }
    if (rc) {
        return rc;
    }
    if (L->in_proj.n_out != 3 * d->H || L->out_proj.n_out != d->M ||
        L->in_proj.act != HMD_ACT_NONE || L->out_proj.act != HMD_ACT_NONE ||
        L->in_proj.resnet != HMD_RESNET_NONE || L->out_proj.resnet != HMD_RESNET_NONE) {
        return hmd_dp_bad(r, where, "projections are not linear %d -> %d -> %d maps", d->M,
                          3 * d->H, d->M);
    }
    struct hmd_mlp in_net = {.nlayers = 1, .layers = &L->in_proj};
    struct hmd_mlp out_net = {.nlayers = 1, .layers = &L->out_proj};
    rc = hmd_mlp_pack(&in_net, &r->m->arena);
    return rc ? rc : hmd_mlp_pack(&out_net, &r->m->arena);
}

static int read_attention(struct hmd_dp_reader *r, json_t *desc, struct hmd_dpa1 *d)
{
    const char *where = "model.descriptor.attention_layers";
    json_t *block, *list;
    int rc = hmd_dp_get_object(r, desc, "attention_layers", "model.descriptor", &block);
    if (!rc) {
        rc = hmd_dp_get_member(r, block, "attention_layers", where, &list);
    }
    if (rc) {
        return rc;
    }
    if (!json_is_array(list) || (int)json_array_size(list) != d->nlayers) {
        return hmd_dp_bad(r, where, "expected a list of %d layers (attn_layer)", d->nlayers);
    }
    d->layers = hmd_arena_alloc(&r->m->arena, (size_t)(d->nlayers + 1) * sizeof *d->layers);
    if (!d->layers) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int l = 0; l < d->nlayers; l++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.attention_layers[%d]", where, l);
        rc = read_attention_layer(r, json_array_get(list, l), sub, d, &d->layers[l]);
        if (rc) {
            return rc;
        }
        struct hmd_mlp in = {.nlayers = 1, .layers = &d->layers[l].in_proj};
        struct hmd_mlp out = {.nlayers = 1, .layers = &d->layers[l].out_proj};
        r->m->nparams += hmd_mlp_param_count(&in) + hmd_mlp_param_count(&out) + 2L * d->M;
    }
    return HMD_OK;
}

/* Type embeddings: the type net on one-hot inputs, then a zero row for padding. */
static int read_type_embedding(struct hmd_dp_reader *r, json_t *desc, struct hmd_dpa1 *d)
{
    const char *where = "model.descriptor.type_embedding";
    const int nt = r->m->ntypes;
    json_t *te, *net;
    int rc = hmd_dp_get_object(r, desc, "type_embedding", "model.descriptor", &te);
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, te, "use_econf_tebd", where,
                                  "type embedding from electronic configurations");
    }
    if (!rc) {
        rc = hmd_dp_get_object(r, te, "embedding", where, &net);
    }
    if (!rc) {
        rc = hmd_dp_read_mlp(r, net, "model.descriptor.type_embedding.embedding", nt, &d->type_net);
    }
    if (rc) {
        return rc;
    }
    if (d->type_net.n_out != d->tebd_dim) {
        return hmd_dp_bad(r, where, "output width %d differs from tebd_dim %d", d->type_net.n_out,
                          d->tebd_dim);
    }
    r->m->nparams += hmd_mlp_param_count(&d->type_net);
    double *onehot = calloc((size_t)nt * nt, sizeof(double));
    double *work = malloc(hmd_mlp_work_size(&d->type_net, nt) * sizeof(double));
    d->type_embd = hmd_arena_alloc(&r->m->arena, (size_t)(nt + 1) * d->tebd_dim * sizeof(double));
    if (!onehot || !work || !d->type_embd) {
        free(onehot);
        free(work);
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int t = 0; t < nt; t++) {
        onehot[t * nt + t] = 1.0;
    }
    const double *y = hmd_mlp_forward(&d->type_net, nt, onehot, work, NULL);
    memcpy(d->type_embd, y, sizeof(double) * nt * d->tebd_dim);
    free(onehot);
    free(work);
    return HMD_OK;
}

/* Strip mode: the gate of every (centre, neighbour) type pair, padding type included, as
 * DeePMD-kit tabulates it (neighbour embedding first, then the centre's). */
static int build_strip_table(struct hmd_dp_reader *r, struct hmd_dpa1 *d)
{
    const int nt1 = r->m->ntypes + 1, T = d->tebd_dim;
    const int rows = d->type_one_side ? nt1 : nt1 * nt1, in = d->type_one_side ? T : 2 * T;
    double *x = calloc((size_t)rows * in, sizeof(double));
    double *work = malloc(hmd_mlp_work_size(&d->emb_strip, rows) * sizeof(double));
    d->strip_table = hmd_arena_alloc(&r->m->arena, (size_t)rows * d->M * sizeof(double));
    if (!x || !work || !d->strip_table) {
        free(x);
        free(work);
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", r->path);
    }
    for (int row = 0; row < rows; row++) {
        const int tj = d->type_one_side ? row : row % nt1, ti = row / nt1;
        memcpy(x + (size_t)row * in, d->type_embd + (size_t)tj * T, sizeof(double) * T);
        if (!d->type_one_side) {
            memcpy(x + (size_t)row * in + T, d->type_embd + (size_t)ti * T, sizeof(double) * T);
        }
    }
    const double *y = hmd_mlp_forward(&d->emb_strip, rows, x, work, NULL);
    memcpy(d->strip_table, y, sizeof(double) * rows * d->M);
    free(x);
    free(work);
    return HMD_OK;
}

/* A compressed DPA-1 (strip mode): the stored type-pair gates replace the strip table built
 * from the network (the same numbers up to rounding), and with geo_compress the geometric
 * embedding net's table. */
static int read_compress(struct hmd_dp_reader *r, json_t *compress, struct hmd_dpa1 *d)
{
    const char *where = "model.descriptor.compress";
    struct hmd_dp_model *m = r->m;
    if (!d->strip) {
        return hmd_dp_bad(r, where, "a compressed DPA-1 must be in strip mode");
    }
    const int nt1 = m->ntypes + 1, rows = d->type_one_side ? nt1 : nt1 * nt1;
    double *gates = NULL;
    int rc = hmd_dp_read_array(r, compress, "type_embd_data", where, (size_t)rows * d->M, true,
                               &gates, NULL);
    if (rc) {
        return rc;
    }
    if (gates) {
        d->strip_table = gates;
    }
    m->compression = (struct hmd_compression){.on = true, .from_file = true};
    if (json_is_true(json_object_get(compress, "geo_compress"))) {
        struct hmd_emb_table *tables;
        rc = hmd_dp_read_tables(r, compress, where, 1, d->M, &tables);
        if (!rc && tables[0].M == 0) {
            rc = hmd_dp_bad(r, where, "geo_compress is set but the table is empty");
        }
        d->table = rc ? NULL : tables;
    }
    return rc;
}

static int read_settings(struct hmd_dp_reader *r, json_t *desc, struct hmd_dpa1 *d)
{
    const char *where = "model.descriptor";
    struct hmd_dp_model *m = r->m;
    int nsel = 0, *sel = NULL;
    char mode[32];
    bool attn_mask = false;
    int rc = hmd_dp_get_double(r, desc, "rcut", where, &m->rcut);
    if (!rc) {
        rc = hmd_dp_get_double(r, desc, "rcut_smth", where, &m->rcut_smth);
    }
    if (!rc) {
        rc = hmd_dp_get_int_list(r, desc, "sel", where, &sel, &nsel);
    }
    if (!rc) {
        rc = hmd_dp_get_int_list(r, desc, "neuron", where, &d->neuron, &d->nneuron);
    }
    if (!rc) {
        rc = hmd_dp_get_int(r, desc, "axis_neuron", where, &d->M2);
    }
    if (!rc) {
        rc = hmd_dp_get_int(r, desc, "tebd_dim", where, &d->tebd_dim);
    }
    /* se_atten_v2 is DPA-1 with strip mode and the smooth type embedding fixed, and its file
     * does not write them */
    const bool v2 = strcmp(m->descriptor_name, "se_atten_v2") == 0;
    if (!rc && v2) {
        snprintf(mode, sizeof mode, "strip");
    } else if (!rc) {
        rc = hmd_dp_get_string(r, desc, "tebd_input_mode", where, mode, sizeof mode);
    }
    if (!rc) {
        rc = hmd_dp_get_int(r, desc, "attn", where, &d->H);
    }
    if (!rc) {
        rc = hmd_dp_get_int(r, desc, "attn_layer", where, &d->nlayers);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "attn_dotr", where, true, &d->dotr);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "attn_mask", where, false, &attn_mask);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "normalize", where, true, &d->normalize);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "smooth_type_embedding", where, true, &d->smooth);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "type_one_side", where, false, &d->type_one_side);
    }
    if (!rc) {
        rc = hmd_dp_get_bool(r, desc, "concat_output_tebd", where, true, &d->concat_output_tebd);
    }
    if (!rc) {
        rc = hmd_dp_read_type_pairs(r, desc, "exclude_types", where, &d->exclude);
    }
    if (rc) {
        return rc;
    }
    if (attn_mask) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: %s: attn_mask is not supported (DeePMD-kit does "
                             "not implement it either)",
                             r->path, where);
    }
    json_t *lmax = json_object_get(desc, "lmax");
    if (json_is_integer(lmax) && json_integer_value(lmax) != 1) {
        return hmd_error_set(HMD_ENOTSUP,
                             "%s: %s: angular moments beyond l = 1 (lmax = %lld) are not "
                             "supported",
                             r->path, where, (long long)json_integer_value(lmax));
    }
    if (strcmp(mode, "concat") != 0 && strcmp(mode, "strip") != 0) {
        return hmd_dp_bad(r, where, "tebd_input_mode '%s' is neither concat nor strip", mode);
    }
    d->strip = strcmp(mode, "strip") == 0;
    if (nsel != 1 || sel[0] < 1) {
        return hmd_dp_bad(r, where, "sel should be one positive number (mixed types)");
    }
    d->nnei = sel[0];
    if (d->nneuron < 1 || d->M2 < 1 || d->M2 > d->neuron[d->nneuron - 1] || d->tebd_dim < 1 ||
        d->H < 1 || d->nlayers < 0) {
        return hmd_dp_bad(r, where, "inconsistent sizes (neuron, axis_neuron, tebd_dim, attn)");
    }
    if (!(m->rcut > 0) || !(m->rcut_smth >= 0) || m->rcut_smth >= m->rcut) {
        return hmd_dp_bad(r, where, "rcut %g and rcut_smth %g are inconsistent", m->rcut,
                          m->rcut_smth);
    }
    d->M = d->neuron[d->nneuron - 1];
    json_t *temp = json_object_get(desc, "temperature");
    double factor = 1.0;
    json_t *sf = json_object_get(desc, "scaling_factor");
    if (json_is_number(sf)) {
        factor = json_number_value(sf);
    }
    d->scaling = json_is_number(temp) ? json_number_value(temp) : pow(d->H * factor, -0.5);
    json_t *prot = json_object_get(desc, "env_protection");
    m->env_protection = json_is_number(prot) ? json_number_value(prot) : 0.0;
    hmd_dp_opt_string(desc, "activation_function", d->activation, sizeof d->activation);
    return HMD_OK;
}

int hmd_dp_read_dpa1(struct hmd_dp_reader *r, json_t *desc)
{
    static const char *const known[] = {"davg", "dstd", NULL};
    const char *where = "model.descriptor";
    struct hmd_dp_model *m = r->m;
    struct hmd_dpa1 *d = &m->dpa1;
    json_t *env, *emb, *strip = NULL;
    int rc = hmd_dp_check_variables(r, desc, where, known);
    if (!rc) {
        rc = hmd_dp_refuse_if_set(r, desc, "spin", where, "spin model");
    }
    if (!rc) {
        rc = read_settings(r, desc, d);
    }
    if (!rc && json_is_object(env = json_object_get(desc, "env_mat")) &&
        json_is_true(json_object_get(env, "use_exp_switch"))) {
        rc = hmd_error_set(HMD_ENOTSUP,
                           "%s: %s.env_mat: the exponential switch (use_exp_switch) is not "
                           "supported",
                           r->path, where);
    }
    const size_t nstat = (size_t)m->ntypes * d->nnei * 4;
    if (!rc) {
        rc = hmd_dp_read_array(r, desc, "davg", where, nstat, false, &d->davg, NULL);
    }
    if (!rc) {
        rc = hmd_dp_read_array(r, desc, "dstd", where, nstat, false, &d->dstd, NULL);
    }
    for (size_t k = 0; !rc && k < nstat; k++) {
        if (!(d->dstd[k] != 0)) {
            rc = hmd_dp_bad(r, where, "dstd has a zero or NaN entry (index %zu)", k);
        }
    }
    if (!rc) {
        rc = read_type_embedding(r, desc, d);
    }
    const int sides = d->type_one_side ? 1 : 2;
    if (!rc) {
        rc = hmd_dp_get_object(r, desc, "embeddings", where, &emb);
    }
    if (!rc) {
        struct hmd_mlp *nets;
        rc = hmd_dp_read_collection(r, emb, "model.descriptor.embeddings", 1,
                                    d->strip ? 1 : 1 + sides * d->tebd_dim, false, &nets);
        if (!rc) {
            d->emb = nets[0];
            m->nparams += hmd_mlp_param_count(&d->emb);
        }
    }
    if (!rc && d->strip) {
        rc = hmd_dp_get_object(r, desc, "embeddings_strip", where, &strip);
        struct hmd_mlp *nets;
        if (!rc) {
            rc = hmd_dp_read_collection(r, strip, "model.descriptor.embeddings_strip", 1,
                                        sides * d->tebd_dim, false, &nets);
        }
        if (!rc) {
            d->emb_strip = nets[0];
            m->nparams += hmd_mlp_param_count(&d->emb_strip);
            rc = d->emb_strip.n_out == d->emb.n_out
                     ? build_strip_table(r, d)
                     : hmd_dp_bad(r, where, "embeddings_strip and embeddings differ in width");
        }
    }
    if (!rc && d->emb.n_out != d->M) {
        rc = hmd_dp_bad(r, where, "the embedding net ends at %d, neuron says %d", d->emb.n_out,
                        d->M);
    }
    if (!rc) {
        rc = read_attention(r, desc, d);
    }
    json_t *compress = json_object_get(desc, "compress");
    if (!rc && compress && !json_is_null(compress)) {
        rc = read_compress(r, compress, d);
    }
    if (rc) {
        return rc;
    }
    m->dim_descrpt = d->M * d->M2 + (d->concat_output_tebd ? d->tebd_dim : 0);
    return HMD_OK;
}
