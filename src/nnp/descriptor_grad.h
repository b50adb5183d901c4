/* The first step back through the Deep Potential descriptor D = T T2^T, written once for the
 * CPU reference and the CUDA kernels (HMD_HD). */
#ifndef HMD_NNP_DESCRIPTOR_GRAD_H
#define HMD_NNP_DESCRIPTOR_GRAD_H

#include "nnp/activation.h" /* HMD_HD */

/* dE/dT[a][c] of one centre from dE/dD, with D[a][b] = sum_c T[a][c] T[b][c] for b < M2 (T
 * [M][4] row-major; dD [M][M2] with rows ld >= M2 apart, so that GPU threads on consecutive rows
 * of a padded copy in shared memory hit different banks), before T's 1/nnei. */
HMD_HD static inline double hmd_descriptor_grad_T(const double *dD, int ld, const double *T, int M,
                                                  int M2, int a, int c)
{
    double v = 0.0;
    for (int b = 0; b < M2; b++) {
        v += dD[a * ld + b] * T[4 * b + c];
    }
    if (a < M2) {
        for (int a2 = 0; a2 < M; a2++) {
            v += dD[a2 * ld + a] * T[4 * a2 + c];
        }
    }
    return v;
}

#endif
