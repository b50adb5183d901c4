/* Deep Potential energies, forces and virial on the GPU: the twin of nnp/dp_eval.c for se_e2_a
 * (networks or compressed tables; DPA-1's descriptor is dpa1_eval.cu). This file is the host
 * side: the evaluation context, the model upload, the fitting nets (cuBLAS) and the order of the
 * kernels. The kernels are in the headers it alone includes: se_e2a_device.cuh (helpers),
 * se_e2a_centre.cuh (one thread block per centre for the neighbour selection and the
 * descriptor, forward then backward with the embedding recomputed), se_e2a_slots.cuh (networks
 * over all slots of a chunk, the default), se_e2a_dmma.cuh (their embedding in double on the
 * FP64 tensor cores) and se_e2a_compressed.cuh (compressed tables, one to four warps per
 * centre). Forces are summed with atomics, so the last bits of a force depend on
 * the scheduling; energies do not. With precision = mixed the embedding (its layers or its
 * tables) runs in fp32: the descriptor kernels are templates on the embedding's scalar A (double
 * or float), over all slots the fused kernel holds it; everything around it stays in double. */
#include "cuda/cuda_internal.cuh"

#include "cuda/nnp/blas.cuh"
#include "cuda/cuda_api.h"
#include "cuda/nnp/dpa1_eval.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* the kernels, in this order */
#include "cuda/nnp/se_e2a_slots.cuh"

#include "cuda/nnp/se_e2a_contract.cuh"
#include "cuda/nnp/se_e2a_dmma.cuh"

#include "cuda/nnp/se_e2a_compressed.cuh"

/* ---- host side ----------------------------------------------------------------------------- */

struct hmd_cuda_dp {
    const hmd_dp_model *host; /* borrowed for the network layout */
    hmd_cuda_model model;     /* host copy of the device struct */
    hmd_cuda_model *d_model;
    hmd_cuda_weights weights; /* the model's arrays on the device */
    std::vector<hmd_cuda_net> fit;
    int dim; /* fitting input width */
    int fit_width_sum, fit_max_width;
    cudaStream_t stream; /* the stream of the last hmd_cuda_dp_bind_stream (borrowed) */
    cublasHandle_t blas;
    void *blas_workspace; /* given to cuBLAS so graph capture never allocates */
    hmd_cuda_nbr nl;
    hmd_cuda_dpa1 *dpa1; /* the DPA-1 descriptor, or NULL for se_e2_a */
    bool mixed;          /* precision = mixed: the descriptor's networks in fp32 */
    bool bound;          /* hmd_cuda_dp_bind_stream was called */
    int type0;           /* DPA-1: type of the system's atom 0 (empty slots) */
    size_t bytes;
    unsigned long generation;
    /* home atoms grouped by fitting net: order[fit_start[k] .. fit_start[k+1]) use net k */
    std::vector<int> fit_start;
    /* arrays grown at neighbour-list steps: per atom (cap_all, cap_local), and per row of a
     * chunk of centres evaluated together (cap_rows; se_e2_a runs the home atoms in chunks
     * so that its descriptors and fitting states never exist for all atoms at once) */
    int cap_local, cap_rows;
    int chunk_rows;      /* se_e2_a: most centres evaluated together (chunk_rows_setting) */
    int sms, slot_warps; /* the GPU's SMs; compressed: slot_warps_setting (0: by size) */
    hmd_cuda_dp_io io;   /* the arrays of the call in progress (borrowed) */
    int nall;            /* atoms of the call in progress */
    /* forces [cap_facc][3] and virial [9] summed exactly (cuda/exact_sum.cuh), then added to
     * the caller's; *d_nall (device) the atoms of the last prepare */
    hmd_exact *facc, *vacc;
    int cap_facc, *d_nall;
    double *atom_y;      /* [cap_local] atomic energies */
    int *order;          /* [cap_local] */
    double *D, *dD;      /* DPA-1: [cap_local][dim] */
    double *T, *fit_buf; /* [cap_rows][M][4]; [cap_rows] fitting rows and states */
    int *slots;          /* [cap_rows][nnei] */
    size_t fit_buf_doubles;
    /* se_e2_a over all slots (slots_setting): per slot of a chunk s, R, dR/dd, the
     * embedding's value and tangent, and px, py; two layer buffers (empty when a kernel keeps
     * the layers on chip: fused_tile, dmma) and gamma */
    bool slots_path;
    int fused_tile;              /* mixed: rows per block of slots_embed_fused; 0 in double */
    std::vector<dmma_plan> dmma; /* double: slots_embed_dmma's plan of each embedding net, or
                                    none (layer by layer) */
    int cap_slot_rows;
    double *slot_s, *slot_R, *slot_jac, *slot_G, *slot_pxy, *emb_a, *emb_b, *gamma;
};

namespace
{

constexpr size_t BLAS_WORKSPACE_BYTES = 32u << 20;
constexpr int CHUNK_ROWS = 32768; /* se_e2_a centres evaluated together, by default */
/* over all slots a centre of a chunk holds about 820 kB (water, sel 46 + 92, M 100): 4,096 of
 * them cost 2% more time than one chunk of 12,288 on an H200, and 3.4 GB instead of 11 */
constexpr int SLOT_CHUNK_ROWS = 4096;

/* se_e2_a centres per chunk: HALOMD_GPU_CHUNK_ROWS when set to a positive number (below 2^30),
 * else `fallback`. */
int chunk_rows_setting(int fallback)
{
    const char *v = getenv("HALOMD_GPU_CHUNK_ROWS");
    const long n = v ? strtol(v, NULL, 10) : 0;
    return n > 0 && n < (1L << 30) ? (int)n : fallback;
}

/* Warps per centre of the compressed kernels: HALOMD_GPU_SLOT_WARPS when set to 1, 2 or 4,
 * else 0 (slot_warps picks by the size of each launch). */
int slot_warps_setting()
{
    const char *v = getenv("HALOMD_GPU_SLOT_WARPS");
    const long n = v ? strtol(v, NULL, 10) : 0;
    return n == 1 || n == 2 || n == 4 ? (int)n : 0;
}

/* se_e2_a networks go over all slots of a chunk with matrix products (evaluate_se_slots; fp32
 * embedding with precision = mixed) unless HALOMD_SE_SLOTS=0, which keeps them in the
 * per-centre descriptor kernels (evaluate_se, where compressed models always run, in their warp
 * kernels). */
bool slots_setting()
{
    return !hmd_cuda_setting_off("HALOMD_SE_SLOTS");
}

/* In double the embedding over all slots runs on the FP64 tensor cores in one kernel
 * (slots_embed_dmma) on GPUs whose FP64 tensor cores run at full rate (compute capability 8.0,
 * 9.0, 10.0; 8.6, 8.9 and 12.x have the instructions but not the rate), when this build's code
 * for it has them (PTX 8.0 on), unless HALOMD_GPU_DMMA=0, which keeps it layer by layer (cuBLAS
 * DGEMMs and an elementwise pass). */
bool dmma_setting()
{
    int dev = 0, major = 0, minor = 0;
    cudaFuncAttributes attr;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&attr, slots_embed_dmma<true>) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return major >= 8 && minor == 0 && attr.ptxVersion >= 80 &&
           !hmd_cuda_setting_off("HALOMD_GPU_DMMA");
}

/* What turns a fitting output into an atomic energy (dp_eval.c atomic_energies). */
void energy_terms(const hmd_dp_model *m, hmd_cuda_model &g)
{
    for (int t = 0; t < m->ntypes; t++) {
        const bool atom_out = m->atom_exclude[t], fit_out = m->fit_exclude[t];
        g.e_scale[t] = atom_out || fit_out ? 0.0 : 1.0;
        g.e_add[t] = atom_out ? 0.0 : (fit_out ? 0.0 : m->bias_atom_e[t]) + m->out_bias[t];
    }
}

/* The fitting nets over dim_descrpt inputs. */
int upload_fitting(hmd_cuda_dp *dp, const hmd_dp_model *m)
{
    int rc = HMD_OK;
    dp->fit.resize(m->nfit);
    dp->dim = m->dim_descrpt;
    dp->fit_width_sum = 0;
    dp->fit_max_width = m->dim_descrpt;
    for (int k = 0; k < m->nfit && !rc; k++) {
        rc = hmd_cuda_upload_net(&dp->weights, &m->fit[k], &dp->fit[k]);
        int sum = 0;
        for (int l = 0; l < m->fit[k].nlayers; l++) {
            sum += m->fit[k].layers[l].n_out;
            dp->fit_max_width = std::max(dp->fit_max_width, m->fit[k].layers[l].n_out);
        }
        dp->fit_width_sum = std::max(dp->fit_width_sum, sum);
    }
    return rc;
}

/* DPA-1: the descriptor is dpa1_eval.cu's; this context keeps the fitting and the energies. */
int upload_dpa1(hmd_cuda_dp *dp, const hmd_dp_model *m)
{
    hmd_cuda_model &g = dp->model;
    if (m->ntypes > HMD_CUDA_MAX_TYPES) {
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda: at most %d types on the GPU",
                             HMD_CUDA_MAX_TYPES);
    }
    g = hmd_cuda_model{};
    g.ntypes = m->ntypes;
    energy_terms(m, g);
    int rc =
        hmd_cuda_dpa1_create(&dp->dpa1, m, dp->mixed, dp->blas_workspace, BLAS_WORKSPACE_BYTES);
    rc = rc ? rc : upload_fitting(dp, m);
    return rc ? rc : hmd_cuda_upload(&dp->weights, &g, sizeof g, (const void **)&dp->d_model);
}

/* Lets the descriptor kernels of embedding scalar A have the shared memory model g needs. */
template <typename A> int allow_shared_memory(const hmd_cuda_model &g)
{
    const size_t fwd = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, false, sizeof(A));
    const size_t bwd = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, true, sizeof(A));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(descriptor_forward<A>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fwd));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(descriptor_backward<A>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bwd));
    return HMD_OK;
}

/* Lets the compressed kernels of table scalar A have the shared memory model g needs. */
template <typename A> int allow_compressed(const hmd_cuda_model &g)
{
    HMD_CUDA_CHECK(cudaFuncSetAttribute(compressed_forward<A, false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)forward_smem_bytes(g, 1)));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(compressed_forward<A, true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)forward_smem_bytes(g, TAB_WARPS)));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(compressed_backward<A>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)backward_smem_bytes(g)));
    return HMD_OK;
}

/* Lets slots_embed_fused have `budget` bytes of shared memory (the most any tile takes: so that
 * another context's smaller tile never shrinks it). */
int allow_fused(size_t budget)
{
    HMD_CUDA_CHECK(cudaFuncSetAttribute(slots_embed_fused,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)budget));
    return HMD_OK;
}

/* slots_embed_dmma's plan of every embedding net of dp's model (nemb nets) into dp->dmma, and
 * the kernel allowed the device's budget of shared memory (so that another context's plans
 * never shrink it); none when a net does not fit (layer by layer). */
int plan_dmma(hmd_cuda_dp *dp, int nemb)
{
    const size_t budget = smem_budget(DMMA_MAX_SMEM);
    std::vector<dmma_plan> plans(nemb);
    for (int k = 0; k < nemb; k++) {
        const hmd_cuda_net &net = dp->model.emb[k];
        if (net.nlayers) { /* an empty net (excluded pair) writes nothing */
            plans[k] = make_dmma_plan(net, budget);
            if (!plans[k].smem) {
                return HMD_OK;
            }
        }
    }
    HMD_CUDA_CHECK(cudaFuncSetAttribute(slots_embed_dmma<true>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)budget));
    HMD_CUDA_CHECK(cudaFuncSetAttribute(slots_embed_dmma<false>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)budget));
    dp->dmma = plans;
    return HMD_OK;
}

/* The coefficients of table t on the device in the compressed kernels' layout
 * (table_device_layout): *coef, and in mixed precision their fp32 copy *coef_f32. */
int upload_table(hmd_cuda_dp *dp, const hmd_emb_table *t, double **coef, const float **coef_f32)
{
    const std::vector<double> c = table_device_layout(*t);
    int rc =
        hmd_cuda_upload(&dp->weights, c.data(), c.size() * sizeof(double), (const void **)coef);
    if (!rc && dp->mixed) {
        rc = hmd_cuda_upload_f32(&dp->weights, c.data(), c.size(), coef_f32);
    }
    return rc;
}

int upload_model(hmd_cuda_dp *dp, const hmd_dp_model *m)
{
    const hmd_se_e2_a *se = &m->se;
    hmd_cuda_model &g = dp->model;
    const int nt = m->ntypes;
    if (m->kind == HMD_DESCRIPTOR_DPA1) {
        return upload_dpa1(dp, m);
    }
    if (nt > HMD_CUDA_MAX_TYPES || se->M > HMD_CUDA_MAX_M) {
        return hmd_error_set(HMD_ENOTSUP,
                             "backend = cuda: at most %d types and an embedding "
                             "width of %d on the GPU",
                             HMD_CUDA_MAX_TYPES, HMD_CUDA_MAX_M);
    }
    g = hmd_cuda_model{};
    g.ntypes = nt;
    g.nnei = se->nnei;
    g.M = se->M;
    g.M2 = se->M2;
    g.nemb = se->nemb;
    g.type_one_side = se->type_one_side;
    g.compressed = se->table != NULL;
    g.rcut = m->rcut;
    g.rcut_smth = m->rcut_smth;
    g.protection = m->env_protection;
    g.max_width = se->M;
    for (int t = 0; t < nt; t++) {
        g.sel[t] = se->sel[t];
        g.sel_offset[t] = se->sel_offset[t];
    }
    g.sel_offset[nt] = se->sel_offset[nt];
    for (int k = 0; k < nt * nt; k++) {
        g.exclude[k] = se->exclude[k];
        g.pair_exclude[k] = m->pair_exclude[k];
    }
    energy_terms(m, g);
    const size_t nstat = (size_t)nt * se->nnei * 4;
    int rc =
        hmd_cuda_upload(&dp->weights, se->davg, nstat * sizeof(double), (const void **)&g.davg);
    if (!rc) {
        rc =
            hmd_cuda_upload(&dp->weights, se->dstd, nstat * sizeof(double), (const void **)&g.dstd);
    }
    if (!rc) {
        rc = hmd_cuda_upload(&dp->weights, se->pad_sum,
                             (size_t)nt * (se->nnei + nt) * se->M * 4 * sizeof(double),
                             (const void **)&g.pad_sum);
    }
    for (int k = 0; k < se->nemb && !rc; k++) {
        if (g.compressed) {
            g.table[k] = se->table[k];
            if (se->table[k].M > 0) {          /* 0: an excluded pair's absent net */
                if (se->table[k].M != se->M) { /* the kernels index by se->M */
                    return hmd_error_set(HMD_ENOTSUP,
                                         "backend = cuda: a compression table %d wide "
                                         "for an embedding %d wide",
                                         se->table[k].M, se->M);
                }
                rc = upload_table(dp, &se->table[k], &g.table[k].coef, &g.table_coef_f32[k]);
            }
        }
        if (!rc && se->emb[k].nlayers) {
            rc = hmd_cuda_upload_net(&dp->weights, &se->emb[k], &g.emb[k]);
            if (!rc && dp->mixed) {
                rc = hmd_cuda_upload_net_f32(&dp->weights, &se->emb[k], &g.emb[k]);
            }
            for (int l = 0; l < se->emb[k].nlayers; l++) {
                g.max_width = std::max(g.max_width, se->emb[k].layers[l].n_out);
            }
        }
    }
    if (g.compressed) {
        for (int k = 0; k < se->nemb; k++) {
            if (se->emb[k].nlayers && se->table[k].M == 0) {
                return hmd_error_set(HMD_ENOTSUP, "backend = cuda: a compressed model with a "
                                                  "network left untabulated");
            }
        }
    }
    if (!rc) {
        rc = upload_fitting(dp, m);
    }
    if (!rc) {
        rc = hmd_cuda_upload(&dp->weights, &g, sizeof g, (const void **)&dp->d_model);
    }
    if (!rc && !g.compressed) {
        rc = dp->mixed ? allow_shared_memory<float>(g) : allow_shared_memory<double>(g);
    }
    if (!rc && g.compressed) {
        rc = dp->mixed ? allow_compressed<float>(g) : allow_compressed<double>(g);
    }
    return rc;
}

template <typename T> int device_array(hmd_cuda_dp *dp, T **p, size_t old_n, size_t n)
{
    if (*p) {
        cudaFree(*p);
        dp->bytes -= old_n * sizeof(T);
        *p = NULL;
    }
    HMD_CUDA_CHECK(cudaMalloc((void **)p, (n ? n : 1) * sizeof(T)));
    dp->bytes += n * sizeof(T);
    dp->generation++;
    return HMD_OK;
}

int reserve(hmd_cuda_dp *dp, int nlocal, int nall)
{
    const hmd_cuda_model &g = dp->model;
    int rc = HMD_OK;
    if (nall > dp->cap_facc || !dp->facc) {
        const size_t old = (size_t)dp->cap_facc, cap = (size_t)nall + nall / 2 + 16;
        rc = device_array(dp, &dp->facc, 3 * old, 3 * cap);
        dp->cap_facc = rc ? 0 : (int)cap;
        if (!rc) { /* zero between evaluations: drain_exact leaves it so */
            HMD_CUDA_CHECK(cudaMemsetAsync(dp->facc, 0, sizeof(hmd_exact) * 3 * cap, dp->stream));
        }
    }
    if (!rc && !dp->vacc) {
        rc = device_array(dp, &dp->vacc, 0, 9);
        if (!rc) {
            HMD_CUDA_CHECK(cudaMemsetAsync(dp->vacc, 0, sizeof(hmd_exact) * 9, dp->stream));
        }
    }
    if (!rc && !dp->d_nall) {
        rc = device_array(dp, &dp->d_nall, 0, 1);
    }
    if (!rc) {
        /* stream-ordered (pageable memory: staged before the call returns) */
        HMD_CUDA_CHECK(
            cudaMemcpyAsync(dp->d_nall, &nall, sizeof nall, cudaMemcpyHostToDevice, dp->stream));
    }
    if (!rc && nlocal > dp->cap_local) {
        const size_t old = (size_t)dp->cap_local, cap = (size_t)nlocal + nlocal / 2 + 16;
        const size_t dpa1_dim = dp->dpa1 ? (size_t)dp->dim : 0;
        rc = device_array(dp, &dp->atom_y, old, cap);
        if (!rc) {
            rc = device_array(dp, &dp->order, old, cap);
        }
        if (!rc) {
            rc = device_array(dp, &dp->D, old * dpa1_dim, cap * dpa1_dim);
        }
        if (!rc) {
            rc = device_array(dp, &dp->dD, old * dpa1_dim, cap * dpa1_dim);
        }
        dp->cap_local = rc ? 0 : (int)cap;
    }
    /* DPA-1 fits all its rows at once; se_e2_a chunks of at most chunk_rows */
    const int rows = dp->dpa1 ? dp->cap_local : std::min(dp->cap_local, dp->chunk_rows);
    if (!rc && rows > dp->cap_rows) {
        const size_t old = (size_t)dp->cap_rows, cap = (size_t)rows;
        const size_t fit =
            (size_t)dp->dim + 1 + (size_t)dp->fit_width_sum * 2 + (size_t)dp->fit_max_width * 2;
        rc = device_array(dp, &dp->slots, old * g.nnei, cap * g.nnei);
        if (!rc) {
            rc = device_array(dp, &dp->T, old * g.M * 4, cap * g.M * 4);
        }
        if (!rc && g.compressed) { /* the slots path keeps its gamma with its slot arrays */
            rc = device_array(dp, &dp->gamma, old * g.M * 4, cap * g.M * 4);
        }
        if (!rc) {
            rc = device_array(dp, &dp->fit_buf, dp->fit_buf_doubles, cap * fit);
            dp->fit_buf_doubles = cap * fit;
        }
        dp->cap_rows = rc ? 0 : (int)cap;
    }
    if (!rc && dp->slots_path && dp->cap_rows > dp->cap_slot_rows) {
        const size_t old = (size_t)dp->cap_slot_rows * g.nnei, n = (size_t)dp->cap_rows * g.nnei;
        int max_sel = 0;
        for (int t = 0; t < g.ntypes; t++) {
            max_sel = std::max(max_sel, g.sel[t]);
        }
        /* the layer buffers of slots_embed, unless a fused kernel keeps the layers on chip */
        const bool fused = dp->fused_tile || !dp->dmma.empty();
        const size_t emb_row = fused ? 0 : 2 * (size_t)max_sel * g.max_width;
        const size_t emb_old = emb_row * dp->cap_slot_rows, emb = emb_row * dp->cap_rows;
        rc = device_array(dp, &dp->slot_s, old, n);
        rc = rc ? rc : device_array(dp, &dp->slot_R, 4 * old, 4 * n);
        rc = rc ? rc : device_array(dp, &dp->slot_jac, 12 * old, 12 * n);
        rc = rc ? rc : device_array(dp, &dp->slot_G, 2 * old * g.M, 2 * n * g.M);
        rc = rc ? rc : device_array(dp, &dp->slot_pxy, 8 * old, 8 * n);
        rc = rc ? rc : device_array(dp, &dp->emb_a, emb_old, emb);
        rc = rc ? rc : device_array(dp, &dp->emb_b, emb_old, emb);
        rc = rc ? rc
                : device_array(dp, &dp->gamma, 4 * (size_t)dp->cap_slot_rows * g.M,
                               4 * (size_t)dp->cap_rows * g.M);
        dp->cap_slot_rows = rc ? 0 : dp->cap_rows;
    }
    return rc;
}

/* Fitting net k over `rows` gathered rows X [rows][dim] (device): y [rows] and dE/dX
 * (written over X). buf holds the layer states. */
int fitting(hmd_cuda_dp *dp, int k, int rows, double *X, double *y_out, double *buf)
{
    const hmd_cuda_net &net = dp->fit[k];
    const int T = 256;
    /* forward: outputs and kept values of every layer, back to back */
    double *outs = buf, *kept = buf + (size_t)rows * dp->fit_width_sum;
    double *g0 = kept + (size_t)rows * dp->fit_width_sum,
           *g1 = g0 + (size_t)rows * dp->fit_max_width;
    std::vector<const double *> in(net.nlayers), out(net.nlayers), kp(net.nlayers);
    const double *x = X;
    size_t off = 0;
    for (int l = 0; l < net.nlayers; l++) {
        const hmd_cuda_layer &L = net.L[l];
        double *o = outs + off, *kv = kept + off;
        off += (size_t)rows * L.n_out;
        if (hmd_blas_gemm(dp->blas, CUBLAS_OP_N, CUBLAS_OP_N, L.n_out, rows, L.n_in, 1.0, L.w,
                          L.n_out, 0, x, L.n_in, 0, 0.0, o, L.n_out, 0,
                          1) != CUBLAS_STATUS_SUCCESS) {
            return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: fitting layer %d forward failed", l);
        }
        hmd_cuda_dense_forward<<<blocks_for((size_t)rows * L.n_out, T), T, 0, dp->stream>>>(
            rows, NULL, L, x, o, kv);
        HMD_CUDA_LAUNCHED("hmd_cuda_dense_forward");
        in[l] = x;
        out[l] = o;
        kp[l] = kv;
        x = o;
    }
    HMD_CUDA_CHECK(
        cudaMemcpyAsync(y_out, x, sizeof(double) * rows, cudaMemcpyDeviceToDevice, dp->stream));
    /* backward from dE/dy = 1 */
    fill<<<blocks_for((size_t)rows, T), T, 0, dp->stream>>>((size_t)rows, 1.0, g0);
    HMD_CUDA_LAUNCHED("fill");
    double *g = g0, *dz = g1;
    for (int l = net.nlayers - 1; l >= 0; l--) {
        const hmd_cuda_layer &L = net.L[l];
        hmd_cuda_dense_backward_dz<<<blocks_for((size_t)rows * L.n_out, T), T, 0, dp->stream>>>(
            rows, NULL, L, kp[l], g, dz);
        HMD_CUDA_LAUNCHED("hmd_cuda_dense_backward_dz");
        /* dx = dz W^T, over the layer's input (no longer needed): X for layer 0 */
        double *dx = l == 0 ? X : (double *)in[l];
        if (hmd_blas_gemm(dp->blas, CUBLAS_OP_T, CUBLAS_OP_N, L.n_in, rows, L.n_out, 1.0, L.w,
                          L.n_out, 0, dz, L.n_out, 0, 0.0, dx, L.n_in, 0,
                          1) != CUBLAS_STATUS_SUCCESS) {
            return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: fitting layer %d backward failed", l);
        }
        if (L.resnet != HMD_RESNET_NONE) {
            hmd_cuda_dense_backward_skip<<<blocks_for((size_t)rows * L.n_in, T), T, 0,
                                           dp->stream>>>(rows, NULL, L, g, dx);
            HMD_CUDA_LAUNCHED("hmd_cuda_dense_backward_skip");
        }
        g = dx; /* the incoming gradient of the layer below */
    }
    return HMD_OK;
}

} // namespace

int hmd_cuda_dp_create(struct hmd_cuda_dp **out, const struct hmd_dp_model *m, bool mixed)
{
    *out = NULL;
    int rc = hmd_cuda_device_info(NULL, 0);
    if (rc) {
        return rc;
    }
    int dev = 0, sms = 0;
    HMD_CUDA_CHECK(cudaGetDevice(&dev));
    HMD_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    hmd_cuda_dp *dp = new hmd_cuda_dp();
    dp->host = m;
    dp->mixed = mixed;
    dp->sms = sms;
    dp->slots_path = slots_setting();
    dp->slot_warps = slot_warps_setting();
    if (cublasCreate(&dp->blas) != CUBLAS_STATUS_SUCCESS) {
        hmd_cuda_dp_destroy(dp);
        return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: cannot create a handle");
    }
    rc = cudaMalloc(&dp->blas_workspace, BLAS_WORKSPACE_BYTES) == cudaSuccess
             ? HMD_OK
             : hmd_error_set(HMD_ENOMEM, "GPU: no room for the cuBLAS workspace");
    if (!rc) {
        dp->bytes += BLAS_WORKSPACE_BYTES;
        rc = upload_model(dp, m);
        dp->slots_path = dp->slots_path && !dp->dpa1 && !dp->model.compressed &&
                         (dp->model.type_one_side || m->nfit == m->ntypes);
        dp->chunk_rows = chunk_rows_setting(dp->slots_path ? SLOT_CHUNK_ROWS : CHUNK_ROWS);
        /* in mixed the embedding over all slots is the fused kernel, which must fit */
        const size_t fused_budget = smem_budget(FUSED_MAX_SMEM);
        dp->fused_tile =
            dp->slots_path && mixed ? fused_tile(dp->model.max_width, fused_budget) : 0;
        dp->slots_path = dp->slots_path && (!mixed || dp->fused_tile);
        if (!rc && dp->fused_tile) {
            rc = allow_fused(fused_budget);
        }
        if (!rc && dp->slots_path && !mixed && dmma_setting()) {
            rc = plan_dmma(dp, m->se.nemb);
        }
    }
    if (rc) {
        hmd_cuda_dp_destroy(dp);
        return rc;
    }
    *out = dp;
    return HMD_OK;
}

int hmd_cuda_dp_prepare(struct hmd_cuda_dp *dp, int nlocal, int nall, const int *type_home,
                        int type0)
{
    const hmd_dp_model *m = dp->host;
    dp->type0 = type0;
    int rc = reserve(dp, nlocal, nall);
    if (rc) {
        return rc;
    }
    /* fitting, one net at a time over its atoms (dp_eval.c: net_of, no_gradient) */
    std::vector<int> order;
    order.reserve(nlocal);
    const std::vector<int> before = dp->fit_start;
    dp->fit_start.assign(m->nfit + 1, 0);
    for (int k = 0; k < m->nfit; k++) {
        dp->fit_start[k] = (int)order.size();
        for (int i = 0; i < nlocal; i++) {
            const int t = type_home[i];
            const int net = m->nfit == 1 ? 0 : t;
            if (net == k && !m->fit_exclude[t] && !m->atom_exclude[t]) {
                order.push_back(i);
            }
        }
    }
    dp->fit_start[m->nfit] = (int)order.size();
    if (dp->fit_start != before) {
        dp->generation++; /* the chunks of a recorded evaluation are not these any more */
    }
    if (!order.empty()) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(dp->order, order.data(), sizeof(int) * order.size(),
                                       cudaMemcpyHostToDevice, dp->stream));
    }
    return HMD_OK;
}

int hmd_cuda_dp_bind_stream(struct hmd_cuda_dp *dp, cudaStream_t st)
{
    if (dp->stream != st || !dp->bound) {
        if (hmd_blas_set_stream(dp->blas, st, dp->blas_workspace, BLAS_WORKSPACE_BYTES) !=
            CUBLAS_STATUS_SUCCESS) {
            return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: cannot set the stream");
        }
        dp->stream = st;
        dp->bound = true;
    }
    return HMD_OK;
}

unsigned long hmd_cuda_dp_generation(const struct hmd_cuda_dp *dp)
{
    return dp->generation + (dp->dpa1 ? hmd_cuda_dpa1_generation(dp->dpa1) << 20 : 0);
}

int hmd_cuda_dp_build_list(struct hmd_cuda_dp *dp, int nlocal, int nall, const double *d_x,
                           const double lo[3], const double hi[3], double rlist)
{
    const size_t before = dp->bytes;
    const int cap_before = dp->nl.cap;
    int rc =
        hmd_nbr_list_build_cuda(&dp->nl, nlocal, nall, d_x, lo, hi, rlist, dp->stream, &dp->bytes);
    if (dp->bytes != before || dp->nl.cap != cap_before) {
        dp->generation++;
    }
    if (!rc && dp->dpa1) {
        return hmd_cuda_dpa1_reserve(dp->dpa1, nlocal, dp->nl.cap);
    }
    if (!rc) {
        const size_t fmt_bytes = (size_t)dp->nl.cap * (sizeof(double) + sizeof(int)) + sizeof(int);
        HMD_CUDA_CHECK(cudaFuncSetAttribute(
            format_neighbors, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fmt_bytes));
    }
    return rc;
}

namespace
{

/* Warps per centre for a launch of the compressed kernels over `rows` centres: the setting, else
 * the most (up to TAB_WARPS, by powers of 2) that keep the launch within about half of what the
 * GPU holds at once, so that small systems split each centre's slots rather than leave SMs idle,
 * and no launch ends in a partial second wave of blocks (on an H200: 4 warps per centre up to
 * 330 centres, 2 up to 660, 1 beyond; 2 warps for 1,536 centres, 1.45 waves, were slower than
 * 1 or 4). */
int slot_warps(const hmd_cuda_dp *dp, int rows)
{
    if (dp->slot_warps) {
        return dp->slot_warps;
    }
    const size_t resident = (size_t)dp->sms * TAB_BLOCKS_PER_SM * TAB_WARPS;
    int split = 1;
    while (split < TAB_WARPS && (size_t)rows * split * 2 <= resident) {
        split *= 2;
    }
    return split;
}

/* The fitting nets over rows [c0, c0 + rows) of dp->order (a chunk, which may hold the centres of
 * several nets): each net k over its part of the chunk's descriptors X, energies into Y. */
int fitting_of_chunk(hmd_cuda_dp *dp, int c0, int rows, double *X, double *Y, double *work)
{
    for (int k = 0; k < dp->host->nfit; k++) {
        const int r0 = std::max(dp->fit_start[k], c0) - c0;
        const int r1 = std::min(dp->fit_start[k + 1], c0 + rows) - c0;
        if (r1 > r0) {
            int rc = fitting(dp, k, r1 - r0, X + (size_t)r0 * dp->dim, Y + r0, work);
            if (rc) {
                return rc;
            }
        }
    }
    return HMD_OK;
}

/* se_e2_a, chunk by chunk of the home atoms in dp->order (grouped by fitting net): neighbour
 * slots and descriptor of every centre of the chunk in one launch each, the fitting nets over
 * their parts, then forces and virial in one launch; the embedding in scalar A, by the
 * per-centre kernels (networks) or the warp kernels (compressed tables). */
template <typename A> int evaluate_se(hmd_cuda_dp *dp, int ncount)
{
    const hmd_cuda_model &g = dp->model;
    const int T = HMD_CUDA_THREADS, nrows = dp->fit_start[dp->host->nfit];
    cudaStream_t st = dp->stream;
    const size_t fmt_bytes = (size_t)dp->nl.cap * (sizeof(double) + sizeof(int)) + sizeof(int);
    const size_t fwd_bytes = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, false, sizeof(A));
    const size_t bwd_bytes = smem_bytes(g.nnei, g.M, g.max_width, g.ntypes, true, sizeof(A));
    const size_t gamma_bytes = gamma_smem_bytes(g);
    for (int c0 = 0; c0 < nrows; c0 += dp->cap_rows) {
        const int rows = std::min(dp->cap_rows, nrows - c0);
        const int *idx = dp->order + c0;
        const int split = slot_warps(dp, rows);
        const unsigned tab_blocks = (unsigned)((rows * split + TAB_WARPS - 1) / TAB_WARPS);
        double *X = dp->fit_buf, *Y = X + (size_t)rows * dp->dim, *work = Y + rows;
        format_neighbors<<<rows, T, fmt_bytes, st>>>(dp->d_model, dp->io.x, dp->io.type,
                                                     dp->nl.index, dp->nl.count, dp->nl.cap, idx,
                                                     dp->slots, dp->io.ev + HMD_FORCE_EV_DROPPED);
        HMD_CUDA_LAUNCHED("format_neighbors");
        if (g.compressed) {
            auto forward = split > 1 ? compressed_forward<A, true> : compressed_forward<A, false>;
            forward<<<tab_blocks, 32 * TAB_WARPS, forward_smem_bytes(g, split), st>>>(
                dp->d_model, rows, split, dp->io.x, dp->io.type, idx, dp->slots, dp->T);
            HMD_CUDA_LAUNCHED("compressed_forward");
            pad_and_D<<<rows, T, 0, st>>>(dp->d_model, dp->io.type, idx, dp->slots, dp->T, X);
            HMD_CUDA_LAUNCHED("pad_and_D");
        } else {
            descriptor_forward<A><<<rows, T, fwd_bytes, st>>>(dp->d_model, dp->io.x, dp->io.type,
                                                              idx, dp->slots, dp->T, X);
            HMD_CUDA_LAUNCHED("descriptor_forward");
        }
        int rc = fitting_of_chunk(dp, c0, rows, X, Y, work);
        if (rc) {
            return rc;
        }
        gather_rows<<<blocks_for((size_t)rows, 256), 256, 0, st>>>(rows, 1, idx, Y, dp->atom_y,
                                                                   true);
        HMD_CUDA_LAUNCHED("gather_rows");
        if (g.compressed) {
            gamma_from_dD<<<rows, T, gamma_bytes, st>>>(dp->d_model, dp->T, X, dp->gamma,
                                                        gamma_bytes > 0);
            HMD_CUDA_LAUNCHED("gamma_from_dD");
            compressed_backward<A><<<tab_blocks, 32 * TAB_WARPS, backward_smem_bytes(g), st>>>(
                dp->d_model, rows, split, ncount, dp->io.x, dp->io.type, idx, dp->slots, dp->gamma,
                dp->facc, dp->vacc);
            HMD_CUDA_LAUNCHED("compressed_backward");
        } else {
            descriptor_backward<A><<<rows, T, bwd_bytes, st>>>(dp->d_model, ncount, dp->io.x,
                                                               dp->io.type, idx, dp->slots, dp->T,
                                                               X, dp->facc, dp->vacc);
            HMD_CUDA_LAUNCHED("descriptor_backward");
        }
    }
    return HMD_OK;
}

/* Embedding net k over the n inputs s in double, layer by layer (DGEMMs through the layer
 * buffers): values into out[0, n M) and tangents into out[n M, 2 n M). */
int slots_embed_layers(hmd_cuda_dp *dp, int k, size_t n, const double *s, double *out)
{
    const hmd_cuda_net &net = dp->model.emb[k];
    const int T = 256;
    double *in = NULL, *next = dp->emb_a;
    for (int l = 0; l < net.nlayers; l++) {
        const hmd_cuda_layer &L = net.L[l];
        const bool last = l == net.nlayers - 1;
        const unsigned blocks = blocks_for(n * L.n_out, T);
        if (l == 0) {
            slots_first_layer<<<blocks, T, 0, dp->stream>>>(n, L, s, last ? out : next);
            HMD_CUDA_LAUNCHED("slots_first_layer");
        } else {
            /* the last product goes to the output itself */
            double *z = last ? out : next;
            if (hmd_blas_gemm(dp->blas, CUBLAS_OP_N, CUBLAS_OP_N, L.n_out, (int)(2 * n), L.n_in,
                              1.0, L.w, L.n_out, 0, in, L.n_in, 0, 0.0, z, L.n_out, 0,
                              1) != CUBLAS_STATUS_SUCCESS) {
                return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: embedding layer %d failed", l);
            }
            slots_layer<<<blocks, T, 0, dp->stream>>>(n, L, in, z);
            HMD_CUDA_LAUNCHED("slots_layer");
        }
        in = next;
        next = next == dp->emb_a ? dp->emb_b : dp->emb_a;
    }
    return HMD_OK;
}

/* Embedding net k over the n inputs s with the embedding in scalar A: values into
 * out[0, n M) and tangents into out[n M, 2 n M) (double); fp32 in one fused kernel, double in
 * one kernel on the FP64 tensor cores (dp->dmma) or layer by layer; zeros for an empty net (an
 * excluded pair, whose slots have R = 0), so that no stale NaN reaches T or px, py. */
template <typename A>
int slots_embed(hmd_cuda_dp *dp, int k, size_t n, const double *s, double *out)
{
    if (n == 0) { /* no slot (sel 0) */
        return HMD_OK;
    }
    if (dp->model.emb[k].nlayers == 0) { /* an excluded pair: G = 0, as their R is */
        HMD_CUDA_CHECK(cudaMemsetAsync(out, 0, 2 * n * dp->model.M * sizeof(double), dp->stream));
        return HMD_OK;
    }
    if (sizeof(A) == sizeof(double)) {
        if (dp->dmma.empty()) {
            return slots_embed_layers(dp, k, n, s, out);
        }
        const dmma_plan *p = &dp->dmma[k]; /* every net with layers has one (plan_dmma) */
        const size_t blocks = std::min((size_t)dp->sms, ((n + 7) / 8 + p->warps - 1) / p->warps);
        auto kernel = p->tanh ? slots_embed_dmma<true> : slots_embed_dmma<false>;
        kernel<<<(unsigned)blocks, 32 * p->warps, p->smem, dp->stream>>>(dp->d_model, k, *p, n, s,
                                                                         out);
        HMD_CUDA_LAUNCHED("slots_embed_dmma");
        return HMD_OK;
    }
    const int tile = dp->fused_tile, w = dp->model.max_width;
    slots_embed_fused<<<blocks_for(n, tile), fused_threads(w, tile), fused_smem_bytes(tile, w),
                        dp->stream>>>(dp->d_model, k, n, tile, s, out);
    HMD_CUDA_LAUNCHED("slots_embed_fused");
    return HMD_OK;
}

/* se_e2_a as evaluate_se, the embedding (in scalar A) and the contractions (in double) as
 * products over all slots of each chunk (the layout above slot_index). */
template <typename A> int evaluate_se_slots(hmd_cuda_dp *dp, int ncount)
{
    const hmd_dp_model *m = dp->host;
    const hmd_cuda_model &g = dp->model;
    const int T = HMD_CUDA_THREADS, M = g.M;
    cudaStream_t st = dp->stream;
    const size_t fmt_bytes = (size_t)dp->nl.cap * (sizeof(double) + sizeof(int)) + sizeof(int);
    const size_t gamma_bytes = gamma_smem_bytes(g), T_bytes = slots_T_smem(g);
    int rc = HMD_OK;
    for (int k = 0; k < m->nfit && !rc; k++) {
        for (int c0 = dp->fit_start[k]; c0 < dp->fit_start[k + 1] && !rc; c0 += dp->cap_rows) {
            const int rows = std::min(dp->cap_rows, dp->fit_start[k + 1] - c0);
            const int *idx = dp->order + c0;
            const size_t nslots = (size_t)rows * g.nnei;
            double *X = dp->fit_buf, *Y = X + (size_t)rows * dp->dim, *work = Y + rows;
            double *px = dp->slot_pxy, *py = px + 4 * nslots;
            format_neighbors<<<rows, T, fmt_bytes, st>>>(
                dp->d_model, dp->io.x, dp->io.type, dp->nl.index, dp->nl.count, dp->nl.cap, idx,
                dp->slots, dp->io.ev + HMD_FORCE_EV_DROPPED);
            HMD_CUDA_LAUNCHED("format_neighbors");
            slots_env<<<blocks_for(nslots, 256), 256, 0, st>>>(
                dp->d_model, rows, dp->io.x, dp->io.type, idx, dp->slots, dp->slot_s, dp->slot_R,
                dp->slot_jac);
            HMD_CUDA_LAUNCHED("slots_env");
            for (int tau = 0; tau < g.ntypes && !rc; tau++) {
                const int off = g.sel_offset[tau];
                rc = slots_embed<A>(dp, g.type_one_side ? tau : k + tau * g.ntypes,
                                    (size_t)rows * g.sel[tau], dp->slot_s + (size_t)rows * off,
                                    dp->slot_G + 2 * (size_t)rows * off * M);
            }
            if (rc) {
                break;
            }
            slots_T<<<rows, slots_T_threads(g), T_bytes, st>>>(dp->d_model, rows, dp->slot_R,
                                                               dp->slot_G, dp->T, T_bytes > 0);
            HMD_CUDA_LAUNCHED("slots_T");
            pad_and_D<<<rows, T, 0, st>>>(dp->d_model, dp->io.type, idx, dp->slots, dp->T, X);
            HMD_CUDA_LAUNCHED("pad_and_D");
            rc = fitting(dp, k, rows, X, Y, work);
            if (rc) {
                break;
            }
            gather_rows<<<blocks_for((size_t)rows, 256), 256, 0, st>>>(rows, 1, idx, Y, dp->atom_y,
                                                                       true);
            HMD_CUDA_LAUNCHED("gather_rows");
            gamma_from_dD<<<rows, T, gamma_bytes, st>>>(dp->d_model, dp->T, X, dp->gamma,
                                                        gamma_bytes > 0);
            HMD_CUDA_LAUNCHED("gamma_from_dD");
            slots_pxy<<<dim3(rows, g.ntypes), CONTRACT_THREADS, slots_pxy_smem(g), st>>>(
                dp->d_model, rows, dp->gamma, dp->slot_G, px, py);
            HMD_CUDA_LAUNCHED("slots_pxy");
            slots_forces<<<blocks_for(nslots, 256), 256, 0, st>>>(
                dp->d_model, rows, ncount, dp->io.x, dp->io.type, idx, dp->slots, dp->slot_R,
                dp->slot_jac, px, py, dp->facc, dp->vacc);
            HMD_CUDA_LAUNCHED("slots_forces");
        }
    }
    return rc;
}

/* DPA-1: descriptors of all home atoms (dpa1_eval.cu), fitting over the rows of each net,
 * then the reverse pass from dE/dD. */
int evaluate_dpa1(hmd_cuda_dp *dp, int nlocal, int ncount)
{
    const hmd_dp_model *m = dp->host;
    cudaStream_t st = dp->stream;
    int rc = hmd_cuda_dpa1_forward(dp->dpa1, st, dp->blas, nlocal, dp->nall, dp->io.x, dp->io.type,
                                   dp->type0, &dp->nl, dp->D, dp->io.ev + HMD_FORCE_EV_DROPPED);
    if (rc) {
        return rc;
    }
    const int nfit_rows = dp->fit_start[m->nfit];
    const size_t dim = (size_t)dp->dim;
    HMD_CUDA_CHECK(cudaMemsetAsync(dp->dD, 0, sizeof(double) * nlocal * dim, st));
    if (nfit_rows > 0) {
        double *X = dp->fit_buf, *Y = X + (size_t)nfit_rows * dim, *work = Y + nfit_rows;
        gather_rows<<<blocks_for((size_t)nfit_rows * dim, 256), 256, 0, st>>>(
            nfit_rows, (int)dim, dp->order, dp->D, X, false);
        HMD_CUDA_LAUNCHED("gather_rows");
        for (int k = 0; k < m->nfit && !rc; k++) {
            const int first = dp->fit_start[k], rows = dp->fit_start[k + 1] - first;
            rc = rows > 0 ? fitting(dp, k, rows, X + first * dim, Y + first, work) : HMD_OK;
        }
        if (rc) {
            return rc;
        }
        gather_rows<<<blocks_for((size_t)nfit_rows * dim, 256), 256, 0, st>>>(
            nfit_rows, (int)dim, dp->order, X, dp->dD, true);
        HMD_CUDA_LAUNCHED("gather_rows");
        gather_rows<<<blocks_for((size_t)nfit_rows, 256), 256, 0, st>>>(nfit_rows, 1, dp->order, Y,
                                                                        dp->atom_y, true);
        HMD_CUDA_LAUNCHED("gather_rows");
    }
    return hmd_cuda_dpa1_backward(dp->dpa1, st, dp->blas, nlocal, dp->nall, ncount, dp->io.x,
                                  dp->io.type, dp->dD, dp->facc, dp->vacc);
}

} // namespace

int hmd_cuda_dp_evaluate(struct hmd_cuda_dp *dp, const hmd_cuda_dp_io *io, int nlocal, int nall,
                         int ncount)
{
    cudaStream_t st = dp->stream;
    dp->io = *io;
    dp->nall = nall;
    HMD_CUDA_CHECK(cudaMemsetAsync(dp->atom_y, 0, sizeof(double) * nlocal, st));
    int rc = HMD_OK;
    if (nlocal > 0) {
        rc = dp->dpa1         ? evaluate_dpa1(dp, nlocal, ncount)
             : dp->slots_path ? (dp->mixed ? evaluate_se_slots<float>(dp, ncount)
                                           : evaluate_se_slots<double>(dp, ncount))
             : dp->mixed      ? evaluate_se<float>(dp, ncount)
                              : evaluate_se<double>(dp, ncount);
    }
    if (!rc) {
        atomic_energies<<<1, 256, 0, st>>>(dp->d_model, nlocal, ncount, io->type, dp->atom_y,
                                           io->ev + HMD_FORCE_EV_ENERGY, io->terms,
                                           io->atom_energy);
        HMD_CUDA_LAUNCHED("atomic_energies");
        /* over the capacity, the count read on the device: the recorded launch stays right */
        drain_exact<<<blocks_for(3 * (size_t)dp->cap_facc, 256), 256, 0, st>>>(
            dp->d_nall, dp->facc, io->f, dp->vacc, io->ev + HMD_FORCE_EV_VIRIAL);
        HMD_CUDA_LAUNCHED("drain_exact");
    }
    dp->io = hmd_cuda_dp_io{};
    return rc;
}

size_t hmd_cuda_dp_device_bytes(const struct hmd_cuda_dp *dp)
{
    return dp ? dp->bytes + dp->weights.bytes + hmd_cuda_dpa1_device_bytes(dp->dpa1) : 0;
}

void hmd_cuda_dp_destroy(struct hmd_cuda_dp *dp)
{
    if (!dp) {
        return;
    }
    hmd_nbr_list_free_cuda(&dp->nl);
    hmd_cuda_dpa1_destroy(dp->dpa1);
    hmd_cuda_weights_free(&dp->weights);
    void *arrays[] = {dp->T,        dp->D,      dp->dD,       dp->atom_y,
                      dp->fit_buf,  dp->slots,  dp->order,    dp->blas_workspace,
                      dp->slot_s,   dp->slot_R, dp->slot_jac, dp->slot_G,
                      dp->slot_pxy, dp->emb_a,  dp->emb_b,    dp->gamma};
    for (void *p : arrays) {
        cudaFree(p);
    }
    if (dp->blas) {
        cublasDestroy(dp->blas);
    }
    delete dp;
}
