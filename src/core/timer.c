#include "core/timer.h"

#include <time.h>

double hmd_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *hmd_timer_name(enum hmd_timer_phase p)
{
    static const char *const names[HMD_TIMER_NPHASES] = {
        "Force", "Neighbour list", "Halo", "Integrate", "Thermo", "Output",
    };
    return (p >= 0 && p < HMD_TIMER_NPHASES) ? names[p] : "?";
}
