/* 3x3 matrices (core/mat3.h). */
#include "core/mat3.h"

void hmd_mat3_row_times(const double r[3], const double m[3][3], double out[3])
{
    for (int b = 0; b < 3; b++) {
        const double p0 = r[0] * m[0][b], p1 = r[1] * m[1][b], p2 = r[2] * m[2][b];
        out[b] = (p0 + p1) + p2;
    }
}

void hmd_mat3_lower_inverse(const double m[3][3], double inv[3][3])
{
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            inv[i][j] = 0.0;
        }
    }
    for (int j = 0; j < 3; j++) {
        inv[j][j] = 1 / m[j][j];
        for (int i = j + 1; i < 3; i++) {
            double s = 0;
            for (int k = j; k < i; k++) {
                s += m[i][k] * inv[k][j];
            }
            inv[i][j] = -s / m[i][i];
        }
    }
}
