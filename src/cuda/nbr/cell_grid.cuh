/* The Cartesian grid of list cells the GPU's pair searches bin atoms into (cuda/nbr/nbr_list.cu
 * for the Deep Potential, cuda/ff/pair_list.cu for the classical force field). */
#ifndef HMD_CUDA_NBR_CELL_GRID_CUH
#define HMD_CUDA_NBR_CELL_GRID_CUH

struct hmd_cell_grid {
    double lo[3];
    double inv[3]; /* 1 / cell width */
    int n[3];
};

/* Cells at least rlist wide (1 to 1024 along each axis) over the box [lo, hi); returns the
 * number of cells. */
static inline long hmd_cell_grid_make(hmd_cell_grid *g, const double lo[3], const double hi[3],
                                      double rlist)
{
    long ncells = 1;
    for (int d = 0; d < 3; d++) {
        const double len = hi[d] - lo[d];
        int n = (int)(len / rlist);
        n = n < 1 ? 1 : (n > 1024 ? 1024 : n);
        g->lo[d] = lo[d];
        g->n[d] = n;
        g->inv[d] = n / (len > 0 ? len : 1.0);
        ncells *= n;
    }
    return ncells;
}

/* The cell of position x, positions outside the box in the nearest cell. */
__device__ inline int hmd_cell_grid_cell(const hmd_cell_grid &g, const double *x)
{
    int c[3];
    for (int d = 0; d < 3; d++) {
        const int k = (int)((x[d] - g.lo[d]) * g.inv[d]);
        c[d] = k < 0 ? 0 : (k >= g.n[d] ? g.n[d] - 1 : k);
    }
    return (c[2] * g.n[1] + c[1]) * g.n[0] + c[0];
}

#endif /* HMD_CUDA_NBR_CELL_GRID_CUH */
