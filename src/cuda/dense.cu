/* The elementwise parts of a dense layer on the GPU (mlp.c dense_forward and hmd_mlp_backward),
 * around the cuBLAS products the callers make: used by the fitting nets (dp_eval.cu) and by
 * DPA-1's embedding (dpa1_eval.cu). One thread per element. */
#include "cuda/cuda_internal.cuh"

__global__ void hmd_cuda_dense_forward(size_t rows, hmd_cuda_layer L, const double *x, double *y,
                                       double *kept)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * L.n_out) {
        return;
    }
    const int o = (int)(e % L.n_out);
    const size_t r = e / L.n_out;
    const double z = y[e] + (L.b ? L.b[o] : 0.0);
    double a = hmd_act(L.act, &L.silut, z);
    kept[e] = hmd_act_keeps_output(L.act) ? a : z;
    if (L.idt) {
        a *= L.idt[o];
    }
    if (L.resnet != HMD_RESNET_NONE) {
        a += x[r * L.n_in + (L.resnet == HMD_RESNET_SAME ? o : o % L.n_in)];
    }
    y[e] = a;
}

__global__ void hmd_cuda_dense_backward_dz(size_t rows, hmd_cuda_layer L, const double *kept,
                                           const double *g, double *dz)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < rows * L.n_out) {
        const int o = (int)(e % L.n_out);
        dz[e] = hmd_act_grad(L.act, &L.silut, kept[e]) * (L.idt ? g[e] * L.idt[o] : g[e]);
    }
}

__global__ void hmd_cuda_dense_backward_skip(size_t rows, hmd_cuda_layer L, const double *g,
                                             double *dx)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < rows * L.n_in) {
        const size_t r = e / L.n_in;
        const int q = (int)(e % L.n_in);
        const double *gr = g + r * L.n_out;
        dx[e] += L.resnet == HMD_RESNET_DOUBLE ? gr[q] + gr[q + L.n_in] : gr[q];
    }
}
