#include "io/cell_rotation.h"

#include <math.h>

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

void hmd_cell_rotation_init(struct hmd_cell_rotation *rot, const struct hmd_box *box,
                            double h_lt[3][3])
{
    const double(*h)[3] = box->h;
    rot->identity = hmd_box_is_lower_triangular(box) && h[0][0] > 0 && h[1][1] > 0;
    if (rot->identity) {
        for (int a = 0; a < 3; a++) {
            for (int k = 0; k < 3; k++) {
                h_lt[a][k] = h[a][k];
                rot->q[a][k] = a == k;
            }
        }
        return;
    }
    /* Orthonormal frame e1 along a, e2 in the a-b plane towards b, e3 = e1 x e2; the new
     * coordinates of r are (r.e1, r.e2, r.e3), so column k of q is e_k. hmd_box_init
     * guarantees a != 0 and b not parallel to a. */
    double e[3][3];
    double la = sqrt(dot(h[0], h[0]));
    for (int k = 0; k < 3; k++) {
        e[0][k] = h[0][k] / la;
    }
    double b1 = dot(h[1], e[0]);
    double bperp[3];
    for (int k = 0; k < 3; k++) {
        bperp[k] = h[1][k] - b1 * e[0][k];
    }
    double lb = sqrt(dot(bperp, bperp));
    for (int k = 0; k < 3; k++) {
        e[1][k] = bperp[k] / lb;
    }
    e[2][0] = e[0][1] * e[1][2] - e[0][2] * e[1][1];
    e[2][1] = e[0][2] * e[1][0] - e[0][0] * e[1][2];
    e[2][2] = e[0][0] * e[1][1] - e[0][1] * e[1][0];
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 3; k++) {
            rot->q[i][k] = e[k][i];
        }
    }
    /* Set the rotated cell from the construction so the zeros above the diagonal are exact. */
    h_lt[0][0] = la;
    h_lt[0][1] = 0;
    h_lt[0][2] = 0;
    h_lt[1][0] = b1;
    h_lt[1][1] = lb;
    h_lt[1][2] = 0;
    for (int k = 0; k < 3; k++) {
        h_lt[2][k] = dot(h[2], e[k]);
    }
}
