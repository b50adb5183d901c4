#include "nnp/model.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"

void hmd_model_free(struct hmd_dp_model *model)
{
    hmd_arena_free(&model->arena);
    memset(model, 0, sizeof *model);
}

int hmd_model_type_index(const struct hmd_dp_model *model, const char *symbol)
{
    for (int t = 0; t < model->ntypes; t++) {
        if (strcmp(model->type_map[t], symbol) == 0) {
            return t;
        }
    }
    return -1;
}

static void print_ints(FILE *out, const int *v, int n)
{
    fputc('[', out);
    for (int i = 0; i < n; i++) {
        fprintf(out, i ? ", %d" : "%d", v[i]);
    }
    fputc(']', out);
}

static void print_descriptor_se_e2_a(const struct hmd_dp_model *m, FILE *out, const char *prefix)
{
    const struct hmd_se_e2_a *se = &m->se;
    fprintf(out, "%ssel             ", prefix);
    print_ints(out, se->sel, m->ntypes);
    fprintf(out, " (%d slots)\n", se->nnei);
    fprintf(out, "%sembedding net   1 -> ", prefix);
    print_ints(out, se->neuron, se->nneuron);
    fprintf(out, " %s%s, %d net%s (%s)\n", se->activation, se->resnet_dt ? " resnet_dt" : "",
            se->nemb, se->nemb == 1 ? "" : "s", se->type_one_side ? "type_one_side" : "two-side");
    fprintf(out, "%saxis_neuron     %d (descriptor width %d)\n", prefix, se->M2, m->dim_descrpt);
}

static void print_descriptor_dpa1(const struct hmd_dp_model *m, FILE *out, const char *prefix)
{
    const struct hmd_dpa1 *d = &m->dpa1;
    fprintf(out, "%ssel             %d (any type)\n", prefix, d->nnei);
    fprintf(out, "%stype embedding  %d (%s)\n", prefix, d->tebd_dim,
            d->strip ? "strip: type-pair gate" : "concat: embedding input");
    fprintf(out, "%sembedding net   %d -> ", prefix, d->emb.n_in);
    print_ints(out, d->neuron, d->nneuron);
    fprintf(out, " %s (%s)\n", d->activation, d->type_one_side ? "type_one_side" : "two-side");
    fprintf(out, "%sattention       %d layer%s, hidden %d%s%s%s\n", prefix, d->nlayers,
            d->nlayers == 1 ? "" : "s", d->H, d->smooth ? ", smooth" : "", d->dotr ? ", dotr" : "",
            d->normalize ? ", normalize" : "");
    fprintf(out, "%saxis_neuron     %d (descriptor width %d%s)\n", prefix, d->M2, m->dim_descrpt,
            d->concat_output_tebd ? " with the type embedding" : "");
}

static void print_compression(const struct hmd_dp_model *m, FILE *out, const char *prefix)
{
    const struct hmd_compression *c = &m->compression;
    /* the distance the tables were made for, else the model's own */
    const double d = c->on && c->min_nbor_dist > 0 ? c->min_nbor_dist : m->min_nbor_dist;
    char dmin[64] = "not recorded";
    if (d > 0) {
        snprintf(dmin, sizeof dmin, "%.6g Å", d);
    }
    if (!c->on) {
        fprintf(out, "%scompression     no (embedding nets evaluated; min_nbor_dist %s)\n", prefix,
                dmin);
    } else if (!c->geometric) {
        fprintf(out, "%scompression     type embedding only (%s)\n", prefix,
                c->from_file ? "from the file" : "attention layers keep the embedding net");
    } else {
        fprintf(out,
                "%scompression     tabulated embedding (%s): stride %g / %g, extrapolate %g, "
                "min_nbor_dist %s\n",
                prefix, c->from_file ? "from the file" : "built by halomd", c->stride0, c->stride1,
                c->extrapolate, dmin);
    }
}

void hmd_model_print_summary(const struct hmd_dp_model *m, FILE *out, const char *prefix)
{
    fprintf(out, "%sdescriptor      %s\n", prefix, m->descriptor_name);
    fprintf(out, "%stype map        [", prefix);
    for (int t = 0; t < m->ntypes; t++) {
        fprintf(out, t ? ", %s" : "%s", m->type_map[t]);
    }
    fprintf(out, "]\n");
    fprintf(out, "%srcut            %g Å\n", prefix, m->rcut);
    fprintf(out, "%srcut_smth       %g Å\n", prefix, m->rcut_smth);
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        print_descriptor_dpa1(m, out, prefix);
    } else {
        print_descriptor_se_e2_a(m, out, prefix);
    }
    fprintf(out, "%sfitting net     %d -> ", prefix, m->dim_descrpt);
    print_ints(out, m->fit_neuron, m->fit_nneuron);
    fprintf(out, " -> 1 %s%s, %d net%s\n", m->fit_activation, m->fit_resnet_dt ? " resnet_dt" : "",
            m->nfit, m->nfit == 1 ? "" : "s");
    print_compression(m, out, prefix);
    fprintf(out, "%sparameters      %ld\n", prefix, m->nparams);
    fprintf(out, "%sprecision       %s\n", prefix, m->precision);
    fprintf(out, "%swritten by      %s %s (%s backend)\n", prefix, m->software, m->version,
            m->backend);
}
