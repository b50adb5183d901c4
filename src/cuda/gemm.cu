/* Matrix products of the networks (fitting nets, DPA-1 embedding and attention) through cuBLAS,
 * in the precision of the run: fp64 (precision = double), or, for precision = mixed, operands
 * rounded to fp32 and multiplied on the TF32 tensor cores with fp32 accumulation, the result
 * widened back to double. On the H200 an fp32 SGEMM (51 TFLOP/s measured, docs/GPU_NODES.md)
 * is no faster than the fp64 tensor-core DGEMM (56), so the fp32 products pay only on the TF32
 * tensor cores (397). */
#include "cuda/cuda_internal.cuh"

namespace
{

constexpr int THREADS = 256;

unsigned blocks_for(size_t n)
{
    return (unsigned)((n + THREADS - 1) / THREADS);
}

/* dst [batch][rows][cols] (packed fp32) = src (row-major, leading dimension ld, `stride`
 * elements between matrices). */
__global__ void pack_f32(size_t batch, int rows, int cols, const double *src, int ld,
                         long long stride, float *dst)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t per = (size_t)rows * cols;
    if (e < batch * per) {
        const size_t b = e / per, rc = e % per, r = rc / cols, c = rc % cols;
        dst[e] = (float)src[b * stride + r * ld + c];
    }
}

/* dst (row-major, ldc, stride_c) = src [batch][rows][cols] (packed fp32) + beta dst. */
__global__ void unpack_f32(size_t batch, int rows, int cols, const float *src, double beta,
                           double *dst, int ld, long long stride)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t per = (size_t)rows * cols;
    if (e < batch * per) {
        const size_t b = e / per, rc = e % per, r = rc / cols, c = rc % cols;
        double *d = dst + b * stride + r * ld + c;
        *d = beta == 0.0 ? (double)src[e] : (double)src[e] + beta * *d;
    }
}

/* Elements of one operand's fp32 copy: `rows` x `cols` per matrix, one matrix when it is
 * shared by the batch (stride 0). */
size_t packed_size(int batch, int rows, int cols, long long stride)
{
    return (size_t)(stride ? batch : 1) * rows * cols;
}

/* n rounded up to 32 floats, so that each staged operand starts on 128 bytes */
size_t aligned(size_t n)
{
    return (n + 31) / 32 * 32;
}

int blas_error(const char *what, cublasStatus_t st)
{
    return hmd_error_set(HMD_ESOFTWARE, "cuBLAS: %s failed (status %d)", what, (int)st);
}

int gemm_f64(const hmd_cuda_gemm *g, const char *what, int batch, int m, int n, int k, bool ta,
             hmd_cuda_operand A, bool tb, hmd_cuda_operand B, double beta, double *C, int ldc,
             long long stride_c)
{
    const double one = 1.0;
    const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                            opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasStatus_t st =
        batch == 1
            ? cublasDgemm(g->blas, opb, opa, n, m, k, &one, B.p, B.ld, A.p, A.ld, &beta, C, ldc)
            : cublasDgemmStridedBatched(g->blas, opb, opa, n, m, k, &one, B.p, B.ld, B.stride, A.p,
                                        A.ld, A.stride, &beta, C, ldc, stride_c, batch);
    return st == CUBLAS_STATUS_SUCCESS ? HMD_OK : blas_error(what, st);
}

int gemm_tf32(const hmd_cuda_gemm *g, const char *what, int batch, int m, int n, int k, bool ta,
              hmd_cuda_operand A, bool tb, hmd_cuda_operand B, double beta, double *C, int ldc,
              long long stride_c)
{
    /* stored shapes: A is k x m when ta (else m x k), B is n x k when tb (else k x n) */
    const int a_rows = ta ? k : m, a_cols = ta ? m : k;
    const int b_rows = tb ? n : k, b_cols = tb ? k : n;
    const size_t na = packed_size(batch, a_rows, a_cols, A.stride),
                 nb = packed_size(batch, b_rows, b_cols, B.stride), nc = (size_t)batch * m * n;
    if (aligned(na) + aligned(nb) + nc > g->stage_cap) {
        return hmd_error_set(HMD_ESOFTWARE,
                             "GPU: %s needs %zu floats of fp32 staging, %zu were reserved", what,
                             aligned(na) + aligned(nb) + nc, g->stage_cap);
    }
    cudaStream_t st = NULL;
    cublasGetStream(g->blas, &st);
    float *a32 = g->stage, *b32 = a32 + aligned(na), *c32 = b32 + aligned(nb);
    pack_f32<<<blocks_for(na), THREADS, 0, st>>>(na / ((size_t)a_rows * a_cols), a_rows, a_cols,
                                                 A.p, A.ld, A.stride, a32);
    HMD_CUDA_LAUNCHED("pack_f32");
    pack_f32<<<blocks_for(nb), THREADS, 0, st>>>(nb / ((size_t)b_rows * b_cols), b_rows, b_cols,
                                                 B.p, B.ld, B.stride, b32);
    HMD_CUDA_LAUNCHED("pack_f32");
    const float one = 1.0f, zero = 0.0f;
    const cublasOperation_t opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                            opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    const long long sa = A.stride ? (long long)a_rows * a_cols : 0,
                    sb = B.stride ? (long long)b_rows * b_cols : 0, sc = (long long)m * n;
    const cublasStatus_t s = cublasGemmStridedBatchedEx(
        g->blas, opb, opa, n, m, k, &one, b32, CUDA_R_32F, b_cols, sb, a32, CUDA_R_32F, a_cols, sa,
        &zero, c32, CUDA_R_32F, n, sc, batch, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) {
        return blas_error(what, s);
    }
    unpack_f32<<<blocks_for(nc), THREADS, 0, st>>>((size_t)batch, m, n, c32, beta, C, ldc,
                                                   batch == 1 ? 0 : stride_c);
    HMD_CUDA_LAUNCHED("unpack_f32");
    return HMD_OK;
}

} // namespace

int hmd_cuda_gemm_run(const hmd_cuda_gemm *g, bool network, const char *what, int batch, int m,
                      int n, int k, bool ta, hmd_cuda_operand A, bool tb, hmd_cuda_operand B,
                      double beta, double *C, int ldc, long long stride_c)
{
    if (network && g->tf32 && batch > 0 && m > 0 && n > 0 && k > 0) {
        return gemm_tf32(g, what, batch, m, n, k, ta, A, tb, B, beta, C, ldc, stride_c);
    }
    return gemm_f64(g, what, batch, m, n, k, ta, A, tb, B, beta, C, ldc, stride_c);
}

size_t hmd_cuda_gemm_stage_floats(int batch, int m, int n, int k, bool shared_b)
{
    return (size_t)batch * ((size_t)m * k + (size_t)m * n) +
           (size_t)(shared_b ? 1 : batch) * k * n + 64; /* the alignment of the operands */
}
