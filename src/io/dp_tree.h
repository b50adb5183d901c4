/* Reading the model tree of a DeePMD-kit .dp file: JSON access and arrays with messages that
 * name the place inside the file ("model.descriptor.embeddings.networks[1].layers[0]"), and the
 * generic building blocks (layers, networks, network collections, type lists). Internal to
 * src/io/model_dp*.c. */
#ifndef HMD_IO_DP_TREE_H
#define HMD_IO_DP_TREE_H

#include <hdf5.h>
#include <jansson.h>
#include <stdbool.h>

#include "nnp/model.h"

/* State of one read. */
struct hmd_dp_reader {
    const char *path;              /* file name, for messages */
    hid_t file;                    /* open HDF5 file */
    struct hmd_dp_model *m;        /* model being filled */
    bool precision_known;          /* m->precision set from a weight matrix */
    unsigned long long file_bytes; /* the file's size: no dataset or string can be larger */
    int progress_fd;               /* >= 0: what is read is announced there (model_dp.c's
                                    * probe process), so a crash can be placed */
};

/* Announces "<what>" on r->progress_fd (a line), when there is one. */
void hmd_dp_progress(const struct hmd_dp_reader *r, const char *what);

/* Records HMD_EDATA "<file>: <where>: <printf message>" and returns it. */
int hmd_dp_bad(struct hmd_dp_reader *r, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* obj[key] into *out, or HMD_EDATA naming the missing key at `where`. */
int hmd_dp_get_member(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      json_t **out);

/* obj[key], which must be an object. */
int hmd_dp_get_object(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      json_t **out);

/* obj[key] as a number. */
int hmd_dp_get_double(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      double *out);

/* obj[key] as an integer. */
int hmd_dp_get_int(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                   int *out);

/* obj[key] as a boolean; `dflt` when absent or null (older files omit some flags). */
int hmd_dp_get_bool(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                    bool dflt, bool *out);

/* obj[key] as a string copied into out[size]. */
int hmd_dp_get_string(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                      char *out, size_t size);

/* obj[key] copied into out[size] when it is a string, "" otherwise. */
void hmd_dp_opt_string(json_t *obj, const char *key, char *out, size_t size);

/* obj[key] as a list of integers, allocated in the model arena; *n its length. */
int hmd_dp_get_int_list(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                        int **out, int *n);

/* HMD_ENOTSUP naming `feature` when obj[key] is present and not null, false, 0 or []. */
int hmd_dp_refuse_if_set(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                         const char *feature);

/* HMD_ENOTSUP when node["@variables"] has a non-null entry not in the NULL-terminated `known` list:
 * arrays carry math halomd would otherwise silently ignore. */
int hmd_dp_check_variables(struct hmd_dp_reader *r, json_t *node, const char *where,
                           const char *const *known);

/* Reads node["@variables"][key] (a dataset path) as double into the model arena. `count`
 * is the expected number of elements (0: any, reported through *n when n is not NULL). When
 * `optional`, an absent or null entry gives *out = NULL. */
int hmd_dp_read_array(struct hmd_dp_reader *r, json_t *node, const char *key, const char *where,
                      size_t count, bool optional, double **out, size_t *n);

/* Reads the dataset whose path is the JSON string `ref` as double into the model arena; `key`
 * names it in messages, `count` as for hmd_dp_read_array (0: any, *n reports the count). */
int hmd_dp_read_dataset(struct hmd_dp_reader *r, json_t *ref, const char *key, const char *where,
                        size_t count, double **out, size_t *n);

/* Activation function from its DeePMD-kit name. */
int hmd_dp_parse_activation(struct hmd_dp_reader *r, const char *name, const char *where,
                            enum hmd_activation *act, struct hmd_act_silut *silut);

/* One Layer node (w, b, idt, activation, resnet) with input width n_in. */
int hmd_dp_read_layer(struct hmd_dp_reader *r, json_t *node, const char *where, int n_in,
                      struct hmd_dense *L);

/* An EmbeddingNetwork / FittingNetwork node ("layers") with input width n_in, packed for
 * the kernels. */
int hmd_dp_read_mlp(struct hmd_dp_reader *r, json_t *node, const char *where, int n_in,
                    struct hmd_mlp *net);

/* A NetworkCollection of `expect` networks of input width n_in; null entries (networks
 * of excluded type pairs) are allowed when `allow_null` and leave nlayers = 0. */
int hmd_dp_read_collection(struct hmd_dp_reader *r, json_t *node, const char *where, int expect,
                           int n_in, bool allow_null, struct hmd_mlp **nets);

/* A [ntypes * ntypes] symmetric flag matrix from a list of [ti, tj] pairs, in the arena. */
int hmd_dp_read_type_pairs(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                           bool **flags);

/* Marks flags[t] for every type index t of an integer list. */
int hmd_dp_read_type_list(struct hmd_dp_reader *r, json_t *obj, const char *key, const char *where,
                          bool *flags);

/* The embedding tables of a compressed descriptor: node["compress"]["@variables"] lists
 * compress_data ([rows][6 M] per net) and compress_info (6 numbers per net) of `count` nets of
 * M outputs, into *tables (arena, [count]); a null or empty entry (a net DeePMD-kit did not
 * tabulate) leaves M = 0 there. Records the settings in m->compression (from_file). */
int hmd_dp_read_tables(struct hmd_dp_reader *r, json_t *compress, const char *where, int count,
                       int M, struct hmd_emb_table **tables);

/* The DPA-1 descriptor node (src/io/model_dp_dpa1.c): fills model->dpa1, rcut, rcut_smth,
 * env_protection and dim_descrpt, and adds its parameters to model->nparams. */
int hmd_dp_read_dpa1(struct hmd_dp_reader *r, json_t *desc);

#endif /* HMD_IO_DP_TREE_H */
