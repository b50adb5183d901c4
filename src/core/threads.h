/* Thread identity for OpenMP-parallel loops; single-threaded stubs when built without OpenMP. */
#ifndef HMD_CORE_THREADS_H
#define HMD_CORE_THREADS_H

#ifdef _OPENMP
#include <omp.h>
/* Number of threads a parallel region will use. */
static inline int hmd_thread_count(void)
{
    return omp_get_max_threads();
}
/* Index of the calling thread inside a parallel region (0 outside). */
static inline int hmd_thread_id(void)
{
    return omp_get_thread_num();
}
#else
static inline int hmd_thread_count(void)
{
    return 1;
}
static inline int hmd_thread_id(void)
{
    return 0;
}
#endif

#endif /* HMD_CORE_THREADS_H */
