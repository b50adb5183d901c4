/* Shared by the CUDA translation units: error checking and the device copy of a model. Internal
 * to src/cuda. */
#ifndef HMD_CUDA_CUDA_INTERNAL_CUH
#define HMD_CUDA_CUDA_INTERNAL_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

extern "C" {
#include "core/error.h"
#include "ff/provider.h"
#include "nnp/activation.h"
#include "nnp/descriptor_grad.h"
#include "nnp/env_mat.h"
#include "nnp/model.h"
#include "nnp/tabulate.h"
}

/* Returns HMD_ESOFTWARE naming the failed call from the enclosing int function. */
#define HMD_CUDA_CHECK(call)                                                                       \
    do {                                                                                           \
        cudaError_t hmd_cuda_err_ = (call);                                                        \
        if (hmd_cuda_err_ != cudaSuccess) {                                                        \
            return hmd_error_set(HMD_ESOFTWARE, "CUDA: %s: %s (%s:%d)", #call,                     \
                                 cudaGetErrorString(hmd_cuda_err_), __FILE__, __LINE__);           \
        }                                                                                          \
    } while (0)

/* After a kernel launch: the launch error, if any. */
#define HMD_CUDA_LAUNCHED(name) HMD_CUDA_CHECK(cudaGetLastError())

/* Whether the environment variable `name` turns a GPU path that is on by default off: set to
 * "0". */
inline bool hmd_cuda_setting_off(const char *name)
{
    const char *v = getenv(name);
    return v && !strcmp(v, "0");
}

/* One step of an append by a whole warp (all 32 lanes call it): the lanes with `keep` set take
 * the places *n, *n + 1, ... in lane order; returns this lane's place (meaningful when keep) and
 * advances *n by their count. */
__device__ inline int hmd_warp_append(bool keep, int *n)
{
    const unsigned ballot = __ballot_sync(0xffffffffu, keep);
    const int at = *n + __popc(ballot & ((1u << (threadIdx.x % 32)) - 1));
    *n += __popc(ballot);
    return at;
}

/* The first step of DeePMD-kit's neighbour selection (dp_eval.c format_neighbors) for centre i,
 * by the calling block: the first min(count, cap) entries of its list (nl_index, cap per atom)
 * that lie within rc2 of it and whose type pair is not excluded (pair_exclude, ntypes^2) go into
 * r2 (squared distance) and jj (index), in shared memory, in any order; out[0..nnei) is set to
 * -1. r^2 is rounded as the CPU rounds it (no fused multiply-add), so that ties and the cut-off
 * agree with it. *n (shared) counts the candidates; returns it, after a __syncthreads. */
__device__ inline int hmd_select_candidates(int i, const double *x, const int *type,
                                            const int *nl_index, int count, int cap, double rc2,
                                            const unsigned char *pair_exclude, int ntypes, int nnei,
                                            int *out, double *r2, int *jj, int *n)
{
    const int ti = type[i];
    if (threadIdx.x == 0) {
        *n = 0;
    }
    for (int j = threadIdx.x; j < nnei; j += blockDim.x) {
        out[j] = -1;
    }
    __syncthreads();
    count = min(count, cap);
    for (int k = threadIdx.x; k < count; k += blockDim.x) {
        const int j = nl_index[(size_t)i * cap + k];
        if (pair_exclude[ti * ntypes + type[j]]) {
            continue;
        }
        const double dx = x[3 * j] - x[3 * i], dy = x[3 * j + 1] - x[3 * i + 1],
                     dz = x[3 * j + 2] - x[3 * i + 2];
        const double d2 =
            __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
        if (d2 <= rc2) {
            const int p = atomicAdd(n, 1);
            r2[p] = d2;
            jj[p] = j;
        }
    }
    __syncthreads();
    return *n;
}

enum {
    HMD_CUDA_MAX_TYPES = 8,  /* types a GPU model may have */
    HMD_CUDA_MAX_LAYERS = 8, /* layers of a network on the GPU */
    HMD_CUDA_MAX_M = 256,    /* embedding width (two outputs per thread of 128) */
    HMD_CUDA_THREADS = 128,  /* threads of the per-atom kernels */
};

/* One dense layer on the device (weights [n_in][n_out] row-major, as on the host). */
struct hmd_cuda_layer {
    int n_in, n_out;
    enum hmd_activation act;
    struct hmd_act_silut silut;
    enum hmd_resnet resnet;
    const double *w, *b, *idt;   /* device; b, idt may be NULL */
    const float *wf, *bf, *idtf; /* fp32 copies (precision = mixed: embedding nets), or NULL */
};

struct hmd_cuda_net {
    int nlayers;
    struct hmd_cuda_layer L[HMD_CUDA_MAX_LAYERS];
};

/* Device copies of model data that a context owns (freed with it), and their size
 * (src/cuda/dense.cu). */
struct hmd_cuda_weights {
    std::vector<void *> arrays;
    size_t bytes;
};

/* Copies `bytes` of host memory src to a new device array *dst that w owns. Returns HMD_OK or
 * HMD_ESOFTWARE (the message names the CUDA call). */
int hmd_cuda_upload(struct hmd_cuda_weights *w, const void *src, size_t bytes, const void **dst);

/* A dense layer's weights *wd, bias *b and, when idt is not NULL, idt (*b and *idt NULL when the
 * layer has none), as hmd_cuda_upload. */
int hmd_cuda_upload_dense(struct hmd_cuda_weights *w, const hmd_dense *L, const double **wd,
                          const double **b, const double **idt);

/* A network's layers into out. HMD_ENOTSUP beyond HMD_CUDA_MAX_LAYERS layers. */
int hmd_cuda_upload_net(struct hmd_cuda_weights *w, const hmd_mlp *net, struct hmd_cuda_net *out);

/* fp32 copies of the layers' weights, biases and idt (wf, bf, idtf of out, which holds the
 * network as hmd_cuda_upload_net made it, its layer count checked). Returns HMD_OK or
 * HMD_ESOFTWARE (the message names the CUDA call). */
int hmd_cuda_upload_net_f32(struct hmd_cuda_weights *w, const hmd_mlp *net,
                            struct hmd_cuda_net *out);

/* n doubles of host memory src rounded to fp32 into a new device array *dst that w owns (model
 * weights and table coefficients: within fp32's range). Returns as hmd_cuda_upload. */
int hmd_cuda_upload_f32(struct hmd_cuda_weights *w, const double *src, size_t n, const float **dst);

/* Frees what w owns and empties it. */
void hmd_cuda_weights_free(struct hmd_cuda_weights *w);

/* The se_e2_a model as the kernels read it (lives in device memory). */
struct hmd_cuda_model {
    int ntypes, nnei, M, M2, nemb, max_width;
    bool type_one_side, compressed;
    int sel[HMD_CUDA_MAX_TYPES], sel_offset[HMD_CUDA_MAX_TYPES + 1];
    double rcut, rcut_smth, protection;
    const double *davg, *dstd;                                      /* [ntypes][nnei][4] */
    const double *pad_sum;                                          /* as hmd_se_e2_a.pad_sum */
    unsigned char exclude[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES]; /* descriptor */
    unsigned char pair_exclude[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES]; /* model level */
    struct hmd_cuda_net emb[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES];
    /* compressed: coef on the device (in the kernels' layout, table_device_layout), and in
     * mixed precision its fp32 copy */
    struct hmd_emb_table table[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES];
    const float *table_coef_f32[HMD_CUDA_MAX_TYPES * HMD_CUDA_MAX_TYPES];
    /* atomic energy of a home atom of type t from its fitting output y: e_scale[t] y + e_add[t]
     * (bias_atom_e, out_bias, fitting and atom exclusions folded in) */
    double e_scale[HMD_CUDA_MAX_TYPES], e_add[HMD_CUDA_MAX_TYPES];
};

/* The elementwise parts of dense layer L over `rows` rows, or *nrows (device) when nrows is not
 * NULL (src/cuda/dense.cu), around the
 * caller's product z = x W (one thread per element), on arrays of double, or of float for
 * DPA-1 in mixed precision, computing in double:
 *   forward:       y = act(z + b) idt + skip(x), with y holding z on entry; kept = what the
 *                  backward needs (hmd_act_keeps_output: the output or z);
 *   backward_dz:   dz = act'(kept) g idt, from g = dE/dy;
 *   backward_skip: dx += the skip connection's share of g (after the caller's dx = dz W^T). */
__global__ void hmd_cuda_dense_forward(size_t rows, const int *nrows, hmd_cuda_layer L,
                                       const double *x, double *y, double *kept);
__global__ void hmd_cuda_dense_forward(size_t rows, const int *nrows, hmd_cuda_layer L,
                                       const float *x, float *y, float *kept);
__global__ void hmd_cuda_dense_backward_dz(size_t rows, const int *nrows, hmd_cuda_layer L,
                                           const double *kept, const double *g, double *dz);
__global__ void hmd_cuda_dense_backward_dz(size_t rows, const int *nrows, hmd_cuda_layer L,
                                           const float *kept, const float *g, float *dz);
__global__ void hmd_cuda_dense_backward_skip(size_t rows, const int *nrows, hmd_cuda_layer L,
                                             const double *g, double *dx);
__global__ void hmd_cuda_dense_backward_skip(size_t rows, const int *nrows, hmd_cuda_layer L,
                                             const float *g, float *dx);

/* Neighbour list of the home atoms on the device: up to `cap` neighbours each. */
struct hmd_cuda_nbr {
    int cap;            /* neighbours room per atom */
    int cap_atoms;      /* home atoms room */
    int cap_index_room; /* the cap `index` was allocated for */
    int *index;         /* [cap_atoms][cap] */
    int *count;         /* [cap_atoms] */
    int *overflow;      /* [1] largest count seen beyond cap, 0 if none */
    /* cell list over the nall atoms */
    int cap_all, cap_bins;
    int *bin_of, *bin_count, *bin_start, *sorted;
    void *scan_tmp;
    size_t scan_bytes;
};

/* Builds `nl` for the first nlocal of the nall atoms d_x [nall][3] (device), cut-off rlist;
 * bounding box lo/hi of the atoms (Å) computed by the caller. Grows the arrays as needed (at
 * most one retry when an atom has more neighbours than the room). */
int hmd_nbr_list_build_cuda(struct hmd_cuda_nbr *nl, int nlocal, int nall, const double *d_x,
                            const double lo[3], const double hi[3], double rlist,
                            cudaStream_t stream, size_t *device_bytes);

void hmd_nbr_list_free_cuda(struct hmd_cuda_nbr *nl);

/* ---- the Deep Potential's evaluation context (nnp/dp_eval.cu), as its provider uses it ---- */

struct hmd_cuda_dp;

/* Uploads `m` (borrowed for the context's life: its network layout) and makes the evaluation
 * context. `mixed` (precision = mixed) runs the descriptor's networks in fp32. Returns HMD_OK,
 * HMD_ENOTSUP (no device; a model kind the GPU path does not have), HMD_ENOMEM. */
int hmd_cuda_dp_create(struct hmd_cuda_dp **dp, const struct hmd_dp_model *m, bool mixed);

/* Points the context (its cuBLAS handle and workspace) at stream st; everything after is
 * queued there. Not while a stream is being captured. */
int hmd_cuda_dp_bind_stream(struct hmd_cuda_dp *dp, cudaStream_t st);

/* Makes room for nlocal home atoms, keeping nothing of the previous contents, and groups the
 * home atoms by fitting net from their types type_home [nlocal] (host); type0 is the type of
 * the system's atom 0 (DPA-1's empty slots). Call at neighbour-list steps only: it may
 * allocate and copies to the device. */
int hmd_cuda_dp_prepare(struct hmd_cuda_dp *dp, int nlocal, int nall, const int *type_home,
                        int type0);

/* Bumped by every allocation of the context, so a CUDA graph made from it knows when its
 * pointers went stale. */
unsigned long hmd_cuda_dp_generation(const struct hmd_cuda_dp *dp);

/* Builds the neighbour list of the home atoms from the device positions d_x [nall][3]
 * (cut-off rlist; lo, hi bound every atom). May allocate: neighbour-list steps only. */
int hmd_cuda_dp_build_list(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *d_x,
                           const double lo[3], const double hi[3], double rlist);

/* The device arrays of one evaluation (ff/provider.h's io, on the device). */
struct hmd_cuda_dp_io {
    const double *x;     /* [nall][3] */
    const int *type;     /* [nall] */
    double *f;           /* [nall][3] forces: added to */
    double *ev;          /* [HMD_FORCE_NEV]: added to */
    double *terms;       /* [1] the Deep Potential's energy: added to, or NULL */
    double *atom_energy; /* [nlocal] added to, or NULL */
};

/* Energies, forces and virial from the device positions with the current list, all on the
 * bound stream without host copies, allocation or synchronisation (it may be captured in a
 * graph), ADDED to io's arrays. Centres i < ncount count towards energy and virial. */
int hmd_cuda_dp_evaluate(struct hmd_cuda_dp *dp, const hmd_cuda_dp_io *io, int nlocal, int nall,
                         int ncount);

/* Device memory the context holds (bytes). */
size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp);

/* Frees the context (NULL is fine). */
void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp);

/* Bounding box lo/hi (Å) of the host positions x [n][3], for the cell list. */
static inline void hmd_cuda_bounds(int n, const double *x, double lo[3], double hi[3])
{
    for (int d = 0; d < 3; d++) {
        lo[d] = n > 0 ? x[d] : 0.0;
        hi[d] = lo[d];
    }
    for (int i = 1; i < n; i++) {
        for (int d = 0; d < 3; d++) {
            lo[d] = fmin(lo[d], x[3 * i + d]);
            hi[d] = fmax(hi[d], x[3 * i + d]);
        }
    }
}

#endif /* HMD_CUDA_CUDA_INTERNAL_CUH */
