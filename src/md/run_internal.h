/* What the files of an MD run share (internal to src/md): the run's context and the functions
 * each role offers the others.
 *   setup.c        inputs only: parameters, model, structure, checkpoint, force calculation;
 *   outputs.c      log, energy file, trajectories, checkpoint, the summary;
 *   step_host.c    the step on the host (backend = cpu);
 *   step_device.c  the step kept on the GPU (backend = cuda, md/device_run.h);
 *   device_state.c the device step's state for checkpoints and pressure coupling;
 *   run.c          the loop: step after step until nsteps or a stop signal.
 */
#ifndef HMD_MD_RUN_INTERNAL_H
#define HMD_MD_RUN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/params.h"
#include "core/timer.h"
#include "dd/dlb.h"
#include "ff/ff_model.h"
#include "io/energy_csv.h"
#include "io/structure.h"
#include "io/traj_netcdf.h"
#include "io/topology.h"
#include "io/traj_xyz.h"
#include "md/device_run.h"
#include "md/crescale.h"
#include "md/evaluator.h"
#include "md/forces.h"
#include "md/report.h"
#include "md/run.h"
#include "md/system.h"
#include "md/thermostat.h"
#include "nnp/model.h"

enum { HMD_MD_NAME_MAX = 4096 };

/* The outputs of a run (owned, rank 0 only). */
struct md_outputs {
    double *gather_x, *gather_v, *gather_f; /* [natoms][3] gathered arrays, by global id */
    double *gather_xl; /* [natoms][3] positions of the last list build, by id */
    bool list_kept;    /* gather_xl holds them for the checkpoint being written */
    double list_disp2; /* ... and the device's predicted displacement since (Å^2; -1 host) */
    FILE *log;
    struct hmd_energy_csv *csv;
    struct hmd_xyz_traj *xyz;
    struct hmd_netcdf_traj *nc;
    int64_t last_frame_step; /* step of the last trajectory frame, -1 before any */
};

/* Model deviation on the fly (run_devi.c; nmodels 0 with one model). */
struct md_devi {
    int nmodels;              /* the run's -m models, 0 with one */
    struct hmd_evaluator *ev; /* [nmodels] ev[1..] the other models (owned); ev[0] unused */
    FILE *fp;                 /* rank 0: <deffnm>.model_devi.out */
    char path[HMD_MD_NAME_MAX];
    double *atom; /* rank 0, model-devi-atomic: [natoms] per-atom force deviations */
};

struct md {
    const struct hmd_run_options *opt;
    struct hmd_params p;
    char model_path[HMD_PATH_MAX];
    uint64_t model_hash[2]; /* XXH3-128 of the model file (rank 0; zero without a model) */
    struct hmd_dp_model model;
    bool has_model;            /* a Deep Potential (-m or `model`); else the topology alone */
    bool has_top;              /* -p: the classical force field of `top` */
    struct hmd_topology top;   /* every rank */
    struct hmd_ff_settings ff; /* its settings; ff.nnp_group points at `group` for hybrid */
    unsigned char *group;      /* [natoms] the nnp-group (hybrid ML/MM), or NULL */
    struct hmd_frame *frames;  /* rank 0: frames[0] is the start configuration (names, residues) */
    int nframes;
    struct hmd_system sys;     /* this rank's atoms and subdomain, the cell */
    struct hmd_forces fs;      /* the force calculation */
    struct hmd_device_run gpu; /* backend = cuda: the step on the GPU, else empty */
    double next_disp;          /* device step: the displacement the next step will have */
    struct hmd_thermostat th;
    double ndof;                  /* degrees of freedom of the kinetic energy */
    double thermostat_work;       /* kinetic energy added by the thermostat so far (eV) */
    struct hmd_crescale baro;     /* pcoupl = c-rescale: the barostat's parameters */
    double barostat_work;         /* energy the barostat gave the system so far (eV) */
    double h_list[3][3];          /* the cell at the last list build (Å), for md_barostat_drift
                                     and the checkpoint */
    struct hmd_cuda_scale *scale; /* backend = cuda with pcoupl: the device's scaling (owned) */
    int64_t step;
    int64_t first_step;   /* the step the run started from: 0, or the checkpoint's (-cpi) */
    int64_t list_step;    /* step of the last neighbour-list build */
    double *cpt_x;        /* -cpi with list positions of an earlier step, until the first
                             forces (set-up on the host, md_device_resume on the device): the
                             checkpoint's positions [natoms][3] by id (every rank; owned) */
    double cpt_h[3][3];   /* ... and the checkpoint's cell (the list's is h_list) */
    double cpt_disp2;     /* ... and the device's predicted displacement (Å^2; < 0 unknown) */
    int stop_signal;      /* SIGTERM or SIGINT seen by every rank: the loop ends after the step */
    bool stop_maxh;       /* -maxh reached (rank 0's clock, agreed): the loop ends too */
    bool checkpoint_due;  /* -cpt: write a checkpoint of this step before the next */
    int64_t ncheckpoints; /* periodic checkpoints written so far */
    double t_begin;       /* wall time at the run's start (s), for -cpt and -maxh */
    struct md_outputs out;
    struct md_devi devi;
    char backend[512]; /* the compute backend chosen, for the log */
    struct hmd_dlb dlb;
    double t_force_mark; /* fs.t_force at the last balancing */
    /* backend = cuda: the device's halo clock at the last accounting (md_device_account), and
     * what it measured since the step loop began */
    struct hmd_cuda_md_times halo_mark;
    double halo_wait_mark[2];
    struct md_halo_times {
        double forward_s, reverse_s;
        double wait_s[2]; /* of which the transport waited for other ranks, forward and reverse */
        bool has_wait;    /* ... when the transport measures it */
        long long forwards, reverses;
    } halo;
    /* backend = cuda: where the list steps of the step loop went (host wall time, s): the first
     * half step and positions to the host, migration and ghosts on the host, then the device's
     * part (cuda_api.h hmd_cuda_list_times) */
    struct md_list_times {
        long steps;
        double to_host_s, host_s;
        struct hmd_cuda_list_times device;
        double slowest_s;     /* the slowest list step's whole time ... */
        int64_t slowest_step; /* ... and its step (with steps > 0) */
    } list;
    /* force evaluations that left neighbours out of the descriptors (more within rcut than sel) */
    struct {
        int64_t evaluations, first_step; /* first_step -1 before any */
        long max_dropped;
    } sel;
    /* reporting */
    struct hmd_timers timers;
    struct hmd_thermo last;
    struct hmd_thermo_avg avg;
    bool progress;     /* progress line on stderr */
    bool progress_tty; /* ... rewritten in place */
    double t_start, t_last_progress;
};

/* setup.c: the parameters (defaults, -f, -set, -nsteps, -backend, the model's path); then
 * the model, structure (and -cpi), velocities, the force calculation and the first borders,
 * every input checked before any output exists. Collective. */
int md_read_parameters(struct md *md);
int md_setup(struct md *md);

/* em_run.c: energy minimisation instead of dynamics (integrator = steep or fire). */
bool md_minimizing(const struct hmd_params *p);
/* Minimises the structure's energy, writes <deffnm>.log and <deffnm>.gro (the minimised
 * structure); not converging within nsteps is a note, not an error. Collective; after
 * md_read_parameters, instead of md_setup. */
int md_minimize(struct md *md);

/* outputs.c */
int md_open_outputs(struct md *md);     /* rank 0 creates them; collective */
int md_write_outputs(struct md *md);    /* an output step's lines and frames */
int md_write_final(struct md *md);      /* last frame, .gro, .cpt; collective */
int md_write_checkpoint(struct md *md); /* .cpt of this step (host state); collective */
void md_close_outputs(struct md *md);
void md_finish(struct md *md, double wall); /* the performance table and run record */
void md_output_path(const struct md *md, const char *suffix, char *out, size_t len);
void md_note_dropped(struct md *md);      /* neighbours beyond sel, said once */
int md_check_energy(const struct md *md); /* a non-finite energy stops the run */
bool md_every(int64_t step, int n);       /* step is a multiple of n > 0 */

/* run_devi.c: the model deviation of -m a.dp b.dp ... (nothing with one model) */
/* Opens the other models and checks that they go with the first (same cut-off and types,
 * hmd_model_devi_check). Collective; in md_setup, after the system is loaded. */
int md_devi_setup(struct md *md);
/* Rank 0 creates <deffnm>.model_devi.out (backing up an old one) and writes its header. */
int md_devi_open(struct md *md);
/* Whether this step writes a deviation row (every model-devi-freq steps). */
bool md_devi_step(const struct md *md);
/* Evaluates the other models on the gathered positions (md->out.gather_x; the run's forces in
 * gather_f) and writes the row of this step. Collective. */
int md_devi_write(struct md *md);
/* Closes the file and the models; HMD_EIO when the file cannot be completed. */
int md_devi_close(struct md *md);

/* barostat.c: pcoupl = c-rescale, host and device step */
/* Fills md->baro from the parameters (refuses a cell that is not periodic in 3D) and takes
 * the cell as the first list's (md->h_list). After the backend is chosen. */
int md_barostat_setup(struct md *md);
/* Coupling steps (a multiple of nstpcouple other than 0), between that step and the next,
 * after its outputs and checkpoint: scales the cell, home positions and velocities (on the
 * device with the device step) and adds to md->barostat_work. Collective. */
int md_barostat_step(struct md *md);
/* A neighbour-list build at this step: md->list_step and the list's cell md->h_list. */
void md_note_list_build(struct md *md);
/* How far the cell vectors moved since the last list build (Å, summed over a, b, c); 0
 * without pressure coupling. */
double md_barostat_drift(const struct md *md);
/* P0 V (eV) of the conserved quantity; 0 without pressure coupling. */
double md_barostat_pv(const struct md *md);

/* step_host.c */
int md_start_host(struct md *md); /* the forces of the first step */
int md_step_host(struct md *md);  /* one step */
/* An atom that moved more than half the buffer before its list rebuild (nstlist set): the
 * error that stops the run (id -1: not known). */
int md_moved_too_far(const struct md *md, int64_t id, double moved);

/* step_device.c */
int md_start_device(struct md *md);
int md_step_device(struct md *md);
/* Waits for the steps queued on the device (their time counts as Force). */
int md_device_wait(struct md *md);
/* What an output step writes, copied from the device. */
int md_device_fetch(struct md *md, bool energy, bool frame);
/* After md_device_wait: the halo clock's time since the last call moves from Force to Halo
 * (md->halo adds it up); `start` only takes the clock's reading. */
int md_device_account(struct md *md, bool start);

/* device_state.c (backend = cuda) */
/* -cpi with list positions of an earlier step (md->cpt_x): after the device's first list was
 * built at them, the home atoms take the checkpoint's positions and cell, the ghosts follow,
 * the forces are computed again and the predicted displacement is the checkpoint's; cpt_x is
 * freed. Nothing without cpt_x. Collective. */
int md_device_resume(struct md *md);
/* The home atoms' positions at the last list build into x_build[nlocal][3] (this rank's order)
 * and *disp2, the largest squared displacement predicted since (Å^2, max over ranks). Waits for
 * the queued steps. Collective. */
int md_device_list_positions(struct md *md, double *x_build, double *disp2);
/* Pressure coupling: the virial of this step into md->fs (fetched) and the kinetic-energy
 * tensor ke[9] = sum m v_a v_b over every rank's home atoms (eV; md/integrate.c's). After the
 * queued steps are done. Collective. */
int md_device_kinetic(struct md *md, double ke[9]);
/* ... and the scaling of the home atoms by mu (md/crescale.h), *dkin this rank's kinetic
 * energy change (eV). After md_device_kinetic. Collective. */
int md_device_scale(struct md *md, const double mu[3][3], double *dkin);

#endif /* HMD_MD_RUN_INTERNAL_H */
