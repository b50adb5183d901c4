/* Simulation cell: general triclinic, periodic or not along each cell vector.
 *
 * Convention: cell vectors are the ROWS of h (a = h[0], b = h[1], c = h[2]), positions are row
 * vectors, r = s h with s the fractional coordinates, and s = r hinv. GRO, PDB, extended XYZ
 * and LAMMPS boxes are all converted to this form by their readers.
 */
#ifndef HMD_CORE_BOX_H
#define HMD_CORE_BOX_H

#include <stdbool.h>

struct hmd_box {
    double h[3][3];    /* cell vectors as rows (Å) */
    double hinv[3][3]; /* inverse of h (1/Å) */
    bool periodic[3];  /* periodic along cell vector d */
};

/* Fills `box` from the cell vectors `h` (rows, Å) and the periodic flags. Returns HMD_EDATA with
 * a message (no file context; callers prefix it) when the cell is degenerate (volume below
 * 1e-6 Å^3 or a face distance below 1e-3 Å) or left-handed (negative determinant). */
int hmd_box_init(struct hmd_box *box, const double h[3][3], const bool periodic[3]);

/* Volume |det h| (Å^3). */
double hmd_box_volume(const struct hmd_box *box);

/* Distance between the two faces spanned by the other cell vectors, per cell vector d (Å):
 * V / |h[(d+1)%3] x h[(d+2)%3]|. A sphere of radius r fits in the cell iff r <= min/2. */
void hmd_box_face_distances(const struct hmd_box *box, double dist[3]);

/* True when h is lower triangular (a along x, b in the xy plane), the LAMMPS/GROMACS form. */
bool hmd_box_is_lower_triangular(const struct hmd_box *box);

/* Lengths (Å) and angles alpha, beta, gamma (degrees) of the cell, as PDB CRYST1 and AMBER
 * NetCDF write them. */
void hmd_box_lengths_angles(const struct hmd_box *box, double len[3], double ang[3]);

/* Fractional coordinates s = r hinv. */
static inline void hmd_box_to_frac(const struct hmd_box *box, const double r[3], double s[3])
{
    for (int d = 0; d < 3; d++) {
        s[d] = r[0] * box->hinv[0][d] + r[1] * box->hinv[1][d] + r[2] * box->hinv[2][d];
    }
}

/* Cartesian coordinates r = s h (Å). */
static inline void hmd_box_to_cart(const struct hmd_box *box, const double s[3], double r[3])
{
    for (int d = 0; d < 3; d++) {
        r[d] = s[0] * box->h[0][d] + s[1] * box->h[1][d] + s[2] * box->h[2][d];
    }
}

/* Wraps r into the cell along the periodic directions (fractional coordinate in [0, 1)).
 * Returns the lattice shift applied, in cell vectors, through `image` when not NULL. */
void hmd_box_wrap(const struct hmd_box *box, double r[3], int image[3]);

#endif /* HMD_CORE_BOX_H */
