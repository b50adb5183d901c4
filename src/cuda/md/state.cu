/* The one owner of the atoms on the device (cuda_api.h hmd_cuda_state): arrays sized by
 * capacity and grown only at neighbour-list steps, positions and forces from a heap of the
 * caller's when given (NVSHMEM's symmetric heap), and the stream the whole step runs on. */
#include "cuda/cuda_internal.cuh"

#include "cuda/cuda_api.h"

extern "C" {
#include "comm/comm.h"
}

#include <algorithm>

struct hmd_cuda_state {
    cudaStream_t stream;
    hmd_cuda_heap heap; /* alloc NULL: cudaMalloc */
    int nlocal, nall, cap_local, cap_all;
    double *x, *f, *v, *mass;
    int *type;
    long long *id, *step;
    size_t bytes;
    unsigned long generation;
};

namespace
{

template <typename T> int device_alloc(hmd_cuda_state *s, T **p, size_t n)
{
    HMD_CUDA_CHECK(cudaMalloc((void **)p, std::max<size_t>(n, 1) * sizeof(T)));
    s->bytes += n * sizeof(T);
    return HMD_OK;
}

/* x or f: from the heap when the state has one. */
int heap_alloc(hmd_cuda_state *s, double **p, size_t n)
{
    if (!s->heap.alloc) {
        return device_alloc(s, p, n);
    }
    *p = (double *)s->heap.alloc(std::max<size_t>(n, 1) * sizeof(double), s->heap.ctx);
    if (!*p) {
        return hmd_error_set(HMD_ENOMEM, "GPU: no room on the symmetric heap for %zu atoms", n / 3);
    }
    s->bytes += n * sizeof(double);
    return HMD_OK;
}

void heap_free(hmd_cuda_state *s, double *p)
{
    if (p && s->heap.alloc) {
        s->heap.free(p, s->heap.ctx);
    } else {
        cudaFree(p);
    }
}

} // namespace

extern "C" int hmd_cuda_state_create(struct hmd_cuda_state **out, const struct hmd_cuda_heap *heap)
{
    hmd_cuda_state *s = new hmd_cuda_state();
    *out = s;
    if (heap) {
        s->heap = *heap;
    }
    HMD_CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    int rc = device_alloc(s, &s->step, 1);
    if (!rc) {
        HMD_CUDA_CHECK(cudaMemset(s->step, 0, sizeof(long long)));
    }
    return rc;
}

extern "C" int hmd_cuda_state_reserve(struct hmd_cuda_state *s, int nlocal, int nall)
{
    int rc = HMD_OK;
    /* on a heap the allocations are collective: every rank grows, to the same size */
    int grow[2] = {nall > s->cap_all, nall};
    if (s->heap.alloc) {
        hmd_comm_max_int(grow, 2);
    }
    if (grow[0]) {
        const int cap = grow[1] + grow[1] / 2 + 16;
        HMD_CUDA_CHECK(cudaStreamSynchronize(s->stream));
        heap_free(s, s->x);
        heap_free(s, s->f);
        cudaFree(s->type);
        cudaFree(s->id);
        s->bytes -= (size_t)s->cap_all * (6 * sizeof(double) + sizeof(int) + sizeof(long long));
        s->x = s->f = NULL;
        s->type = NULL;
        s->id = NULL;
        s->cap_all = 0;
        rc = heap_alloc(s, &s->x, 3 * (size_t)cap);
        rc = rc ? rc : heap_alloc(s, &s->f, 3 * (size_t)cap);
        rc = rc ? rc : device_alloc(s, &s->type, cap);
        rc = rc ? rc : device_alloc(s, &s->id, cap);
        s->cap_all = rc ? 0 : cap;
        s->generation++;
    }
    if (!rc && nlocal > s->cap_local) {
        const int cap = nlocal + nlocal / 2 + 16;
        HMD_CUDA_CHECK(cudaStreamSynchronize(s->stream));
        cudaFree(s->v);
        cudaFree(s->mass);
        s->bytes -= (size_t)s->cap_local * 4 * sizeof(double);
        s->v = s->mass = NULL;
        s->cap_local = 0;
        rc = device_alloc(s, &s->v, 3 * (size_t)cap);
        rc = rc ? rc : device_alloc(s, &s->mass, cap);
        s->cap_local = rc ? 0 : cap;
        s->generation++;
    }
    return rc;
}

namespace
{

/* n elements of T from host src to device dst on the stream (nothing for n = 0). */
template <typename T> int upload(hmd_cuda_state *s, T *dst, const T *src, size_t n)
{
    if (n > 0) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, s->stream));
    }
    return HMD_OK;
}

template <typename T> int download(hmd_cuda_state *s, T *dst, const T *src, size_t n)
{
    if (n > 0) {
        HMD_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyDeviceToHost, s->stream));
    }
    return HMD_OK;
}

} // namespace

extern "C" int hmd_cuda_state_upload(struct hmd_cuda_state *s, const struct hmd_atoms *a,
                                     unsigned fields)
{
    const size_t nlocal = (size_t)a->nlocal, nall = (size_t)hmd_atoms_nall(a);
    if ((int)nall > s->cap_all || (int)nlocal > s->cap_local) {
        return hmd_error_set(HMD_ESOFTWARE, "device state: %zu atoms uploaded into room for %d",
                             nall, s->cap_all);
    }
    static_assert(sizeof(long long) == sizeof(int64_t), "ids are 64-bit");
    s->nlocal = (int)nlocal;
    s->nall = (int)nall;
    int rc = HMD_OK;
    if (fields & HMD_FIELD_BIT(HMD_FIELD_X)) {
        rc = upload(s, s->x, a->x, 3 * nall);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_F))) {
        rc = upload(s, s->f, a->f, 3 * nall);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_V))) {
        rc = upload(s, s->v, a->v, 3 * nlocal);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_MASS))) {
        rc = upload(s, s->mass, a->mass, nlocal);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_TYPE))) {
        rc = upload(s, s->type, a->type, nall);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_ID))) {
        rc = upload(s, s->id, (const long long *)a->id, nall);
    }
    /* the host arrays are the caller's again when this returns */
    HMD_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    return rc;
}

namespace
{

/* X and F of the first n atoms, V of the home atoms. */
int download_fields(hmd_cuda_state *s, hmd_atoms *a, unsigned fields, size_t n)
{
    int rc = HMD_OK;
    if (fields & HMD_FIELD_BIT(HMD_FIELD_X)) {
        rc = download(s, a->x, s->x, 3 * n);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_V))) {
        rc = download(s, a->v, s->v, 3 * (size_t)s->nlocal);
    }
    if (!rc && (fields & HMD_FIELD_BIT(HMD_FIELD_F))) {
        rc = download(s, a->f, s->f, 3 * n);
    }
    HMD_CUDA_CHECK(cudaStreamSynchronize(s->stream));
    return rc;
}

} // namespace

extern "C" int hmd_cuda_state_download(struct hmd_cuda_state *s, struct hmd_atoms *a,
                                       unsigned fields)
{
    return download_fields(s, a, fields, (size_t)s->nlocal);
}

extern "C" int hmd_cuda_state_download_all(struct hmd_cuda_state *s, struct hmd_atoms *a,
                                           unsigned fields)
{
    return download_fields(s, a, fields, (size_t)s->nall);
}

extern "C" struct hmd_cuda_atoms hmd_cuda_state_atoms(const struct hmd_cuda_state *s)
{
    return hmd_cuda_atoms{s->nlocal, s->nall, s->cap_local, s->cap_all, s->x,    s->f,
                          s->v,      s->mass, s->type,      s->id,      s->step, s->stream};
}

extern "C" unsigned long hmd_cuda_state_generation(const struct hmd_cuda_state *s)
{
    return s->generation;
}

extern "C" size_t hmd_cuda_state_device_bytes(const struct hmd_cuda_state *s)
{
    return s ? s->bytes : 0;
}

extern "C" void hmd_cuda_state_destroy(struct hmd_cuda_state *s)
{
    if (!s) {
        return;
    }
    if (s->stream) {
        cudaStreamSynchronize(s->stream);
    }
    heap_free(s, s->x);
    heap_free(s, s->f);
    void *arrays[] = {s->v, s->mass, s->type, s->id, s->step};
    for (void *p : arrays) {
        cudaFree(p);
    }
    if (s->stream) {
        cudaStreamDestroy(s->stream);
    }
    delete s;
}
