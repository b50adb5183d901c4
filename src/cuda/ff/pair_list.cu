/* The classical force field's pair list on the GPU (cuda/ff/pair_list.cuh). */
#include "cuda/cuda_internal.cuh"

#include "cuda/ff/pair_list.cuh"
#include "cuda/nbr/cell_grid.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

namespace
{

constexpr int T = 256;

using grid = hmd_cell_grid;

/* Each local atom's charge, type and cell; the cells' counts. */
__global__ void bin_local(int nall, const double *x, const int64_t *id, const double *charge,
                          const int *gtype, grid g, double *q, int *type, unsigned *bin_of,
                          int *order_in, int *bin_count)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= nall) {
        return;
    }
    const int64_t gk = id[k];
    q[k] = charge[gk];
    type[k] = gtype[gk];
    const unsigned b = (unsigned)hmd_cell_grid_cell(g, x + 3 * k);
    bin_of[k] = b;
    order_in[k] = k;
    atomicAdd(&bin_count[b], 1);
}

/* Whether global atom b is in a's sorted exclusions excl[lo..hi). */
__device__ bool excluded(const int *excl, int lo, int hi, int b)
{
    const int end = hi;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (excl[mid] < b) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < end && excl[lo] == b;
}

struct find_args {
    int nlocal, ntypes, cap;
    double rlist2;
    const double *x, *q, *c6, *c12;
    const int64_t *id;
    const int *type, *excl_start, *excl, *order, *bin_start, *bin_count;
    const unsigned char *group;
    int *entry, *count, *overflow;
};

/* One warp per centre: the partners in the 27 cells around it, in cell order, each cell's
 * atoms by index, appended in lane order. */
__global__ void find_partners(find_args a, grid g)
{
    const int lane = threadIdx.x % 32;
    const int i = (int)(((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32);
    if (i >= a.nlocal) {
        return; /* a whole warp */
    }
    const double xi = a.x[3 * i], yi = a.x[3 * i + 1], zi = a.x[3 * i + 2];
    const int gi = (int)a.id[i];
    const double qi = a.q[i];
    const int row = a.type[i] * a.ntypes, ex0 = a.excl_start[gi], ex1 = a.excl_start[gi + 1];
    const unsigned b = (unsigned)hmd_cell_grid_cell(g, a.x + 3 * i);
    const int c0 = (int)(b % (unsigned)g.n[0]), c1 = (int)((b / (unsigned)g.n[0]) % g.n[1]),
              c2 = (int)(b / (unsigned)(g.n[0] * g.n[1]));
    int n = 0;
    for (int k2 = c2 - 1; k2 <= c2 + 1; k2++) {
        for (int k1 = c1 - 1; k1 <= c1 + 1; k1++) {
            for (int k0 = c0 - 1; k0 <= c0 + 1; k0++) {
                if (k0 < 0 || k1 < 0 || k2 < 0 || k0 >= g.n[0] || k1 >= g.n[1] || k2 >= g.n[2]) {
                    continue;
                }
                const int cell = (k2 * g.n[1] + k1) * g.n[0] + k0;
                const int s_end = a.bin_start[cell] + a.bin_count[cell];
                for (int s0 = a.bin_start[cell]; s0 < s_end; s0 += 32) {
                    const int s = s0 + lane;
                    int code = 0;
                    bool hit = false;
                    if (s < s_end) {
                        const int j = a.order[s];
                        const double dx = a.x[3 * j] - xi, dy = a.x[3 * j + 1] - yi,
                                     dz = a.x[3 * j + 2] - zi;
                        const int gj = (int)a.id[j];
                        const bool in_group = a.group && a.group[gi] && a.group[gj];
                        if (j != i && gj != gi && !in_group &&
                            dx * dx + dy * dy + dz * dz < a.rlist2) {
                            const bool ex = excluded(a.excl, ex0, ex1, gj);
                            const int t = row + a.type[j];
                            hit =
                                qi * a.q[j] != 0.0 || (!ex && (a.c6[t] != 0.0 || a.c12[t] != 0.0));
                            code = ex ? -(j + 1) : j;
                        }
                    }
                    const int at = hmd_warp_append(hit, &n);
                    if (hit && at < a.cap) {
                        a.entry[(size_t)i * a.cap + at] = code;
                    }
                }
            }
        }
    }
    if (lane == 0) {
        a.count[i] = n;
        if (n > a.cap) {
            atomicMax(a.overflow, n);
        }
    }
}

/* *p replaced by a fresh device array of `bytes` (the old one's `old` bytes off the tally). */
int renew(void **p, size_t old, size_t bytes, size_t *tally)
{
    if (*p) {
        cudaFree(*p);
        *tally -= old;
        *p = nullptr;
    }
    HMD_CUDA_CHECK(cudaMalloc(p, bytes > 0 ? bytes : 1));
    *tally += bytes;
    return HMD_OK;
}

int roomy(int n)
{
    return n + n / 2 + 16;
}

template <class T0> int upload(T0 **d, const T0 *h, size_t n, size_t *tally)
{
    int rc = renew((void **)d, 0, sizeof(T0) * n, tally);
    if (!rc && n) {
        HMD_CUDA_CHECK(cudaMemcpy(*d, h, sizeof(T0) * n, cudaMemcpyHostToDevice));
    }
    return rc;
}

/* Room for nall atoms and ncell cells. */
int reserve_atoms(hmd_ff_pair_list *pl, int nall, int ncell, bool *moved)
{
    int rc = HMD_OK;
    if (nall > pl->cap_all) {
        const int cap = roomy(nall);
        const size_t o = (size_t)pl->cap_all, n = (size_t)cap;
        rc = renew((void **)&pl->q, sizeof(double) * o, sizeof(double) * n, &pl->bytes);
        rc = rc ? rc : renew((void **)&pl->type, sizeof(int) * o, sizeof(int) * n, &pl->bytes);
        for (void **p : {(void **)&pl->bin_of, (void **)&pl->bin_sorted, (void **)&pl->order_in,
                         (void **)&pl->order}) {
            rc = rc ? rc : renew(p, sizeof(int) * o, sizeof(int) * n, &pl->bytes);
        }
        pl->cap_all = rc ? 0 : cap;
        *moved = true;
    }
    if (!rc && ncell > pl->cap_bins) {
        const int cap = roomy(ncell);
        const size_t o = sizeof(int) * (size_t)pl->cap_bins, n = sizeof(int) * (size_t)cap;
        rc = renew((void **)&pl->bin_count, o, n, &pl->bytes);
        rc = rc ? rc : renew((void **)&pl->bin_start, o, n, &pl->bytes);
        pl->cap_bins = rc ? 0 : cap;
    }
    return rc;
}

/* Room for nlocal centres of pl->cap partners. */
int reserve_entries(hmd_ff_pair_list *pl, int nlocal, bool *moved)
{
    int rc = HMD_OK;
    const size_t old_entry = sizeof(int) * (size_t)pl->cap_centre * (size_t)pl->cap_entry_room;
    bool regrow = !pl->entry || pl->cap != pl->cap_entry_room;
    if (nlocal > pl->cap_centre) {
        const int cap = roomy(nlocal);
        rc = renew((void **)&pl->count, sizeof(int) * (size_t)pl->cap_centre,
                   sizeof(int) * (size_t)cap, &pl->bytes);
        pl->cap_centre = rc ? 0 : cap;
        regrow = true;
    }
    if (!rc && regrow) {
        rc = renew((void **)&pl->entry, old_entry,
                   sizeof(int) * (size_t)pl->cap_centre * (size_t)pl->cap, &pl->bytes);
        pl->cap_entry_room = rc ? 0 : pl->cap;
        *moved = true;
    }
    return rc;
}

/* Queues the partner search of the pending build and the read-back of its overflow count. */
int queue_search(hmd_ff_pair_list *pl)
{
    const auto &p = pl->pending;
    find_args a = {p.nlocal,  pl->ntypes,    pl->cap,        p.rlist * p.rlist,
                   p.x,       pl->q,         pl->c6,         pl->c12,
                   p.id,      pl->type,      pl->excl_start, pl->excl,
                   pl->order, pl->bin_start, pl->bin_count,  pl->group,
                   pl->entry, pl->count,     pl->overflow};
    HMD_CUDA_CHECK(cudaMemsetAsync(pl->overflow, 0, sizeof(int), p.stream));
    if (p.nlocal > 0) {
        find_partners<<<(unsigned)(((size_t)p.nlocal * 32 + 127) / 128), 128, 0, p.stream>>>(
            a, p.grid);
        HMD_CUDA_LAUNCHED("find_partners");
    }
    HMD_CUDA_CHECK(cudaMemcpyAsync(pl->overflow_host, pl->overflow, sizeof(int),
                                   cudaMemcpyDeviceToHost, p.stream));
    return HMD_OK;
}

} // namespace

int hmd_ff_pair_list_init(struct hmd_ff_pair_list *pl, const struct hmd_ff_model *m)
{
    *pl = hmd_ff_pair_list{};
    pl->natoms = m->natoms;
    pl->ntypes = m->ntypes;
    const size_t n = (size_t)m->natoms, nt = (size_t)m->ntypes * (size_t)m->ntypes;
    int rc = upload(&pl->charge, m->charge, n, &pl->bytes);
    rc = rc ? rc : upload(&pl->gtype, m->type, n, &pl->bytes);
    rc = rc ? rc : upload(&pl->c6, m->c6, nt, &pl->bytes);
    rc = rc ? rc : upload(&pl->c12, m->c12, nt, &pl->bytes);
    rc = rc ? rc : upload(&pl->excl_start, m->excl_start, n + 1, &pl->bytes);
    rc = rc ? rc : upload(&pl->excl, m->excl, (size_t)m->excl_start[n], &pl->bytes);
    if (!rc && m->group) {
        rc = upload(&pl->group, m->group, n, &pl->bytes);
    }
    if (!rc) {
        rc = renew((void **)&pl->overflow, 0, sizeof(int), &pl->bytes);
    }
    if (!rc) {
        HMD_CUDA_CHECK(cudaMallocHost((void **)&pl->overflow_host, sizeof(int)));
    }
    pl->cap = 128;
    return rc;
}

int hmd_ff_pair_list_queue(struct hmd_ff_pair_list *pl, int nlocal, int nall, const double *d_x,
                           const int64_t *d_id, const double lo[3], const double hi[3],
                           double rlist, cudaStream_t stream, bool *moved)
{
    pl->pending.queued = false;
    grid g;
    const long ncells = hmd_cell_grid_make(&g, lo, hi, rlist);
    if (ncells > (1L << 28)) {
        return hmd_error_set(HMD_ECONFIG, "classical force field on the GPU: the atoms span "
                                          "more than 2^28 list cells");
    }
    const int ncell = (int)ncells;
    int rc = reserve_atoms(pl, nall, ncell, moved);
    rc = rc ? rc : reserve_entries(pl, nlocal, moved);
    if (rc || nall == 0) {
        return rc;
    }
    int bits = 1;
    while ((1L << bits) < ncells) {
        bits++;
    }
    size_t scan_bytes = 0, sort_bytes = 0;
    HMD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, pl->bin_count, pl->bin_start,
                                                 ncell, stream));
    HMD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, pl->bin_of, pl->bin_sorted,
                                                   pl->order_in, pl->order, nall, 0, bits, stream));
    const size_t need = scan_bytes > sort_bytes ? scan_bytes : sort_bytes;
    if (need > pl->tmp_bytes) {
        rc = renew(&pl->tmp, pl->tmp_bytes, need, &pl->bytes);
        pl->tmp_bytes = rc ? 0 : need;
        if (rc) {
            return rc;
        }
    }
    HMD_CUDA_CHECK(cudaMemsetAsync(pl->bin_count, 0, sizeof(int) * (size_t)ncell, stream));
    bin_local<<<(nall + T - 1) / T, T, 0, stream>>>(nall, d_x, d_id, pl->charge, pl->gtype, g,
                                                    pl->q, pl->type, pl->bin_of, pl->order_in,
                                                    pl->bin_count);
    HMD_CUDA_LAUNCHED("bin_local");
    HMD_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(pl->tmp, scan_bytes, pl->bin_count, pl->bin_start,
                                                 ncell, stream));
    HMD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(pl->tmp, sort_bytes, pl->bin_of, pl->bin_sorted,
                                                   pl->order_in, pl->order, nall, 0, bits, stream));
    pl->pending = {true, nlocal, rlist, d_x, d_id, g, stream};
    return queue_search(pl);
}

int hmd_ff_pair_list_finish(struct hmd_ff_pair_list *pl, bool *moved)
{
    if (!pl->pending.queued) {
        return HMD_OK;
    }
    for (int attempt = 0;; attempt++) {
        HMD_CUDA_CHECK(cudaStreamSynchronize(pl->pending.stream));
        const int over = *pl->overflow_host;
        if (over == 0 || attempt == 1) {
            pl->pending.queued = false;
            return over == 0 ? HMD_OK
                             : hmd_error_set(HMD_ESOFTWARE, "classical force field on the GPU: "
                                                            "the pair list still overflows after "
                                                            "regrowing");
        }
        pl->cap = over + over / 4 + 32; /* room for the largest count, and again */
        int rc = reserve_entries(pl, pl->pending.nlocal, moved);
        rc = rc ? rc : queue_search(pl);
        if (rc) {
            pl->pending.queued = false;
            return rc;
        }
    }
}

int hmd_ff_pair_list_build(struct hmd_ff_pair_list *pl, int nlocal, int nall, const double *d_x,
                           const int64_t *d_id, const double lo[3], const double hi[3],
                           double rlist, cudaStream_t stream, bool *moved)
{
    const int rc =
        hmd_ff_pair_list_queue(pl, nlocal, nall, d_x, d_id, lo, hi, rlist, stream, moved);
    return rc ? rc : hmd_ff_pair_list_finish(pl, moved);
}

void hmd_ff_pair_list_free(struct hmd_ff_pair_list *pl)
{
    for (void *p : {(void *)pl->charge, (void *)pl->c6, (void *)pl->c12, (void *)pl->gtype,
                    (void *)pl->group, (void *)pl->excl_start, (void *)pl->excl, (void *)pl->q,
                    (void *)pl->type, (void *)pl->entry, (void *)pl->count, (void *)pl->overflow,
                    (void *)pl->bin_of, (void *)pl->bin_sorted, (void *)pl->order_in,
                    (void *)pl->order, (void *)pl->bin_count, (void *)pl->bin_start, pl->tmp}) {
        cudaFree(p);
    }
    cudaFreeHost(pl->overflow_host);
    *pl = hmd_ff_pair_list{};
}
