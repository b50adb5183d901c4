/* Matrix products through cuBLAS for the hosts of the CUDA kernels (dp_eval.cu, dpa1_eval.cu):
 * one call for single and strided-batched products, in double and in fp32. */
#ifndef HMD_CUDA_BLAS_CUH
#define HMD_CUDA_BLAS_CUH

#include <cublas_v2.h>

/* Points handle h at stream st, keeping the workspace ws of `bytes` (NULL: none): cublasSetStream
 * resets a handle's workspace to cuBLAS's default pool, which allocates under graph capture (a
 * memory node, which the body of a conditional node cannot hold). Returns cuBLAS's status. */
inline cublasStatus_t hmd_blas_set_stream(cublasHandle_t h, cudaStream_t st, void *ws, size_t bytes)
{
    const cublasStatus_t s = cublasSetStream(h, st);
    return s == CUBLAS_STATUS_SUCCESS && ws ? cublasSetWorkspace(h, ws, bytes) : s;
}

/* C = alpha op(A) op(B) + beta C for `batch` column-major matrices whose strides sa, sb, sc
 * (elements) are ignored when batch is 1, in cuBLAS's argument order, in double (DGEMM, on the
 * FP64 tensor cores). Returns cuBLAS's status. */
inline cublasStatus_t hmd_blas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                    int m, int n, int k, double alpha, const double *A, int lda,
                                    long long sa, const double *B, int ldb, long long sb,
                                    double beta, double *C, int ldc, long long sc, int batch)
{
    return batch == 1 ? cublasDgemm(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc)
                      : cublasDgemmStridedBatched(h, ta, tb, m, n, k, &alpha, A, lda, sa, B, ldb,
                                                  sb, &beta, C, ldc, sc, batch);
}

/* The same in fp32 (SGEMM: cuBLAS's default math mode leaves TF32 off). */
inline cublasStatus_t hmd_blas_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                    int m, int n, int k, float alpha, const float *A, int lda,
                                    long long sa, const float *B, int ldb, long long sb, float beta,
                                    float *C, int ldc, long long sc, int batch)
{
    return batch == 1 ? cublasSgemm(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc)
                      : cublasSgemmStridedBatched(h, ta, tb, m, n, k, &alpha, A, lda, sa, B, ldb,
                                                  sb, &beta, C, ldc, sc, batch);
}

#endif /* HMD_CUDA_BLAS_CUH */
