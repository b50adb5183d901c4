/* Assertions shared by the C unit tests (include after <cmocka.h>). */
#ifndef HMD_TESTS_TEST_UTIL_H
#define HMD_TESTS_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Fails unless |got - want| <= tol, printing both with full precision. */
static inline void assert_near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol)) {
        fail_msg("got %.17g, expected %.17g (tolerance %g)", got, want, tol);
    }
}

/* assert_near on the three components of a vector. */
static inline void assert_vec(const double *got, double x, double y, double z, double tol)
{
    assert_near(got[0], x, tol);
    assert_near(got[1], y, tol);
    assert_near(got[2], z, tol);
}

/* Makes a fresh folder `<$HMD_TEST_TMP or /tmp>/<name>.XXXXXX` into dir[cap]; 0 or -1. */
static inline int hmd_test_scratch(char *dir, size_t cap, const char *name)
{
    const char *tmp = getenv("HMD_TEST_TMP");
    snprintf(dir, cap, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", name);
    return mkdtemp(dir) ? 0 : -1;
}

#endif /* HMD_TESTS_TEST_UTIL_H */
