/* Verlet neighbour list with a skin, built from a cell list, CPU reference.
 *
 * Full list (each pair appears for both centres, as DeePMD-kit requires): for every local atom
 * i < nlocal, the indices j != i in [0, nall) with |x_j - x_i| <= rlist at build time, where
 * rlist = model cut-off + skin. Ghost atoms (periodic images or atoms of other ranks) are
 * ordinary entries of the nall arrays; distances are plain Cartesian distances because ghosts
 * carry unwrapped image coordinates. The list stays valid while no atom has moved more than
 * skin/2 since the build (hmd_nbr_list_needs_rebuild).
 *
 * Cells are built in fractional coordinates, so orthorhombic and triclinic cells are handled
 * alike: a cell spans at least rlist between opposite faces, and a 3x3x3 stencil finds every
 * neighbour.
 */
#ifndef HMD_NBR_NBR_LIST_H
#define HMD_NBR_NBR_LIST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/box.h"

struct hmd_nbr_list {
    int ncentre;     /* centre atoms: the local atoms 0..ncentre-1 */
    int *offset;     /* [ncentre + 1] start of each centre's neighbours in index */
    int *index;      /* neighbour indices into the nall arrays */
    double rlist;    /* list cut-off used at the last build (Å) */
    double *x_build; /* [ncentre][3] positions of the local atoms at the last build (Å) */
    /* capacities and cell-list scratch (owned) */
    int cap_centre;
    size_t cap_index;
    int *cell_head, *cell_next, *cell_of;
    int cap_cells, cap_next;
};

/* Builds the list for the first `nlocal` atoms against all `nall` atoms of x [nall][3] (Å),
 * with cut-off rlist (Å). `box` gives the cell whose fractional coordinates bin the atoms; the
 * ghosts may lie outside it (binning covers their extent). Grows the arrays as needed (this is
 * where neighbour memory grows). Returns HMD_ENOMEM on allocation failure. */
int hmd_nbr_list_build(struct hmd_nbr_list *nl, const struct hmd_box *box, int nlocal, int nall,
                       const double *x, double rlist);

/* Records the positions of the first nlocal atoms of x as those of a build with cut-off rlist
 * whose pairs live elsewhere (the GPU's list): the list itself is left empty, and
 * hmd_nbr_list_max_displacement measures from these positions. HMD_ENOMEM on failure. */
int hmd_nbr_list_mark(struct hmd_nbr_list *nl, int nlocal, const double *x, double rlist);

/* Largest displacement (Å) of a local atom since the last build (x holds current positions,
 * in the same image as at the build). */
double hmd_nbr_list_max_displacement(const struct hmd_nbr_list *nl, const double *x);

/* Frees the list's arrays and zeroes it. */
void hmd_nbr_list_free(struct hmd_nbr_list *nl);

#endif /* HMD_NBR_NBR_LIST_H */
