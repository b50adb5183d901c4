/* Neighbour list of the home atoms on the GPU, the twin of nbr/nbr_list.c: a Cartesian cell
 * list (cells at least rlist wide) over the home atoms and their ghosts, then every pair within
 * rlist. The ghosts already stand for the periodic images, so the search needs no periodicity.
 * The order of a centre's neighbours depends on the scheduling; the descriptor kernels sort
 * them by distance (and index on ties), so results do not. */
#include "cuda/cuda_internal.cuh"

#include "cuda/nbr/cell_grid.cuh"

#include <cub/device/device_scan.cuh>

namespace
{

using grid = hmd_cell_grid;

__global__ void bin_atoms(int nall, const double *x, grid g, int *bin_of, int *bin_count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nall) {
        int b = hmd_cell_grid_cell(g, x + 3 * i);
        bin_of[i] = b;
        atomicAdd(&bin_count[b], 1);
    }
}

__global__ void fill_bins(int nall, const int *bin_of, const int *bin_start, int *fill, int *sorted)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nall) {
        int b = bin_of[i];
        sorted[bin_start[b] + atomicAdd(&fill[b], 1)] = i;
    }
}

/* The neighbours within rlist of each home atom, one warp per atom: the lanes test 32 atoms of
 * a cell at once and the hits are appended in the order of the lanes. Writes index [i][cap]
 * (the first cap), count [i] (all, even beyond cap) and the largest count beyond cap into
 * *overflow. */
__global__ void find_pairs(int nlocal, const double *x, grid g, double rlist2, const int *bin_of,
                           const int *bin_start, const int *bin_count, const int *sorted, int cap,
                           int *index, int *count, int *overflow)
{
    const int lane = threadIdx.x % 32;
    const int i = (int)(((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32);
    if (i >= nlocal) {
        return; /* a whole warp */
    }
    const double xi = x[3 * i], yi = x[3 * i + 1], zi = x[3 * i + 2];
    const int b = bin_of[i];
    const int c0 = b % g.n[0], c1 = (b / g.n[0]) % g.n[1], c2 = b / (g.n[0] * g.n[1]);
    int n = 0;
    for (int d2 = -1; d2 <= 1; d2++) {
        const int k2 = c2 + d2;
        if (k2 < 0 || k2 >= g.n[2]) {
            continue;
        }
        for (int d1 = -1; d1 <= 1; d1++) {
            const int k1 = c1 + d1;
            if (k1 < 0 || k1 >= g.n[1]) {
                continue;
            }
            for (int d0 = -1; d0 <= 1; d0++) {
                const int k0 = c0 + d0;
                if (k0 < 0 || k0 >= g.n[0]) {
                    continue;
                }
                const int nb = (k2 * g.n[1] + k1) * g.n[0] + k0;
                for (int s0 = bin_start[nb], e = s0 + bin_count[nb]; s0 < e; s0 += 32) {
                    const int s = s0 + lane;
                    int j = -1;
                    bool hit = false;
                    if (s < e) {
                        j = sorted[s];
                        const double dx = x[3 * j] - xi, dy = x[3 * j + 1] - yi,
                                     dz = x[3 * j + 2] - zi;
                        hit = j != i && dx * dx + dy * dy + dz * dz < rlist2;
                    }
                    const int at = hmd_warp_append(hit, &n);
                    if (hit && at < cap) {
                        index[(size_t)i * cap + at] = j;
                    }
                }
            }
        }
    }
    if (lane == 0) {
        count[i] = n;
        if (n > cap) {
            atomicMax(overflow, n);
        }
    }
}

/* Replaces *p by a fresh device array of n elements of `size` bytes, keeping the tally. */
int realloc_device(void **p, size_t old_bytes, size_t new_bytes, size_t *tally)
{
    if (*p) {
        cudaFree(*p);
        *tally -= old_bytes;
        *p = NULL;
    }
    HMD_CUDA_CHECK(cudaMalloc(p, new_bytes));
    *tally += new_bytes;
    return HMD_OK;
}

/* Room for n, with half again for growth. */
int roomy(size_t n)
{
    return (int)(n + n / 2 + 16);
}

/* Cell-list arrays for nall atoms and ncell cells. */
int reserve_cells(struct hmd_cuda_nbr *nl, int nall, int ncell, size_t *tally)
{
    int rc = HMD_OK;
    if (nall > nl->cap_all) {
        const int cap = roomy((size_t)nall);
        const size_t old = sizeof(int) * (size_t)nl->cap_all, now = sizeof(int) * (size_t)cap;
        rc = realloc_device((void **)&nl->bin_of, old, now, tally);
        if (!rc) {
            rc = realloc_device((void **)&nl->sorted, old, now, tally);
        }
        nl->cap_all = rc ? 0 : cap;
    }
    if (!rc && ncell > nl->cap_bins) {
        const int cap = roomy((size_t)ncell);
        const size_t old = sizeof(int) * (size_t)nl->cap_bins, now = sizeof(int) * (size_t)cap;
        rc = realloc_device((void **)&nl->bin_count, 2 * old, 2 * now, tally); /* count, fill */
        if (!rc) {
            rc = realloc_device((void **)&nl->bin_start, old, now, tally);
        }
        nl->cap_bins = rc ? 0 : cap;
    }
    return rc;
}

/* Neighbour arrays for nlocal centres of nl->cap neighbours. */
int reserve_pairs(struct hmd_cuda_nbr *nl, int nlocal, bool regrow_index, size_t *tally)
{
    const size_t old_index = sizeof(int) * (size_t)nl->cap_atoms * nl->cap_index_room;
    int rc = HMD_OK;
    if (nlocal > nl->cap_atoms) {
        const int cap = roomy((size_t)nlocal);
        rc = realloc_device((void **)&nl->count, sizeof(int) * (size_t)nl->cap_atoms,
                            sizeof(int) * (size_t)cap, tally);
        nl->cap_atoms = rc ? 0 : cap;
        regrow_index = true;
    }
    if (!rc && (regrow_index || !nl->index)) {
        rc = realloc_device((void **)&nl->index, old_index,
                            sizeof(int) * (size_t)nl->cap_atoms * nl->cap, tally);
        nl->cap_index_room = rc ? 0 : nl->cap;
    }
    return rc;
}

} // namespace

int hmd_nbr_list_build_cuda(struct hmd_cuda_nbr *nl, int nlocal, int nall, const double *d_x,
                            const double lo[3], const double hi[3], double rlist,
                            cudaStream_t stream, size_t *device_bytes)
{
    grid g;
    const long ncells = hmd_cell_grid_make(&g, lo, hi, rlist);
    const int ncell = (int)ncells;
    int rc = reserve_cells(nl, nall, ncell, device_bytes);
    if (rc) {
        return rc;
    }
    if (!nl->overflow) {
        HMD_CUDA_CHECK(cudaMalloc((void **)&nl->overflow, sizeof(int)));
        *device_bytes += sizeof(int);
    }
    if (nl->cap == 0) {
        nl->cap = 256;
    }
    int *fill = nl->bin_count + nl->cap_bins;
    size_t scan_bytes = 0;
    HMD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, nl->bin_count, nl->bin_start,
                                                 ncell, stream));
    if (scan_bytes > nl->scan_bytes) {
        rc = realloc_device(&nl->scan_tmp, nl->scan_bytes, scan_bytes, device_bytes);
        if (rc) {
            return rc;
        }
        nl->scan_bytes = scan_bytes;
    }
    const int T = 256;
    HMD_CUDA_CHECK(
        cudaMemsetAsync(nl->bin_count, 0, sizeof(int) * 2 * (size_t)nl->cap_bins, stream));
    bin_atoms<<<(nall + T - 1) / T, T, 0, stream>>>(nall, d_x, g, nl->bin_of, nl->bin_count);
    HMD_CUDA_LAUNCHED("bin_atoms");
    HMD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nl->scan_tmp, scan_bytes, nl->bin_count,
                                                 nl->bin_start, ncell, stream));
    fill_bins<<<(nall + T - 1) / T, T, 0, stream>>>(nall, nl->bin_of, nl->bin_start, fill,
                                                    nl->sorted);
    HMD_CUDA_LAUNCHED("fill_bins");
    rc = reserve_pairs(nl, nlocal, false, device_bytes);
    for (int attempt = 0; !rc && attempt < 2; attempt++) {
        HMD_CUDA_CHECK(cudaMemsetAsync(nl->overflow, 0, sizeof(int), stream));
        find_pairs<<<(unsigned)(((size_t)nlocal * 32 + 127) / 128), 128, 0, stream>>>(
            nlocal, d_x, g, rlist * rlist, nl->bin_of, nl->bin_start, nl->bin_count, nl->sorted,
            nl->cap, nl->index, nl->count, nl->overflow);
        HMD_CUDA_LAUNCHED("find_pairs");
        int over = 0;
        HMD_CUDA_CHECK(
            cudaMemcpyAsync(&over, nl->overflow, sizeof(int), cudaMemcpyDeviceToHost, stream));
        HMD_CUDA_CHECK(cudaStreamSynchronize(stream));
        if (over == 0) {
            return HMD_OK;
        }
        /* more neighbours than room: room for the largest count, and again */
        nl->cap = over + over / 4 + 32;
        rc = reserve_pairs(nl, nlocal, true, device_bytes);
    }
    return rc ? rc
              : hmd_error_set(HMD_ESOFTWARE, "GPU neighbour list: still too many neighbours "
                                             "after regrowing");
}

void hmd_nbr_list_free_cuda(struct hmd_cuda_nbr *nl)
{
    cudaFree(nl->index);
    cudaFree(nl->count);
    cudaFree(nl->overflow);
    cudaFree(nl->bin_of);
    cudaFree(nl->bin_count);
    cudaFree(nl->bin_start);
    cudaFree(nl->sorted);
    cudaFree(nl->scan_tmp);
    *nl = hmd_cuda_nbr{};
}
