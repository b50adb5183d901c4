/* Dense layers on the GPU, shared by the fitting nets (dp_eval.cu) and DPA-1 (dpa1_eval.cu): their
 * weights uploaded into a context's hmd_cuda_weights, and the elementwise parts of a layer
 * (mlp.c dense_forward and hmd_mlp_backward) around the cuBLAS products the callers make, one
 * thread per element. The kernels take `rows` from the host, or from the device through `nrows`
 * when it is not NULL (then `rows` only bounds the launch). */
#include "cuda/cuda_internal.cuh"

namespace
{

template <typename V>
__device__ void dense_forward(size_t rows, const hmd_cuda_layer &L, const V *x, V *y, V *kept)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * L.n_out) {
        return;
    }
    const int o = (int)(e % L.n_out);
    const size_t r = e / L.n_out;
    const double z = (double)y[e] + (L.b ? L.b[o] : 0.0);
    double a = hmd_act(L.act, &L.silut, z);
    kept[e] = hmd_act_keeps_output(L.act) ? a : z;
    if (L.idt) {
        a *= L.idt[o];
    }
    if (L.resnet != HMD_RESNET_NONE) {
        a += (double)x[r * L.n_in + (L.resnet == HMD_RESNET_SAME ? o : o % L.n_in)];
    }
    y[e] = a;
}

template <typename V>
__device__ void dense_backward_dz(size_t rows, const hmd_cuda_layer &L, const V *kept, const V *g,
                                  V *dz)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < rows * L.n_out) {
        const int o = (int)(e % L.n_out);
        const double ge = g[e];
        dz[e] = hmd_act_grad(L.act, &L.silut, kept[e]) * (L.idt ? ge * L.idt[o] : ge);
    }
}

template <typename V>
__device__ void dense_backward_skip(size_t rows, const hmd_cuda_layer &L, const V *g, V *dx)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < rows * L.n_in) {
        const size_t r = e / L.n_in;
        const int q = (int)(e % L.n_in);
        const V *gr = g + r * L.n_out;
        dx[e] =
            (double)dx[e] + (L.resnet == HMD_RESNET_DOUBLE ? (double)gr[q] + (double)gr[q + L.n_in]
                                                           : (double)gr[q]);
    }
}

/* The rows a kernel covers: *nrows from the device when given, else `rows`. */
__device__ size_t rows_of(size_t rows, const int *nrows)
{
    return nrows ? (size_t)*nrows : rows;
}

} // namespace

/* One kernel per scalar (nvcc's whole-program mode does not let another translation unit
 * launch a __global__ template). */
__global__ void hmd_cuda_dense_forward(size_t rows, const int *nrows, hmd_cuda_layer L,
                                       const double *x, double *y, double *kept)
{
    dense_forward(rows_of(rows, nrows), L, x, y, kept);
}
__global__ void hmd_cuda_dense_forward(size_t rows, const int *nrows, hmd_cuda_layer L,
                                       const float *x, float *y, float *kept)
{
    dense_forward(rows_of(rows, nrows), L, x, y, kept);
}
__global__ void hmd_cuda_dense_backward_dz(size_t rows, const int *nrows, hmd_cuda_layer L,
                                           const double *kept, const double *g, double *dz)
{
    dense_backward_dz(rows_of(rows, nrows), L, kept, g, dz);
}
__global__ void hmd_cuda_dense_backward_dz(size_t rows, const int *nrows, hmd_cuda_layer L,
                                           const float *kept, const float *g, float *dz)
{
    dense_backward_dz(rows_of(rows, nrows), L, kept, g, dz);
}
__global__ void hmd_cuda_dense_backward_skip(size_t rows, const int *nrows, hmd_cuda_layer L,
                                             const double *g, double *dx)
{
    dense_backward_skip(rows_of(rows, nrows), L, g, dx);
}
__global__ void hmd_cuda_dense_backward_skip(size_t rows, const int *nrows, hmd_cuda_layer L,
                                             const float *g, float *dx)
{
    dense_backward_skip(rows_of(rows, nrows), L, g, dx);
}

int hmd_cuda_upload(hmd_cuda_weights *w, const void *src, size_t bytes, const void **dst)
{
    void *p = NULL;
    HMD_CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 1));
    w->arrays.push_back(p);
    w->bytes += bytes;
    if (bytes) {
        HMD_CUDA_CHECK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice));
    }
    *dst = p;
    return HMD_OK;
}

int hmd_cuda_upload_dense(hmd_cuda_weights *w, const hmd_dense *L, const double **wd,
                          const double **b, const double **idt)
{
    *b = NULL;
    if (idt) {
        *idt = NULL;
    }
    const size_t row = sizeof(double) * L->n_out;
    int rc = hmd_cuda_upload(w, L->w, row * L->n_in, (const void **)wd);
    if (!rc && L->b) {
        rc = hmd_cuda_upload(w, L->b, row, (const void **)b);
    }
    if (!rc && L->idt && idt) {
        rc = hmd_cuda_upload(w, L->idt, row, (const void **)idt);
    }
    return rc;
}

int hmd_cuda_upload_net(hmd_cuda_weights *w, const hmd_mlp *net, hmd_cuda_net *out)
{
    if (net->nlayers > HMD_CUDA_MAX_LAYERS) {
        return hmd_error_set(HMD_ENOTSUP, "GPU: networks of more than %d layers",
                             HMD_CUDA_MAX_LAYERS);
    }
    out->nlayers = net->nlayers;
    for (int l = 0; l < net->nlayers; l++) {
        const hmd_dense *L = &net->layers[l];
        hmd_cuda_layer *D = &out->L[l];
        D->n_in = L->n_in;
        D->n_out = L->n_out;
        D->act = L->act;
        D->silut = L->silut;
        D->resnet = L->resnet;
        D->wf = D->bf = D->idtf = NULL;
        int rc = hmd_cuda_upload_dense(w, L, &D->w, &D->b, &D->idt);
        if (rc) {
            return rc;
        }
    }
    return HMD_OK;
}

int hmd_cuda_upload_f32(hmd_cuda_weights *w, const double *src, size_t n, const float **dst)
{
    std::vector<float> f(src, src + n);
    return hmd_cuda_upload(w, f.data(), n * sizeof(float), (const void **)dst);
}

int hmd_cuda_upload_net_f32(hmd_cuda_weights *w, const hmd_mlp *net, hmd_cuda_net *out)
{
    int rc = HMD_OK;
    for (int l = 0; l < net->nlayers && !rc; l++) {
        const hmd_dense *L = &net->layers[l];
        hmd_cuda_layer *D = &out->L[l]; /* bf, idtf NULL from hmd_cuda_upload_net */
        rc = hmd_cuda_upload_f32(w, L->w, (size_t)L->n_in * L->n_out, &D->wf);
        if (!rc && L->b) {
            rc = hmd_cuda_upload_f32(w, L->b, L->n_out, &D->bf);
        }
        if (!rc && L->idt) {
            rc = hmd_cuda_upload_f32(w, L->idt, L->n_out, &D->idtf);
        }
    }
    return rc;
}

void hmd_cuda_weights_free(hmd_cuda_weights *w)
{
    for (void *p : w->arrays) {
        cudaFree(p);
    }
    w->arrays.clear();
    w->bytes = 0;
}
