/* Rotation of a configuration into the lower-triangular cell orientation.
 *
 * GRO boxes, and the cell lengths and angles of AMBER NetCDF (from which readers rebuild the
 * cell as a along +x, b in the xy plane with positive y, c with positive z), can only describe a
 * cell in that orientation. A writer given any other cell rotates positions, velocities, forces
 * and the cell by the same proper rotation, which changes no distance, angle or energy.
 */
#ifndef HMD_IO_CELL_ROTATION_H
#define HMD_IO_CELL_ROTATION_H

#include <stdbool.h>

#include "core/box.h"

struct hmd_cell_rotation {
    bool identity;  /* the cell is already lower triangular with a positive diagonal */
    double q[3][3]; /* orthogonal, det +1: a row vector r becomes r q (identity when identity) */
};

/* Sets `rot` for the cell of `box` (a valid box from hmd_box_init) and writes the rotated cell
 * vectors as rows of `h_lt` (Å): a along +x, b in the xy plane, exact zeros above the diagonal.
 * When the cell already has that form, `h_lt` is a bit-exact copy and rot->identity is true. */
void hmd_cell_rotation_init(struct hmd_cell_rotation *rot, const struct hmd_box *box,
                            double h_lt[3][3]);

/* out = r q: rotates one vector (any unit). When rot->identity the bits are copied unchanged.
 * `out` may alias `r`. */
static inline void hmd_cell_rotation_apply(const struct hmd_cell_rotation *rot, const double r[3],
                                           double out[3])
{
    if (rot->identity) {
        for (int k = 0; k < 3; k++) {
            out[k] = r[k];
        }
        return;
    }
    double tmp[3];
    for (int k = 0; k < 3; k++) {
        tmp[k] = r[0] * rot->q[0][k] + r[1] * rot->q[1][k] + r[2] * rot->q[2][k];
    }
    for (int k = 0; k < 3; k++) {
        out[k] = tmp[k];
    }
}

#endif /* HMD_IO_CELL_ROTATION_H */
