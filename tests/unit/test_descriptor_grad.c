/* hmd_descriptor_grad_T (nnp/descriptor_grad.h), the first step back through D = T T2^T shared
 * by the CPU reference and the CUDA kernels: against central finite differences of
 * E = sum_ab dD[a][b] D[a][b] on random T and dD, with dD dense (row stride M2, as on the CPU)
 * and padded (row stride M2 + 1, as the GPU stages it in shared memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "nnp/descriptor_grad.h"
#include "test_util.h"

enum { M = 7, M2 = 3 };

static double urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0 - 0.5;
}

/* E = sum_{a < M, b < M2} dD[a][b] sum_c T[a][c] T[b][c] (dD rows ld apart). */
static double energy(const double *dD, int ld, const double *T)
{
    double e = 0.0;
    for (int a = 0; a < M; a++) {
        for (int b = 0; b < M2; b++) {
            double d = 0.0;
            for (int c = 0; c < 4; c++) {
                d += T[4 * a + c] * T[4 * b + c];
            }
            e += dD[a * ld + b] * d;
        }
    }
    return e;
}

static void check_stride(int ld)
{
    unsigned seed = 12345u + (unsigned)ld;
    double T[4 * M], dD[M * (M2 + 1)];
    for (int e = 0; e < 4 * M; e++) {
        T[e] = urand(&seed);
    }
    for (int e = 0; e < M * ld; e++) {
        dD[e] = e % ld < M2 ? urand(&seed) : 1e300; /* padding: must never be read */
    }
    const double h = 1e-4;
    for (int a = 0; a < M; a++) {
        for (int c = 0; c < 4; c++) {
            const double t0 = T[4 * a + c];
            T[4 * a + c] = t0 + h;
            const double ep = energy(dD, ld, T);
            T[4 * a + c] = t0 - h;
            const double em = energy(dD, ld, T);
            T[4 * a + c] = t0;
            /* E is quadratic in T: the central difference is exact up to rounding */
            assert_near(hmd_descriptor_grad_T(dD, ld, T, M, M2, a, c), (ep - em) / (2 * h), 1e-9);
        }
    }
}

static void test_dense_rows(void **state)
{
    (void)state;
    check_stride(M2);
}

static void test_padded_rows(void **state)
{
    (void)state;
    check_stride(M2 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_rows),
        cmocka_unit_test(test_padded_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
