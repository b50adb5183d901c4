/* Work over a number of rows that only the device knows (the live rows of a DPA-1 evaluation,
 * counted by a kernel), in a stream that runs eagerly or is being captured into a CUDA graph.
 *
 * Eagerly, the host reads the count (one 4-byte copy and a wait) and sizes everything to it.
 * Under capture the count may differ at every replay, so each matrix product becomes a switch
 * node of the graph with one body per bucket (the product over the first ceil(full (b + 1) /
 * HMD_LIVE_BUCKETS) rows), and a kernel just before it picks the smallest bucket that holds the
 * count (one conditional handle per node); the elementwise kernels cover every row and leave
 * those beyond the count at once. Rows between the count and the end of its bucket are computed
 * from whatever the arrays hold there, so they must hold finite values, and their results may
 * only be read where they meet exact zeros. cuBLAS must not allocate under capture: the handle
 * keeps a workspace of the caller's (hmd_blas_set_stream), as a switch body cannot hold memory
 * nodes.
 *
 * Only dpa1_eval.cu includes this file. */
#ifndef HMD_CUDA_LIVE_ROWS_CUH
#define HMD_CUDA_LIVE_ROWS_CUH

#include <cublas_v2.h>

#include "cuda/nnp/blas.cuh"
#include "cuda/cuda_internal.cuh"

namespace
{

constexpr int HMD_LIVE_BUCKETS = 32; /* product sizes per switch node */

/* The row count of one evaluation. */
struct hmd_live_rows {
    const int *count; /* device: rows to cover */
    size_t full;      /* the most there can be */
    size_t grid;      /* rows the elementwise launches cover: the count, or `full` under capture */
    bool captured;    /* under capture */
    bool switches;    /* under capture, products go into switch nodes (else over `full` rows) */
    int host;         /* eagerly: the count */
};

/* Rows of bucket b: the first ceil(full (b + 1) / HMD_LIVE_BUCKETS). */
__host__ __device__ inline size_t hmd_live_bucket_rows(size_t full, int b)
{
    return (full * (size_t)(b + 1) + HMD_LIVE_BUCKETS - 1) / HMD_LIVE_BUCKETS;
}

/* Sets `h` to the smallest bucket holding *count rows, or to HMD_LIVE_BUCKETS (no body runs)
 * when there are none. One thread. */
__global__ void hmd_live_pick_bucket(cudaGraphConditionalHandle h, const int *count, size_t full)
{
    const size_t n = (size_t)*count;
    int b = 0;
    while (b < HMD_LIVE_BUCKETS && hmd_live_bucket_rows(full, b) < n) {
        b++;
    }
    cudaGraphSetConditional(h, n == 0 ? HMD_LIVE_BUCKETS : b);
}

/* Prepares lr for the work that follows on st, once the kernel that writes *count is enqueued:
 * eagerly, reads the count through `pinned` (host memory of one int). Under capture, products
 * become switch nodes when `switches`, else they run over all `full` rows. Returns HMD_OK or
 * HMD_ESOFTWARE. */
inline int hmd_live_rows_begin(hmd_live_rows *lr, cudaStream_t st, const int *count, size_t full,
                               bool switches, int *pinned)
{
    lr->count = count;
    lr->full = full;
    lr->switches = switches;
    cudaStreamCaptureStatus status;
    HMD_CUDA_CHECK(cudaStreamIsCapturing(st, &status));
    lr->captured = status == cudaStreamCaptureStatusActive;
    if (!lr->captured) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(pinned, count, sizeof(int), cudaMemcpyDeviceToHost, st));
        HMD_CUDA_CHECK(cudaStreamSynchronize(st));
        lr->host = *pinned;
        lr->grid = (size_t)lr->host;
        return HMD_OK;
    }
    lr->grid = full;
    lr->host = -1;
    return HMD_OK;
}

/* Points `blas` at stream st keeping the workspace ws of `bytes` (hmd_blas_set_stream). Returns
 * HMD_OK or HMD_ESOFTWARE. */
inline int hmd_live_use_stream(cublasHandle_t blas, cudaStream_t st, void *ws, size_t bytes)
{
    return hmd_blas_set_stream(blas, st, ws, bytes) == CUBLAS_STATUS_SUCCESS
               ? HMD_OK
               : hmd_error_set(HMD_ESOFTWARE, "cuBLAS: cannot set the stream");
}

/* lr again for the backward pass of the evaluation that began it: the count eagerly read then
 * still holds, so it is read again only if the stream's capture state changed since. Returns
 * HMD_OK or HMD_ESOFTWARE. */
inline int hmd_live_rows_resume(hmd_live_rows *lr, cudaStream_t st, int *pinned)
{
    cudaStreamCaptureStatus status;
    HMD_CUDA_CHECK(cudaStreamIsCapturing(st, &status));
    const bool captured = status == cudaStreamCaptureStatusActive;
    return captured == lr->captured
               ? HMD_OK
               : hmd_live_rows_begin(lr, st, lr->count, lr->full, lr->switches, pinned);
}

/* Runs product(m) (cuBLAS calls on `blas`, whose stream is st) over the live rows: once with
 * m = the count when eager, else as a kernel that picks the bucket, then a switch node on st
 * whose bodies, captured through the stream `side`, hold product(bucket rows); the handle keeps
 * the workspace ws of ws_bytes throughout. Returns HMD_OK, product's error, or HMD_ESOFTWARE. */
template <typename F>
int hmd_live_product(const hmd_live_rows *lr, cudaStream_t st, cudaStream_t side,
                     cublasHandle_t blas, void *ws, size_t ws_bytes, F product)
{
    if (!lr->captured) {
        return lr->host > 0 ? product(lr->host) : HMD_OK;
    }
    if (!lr->switches) {
        return product((int)lr->full);
    }
    cudaStreamCaptureStatus status;
    cudaGraph_t graph;
    HMD_CUDA_CHECK(cudaStreamGetCaptureInfo(st, &status, NULL, &graph));
    cudaGraphConditionalHandle handle;
    HMD_CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, 0));
    hmd_live_pick_bucket<<<1, 1, 0, st>>>(handle, lr->count, lr->full);
    HMD_CUDA_LAUNCHED("hmd_live_pick_bucket");
    const cudaGraphNode_t *deps;
    const cudaGraphEdgeData *edges;
    size_t ndeps;
    HMD_CUDA_CHECK(cudaStreamGetCaptureInfo(st, &status, NULL, &graph, &deps, &edges, &ndeps));
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = handle;
    p.conditional.type = cudaGraphCondTypeSwitch;
    p.conditional.size = HMD_LIVE_BUCKETS;
    cudaGraphNode_t node;
    HMD_CUDA_CHECK(cudaGraphAddNode(&node, graph, deps, edges, ndeps, &p));
    HMD_CUDA_CHECK(
        cudaStreamUpdateCaptureDependencies(st, &node, NULL, 1, cudaStreamSetCaptureDependencies));
    int rc = HMD_OK;
    for (int b = 0; b < HMD_LIVE_BUCKETS && !rc; b++) {
        const cudaError_t begin = cudaStreamBeginCaptureToGraph(
            side, p.conditional.phGraph_out[b], NULL, NULL, 0, cudaStreamCaptureModeRelaxed);
        if (begin != cudaSuccess) {
            rc = hmd_error_set(HMD_ESOFTWARE, "CUDA: capturing a switch body: %s",
                               cudaGetErrorString(begin));
            break;
        }
        rc = hmd_live_use_stream(blas, side, ws, ws_bytes);
        rc = rc ? rc : product((int)hmd_live_bucket_rows(lr->full, b));
        cudaGraph_t body;
        const cudaError_t end = cudaStreamEndCapture(side, &body);
        if (!rc && end != cudaSuccess) {
            rc = hmd_error_set(HMD_ESOFTWARE, "CUDA: a switch body: %s", cudaGetErrorString(end));
        }
    }
    const int back = hmd_live_use_stream(blas, st, ws, ws_bytes);
    return rc ? rc : back;
}

} // namespace

#endif /* HMD_CUDA_LIVE_ROWS_CUH */
