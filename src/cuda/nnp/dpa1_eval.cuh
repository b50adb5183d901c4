/* DPA-1 (se_atten, se_atten_v2) descriptor on the GPU (src/cuda/dpa1_eval.cu), in double or
 * with the network in fp32 (precision = mixed), the twin of the CPU reference nnp/dpa1.c: neighbour
 * selection, descriptor forward, and the reverse pass from dE/dD to forces and virial. Internal to
 * src/cuda; the evaluation context (dp_eval.cu) owns the stream, the cuBLAS handle, the neighbour
 * list and the fitting nets.
 *
 * Stream-ordered: forward and backward enqueue kernels and cuBLAS calls on the given stream (no
 * allocation unless nlocal exceeds every earlier call), so the caller may capture them in a CUDA
 * graph once the scratch is large enough. Their matrix products cover only the live neighbour
 * rows, whose number the device counts: called eagerly, forward waits once for that count (4
 * bytes), which its backward reuses; under capture, the products become switch nodes over size
 * buckets (live_rows.cuh).
 * The cuBLAS handle keeps the workspace given at create time (cuBLAS may not allocate inside a
 * switch node).
 */
#ifndef HMD_CUDA_DPA1_EVAL_CUH
#define HMD_CUDA_DPA1_EVAL_CUH

#include <cublas_v2.h>

#include "cuda/cuda_internal.cuh"
#include "cuda/exact_sum.cuh"

struct hmd_cuda_dpa1;

/* Uploads the DPA-1 part of `m` (borrowed during the call): weights, statistics, type
 * embedding, strip table, compression table, and the padding tables of nnp/dpa1.h for every
 * possible type of atom 0. With `mixed` the network's activations are stored in fp32 and its
 * products are fp32 SGEMMs on fp32 copies of the weights (geometry, descriptor sums, forces and
 * virial in double). blas_ws (blas_ws_bytes, device memory outliving the context) is the
 * workspace the cuBLAS handle passed to forward and backward keeps, set again after each change
 * of its stream. Returns HMD_OK, HMD_ENOTSUP (not DPA-1; more than HMD_CUDA_MAX_TYPES types or
 * HMD_CUDA_MAX_LAYERS embedding layers), HMD_ENOMEM or HMD_ESOFTWARE (CUDA). *out is NULL on
 * failure. */
int hmd_cuda_dpa1_create(hmd_cuda_dpa1 **out, const hmd_dp_model *m, bool mixed, void *blas_ws,
                         size_t blas_ws_bytes);

/* Makes room for nlocal home atoms and a neighbour list of nbr_cap entries per atom (the
 * `cap` of struct hmd_cuda_nbr); keeps the scratch when it is large enough, else replaces it
 * (its old contents are lost) and bumps the generation. Call at neighbour-list steps so that
 * forward and backward never allocate; forward calls it too. Returns HMD_OK, HMD_ENOMEM (the
 * message gives the size per atom) or HMD_ESOFTWARE. */
int hmd_cuda_dpa1_reserve(hmd_cuda_dpa1 *a, int nlocal, int nbr_cap);

/* Bumped by every allocation of the scratch, so a CUDA graph holding its pointers knows when
 * they went stale. */
unsigned long hmd_cuda_dpa1_generation(const hmd_cuda_dpa1 *a);

/* Descriptor of the nlocal home atoms (hmd_dpa1_forward for each): picks the nnei nearest
 * neighbours of any type within rcut from `nl` (built by the caller over the device positions
 * d_x [nall][3] (Å), types d_type [nall]; unsorted, every atom within rlist >= rcut), empty
 * slots taking the type `type0` of the system's atom 0 as DeePMD-kit does, and writes
 * d_D [nlocal][dim_descrpt] (M x M2 row-major, then TE[t_i] when concat_output_tebd), and adds
 * to *d_dropped (device) the neighbours within rcut beyond the nnei nearest (left out). Keeps
 * what the backward needs in the context's scratch, through hmd_cuda_dpa1_reserve (so it
 * allocates only when nlocal or nl->cap exceed every earlier call).
 * Returns HMD_OK, HMD_EDATA (type0 out of range), HMD_ENOMEM (device memory) or HMD_ESOFTWARE
 * (CUDA or cuBLAS; the message names the call). */
int hmd_cuda_dpa1_forward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal,
                          int nall, const double *d_x, const int *d_type, int type0,
                          const hmd_cuda_nbr *nl, double *d_D, double *d_dropped);

/* Reverse pass of the latest forward (same nlocal, d_x, d_type): given d_dD [nlocal][dim_descrpt]
 * = dE/dD (eV; rows of atoms without a gradient must be zero, the type-embedding columns are
 * ignored), adds F = -dE/dx into the exact accumulators d_f [nall][3] (eV/Å,
 * cuda/exact_sum.cuh) and the virial W_ab = -sum_pairs dE/dd_ij,a d_ij,b (eV) of the centres
 * i < ncount into d_virial [9] (ncount <= 0 means nlocal, as out->ncount in dp_eval.c).
 * Returns HMD_OK or HMD_ESOFTWARE. */
int hmd_cuda_dpa1_backward(hmd_cuda_dpa1 *a, cudaStream_t st, cublasHandle_t blas, int nlocal,
                           int nall, int ncount, const double *d_x, const int *d_type,
                           const double *d_dD, hmd_exact *d_f, hmd_exact *d_virial);

/* Device memory the context holds: model data and scratch (bytes). */
size_t hmd_cuda_dpa1_device_bytes(const hmd_cuda_dpa1 *a);

/* Frees the context (NULL is fine). */
void hmd_cuda_dpa1_destroy(hmd_cuda_dpa1 *a);

#endif /* HMD_CUDA_DPA1_EVAL_CUH */
