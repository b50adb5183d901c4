#include "api/eval_data.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "hmd_buildinfo.h"
#include "io/backup.h"
#include "io/deepmd_data.h"
#include "io/model_devi_out.h"
#include "io/structure.h"
#include "io/test_report.h"
#include "nnp/model_devi.h"
#include "nnp/test_errors.h"

/* Frames to evaluate, on rank 0: a structure file or one DeePMD-kit system. */
struct source {
    const char *name;             /* file or folder, for messages and headers */
    char where[4096];             /* what atom lines refer to: the file, or type.raw */
    bool data;                    /* a DeePMD-kit system (else a structure file) */
    struct hmd_deepmd_system sys; /* data: the system (owned) */
    struct hmd_frame *frames;     /* structure file: its frames (owned) */
    int nframes;
    struct hmd_frame scratch; /* data: the frame handed out last (owned) */
};

static int source_open_data(struct source *s, const char *dir)
{
    memset(s, 0, sizeof *s);
    s->data = true;
    s->name = dir;
    snprintf(s->where, sizeof s->where, "%s/type.raw", dir);
    int rc = hmd_deepmd_system_read(dir, &s->sys);
    s->nframes = rc ? 0 : s->sys.nframes;
    return rc;
}

static int source_open_conf(struct source *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->name = path;
    snprintf(s->where, sizeof s->where, "%s", path);
    return hmd_structure_read(path, &s->frames, &s->nframes);
}

/* Frame f of s, valid until the next call; type names come from the model `m` where the data
 * has no type_map.raw. */
static int source_frame(struct source *s, int f, const struct hmd_dp_model *m,
                        const struct hmd_frame **frame)
{
    if (!s->data) {
        *frame = &s->frames[f];
        return HMD_OK;
    }
    const char *names[64];
    for (int t = 0; t < m->ntypes && t < 64; t++) {
        names[t] = m->type_map[t];
    }
    hmd_frame_free(&s->scratch);
    int rc = hmd_deepmd_system_frame(&s->sys, f, names, m->ntypes, &s->scratch);
    *frame = &s->scratch;
    return rc;
}

static void source_close(struct source *s)
{
    hmd_deepmd_system_free(&s->sys);
    hmd_frames_free(s->frames, s->nframes);
    hmd_frame_free(&s->scratch);
    memset(s, 0, sizeof *s);
}

/* The systems under root (rank 0), their number on every rank. */
static int find_systems(const char *root, char ***paths, int *n)
{
    *paths = NULL;
    *n = 0;
    int rc =
        hmd_comm_agree(hmd_comm_rank() == 0 ? hmd_deepmd_find_systems(root, paths, n) : HMD_OK);
    hmd_comm_bcast(n, sizeof *n, 0);
    return rc;
}

static void free_paths(char **paths, int n)
{
    for (int k = 0; paths && k < n; k++) {
        free(paths[k]);
    }
    free(paths);
}

/* Opens source k (the structure file, or system k of paths) on rank 0; every rank gets its
 * frame count. */
static int open_source(struct source *s, const char *conf, char **paths, int k)
{
    memset(s, 0, sizeof *s);
    int rc = HMD_OK;
    if (hmd_comm_rank() == 0) {
        rc = conf ? source_open_conf(s, conf) : source_open_data(s, paths[k]);
    }
    rc = hmd_comm_agree(rc);
    hmd_comm_bcast(&s->nframes, sizeof s->nframes, 0);
    return rc;
}

/* ---- dp test ---- */

/* One frame's labels and predictions into err (rank 0). */
static void add_frame_errors(struct hmd_test_errors *err, const struct hmd_deepmd_system *sys,
                             int f, const struct hmd_frame *frame,
                             const struct hmd_eval_result *res)
{
    const size_t n3 = 3 * (size_t)sys->natoms;
    struct hmd_test_frame tf = {
        .natoms = sys->natoms,
        .volume = frame->has_box ? hmd_box_volume(&frame->box) : 0.0,
        .energy = sys->energy ? sys->energy + f : NULL,
        .force = sys->force ? sys->force + n3 * (size_t)f : NULL,
        .virial = sys->virial && sys->pbc ? sys->virial + 9 * (size_t)f : NULL,
        .pred_energy = res->energy,
        .pred_force = res->force,
        .pred_virial = res->virial,
    };
    hmd_test_errors_add(err, &tf);
}

/* Evaluates every frame of system k and prints its block; its errors into *err. */
static int test_system(struct hmd_evaluator *ev, char **paths, int k, FILE *report,
                       struct hmd_test_errors *err, json_t *systems)
{
    struct source s;
    memset(err, 0, sizeof *err);
    int rc = open_source(&s, NULL, paths, k);
    for (int f = 0; f < s.nframes && !rc; f++) {
        const struct hmd_frame *frame = NULL;
        rc =
            hmd_comm_agree(hmd_comm_rank() == 0 ? source_frame(&s, f, &ev->model, &frame) : HMD_OK);
        struct hmd_eval_result res;
        if (!rc) {
            rc = hmd_evaluator_eval(ev, frame, s.where, &res);
        }
        if (rc) {
            rc = hmd_error_prefix(rc, "%s frame %d: ", s.name ? s.name : "", f + 1);
        } else if (hmd_comm_rank() == 0) {
            add_frame_errors(err, &s.sys, f, frame, &res);
        }
    }
    if (!rc && hmd_comm_rank() == 0) {
        fprintf(report,
                "# ---------------output of dp test--------------- \n"
                "# testing system : %s\n"
                "# number of test data : %d \n",
                s.name, s.nframes);
        rc = hmd_test_report_errors(report, err);
        fprintf(report, "# ----------------------------------------------- \n");
        json_t *one = json_pack("{s:s, s:i, s:i}", "system", s.name, "natoms", s.sys.natoms,
                                "nframes", s.nframes);
        if (!rc && (!one || json_array_append_new(systems, one))) {
            rc = hmd_error_set(HMD_ENOMEM, "out of memory for the test report");
        }
        if (!rc) {
            rc = hmd_test_report_json_errors(one, err);
        }
    }
    source_close(&s);
    return hmd_comm_agree(rc);
}

static json_t *units(void)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "energy", "eV", "force", "eV/Angstrom", "virial", "eV",
                     "stress", "eV/Angstrom^3");
}

int hmd_eval_test(struct hmd_evaluator *ev, const char *model_path, const char *root, FILE *report,
                  json_t **doc)
{
    const bool root_rank = hmd_comm_rank() == 0;
    *doc = NULL;
    char **paths = NULL;
    int n = 0;
    int rc = find_systems(root, &paths, &n);
    json_t *systems = root_rank ? json_array() : NULL;
    struct hmd_test_errors total;
    memset(&total, 0, sizeof total);
    for (int k = 0; k < n && !rc; k++) {
        struct hmd_test_errors err;
        rc = test_system(ev, paths, k, report, &err, systems);
        hmd_test_errors_merge(&total, &err);
    }
    json_t *avg = NULL;
    if (!rc && root_rank) {
        fprintf(report,
                "# ----------weighted average of errors----------- \n"
                "# number of systems : %d\n",
                n);
        rc = hmd_test_report_errors(report, &total);
        fprintf(report, "# ----------------------------------------------- \n");
        avg = json_pack("{s:i}", "nsystems", n);
        if (!rc) {
            rc = avg ? hmd_test_report_json_errors(avg, &total)
                     : hmd_error_set(HMD_ENOMEM, "out of memory for the test report");
        }
    }
    if (!rc && root_rank) {
        *doc = json_pack("{s:s, s:s, s:s, s:s, s:o, s:O, s:O}", "program", "halomd", "version",
                         HMD_VERSION " (" HMD_GIT_COMMIT ")", "model", model_path, "data", root,
                         "units", units(), "systems", systems, "weighted_average", avg);
        rc = *doc ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory for the test report");
    }
    json_decref(systems);
    json_decref(avg);
    free_paths(paths, root_rank ? n : 0);
    return hmd_comm_agree(rc);
}

/* ---- dp model-devi ---- */

/* The deviations of one source, kept until the file is written. */
struct devi_block {
    char *source;
    int natoms, nframes;
    struct hmd_model_devi *rows; /* [nframes] */
    double *atom;                /* [nframes][natoms] with atomic, else NULL */
};

/* Evaluates every frame of s with every model; rank 0 fills b. */
static int devi_source(const struct hmd_eval_devi_options *o, struct source *s,
                       struct devi_block *b)
{
    const bool root = hmd_comm_rank() == 0;
    const double *force[64], *virial[64];
    double energy[64], vir[64][9];
    int rc = HMD_OK;
    memset(b, 0, sizeof *b);
    if (root) {
        b->source = strdup(s->name);
        b->nframes = s->nframes;
        b->rows = calloc((size_t)s->nframes + 1, sizeof *b->rows);
        rc = b->source && b->rows ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    rc = hmd_comm_agree(rc);
    for (int f = 0; f < s->nframes && !rc; f++) {
        const struct hmd_frame *frame = NULL;
        rc = hmd_comm_agree(root ? source_frame(s, f, &o->models[0].model, &frame) : HMD_OK);
        for (int k = 0; k < o->nmodels && !rc; k++) {
            struct hmd_eval_result res;
            rc = hmd_evaluator_eval(&o->models[k], frame, s->where, &res);
            force[k] = res.force;
            memcpy(vir[k], res.virial, sizeof vir[k]);
            virial[k] = vir[k];
            energy[k] = res.energy;
            if (!rc && root && f == 0 && k == 0) {
                b->natoms = res.natoms;
                rc = b->natoms > 0 ? HMD_OK : hmd_error_set(HMD_EDATA, "no atoms");
                b->atom =
                    !rc && o->atomic
                        ? malloc(sizeof(double) * ((size_t)b->natoms * (size_t)s->nframes + 1))
                        : NULL;
                if (!rc && o->atomic && !b->atom) {
                    rc = hmd_error_set(HMD_ENOMEM, "out of memory");
                }
            }
            if (!rc && root && res.natoms != b->natoms) {
                rc = hmd_error_set(HMD_EDATA,
                                   "%d atoms, but frame 1 has %d: a deviation "
                                   "block needs one atom count",
                                   res.natoms, b->natoms);
            }
            rc = hmd_comm_agree(rc);
            if (rc) {
                rc = hmd_error_prefix(rc, "%s: ", o->model_paths[k]);
            }
        }
        if (rc) {
            rc = hmd_error_prefix(rc, "%s frame %d: ", s->name ? s->name : "", f + 1);
        } else if (root) {
            hmd_model_devi_compute(o->nmodels, b->natoms, force, virial, energy, o->relative,
                                   o->relative_v, &b->rows[f],
                                   b->atom ? b->atom + (size_t)f * b->natoms : NULL);
        }
    }
    return rc;
}

static void devi_block_free(struct devi_block *b)
{
    free(b->source);
    free(b->rows);
    free(b->atom);
    memset(b, 0, sizeof *b);
}

static json_t *reals(int n, const double *v, size_t stride)
{
    json_t *a = json_array();
    for (int k = 0; a && k < n; k++) {
        json_array_append_new(a, json_real(v[(size_t)k * stride]));
    }
    return a;
}

/* The record of one block. */
static json_t *devi_block_json(const struct devi_block *b, int64_t freq)
{
    json_t *steps = json_array();
    for (int f = 0; steps && f < b->nframes; f++) {
        json_array_append_new(steps, json_integer(f * freq));
    }
    const size_t stride = sizeof(struct hmd_model_devi) / sizeof(double);
    const struct hmd_model_devi *r = b->rows;
    json_t *obj = json_pack(
        "{s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "source", b->source, "natoms",
        b->natoms, "steps", steps, "max_devi_v", reals(b->nframes, &r->max_devi_v, stride),
        "min_devi_v", reals(b->nframes, &r->min_devi_v, stride), "avg_devi_v",
        reals(b->nframes, &r->avg_devi_v, stride), "max_devi_f",
        reals(b->nframes, &r->max_devi_f, stride), "min_devi_f",
        reals(b->nframes, &r->min_devi_f, stride), "avg_devi_f",
        reals(b->nframes, &r->avg_devi_f, stride), "devi_e", reals(b->nframes, &r->devi_e, stride));
    if (obj && b->atom) {
        json_t *atom = json_array();
        for (int f = 0; atom && f < b->nframes; f++) {
            json_array_append_new(atom, reals(b->natoms, b->atom + (size_t)f * b->natoms, 1));
        }
        json_object_set_new(obj, "atm_devi_f", atom);
    }
    return obj;
}

static int write_devi(const struct hmd_eval_devi_options *o, const struct devi_block *blocks, int n)
{
    FILE *fp;
    int rc = hmd_output_create(o->out, &fp);
    if (rc) {
        return rc;
    }
    for (int k = 0; k < n && !rc; k++) {
        const struct devi_block *b = &blocks[k];
        rc = hmd_model_devi_out_header(fp, o->out, b->source, o->atomic);
        for (int f = 0; f < b->nframes && !rc; f++) {
            rc =
                hmd_model_devi_out_row(fp, o->out, f * o->freq, &b->rows[f],
                                       b->atom ? b->atom + (size_t)f * b->natoms : NULL, b->natoms);
        }
    }
    if (fclose(fp) && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", o->out);
    }
    return rc;
}

int hmd_eval_devi(const struct hmd_eval_devi_options *o, json_t **doc)
{
    const bool root = hmd_comm_rank() == 0;
    *doc = NULL;
    const struct hmd_dp_model *models[64];
    int map[64 * 64];
    int rc = o->nmodels >= 2 && o->nmodels <= 64
                 ? HMD_OK
                 : hmd_error_set(HMD_EUSAGE, "a model deviation needs 2 to 64 models");
    for (int k = 0; k < o->nmodels && !rc; k++) {
        models[k] = &o->models[k].model;
    }
    if (!rc && models[0]->ntypes > 64) {
        rc = hmd_error_set(HMD_ENOTSUP, "%s: more than 64 types", o->model_paths[0]);
    }
    if (!rc) {
        rc = hmd_model_devi_check(models, o->model_paths, o->nmodels, map);
    }
    char **paths = NULL;
    int nsources = 1;
    if (!rc && !o->conf) {
        rc = find_systems(o->root, &paths, &nsources);
    }
    struct devi_block *blocks = calloc((size_t)nsources + 1, sizeof *blocks);
    rc = rc ? rc : blocks ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    for (int k = 0; k < nsources && !rc; k++) {
        struct source s;
        rc = open_source(&s, o->conf, paths, k);
        if (!rc) {
            rc = hmd_comm_agree(devi_source(o, &s, &blocks[k]));
        }
        source_close(&s);
    }
    /* outputs only once every frame is evaluated */
    if (!rc && root) {
        rc = write_devi(o, blocks, nsources);
    }
    if (!rc && root) {
        json_t *names = json_array(), *list = json_array();
        for (int k = 0; k < o->nmodels && names; k++) {
            json_array_append_new(names, json_string(o->model_paths[k]));
        }
        for (int k = 0; k < nsources && list; k++) {
            json_array_append_new(list, devi_block_json(&blocks[k], o->freq));
        }
        *doc =
            json_pack("{s:s, s:s, s:o, s:f, s:f, s:b, s:o}", "program", "halomd", "version",
                      HMD_VERSION " (" HMD_GIT_COMMIT ")", "models", names, "relative", o->relative,
                      "relative_v", o->relative_v, "atomic", o->atomic, "blocks", list);
        rc = *doc ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory for the deviation record");
    }
    for (int k = 0; blocks && k < nsources; k++) {
        devi_block_free(&blocks[k]);
    }
    free(blocks);
    free_paths(paths, root ? nsources : 0);
    return hmd_comm_agree(rc);
}
