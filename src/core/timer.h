/* Wall-clock timers, one per phase of the MD step (what the performance table reports). */
#ifndef HMD_CORE_TIMER_H
#define HMD_CORE_TIMER_H

enum hmd_timer_phase {
    HMD_TIMER_FORCE,     /* Deep Potential: descriptors, networks, forces */
    HMD_TIMER_NEIGHBOR,  /* wrap, borders (new ghosts), neighbour list */
    HMD_TIMER_HALO,      /* forward and reverse halo */
    HMD_TIMER_INTEGRATE, /* velocity Verlet, thermostat, centre-of-mass removal */
    HMD_TIMER_THERMO,    /* energies, temperature, pressure */
    HMD_TIMER_OUTPUT,    /* log, energy file, trajectories */
    HMD_TIMER_NPHASES,
};

struct hmd_timers {
    double total[HMD_TIMER_NPHASES]; /* accumulated seconds per phase */
    long calls[HMD_TIMER_NPHASES];   /* number of start/stop pairs */
    double started[HMD_TIMER_NPHASES];
};

/* Monotonic wall-clock time (s). */
double hmd_wtime(void);

static inline void hmd_timer_start(struct hmd_timers *t, enum hmd_timer_phase p)
{
    t->started[p] = hmd_wtime();
}

static inline void hmd_timer_stop(struct hmd_timers *t, enum hmd_timer_phase p)
{
    t->total[p] += hmd_wtime() - t->started[p];
    t->calls[p]++;
}

/* Adds `seconds` (possibly negative) to phase p without counting a call: time measured apart
 * from a start/stop pair (a wait for the device, the device's own time), or moved between
 * phases. */
static inline void hmd_timer_add(struct hmd_timers *t, enum hmd_timer_phase p, double seconds)
{
    t->total[p] += seconds;
}

/* One call of phase p that took `seconds`, measured apart from a start/stop pair (an evaluation
 * whose time the force code measures itself). */
static inline void hmd_timer_add_call(struct hmd_timers *t, enum hmd_timer_phase p, double seconds)
{
    t->total[p] += seconds;
    t->calls[p]++;
}

/* Short name of a phase ("Force"). */
const char *hmd_timer_name(enum hmd_timer_phase p);

#endif /* HMD_CORE_TIMER_H */
