/* `halomd run`: molecular dynamics from a structure, a model and run parameters. */
#ifndef HMD_MD_RUN_H
#define HMD_MD_RUN_H

#include <stdbool.h>

struct hmd_run_options {
    const char *mdp;   /* run parameter file (-f), or NULL for defaults */
    const char *conf;  /* structure file (-c) */
    const char *model; /* model file (-m); NULL: the `model` parameter (optional with -p) */
    const char *top;   /* GROMACS topology (-p): the classical force field, or NULL */
    const char *index; /* GROMACS index file (-n) for nnp-group, or NULL */
    /* -m a.dp b.dp ...: models[0] is `model` and drives the run; with nmodels >= 2 the others
     * are evaluated every model-devi-freq steps into <deffnm>.model_devi.out */
    const char *const *models;
    int nmodels;
    const char *deffnm; /* base name of the outputs */
    long long nsteps;   /* -nsteps, used when have_nsteps */
    bool have_nsteps;
    bool verbose;           /* progress on stderr even when it is not a terminal */
    const char *const *set; /* -set key=value overrides */
    int nset;
    const char *backend; /* -backend, or NULL */
    int dd[3];           /* -dd grid, or zeros for automatic */
    const char *cpi;     /* -cpi: continue from this checkpoint, or NULL */
    const char *cmdline; /* the command line, for the log; may be NULL */
    double cpt_minutes;  /* -cpt: minutes of wall time between checkpoints; 0: only at the end,
                            < 0: none at all (not even at the end) */
    double maxh;         /* -maxh: stop at the first step after 0.99 maxh hours; <= 0: never */
};

/* Runs the simulation and writes <deffnm>.log, .energy.csv, .xyz, .nc (NetCDF builds, when
 * nstxout, nstvout or nstfout is set), .gro, .cpt (the checkpoint that -cpi continues from),
 * .mdout.mdp, .perf.json and, with several models, .model_devi.out. With opt->cpi the run starts
 * from that checkpoint's step, positions, velocities and cell, and runs to step nsteps (counted
 * from the first run's start). SIGTERM or SIGINT end the run after the current step, with every
 * final output written. Every input is read and checked before the first output is created;
 * existing outputs are backed up. With integrator = steep or fire the structure's energy is
 * minimised instead (md/em_run.c): <deffnm>.log and the minimised <deffnm>.gro. Returns a status
 * (HMD_ESOFTWARE when the run blows up, with the step in the message). */
int hmd_run(const struct hmd_run_options *opt);

#endif /* HMD_MD_RUN_H */
