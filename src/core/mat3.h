/* 3x3 matrices of the cell and of its scaling (row-vector convention, as struct hmd_box: a row
 * vector r times m is r' = r m). */
#ifndef HMD_CORE_MAT3_H
#define HMD_CORE_MAT3_H

/* r' = r m for a row vector r (out may not alias r). Sums in the order r0 m0b + r1 m1b + r2 m2b,
 * which the device's scaling (cuda/md/scale.cu) repeats without fused multiply-adds. */
void hmd_mat3_row_times(const double r[3], const double m[3][3], double out[3]);

/* The inverse of a lower-triangular m with a non-zero diagonal, by forward substitution (its
 * upper triangle is ignored; inv is lower triangular). */
void hmd_mat3_lower_inverse(const double m[3][3], double inv[3][3]);

#endif /* HMD_CORE_MAT3_H */
