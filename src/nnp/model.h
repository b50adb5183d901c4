/* A Deep Potential energy model in memory: hyper-parameters, type map and weights (host copy,
 * double), as read from a DeePMD-kit .dp file by src/io/model_dp.c.
 *
 * Supported: energy models ("standard" model, "ener" fitting) with the se_e2_a descriptor
 * (two-side or type_one_side, exclude_types) or DPA-1 (se_atten, se_atten_v2), per-type or
 * mixed-type fitting nets, float64 or float32 weights (held as double), and compressed
 * (tabulated) embedding nets. See docs/models.md for what is refused and why.
 */
#ifndef HMD_NNP_MODEL_H
#define HMD_NNP_MODEL_H

#include <stdbool.h>
#include <stdio.h>

#include "core/arena.h"
#include "nnp/mlp.h"
#include "nnp/tabulate.h"

enum hmd_descriptor_kind {
    HMD_DESCRIPTOR_SE_E2_A,
    HMD_DESCRIPTOR_DPA1, /* dpa1 / se_atten / se_atten_v2 */
};

/* se_e2_a (DeepPot-SE, smooth edition, angular) descriptor. */
struct hmd_se_e2_a {
    int nnei;            /* neighbour slots per atom, sum(sel) */
    int *sel;            /* [ntypes] slots reserved per neighbour type */
    int *sel_offset;     /* [ntypes + 1] first slot of each type block, cumulative sum of sel */
    int M;               /* width of the embedding output, neuron[-1] */
    int M2;              /* axis_neuron: columns of the descriptor matrix kept */
    int nneuron;         /* number of embedding layers */
    int *neuron;         /* [nneuron] embedding widths */
    bool type_one_side;  /* embedding chosen by neighbour type only */
    bool resnet_dt;      /* embedding layers carry idt */
    bool *exclude;       /* [ntypes * ntypes] descriptor exclude_types (symmetric): pair i,j
                            contributes R = 0 (padding slots are never excluded) */
    double *davg;        /* [ntypes][nnei][4] mean of the raw environment row, by centre type */
    double *dstd;        /* [ntypes][nnei][4] standard deviation (divides) */
    int nemb;            /* number of embedding nets: ntypes (one side) or ntypes^2 */
    struct hmd_mlp *emb; /* [nemb]; one side: by neighbour type tau; two side: t_i + tau*ntypes */
    double *pad_sum;     /* padding's share of T, precomputed (hmd_se_e2_a_prepare): for centre
                            type ti, type block tau and n filled slots of the block, the M x 4
                            matrix sum over the block's empty slots of g(R_pad) (x) R_pad, at
                            ((ti * (nnei + ntypes) + sel_offset[tau] + tau + n) * M * 4) */
    char activation[32]; /* activation name, for the summary */
    struct hmd_emb_table *table; /* [nemb] tabulated embedding nets (model compression), or
                                    NULL: the networks are evaluated; M = 0 marks an absent net */
};

/* One gated self-attention layer of DPA-1 (num_heads 1):
 *   [Q | K | V] = X W_in + b_in,  Y = LayerNorm(X + (A V) W_out + b_out). */
struct hmd_attn_layer {
    struct hmd_dense in_proj;  /* M -> 3H, no activation */
    struct hmd_dense out_proj; /* H -> M, no activation */
    double *ln_w, *ln_b;       /* [M] layer-norm scale and shift */
    double ln_eps;             /* layer-norm epsilon */
};

/* DPA-1 (se_atten) descriptor: neighbours of any type in one list of nnei slots, a type
 * embedding, an embedding net on [s, TE_j(, TE_i)] (concat) or s with a type-pair gate
 * (strip), then attention layers, then the se_e2_a-style T and D. */
struct hmd_dpa1 {
    int nnei;                      /* neighbour slots, sel */
    int M;                         /* embedding output width, neuron[-1] */
    int M2;                        /* axis_neuron */
    int nneuron;                   /* embedding layers */
    int *neuron;                   /* [nneuron] embedding widths */
    int tebd_dim;                  /* type embedding width */
    bool strip;                    /* tebd_input_mode strip (else concat) */
    bool type_one_side;            /* embedding input without the centre's type embedding */
    bool smooth;                   /* smooth_type_embedding: switch-weighted gate and attention */
    bool dotr;                     /* attention weights gated by rhat_j . rhat_k */
    bool normalize;                /* q, k, v normalised to unit length */
    bool concat_output_tebd;       /* descriptor followed by TE[t_i] */
    double scaling;                /* q scale: temperature, or (H * scaling_factor)^-1/2 */
    int H;                         /* attention hidden width (attn) */
    int nlayers;                   /* attention layers (attn_layer) */
    struct hmd_attn_layer *layers; /* [nlayers] */
    bool *exclude;                 /* [ntypes * ntypes] descriptor exclude_types */
    double *davg, *dstd;           /* [ntypes][nnei][4] normalisation by centre type */
    struct hmd_mlp type_net;       /* type embedding net (input: one-hot of the type) */
    double *type_embd;        /* [ntypes + 1][tebd_dim] type embeddings, last row zero (padding) */
    struct hmd_mlp emb;       /* embedding net */
    struct hmd_mlp emb_strip; /* strip mode: the type-pair net */
    double *strip_table;      /* strip mode: emb_strip outputs [(ntypes+1)^2 or ntypes+1][M], row
                                 t_i * (ntypes + 1) + t_j (two side) or t_j (one side) */
    char activation[32];
    struct hmd_emb_table *table; /* strip mode without attention layers: the tabulated
                                    embedding net (model compression), or NULL */
};

/* Model compression: embedding nets replaced by tables (nnp/compress.h). */
struct hmd_compression {
    bool on;              /* tables are used */
    bool from_file;       /* tables read from the model file, else built by halomd */
    bool geometric;       /* the geometric embedding is tabulated (DPA-1 with attention layers:
                             only the type part, which halomd always precomputes) */
    double extrapolate;   /* table end as a multiple of its upper bound */
    double stride0;       /* knot spacing of the first part */
    double stride1;       /* knot spacing of the second part */
    double min_nbor_dist; /* closest neighbour distance the range was made for (Å) */
};

struct hmd_dp_model {
    /* provenance */
    char software[32];  /* "deepmd-kit" */
    char version[64];   /* version of the program that wrote the file */
    char backend[32];   /* framework the model was converted from ("PyTorch", "TensorFlow") */
    char precision[16]; /* precision of the stored weights: "float64" or "float32" */
    /* types */
    int ntypes;
    char (*type_map)[8]; /* [ntypes] element symbols */
    /* cut-off */
    double rcut;           /* cut-off radius (Å) */
    double rcut_smth;      /* start of the smooth switch (Å) */
    double env_protection; /* protection p in 1/(r + p) (Å) */
    /* descriptor */
    enum hmd_descriptor_kind kind;
    char descriptor_name[32]; /* as written in the file ("se_e2_a") */
    struct hmd_se_e2_a se;    /* when kind == HMD_DESCRIPTOR_SE_E2_A */
    struct hmd_dpa1 dpa1;     /* when kind == HMD_DESCRIPTOR_DPA1 */
    /* fitting */
    int dim_descrpt;     /* fitting input width: M * M2 (+ tebd_dim for DPA-1 with
                            concat_output_tebd) */
    int nfit;            /* fitting nets: ntypes (per type) or 1 (mixed types) */
    struct hmd_mlp *fit; /* [nfit] */
    int fit_nneuron;     /* hidden layers of a fitting net */
    int *fit_neuron;     /* [fit_nneuron] hidden widths */
    bool fit_resnet_dt;  /* fitting hidden layers carry idt */
    char fit_activation[32];
    double *bias_atom_e;  /* [ntypes] fitting energy bias (eV) */
    double *out_bias;     /* [ntypes] atomic-model output bias (eV) */
    bool *fit_exclude;    /* [ntypes] fitting exclude_types: the fitting output and
                             bias_atom_e are dropped, out_bias still applies */
    bool *atom_exclude;   /* [ntypes] model atom_exclude_types: the atom's energy is zero */
    bool *pair_exclude;   /* [ntypes * ntypes] model pair_exclude_types: such neighbours are
                             removed from the list (they become padding) */
    long nparams;         /* trainable parameters (weights, biases, idt) */
    double min_nbor_dist; /* closest neighbour distance in the training data (Å), from the
                             file's @variables; 0 when the file does not say */
    struct hmd_compression compression;
    struct hmd_arena arena; /* owns every array above */
};

/* Frees everything the model owns and zeroes it. */
void hmd_model_free(struct hmd_dp_model *model);

/* Index of element `symbol` in the type map, or -1. */
int hmd_model_type_index(const struct hmd_dp_model *model, const char *symbol);

/* Writes the human summary `halomd info` prints: type map, descriptor, rcut, rcut_smth, sel,
 * network widths, compression, parameter count, precision. Each line starts with `prefix`. */
void hmd_model_print_summary(const struct hmd_dp_model *model, FILE *out, const char *prefix);

#endif /* HMD_NNP_MODEL_H */
