/* What a run reports: thermodynamic lines, the final performance table (log and stdout) and
 * the machine-readable run record <deffnm>.perf.json. */
#ifndef HMD_MD_REPORT_H
#define HMD_MD_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/params.h"
#include "core/timer.h"

/* Thermodynamic state at one step. */
struct hmd_thermo {
    int64_t step;
    double time;      /* ps */
    double temp;      /* K */
    double pe;        /* potential energy (eV) */
    double ke;        /* kinetic energy (eV) */
    double etot;      /* pe + ke (eV) */
    double conserved; /* etot minus the energy the thermostat added (eV) */
    double press;     /* pressure (bar); NaN for a non-periodic system */
    double vol;       /* cell volume (Å^3); NaN for a non-periodic system */
};

/* Running sums for the averages printed at the end. */
struct hmd_thermo_avg {
    long n;
    double temp, pe, ke, etot, press;
};

/* Throughput of a finished run. */
struct hmd_perf {
    int natoms;
    int64_t nsteps; /* steps integrated */
    double dt;      /* ps */
    double wall;    /* seconds spent in the step loop */
    int nthreads;
    long nbuilds;                        /* neighbour-list builds */
    struct hmd_timers timers;            /* rank 0's timers (call counts) */
    double phase_min[HMD_TIMER_NPHASES]; /* seconds per phase: least, mean, most over ranks */
    double phase_avg[HMD_TIMER_NPHASES];
    double phase_max[HMD_TIMER_NPHASES];
    int nranks;
    int grid[3];                  /* domain grid */
    bool replicated;              /* dd-mode = replicated */
    long dlb_intervals;           /* load-balancing intervals measured */
    long dlb_moves;               /* times the boundaries moved */
    double imbalance_avg;         /* force-time imbalance max/avg - 1, mean over intervals */
    double imbalance_max;         /* ... largest */
    double imbalance_last;        /* ... of the last interval */
    double imbalance_lost;        /* seconds lost waiting for the slowest rank (force time) */
    double home_avg, home_max;    /* home atoms per rank at the end */
    double ghost_avg, ghost_max;  /* ghost atoms per rank at the end */
    const char *backend;          /* as the log names it */
    double device_bytes;          /* GPU memory the run holds, all ranks (bytes; 0 on the CPU) */
    double device_bytes_rank_max; /* ... on the rank that holds the most */
    /* the device's halo clock (several ranks on the GPU): microseconds per step of the forward
     * halo, the reverse halo, and the transport's waits for other ranks in each, [0] least, [1]
     * mean, [2] most over ranks; halo_forwards 0: not timed; halo_waits false: no waits */
    long long halo_forwards;
    bool halo_waits;
    double halo_forward_us[3], halo_reverse_us[3], halo_wait_forward_us[3], halo_wait_reverse_us[3];
    /* backend = cuda: the list steps of the loop (0: none, or the CPU) and where they went, ms
     * per list step, the most over ranks, host wall time: first half and positions to the host,
     * migration and ghosts, the atoms' upload, the halo's set-up, the providers' preparation,
     * the forces and the end of the step (and of it the device's own time for the forces) */
    long list_steps;
    struct hmd_perf_list_ms {
        double to_host, host, upload, halo, prepare, rest, device_forces;
        double slowest;         /* the slowest list step's whole time (ms, most over ranks) */
        long long slowest_step; /* ... and its step on rank 0 */
    } list_ms;
    char model_hash[33]; /* XXH3-128 of the model file in hex; "" without a model */
    /* neighbours within rcut beyond sel (left out of the descriptors, hmd_forces.dropped) */
    bool sel_every_step;    /* counted at every evaluation (CPU); else at output steps (GPU) */
    int64_t sel_steps;      /* force evaluations that left some out */
    int64_t sel_first_step; /* step of the first, -1 when none */
    long sel_max_dropped;   /* most left out in one evaluation */
};

void hmd_thermo_avg_add(struct hmd_thermo_avg *avg, const struct hmd_thermo *t);

#define HMD_REPORT_MAX_TERMS 64 /* terms hmd_report_terms prints at most */

/* The energy terms of a step as GROMACS's log prints them: a block "   Energies (eV)" with
 * five names per row over their values, names[nterms] and value[nterms] in eV, then the
 * potential energy `pe` and the pressure `press` (bar; left out when NaN). */
void hmd_report_terms(FILE *out, int nterms, const char *const *names, const double *value,
                      double pe, double press);

/* Column header and one line of the thermo table. */
void hmd_report_thermo_header(FILE *out);
void hmd_report_thermo_line(FILE *out, const struct hmd_thermo *t);

/* Averages, the per-phase timing table and the performance line (GROMACS/LAMMPS style). */
void hmd_report_final(FILE *out, const struct hmd_perf *perf, const struct hmd_thermo_avg *avg);

/* Host name and CPU model, for logs and records. */
void hmd_report_host(char *host, size_t host_len, char *cpu, size_t cpu_len);

/* Writes the run record (build, host, parameters, system size, timings, throughput) to `path`
 * (backed up if it exists). */
int hmd_report_perf_json(const char *path, const struct hmd_params *p, const char *conf,
                         const char *model, const struct hmd_perf *perf,
                         const struct hmd_thermo *last);

#endif /* HMD_MD_REPORT_H */
