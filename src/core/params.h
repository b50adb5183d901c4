/* Run parameters: the .mdp-style `key = value` file, -set overrides, and the effective
 * parameter echo (like grompp's mdout.mdp).
 *
 * Names follow GROMACS where the concept exists; dashes and underscores in keys are equivalent.
 * Units are halomd's (LAMMPS metal): Å, ps, K. The full key list with defaults, units and
 * allowed values lives in one table in params.c, which is also what docs/parameters.md
 * describes and what hmd_params_write() prints.
 */
#ifndef HMD_CORE_PARAMS_H
#define HMD_CORE_PARAMS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum hmd_tcoupl {
    HMD_TCOUPL_NO,
    HMD_TCOUPL_VRESCALE, /* Bussi stochastic velocity rescaling (CSVR) */
    HMD_TCOUPL_LANGEVIN, /* Langevin friction + noise on every atom */
};

enum hmd_pcoupl {
    HMD_PCOUPL_NO,
    HMD_PCOUPL_CRESCALE, /* stochastic cell rescaling (md/crescale.h) */
};

enum hmd_pcoupltype {
    HMD_PCOUPLTYPE_ISOTROPIC,
    HMD_PCOUPLTYPE_SEMIISOTROPIC,
    HMD_PCOUPLTYPE_ANISOTROPIC,
};

enum hmd_precision {
    HMD_PRECISION_DOUBLE, /* everything in double */
    HMD_PRECISION_MIXED,  /* networks in float, positions/accumulation/integration in double */
};

enum hmd_dd_mode {
    HMD_DD_HALO,       /* spatial decomposition, ghosts as neighbours only, reverse halo */
    HMD_DD_REPLICATED, /* all-gather positions, 2 x cut-off halo as full atoms, reduce forces */
};

enum hmd_dlb_mode {
    HMD_DLB_AUTO, /* balance when the imbalance exceeds dlb_threshold */
    HMD_DLB_YES,
    HMD_DLB_NO,
};

enum hmd_model_compress {
    HMD_COMPRESS_AUTO, /* the model file's tables when it has them, else the networks */
    HMD_COMPRESS_YES,  /* tabulate the embedding nets (as `dp compress`) unless the file has */
    HMD_COMPRESS_NO,   /* always the networks, tables in the file ignored */
};

enum hmd_com_mode {
    HMD_COM_LINEAR, /* remove centre-of-mass velocity every nstcomm steps */
    HMD_COM_NONE,
};

/* Classical force field (a GROMACS topology, ff/classical.h): electrostatics and van der Waals. */
enum hmd_coulombtype {
    HMD_COULOMB_CUTOFF,         /* plain cut-off (GROMACS's Verlet scheme: reaction field with
                                   epsilon-rf = epsilon-r) */
    HMD_COULOMB_REACTION_FIELD, /* reaction field beyond rcoulomb with epsilon-rf */
};

enum hmd_coulomb_modifier {
    HMD_COULOMB_MOD_POTENTIAL_SHIFT, /* potential zero at rcoulomb (reaction field always is) */
    HMD_COULOMB_MOD_NONE,
};

enum hmd_vdw_modifier {
    HMD_VDW_MOD_POTENTIAL_SHIFT,  /* Lennard-Jones shifted to zero at rvdw */
    HMD_VDW_MOD_NONE,             /* plain cut-off */
    HMD_VDW_MOD_FORCE_SWITCH,     /* force switched to zero between rvdw-switch and rvdw */
    HMD_VDW_MOD_POTENTIAL_SWITCH, /* potential switched to zero between rvdw-switch and rvdw */
};

#define HMD_PATH_MAX 4096
#define HMD_PARAMS_MAX_KEYS 96

/* Where a value came from, for messages and the parameter echo. A file origin points into
 * hmd_params.origin_file of the struct it belongs to, so it does not survive a struct copy. */
struct hmd_param_origin {
    const char *file; /* file name, "-set", "derived" (by hmd_params_check), or NULL: default */
    int line;         /* 1-based line in file, 0 otherwise */
};

struct hmd_params {
    /* integration */
    char integrator[16]; /* "md-vv" (velocity Verlet; "md" is stored as "md-vv"), "steep" or
                            "fire" (energy minimisation, md/em_run.c) */
    double dt;           /* time step (ps) */
    int64_t nsteps;      /* number of steps; -1 = run forever */
    /* energy minimisation (integrator = steep or fire) */
    double emtol;  /* converged when the largest force is below it (eV/Å) */
    double emstep; /* steep: first largest move (Å); fire: first time step (ps) */
    /* neighbour list */
    int nstlist;          /* rebuild every nstlist steps; 0 = only when an atom moved skin/2 */
    double verlet_buffer; /* skin added to the model cut-off (Å); from rlist - rcut if rlist set */
    double rlist;         /* list cut-off (Å); 0 until given or set by hmd_params_check */
    /* temperature coupling */
    enum hmd_tcoupl tcoupl;
    double tau_t;    /* coupling time (ps) */
    double ref_t;    /* reference temperature (K); no default: 0 until given */
    int64_t ld_seed; /* seed of the thermostat noise; -1 = from the clock (logged) */
    /* pressure coupling */
    enum hmd_pcoupl pcoupl;
    enum hmd_pcoupltype pcoupltype;
    int nstpcouple;            /* steps between couplings */
    double tau_p;              /* coupling time (ps) */
    char ref_p[128];           /* reference pressure (bar): 1, 2 or 6 numbers (md/barostat.c) */
    char compressibility[128]; /* 1/bar, as many numbers */
    /* centre-of-mass motion */
    enum hmd_com_mode com_mode;
    int nstcomm; /* steps between centre-of-mass motion removal */
    /* initial velocities */
    bool gen_vel;     /* draw Maxwell-Boltzmann velocities at start */
    double gen_temp;  /* temperature of the drawn velocities (K) */
    int64_t gen_seed; /* seed; -1 = from the clock (logged) */
    /* output intervals in steps; 0 = never */
    int nstxout;       /* trajectory frames with positions */
    int nstvout;       /* add velocities to trajectory frames */
    int nstfout;       /* add forces to trajectory frames */
    int nstenergy;     /* rows of the energy CSV */
    int nstlog;        /* thermo lines in the log */
    int nstcalcenergy; /* steps between energy/virial reductions; nstenergy, nstlog multiples
                        * (hmd_params_check lowers it to fit them, with a note) */
    /* trajectory output groups and formats (written through io/traj_xtc.h, io/traj_h5md.h) */
    int nstxout_compressed;        /* steps between XTC frames (positions); 0 = none */
    double compressed_x_precision; /* XTC precision (1/nm): 1000 keeps 0.001 nm */
    char compressed_x_grps[256];   /* output group of the XTC file (io/out_groups.h) */
    bool h5md;                     /* frames of nstxout/nstvout/nstfout also to <deffnm>.h5md */
    char h5md_grps[256];           /* output group of the H5MD file */
    /* halomd */
    char model[HMD_PATH_MAX]; /* DeePMD-kit model file (.dp), "" until given; -m overrides */
    enum hmd_precision precision;
    char backend[16]; /* "auto", "cpu" or "cuda"; availability is checked when the run starts */
    char halo_transport[16];  /* "auto", "nvshmem", "mpi", "self": the GPU step's halo */
    enum hmd_dd_mode dd_mode; /* parallel scheme under mpirun */
    enum hmd_dlb_mode dlb;    /* dynamic load balancing */
    double dlb_threshold;     /* imbalance (max/avg - 1) that triggers balancing with dlb auto */
    enum hmd_model_compress model_compress; /* tabulated embedding nets */
    double compress_stride;        /* knot spacing of the first table part; second = 10 x */
    double compress_extrapolate;   /* table end as a multiple of its upper bound */
    double compress_min_nbor_dist; /* Å; 0 = the model's own min_nbor_dist */
    int compress_check_frequency;  /* steps between table overflow checks; -1 = never */
    /* model deviation of several models (halomd run / eval -m a.dp b.dp ...) */
    int model_devi_freq;          /* steps between deviation rows; eval: step = frame * freq */
    double model_devi_relative;   /* level of the relative force deviation (eV/Å); 0 = absolute */
    double model_devi_relative_v; /* level of the relative virial deviation (eV); 0 = absolute */
    bool model_devi_atomic;       /* per-atom force deviations in model_devi.out */
    /* classical force field (a GROMACS topology); lengths in Å, not GROMACS's nm */
    char define[1024];                /* "-DNAME ..." for the topology's preprocessor */
    enum hmd_coulombtype coulombtype; /* electrostatics */
    enum hmd_coulomb_modifier coulomb_modifier;
    double rcoulomb;   /* Coulomb cut-off (Å) */
    double epsilon_r;  /* relative dielectric constant; 0 = infinity (no electrostatics) */
    double epsilon_rf; /* of the reaction field beyond rcoulomb; 0 = infinity */
    int vdwtype;       /* only cut-off (0) */
    enum hmd_vdw_modifier vdw_modifier;
    double rvdw;          /* Lennard-Jones cut-off (Å) */
    double rvdw_switch;   /* where force-switch or potential-switch starts (Å) */
    char nnp_group[1024]; /* hybrid ML/MM: index group name or residue selection; "" = none */
    /* bookkeeping of hmd_params_read/hmd_params_set: origin of each key, in table order */
    struct hmd_param_origin origin[HMD_PARAMS_MAX_KEYS];
    char origin_file[HMD_PATH_MAX]; /* the file origin[].file points to */
    /* what hmd_params_check changed, as grompp's NOTEs (one per line, "" when nothing): the
     * run writes it to the log */
    char notes[1024];
};

/* Sets every parameter to its default. */
void hmd_params_defaults(struct hmd_params *p);

/* Reads an .mdp-style file into `p` (which should hold defaults): `key = value` lines, `;`
 * starts a comment, blank lines ignored, a UTF-8 byte-order mark skipped. Errors (HMD_ECONFIG,
 * HMD_ENOINPUT when unreadable) name the file and line: an unknown key (with a "did you mean"
 * suggestion that is never a key the file sets), a key given twice (naming both lines), a line
 * without '=', an empty key or value, a bad, unsupported or out-of-range value. Every line is
 * read: the message lists every bad line, one per line of the message. Call it at most once per
 * struct, before hmd_params_set(). On error `p` may hold some of the file's values. */
int hmd_params_read(struct hmd_params *p, const char *path);

/* Applies one "key=value" override from the command line (-set); same checks as a file line,
 * the message names the option. May be called after hmd_params_read(); a key set twice with
 * -set is an error, a key from the file is replaced. */
int hmd_params_set(struct hmd_params *p, const char *assignment);

/* Cross-parameter checks after all sources are applied: every value within its range again
 * (code may have changed the struct); nstcalcenergy lowered to the greatest common divisor of
 * itself, nstenergy and nstlog when they are not multiples of it (origin "derived", a line in
 * p->notes, as grompp adjusts and notes it); ref_t
 * given when tcoupl != no, rlist and verlet-buffer not both given. `rcut` (Å, > 0) is the model
 * cut-off: a given rlist must be >= rcut and sets verlet_buffer = rlist - rcut, otherwise
 * rlist = rcut + verlet_buffer; the derived key's origin becomes "derived". Calling it again
 * gives the same result. Messages (HMD_ECONFIG) name the keys and where their values came from. */
int hmd_params_check(struct hmd_params *p, double rcut);

/* Reads the blank-separated numbers of `text` (ref-p, compressibility) into out[max].
 * Returns how many, or -1 when one is not a finite number or there are more than max. */
int hmd_params_numbers(const char *text, double *out, int max);

/* Writes a header comment and every parameter, defaults included, as `key = value ; origin`
 * lines in table order. Reading the output back with hmd_params_read() gives the same values:
 * a key with no default that was not given (ref-t, rlist, model) and a key derived by
 * hmd_params_check() are written as comment lines, so that they stay unset on reading.
 * Returns HMD_EIO when writing fails. */
int hmd_params_write(const struct hmd_params *p, FILE *out);

/* Writes the Markdown table of every key (type, default, unit, allowed values, meaning) that
 * docs/parameters.md contains; a unit test keeps the two identical. Returns HMD_EIO when
 * writing fails. */
int hmd_params_write_reference(FILE *out);

/* Origin of the value of `key` (any spelling); {NULL, 0} for a default or an unknown key. */
struct hmd_param_origin hmd_params_origin(const struct hmd_params *p, const char *key);

/* The same as text for messages, into buf[n]: "md.mdp:12", "-set" or "default". */
void hmd_params_origin_text(const struct hmd_params *p, const char *key, char *buf, size_t n);

#endif /* HMD_CORE_PARAMS_H */
