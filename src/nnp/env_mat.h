/* Environment-matrix row of one neighbour, its smooth switch and the Jacobian, written once for
 * the CPU reference and the CUDA kernels (HMD_HD).
 *
 * For a neighbour at displacement d = r_j - r_i (Å), r = |d|, q = r + p (p = env_protection):
 *     u    = clamp((r - rs) / (rc - rs), 0, 1)
 *     s(r) = u^3 (-6 u^2 + 15 u - 10) + 1             (1 below rs, 0 beyond rc; C2 continuous)
 *     row  = s * [1/q, dx/q^2, dy/q^2, dz/q^2]          (deepmd/dpmodel/utils/env_mat.py)
 * The Jacobian d row_c / d d_m (1/Å^2) is
 *     c = 0:    (s'/q - s/q^2) d_m / r
 *     c = 1..3: s delta_{c-1,m} / q^2 + d_{c-1} d_m / r (s'/q^2 - 2 s/q^3)
 */
#ifndef HMD_NNP_ENV_MAT_H
#define HMD_NNP_ENV_MAT_H

#include <math.h>

#include "nnp/activation.h" /* HMD_HD */

/* Smooth switch s(r) and its derivative ds/dr (1/Å) between rs and rc (Å). */
HMD_HD static inline void hmd_env_switch(double r, double rs, double rc, double *s, double *ds)
{
    if (r <= rs) {
        *s = 1.0;
        *ds = 0.0;
    } else if (r >= rc) {
        *s = 0.0;
        *ds = 0.0;
    } else {
        double w = rc - rs, u = (r - rs) / w;
        double u2 = u * u;
        *s = u2 * u * (-6.0 * u2 + 15.0 * u - 10.0) + 1.0;
        *ds = (3.0 * u2 * (-6.0 * u2 + 15.0 * u - 10.0) + u2 * u * (-12.0 * u + 15.0)) / w;
    }
}

/* Raw environment row of displacement d (Å) and, when jac is not NULL, its Jacobian
 * jac[c][m] = d row[c] / d d[m]. Requires |d| > 0. */
HMD_HD static inline void hmd_env_row(const double d[3], double rs, double rc, double protection,
                                      double row[4], double jac[4][3])
{
    double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    double s, ds;
    hmd_env_switch(r, rs, rc, &s, &ds);
    double q = r + protection, inv_q = 1.0 / q, inv_q2 = inv_q * inv_q;
    row[0] = s * inv_q;
    for (int c = 0; c < 3; c++) {
        row[c + 1] = s * d[c] * inv_q2;
    }
    if (!jac) {
        return;
    }
    double inv_r = 1.0 / r;
    double a0 = (ds * inv_q - s * inv_q2) * inv_r;
    double a1 = (ds * inv_q2 - 2.0 * s * inv_q2 * inv_q) * inv_r;
    for (int m = 0; m < 3; m++) {
        jac[0][m] = a0 * d[m];
        for (int c = 0; c < 3; c++) {
            jac[c + 1][m] = d[c] * d[m] * a1 + (c == m ? s * inv_q2 : 0.0);
        }
    }
}

#endif /* HMD_NNP_ENV_MAT_H */
