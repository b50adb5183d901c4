/* Run parameters. One table (params[] below) lists every key; parsing, validation, the
 * "did you mean" suggestion, the echo (hmd_params_write) and the reference table of
 * docs/parameters.md (hmd_params_write_reference) are all loops over it. Defaults are written
 * as text and go through the same parser as user input, so a default cannot break a rule.
 */
#include "core/params.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

enum param_type {
    P_INT,   /* int */
    P_INT64, /* int64_t */
    P_REAL,  /* double */
    P_BOOL,  /* bool, from the words in `bools` */
    P_ENUM,  /* a C enum, from a word list */
    P_WORD,  /* a char array holding the canonical word of a word list */
    P_PATH,  /* a char array holding a file path */
    P_TEXT,  /* a char array holding free text (no ';'; group names) */
};

/* One word of an enum key. Several words may share a value (aliases); the first one is the
 * canonical spelling. A negative value marks a GROMACS word that halomd does not implement. */
struct choice {
    const char *word;
    int value;
    const char *hint; /* for an unsupported word: what to use instead */
};

#define UNSUPPORTED (-1)

struct param_def {
    const char *name; /* GROMACS spelling, with dashes */
    enum param_type type;
    const char *def;              /* default as text; "" = no default, unset until given */
    const char *unit;             /* "" when dimensionless */
    double min, max;              /* allowed range of a number (-INFINITY / INFINITY: open) */
    bool min_excl;                /* the value must be strictly above min */
    const struct choice *choices; /* allowed words of P_BOOL, P_ENUM, P_WORD */
    size_t offset, size;          /* the field in struct hmd_params */
    const char *doc;              /* one line for the echo and the docs */
};

#define NUM(lo, hi) (lo), (hi), false, NULL   /* lo <= value <= hi */
#define NUM_GT(lo, hi) (lo), (hi), true, NULL /* lo < value <= hi */
#define WORDS(list) 0, 0, false, (list)
#define TEXT 0, 0, false, NULL
#define FIELD(f) offsetof(struct hmd_params, f), sizeof(((struct hmd_params *)0)->f)

/* P_ENUM fields are written through an int pointer. */
_Static_assert(sizeof(enum hmd_tcoupl) == sizeof(int), "enum hmd_tcoupl is not int-sized");
_Static_assert(sizeof(enum hmd_com_mode) == sizeof(int), "enum hmd_com_mode is not int-sized");
_Static_assert(sizeof(enum hmd_precision) == sizeof(int), "enum hmd_precision is not int-sized");
_Static_assert(sizeof(enum hmd_dd_mode) == sizeof(int), "enum hmd_dd_mode is not int-sized");
_Static_assert(sizeof(enum hmd_dlb_mode) == sizeof(int), "enum hmd_dlb_mode is not int-sized");
_Static_assert(sizeof(enum hmd_model_compress) == sizeof(int),
               "enum hmd_model_compress is not int-sized");
_Static_assert(sizeof(enum hmd_coulombtype) == sizeof(int),
               "enum hmd_coulombtype is not int-sized");
_Static_assert(sizeof(enum hmd_coulomb_modifier) == sizeof(int),
               "enum hmd_coulomb_modifier is not int-sized");
_Static_assert(sizeof(enum hmd_vdw_modifier) == sizeof(int),
               "enum hmd_vdw_modifier is not int-sized");

static const struct choice bools[] = {
    {"yes", 1, NULL}, {"no", 0, NULL},  {"true", 1, NULL}, {"false", 0, NULL},
    {"on", 1, NULL},  {"off", 0, NULL}, {NULL, 0, NULL},
};

static const struct choice integrators[] = {
    {"md-vv", 0, NULL},
    {"md", 0, NULL}, /* GROMACS's md is leap-frog; halomd has velocity Verlet only */
    {"sd", UNSUPPORTED, "use integrator = md-vv with tcoupl = langevin"},
    {"bd", UNSUPPORTED, NULL},
    {"steep", 1, NULL},
    {"fire", 2, NULL},
    {"cg", UNSUPPORTED, "use integrator = steep or fire"},
    {"l-bfgs", UNSUPPORTED, "use integrator = steep or fire"},
    {NULL, 0, NULL},
};

static const struct choice tcoupls[] = {
    {"no", HMD_TCOUPL_NO, NULL},
    {"v-rescale", HMD_TCOUPL_VRESCALE, NULL},
    {"langevin", HMD_TCOUPL_LANGEVIN, NULL},
    {"berendsen", UNSUPPORTED,
     "v-rescale relaxes like Berendsen but samples the canonical "
     "ensemble"},
    {"nose-hoover", UNSUPPORTED, "use v-rescale or langevin"},
    {"andersen", UNSUPPORTED, "use v-rescale or langevin"},
    {"andersen-massive", UNSUPPORTED, "use v-rescale or langevin"},
    {NULL, 0, NULL},
};

static const struct choice com_modes[] = {
    {"linear", HMD_COM_LINEAR, NULL},
    {"none", HMD_COM_NONE, NULL},
    {"angular", UNSUPPORTED, NULL},
    {"linear-acceleration-correction", UNSUPPORTED, NULL},
    {NULL, 0, NULL},
};

static const struct choice precisions[] = {
    {"double", HMD_PRECISION_DOUBLE, NULL},
    {"mixed", HMD_PRECISION_MIXED, NULL},
    {NULL, 0, NULL},
};

static const struct choice halo_transports[] = {
    {"auto", 0, NULL}, {"nvshmem", 1, NULL}, {"mpi", 2, NULL}, {"self", 3, NULL}, {NULL, 0, NULL},
};

static const struct choice backends[] = {
    {"auto", 0, NULL},
    {"cpu", 1, NULL},
    {"cuda", 2, NULL},
    {NULL, 0, NULL},
};

static const struct choice dd_modes[] = {
    {"halo", HMD_DD_HALO, NULL},
    {"replicated", HMD_DD_REPLICATED, NULL},
    {NULL, 0, NULL},
};

static const struct choice dlb_modes[] = {
    {"auto", HMD_DLB_AUTO, NULL},
    {"yes", HMD_DLB_YES, NULL},
    {"no", HMD_DLB_NO, NULL},
    {NULL, 0, NULL},
};

static const struct choice compress_modes[] = {
    {"auto", HMD_COMPRESS_AUTO, NULL},
    {"yes", HMD_COMPRESS_YES, NULL},
    {"no", HMD_COMPRESS_NO, NULL},
    {NULL, 0, NULL},
};

static const struct choice coulombtypes[] = {
    {"cut-off", HMD_COULOMB_CUTOFF, NULL},
    {"reaction-field", HMD_COULOMB_REACTION_FIELD, NULL},
    {"pme", UNSUPPORTED, "PME is not implemented; use reaction-field"},
    {"ewald", UNSUPPORTED, "Ewald is not implemented; use reaction-field"},
    {"p3m-ad", UNSUPPORTED, "P3M is not implemented; use reaction-field"},
    {"reaction-field-zero", UNSUPPORTED, "use reaction-field"},
    {"shift", UNSUPPORTED, "GROMACS's Verlet scheme has no shift either; use reaction-field"},
    {"switch", UNSUPPORTED, "GROMACS's Verlet scheme has no switch either; use reaction-field"},
    {"user", UNSUPPORTED, NULL},
    {"pme-switch", UNSUPPORTED, NULL},
    {"pme-user", UNSUPPORTED, NULL},
    {"pme-user-switch", UNSUPPORTED, NULL},
    {NULL, 0, NULL},
};

static const struct choice coulomb_modifiers[] = {
    {"potential-shift", HMD_COULOMB_MOD_POTENTIAL_SHIFT, NULL},
    {"potential-shift-verlet", HMD_COULOMB_MOD_POTENTIAL_SHIFT, NULL},
    {"none", HMD_COULOMB_MOD_NONE, NULL},
    {"exact-cutoff", UNSUPPORTED, NULL},
    {NULL, 0, NULL},
};

static const struct choice vdwtypes[] = {
    {"cut-off", 0, NULL},
    {"pme", UNSUPPORTED, "LJ-PME is not implemented; use cut-off"},
    {"shift", UNSUPPORTED, "use vdwtype = cut-off with vdw-modifier = force-switch"},
    {"switch", UNSUPPORTED, "use vdwtype = cut-off with vdw-modifier = potential-switch"},
    {"user", UNSUPPORTED, NULL},
    {NULL, 0, NULL},
};

static const struct choice vdw_modifiers[] = {
    {"potential-shift", HMD_VDW_MOD_POTENTIAL_SHIFT, NULL},
    {"potential-shift-verlet", HMD_VDW_MOD_POTENTIAL_SHIFT, NULL},
    {"none", HMD_VDW_MOD_NONE, NULL},
    {"force-switch", HMD_VDW_MOD_FORCE_SWITCH, NULL},
    {"potential-switch", HMD_VDW_MOD_POTENTIAL_SWITCH, NULL},
    {"exact-cutoff", UNSUPPORTED, NULL},
    {NULL, 0, NULL},
};

static const struct choice pcoupls[] = {
    {"no", HMD_PCOUPL_NO, NULL},
    {"c-rescale", HMD_PCOUPL_CRESCALE, NULL},
    {"berendsen", UNSUPPORTED, "use c-rescale (first-order like Berendsen, right fluctuations)"},
    {"parrinello-rahman", UNSUPPORTED, "use c-rescale"},
    {"mttk", UNSUPPORTED, "use c-rescale"},
    {NULL, 0, NULL},
};

static const struct choice pcoupltypes[] = {
    {"isotropic", HMD_PCOUPLTYPE_ISOTROPIC, NULL},
    {"semiisotropic", HMD_PCOUPLTYPE_SEMIISOTROPIC, NULL},
    {"anisotropic", HMD_PCOUPLTYPE_ANISOTROPIC, NULL},
    {"surface-tension", UNSUPPORTED, NULL},
    {NULL, 0, NULL},
};

static const struct param_def params[] = {
    {"integrator", P_WORD, "md-vv", "", WORDS(integrators), FIELD(integrator),
     "integration algorithm: md-vv = velocity Verlet; md is an alias of md-vv; steep "
     "(steepest descent) and fire (FIRE) minimise the energy"},
    {"dt", P_REAL, "0.0005", "ps", NUM_GT(0, 0.01), FIELD(dt), "time step"},
    {"nsteps", P_INT64, "0", "", NUM(-1, INFINITY), FIELD(nsteps),
     "number of steps; -1 = run until stopped"},
    {"emtol", P_REAL, "0.0104", "eV/Å", NUM_GT(0, INFINITY), FIELD(emtol),
     "steep, fire: converged when the largest force is below this (GROMACS's 10 kJ/mol/nm)"},
    {"emstep", P_REAL, "0.1", "", NUM_GT(0, INFINITY), FIELD(emstep),
     "steep: first largest atom move (Å); fire: first time step (ps; when not given, "
     "0.0002 ps, the largest being 10 x emstep)"},
    {"nstlist", P_INT, "0", "", NUM(0, INFINITY), FIELD(nstlist),
     "steps between neighbour-list rebuilds; 0 = rebuild when an atom has moved more than "
     "half the buffer"},
    {"verlet-buffer", P_REAL, "2", "Å", NUM(0, INFINITY), FIELD(verlet_buffer),
     "neighbour-list buffer (skin) added to the model cut-off"},
    {"rlist", P_REAL, "", "Å", NUM(0, INFINITY), FIELD(rlist),
     "neighbour-list cut-off, >= the model cut-off; when not given: model cut-off + "
     "verlet-buffer"},
    {"tcoupl", P_ENUM, "no", "", WORDS(tcoupls), FIELD(tcoupl), "temperature coupling"},
    {"tau-t", P_REAL, "0.1", "ps", NUM_GT(0, INFINITY), FIELD(tau_t), "temperature coupling time"},
    {"ref-t", P_REAL, "", "K", NUM(0, INFINITY), FIELD(ref_t),
     "reference temperature; required when tcoupl is not no"},
    {"ld-seed", P_INT64, "-1", "", NUM(-1, INFINITY), FIELD(ld_seed),
     "seed of the thermostat noise; -1 = from the clock (logged)"},
    {"pcoupl", P_ENUM, "no", "", WORDS(pcoupls), FIELD(pcoupl),
     "pressure coupling: c-rescale = stochastic cell rescaling (Bernetti and Bussi 2020; CPU "
     "and GPU step)"},
    {"pcoupltype", P_ENUM, "isotropic", "", WORDS(pcoupltypes), FIELD(pcoupltype),
     "isotropic (one ref-p and compressibility), semiisotropic (xy and z: two), anisotropic "
     "(xx yy zz xy xz yz: six)"},
    {"nstpcouple", P_INT, "10", "", NUM(1, INFINITY), FIELD(nstpcouple),
     "steps between pressure couplings"},
    {"tau-p", P_REAL, "5", "ps", NUM_GT(0, INFINITY), FIELD(tau_p), "pressure coupling time"},
    {"ref-p", P_TEXT, "1", "bar", TEXT, FIELD(ref_p),
     "reference pressure: one, two or six numbers as pcoupltype says"},
    {"compressibility", P_TEXT, "4.5e-5", "1/bar", TEXT, FIELD(compressibility),
     "isothermal compressibility, as many numbers as ref-p (water: 4.5e-5)"},
    {"comm-mode", P_ENUM, "linear", "", WORDS(com_modes), FIELD(com_mode),
     "removal of the centre-of-mass motion"},
    {"nstcomm", P_INT, "100", "", NUM(1, INFINITY), FIELD(nstcomm),
     "steps between removals of the centre-of-mass motion"},
    {"gen-vel", P_BOOL, "no", "", WORDS(bools), FIELD(gen_vel),
     "draw Maxwell-Boltzmann velocities at start"},
    {"gen-temp", P_REAL, "300", "K", NUM(0, INFINITY), FIELD(gen_temp),
     "temperature of the drawn velocities"},
    {"gen-seed", P_INT64, "-1", "", NUM(-1, INFINITY), FIELD(gen_seed),
     "seed of the drawn velocities; -1 = from the clock (logged)"},
    {"nstxout", P_INT, "0", "", NUM(0, INFINITY), FIELD(nstxout),
     "steps between trajectory frames; 0 = none"},
    {"nstvout", P_INT, "0", "", NUM(0, INFINITY), FIELD(nstvout),
     "steps between velocities written to the trajectory; 0 = none"},
    {"nstfout", P_INT, "0", "", NUM(0, INFINITY), FIELD(nstfout),
     "steps between forces written to the trajectory; 0 = none"},
    {"nstenergy", P_INT, "100", "", NUM(0, INFINITY), FIELD(nstenergy),
     "steps between rows of the energy CSV, a multiple of nstcalcenergy; 0 = none"},
    {"nstlog", P_INT, "100", "", NUM(0, INFINITY), FIELD(nstlog),
     "steps between energy lines in the log, a multiple of nstcalcenergy; 0 = none"},
    {"nstcalcenergy", P_INT, "100", "", NUM(1, INFINITY), FIELD(nstcalcenergy),
     "steps between computations of energies and virial"},
    {"nstxout-compressed", P_INT, "0", "", NUM(0, INFINITY), FIELD(nstxout_compressed),
     "steps between frames of the compressed trajectory <deffnm>.xtc (positions of "
     "compressed-x-grps); 0 = none"},
    {"compressed-x-precision", P_REAL, "1000", "1/nm", NUM_GT(0, INFINITY),
     FIELD(compressed_x_precision), "precision of the compressed trajectory (1000: 0.001 nm)"},
    {"compressed-x-grps", P_TEXT, "System", "", TEXT, FIELD(compressed_x_grps),
     "output group of the compressed trajectory: System, Water, non-Water, residue names, "
     "@element (docs/formats.md)"},
    {"h5md", P_BOOL, "no", "", WORDS(bools), FIELD(h5md),
     "also write the frames of nstxout, nstvout and nstfout to <deffnm>.h5md (H5MD, double)"},
    {"h5md-grps", P_TEXT, "System", "", TEXT, FIELD(h5md_grps),
     "output group of the H5MD trajectory (as compressed-x-grps)"},
    {"model", P_PATH, "", "", TEXT, FIELD(model),
     "DeePMD-kit model file (.dp); -m on the command line overrides it"},
    {"precision", P_ENUM, "double", "", WORDS(precisions), FIELD(precision),
     "double = all in fp64; mixed (GPU) = the descriptor's networks in fp32 (se_e2_a "
     "embedding nets or tables; DPA-1 embedding and attention), everything else in fp64"},
    {"backend", P_WORD, "auto", "", WORDS(backends), FIELD(backend),
     "compute device; auto = cuda when this build and machine have it, else cpu"},
    {"halo-transport", P_WORD, "auto", "", WORDS(halo_transports), FIELD(halo_transport),
     "how the GPU step moves its halo: nvshmem = GPU-initiated (NVSHMEM, fused kernels), mpi = "
     "host-staged through MPI, self = one rank's periodic images; auto = self on one rank, else "
     "nvshmem when this build and the run can use it, else mpi"},
    {"dd-mode", P_ENUM, "halo", "", WORDS(dd_modes), FIELD(dd_mode),
     "parallel scheme under mpirun: halo = home atoms and a cut-off-wide halo with forces "
     "returned to owners; replicated = all-gathered positions, a 2 x cut-off halo evaluated as "
     "full atoms, all-reduced forces (the baseline of arXiv 2604.07276)"},
    {"dlb", P_ENUM, "auto", "", WORDS(dlb_modes), FIELD(dlb),
     "dynamic load balancing of the subdomain boundaries; auto = when the imbalance exceeds "
     "dlb-threshold"},
    {"dlb-threshold", P_REAL, "0.05", "", NUM(0, INFINITY), FIELD(dlb_threshold),
     "imbalance (max/avg - 1 of the force time) above which dlb = auto balances"},
    {"model-compress", P_ENUM, "auto", "", WORDS(compress_modes), FIELD(model_compress),
     "tabulated embedding nets, as `dp compress`: auto = the model file's tables when it has "
     "them; yes = tabulate the networks at start; no = always the networks"},
    {"compress-stride", P_REAL, "0.01", "", NUM_GT(0, 1), FIELD(compress_stride),
     "knot spacing of the first table part (dimensionless embedding input); the second part "
     "uses 10 x (dp compress -s)"},
    {"compress-extrapolate", P_REAL, "5", "", NUM_GT(1, 1000), FIELD(compress_extrapolate),
     "end of the table as a multiple of its upper bound (dp compress -e)"},
    {"compress-min-nbor-dist", P_REAL, "0", "Å", NUM(0, INFINITY), FIELD(compress_min_nbor_dist),
     "closest neighbour distance the table range is made for; 0 = the model's own "
     "min_nbor_dist"},
    {"compress-check-frequency", P_INT, "-1", "", NUM(-1, INFINITY),
     FIELD(compress_check_frequency),
     "steps between counts of table inputs beyond the table's fine part and beyond its end, "
     "reported in the log (dp compress -f); -1 or 0 = never"},
    {"model-devi-freq", P_INT, "100", "", NUM(1, INFINITY), FIELD(model_devi_freq),
     "with several models (-m a.dp b.dp ...): steps between rows of model_devi.out "
     "(pair_style deepmd out_freq); halomd eval numbers frame f as step f x this (dp "
     "model-devi -f)"},
    {"model-devi-relative", P_REAL, "", "eV/Å", NUM_GT(0, INFINITY), FIELD(model_devi_relative),
     "when given: relative force deviation, divided by |mean force| + this level "
     "(pair_style deepmd relative)"},
    {"model-devi-relative-v", P_REAL, "", "eV", NUM_GT(0, INFINITY), FIELD(model_devi_relative_v),
     "when given: relative virial deviation, each component divided by |its mean| / natoms + "
     "this level (pair_style deepmd relative_v)"},
    {"model-devi-atomic", P_BOOL, "no", "", WORDS(bools), FIELD(model_devi_atomic),
     "the force deviation of every atom in model_devi.out (pair_style deepmd atomic)"},
    {"define", P_TEXT, "", "", TEXT, FIELD(define),
     "-D options of the topology's preprocessor, e.g. -DFLEXIBLE (classical force field)"},
    {"coulombtype", P_ENUM, "cut-off", "", WORDS(coulombtypes), FIELD(coulombtype),
     "electrostatics of the classical force field (GROMACS's Verlet scheme)"},
    {"coulomb-modifier", P_ENUM, "potential-shift", "", WORDS(coulomb_modifiers),
     FIELD(coulomb_modifier),
     "potential-shift = Coulomb potential zero at rcoulomb (reaction-field always is)"},
    {"rcoulomb", P_REAL, "10", "Å", NUM(3, INFINITY), FIELD(rcoulomb),
     "Coulomb cut-off, in Å (GROMACS's nm x 10)"},
    {"epsilon-r", P_REAL, "1", "", NUM(0, INFINITY), FIELD(epsilon_r),
     "relative dielectric constant; 0 = infinity (no electrostatics)"},
    {"epsilon-rf", P_REAL, "0", "", NUM(0, INFINITY), FIELD(epsilon_rf),
     "relative dielectric constant of the reaction field beyond rcoulomb; 0 = infinity"},
    {"vdwtype", P_ENUM, "cut-off", "", WORDS(vdwtypes), FIELD(vdwtype),
     "van der Waals (Lennard-Jones) of the classical force field"},
    {"vdw-modifier", P_ENUM, "potential-shift", "", WORDS(vdw_modifiers), FIELD(vdw_modifier),
     "Lennard-Jones at the cut-off: potential-shift, none, force-switch or potential-switch "
     "(from rvdw-switch to rvdw)"},
    {"rvdw", P_REAL, "10", "Å", NUM(3, INFINITY), FIELD(rvdw),
     "Lennard-Jones cut-off, in Å (GROMACS's nm x 10)"},
    {"rvdw-switch", P_REAL, "0", "Å", NUM(0, INFINITY), FIELD(rvdw_switch),
     "where force-switch and potential-switch start, in Å; below rvdw"},
    {"nnp-group", P_TEXT, "", "", TEXT, FIELD(nnp_group),
     "hybrid ML/MM (-m with -p): the atoms the Deep Potential treats, the classical force "
     "field the rest and between them; a group name of the -n index file, or `resname NAME "
     "...` or `resid A-B ...` (topology residues); empty = no hybrid"},
};

#define NPARAMS (sizeof params / sizeof params[0])
_Static_assert(NPARAMS <= HMD_PARAMS_MAX_KEYS, "raise HMD_PARAMS_MAX_KEYS");

/* Origins other than a file; compared by address. */
static const char set_origin[] = "-set";
static const char derived_origin[] = "derived";

/* Room for a message prefix ("path:line") or an origin description. */
#define WHERE_MAX (HMD_PATH_MAX + 32)

static int config_error(const char *where, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Records "<where>: <message>" as an HMD_ECONFIG error. */
static int config_error(const char *where, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hmd_error_set(HMD_ECONFIG, "%s: %s", where, msg);
}

/* Keys and words compare like GROMACS's: case-insensitive, '_' equal to '-'. */
static int fold(int c)
{
    return c == '_' ? '-' : tolower((unsigned char)c);
}

static bool words_equal(const char *a, const char *b)
{
    while (*a && fold(*a) == fold(*b)) {
        a++;
        b++;
    }
    return *a == '\0' && *b == '\0';
}

static int find_key(const char *key)
{
    for (size_t i = 0; i < NPARAMS; i++) {
        if (words_equal(key, params[i].name)) {
            return (int)i;
        }
    }
    return -1;
}

/* Index of a key this file names itself. */
static int key_index(const char *name)
{
    int i = find_key(name);
    HMD_ASSERT(i >= 0);
    return i;
}

/* Levenshtein distance between a user's key and a table name, on folded characters, when it is
 * at most SUGGEST_EDITS; otherwise any larger number. Only cells within SUGGEST_EDITS of the
 * diagonal can stay within it (Ukkonen's band), and a row whose cells all exceed it ends the
 * search. */
#define SUGGEST_EDITS 2
static size_t key_distance(const char *key, const char *name)
{
    enum { BIG = 1000 };
    size_t prev[34], cur[34]; /* distance between key[0..i) and name[0..j) */
    const size_t n = strlen(key), m = strlen(name);
    HMD_ASSERT(m + 1 < sizeof prev / sizeof prev[0]);
    if (n > m + SUGGEST_EDITS || m > n + SUGGEST_EDITS) {
        return BIG; /* the distance is at least the difference of the lengths */
    }
    for (size_t j = 0; j <= m; j++) {
        prev[j] = j <= SUGGEST_EDITS ? j : BIG;
    }
    for (size_t i = 1; i <= n; i++) {
        const size_t lo = i > SUGGEST_EDITS ? i - SUGGEST_EDITS : 1;
        const size_t hi = i + SUGGEST_EDITS < m ? i + SUGGEST_EDITS : m;
        size_t best_in_row = BIG;
        cur[0] = i <= SUGGEST_EDITS ? i : BIG;
        for (size_t j = 1; j < lo; j++) {
            cur[j] = BIG;
        }
        for (size_t j = lo; j <= hi; j++) {
            size_t d = prev[j - 1] + (fold(key[i - 1]) != fold(name[j - 1]));
            d = prev[j] + 1 < d ? prev[j] + 1 : d;
            d = cur[j - 1] + 1 < d ? cur[j - 1] + 1 : d;
            cur[j] = d < BIG ? d : BIG;
            best_in_row = cur[j] < best_in_row ? cur[j] : best_in_row;
        }
        for (size_t j = hi + 1; j <= m; j++) {
            cur[j] = BIG;
        }
        best_in_row = cur[0] < best_in_row ? cur[0] : best_in_row;
        if (best_in_row > SUGGEST_EDITS) {
            return BIG;
        }
        memcpy(prev, cur, sizeof(size_t) * (m + 1));
    }
    return prev[m];
}

static bool is_given(struct hmd_param_origin o);

/* The unknown-key message, with the nearest table name as a suggestion unless that key is
 * already given (then the user meant something else, and the next nearest is offered). */
static int unknown_key(const struct hmd_params *p, const char *key, const char *where)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    const size_t key_len = strlen(key);
    for (size_t i = 0; i < NPARAMS; i++) {
        size_t d = key_distance(key, params[i].name);
        if (d < best_d && !is_given(p->origin[i])) {
            best_d = d;
            best = params[i].name;
        }
    }
    /* At most two edits and at most half the key, so "ds" finds dt but "xy" finds nothing. */
    if (best_d <= SUGGEST_EDITS && 2 * best_d <= key_len) {
        return config_error(where, "unknown parameter '%s'; did you mean '%s'?", key, best);
    }
    return config_error(where, "unknown parameter '%s'; docs/parameters.md lists the keys", key);
}

static void *field(struct hmd_params *p, const struct param_def *d)
{
    return (char *)p + d->offset;
}

static const void *field_const(const struct hmd_params *p, const struct param_def *d)
{
    return (const char *)p + d->offset;
}

/* The allowed words of a key, "a, b, c", unsupported ones left out. */
static void list_words(const struct choice *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (; c->word; c++) {
        if (c->value != UNSUPPORTED && len < n) {
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? ", " : "", c->word);
        }
    }
}

/* "> 0 and <= 0.01", ">= -1", or "" without bounds. */
static void range_text(const struct param_def *d, char *buf, size_t n)
{
    int len = 0;
    buf[0] = '\0';
    if (d->min > -INFINITY) {
        len = snprintf(buf, n, "%s %g", d->min_excl ? ">" : ">=", d->min);
    }
    if (d->max < INFINITY) {
        snprintf(buf + len, n - (size_t)len, "%s<= %g", len ? " and " : "", d->max);
    }
}

static int check_range(const struct param_def *d, const char *text, double x, const char *where)
{
    if (x < d->min || (d->min_excl && x == d->min) || x > d->max) {
        char range[64];
        range_text(d, range, sizeof range);
        return config_error(where, "%s = %s is out of range; it must be %s", d->name, text, range);
    }
    return HMD_OK;
}

static int parse_integer(const struct param_def *d, const char *text, const char *where,
                         long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0') {
        return config_error(where, "%s = %s is not an integer", d->name, text);
    }
    long long lo = d->type == P_INT ? INT_MIN : INT64_MIN;
    long long hi = d->type == P_INT ? INT_MAX : INT64_MAX;
    if (errno == ERANGE || v < lo || v > hi) {
        return config_error(where, "%s = %s does not fit in a %s-bit integer", d->name, text,
                            d->type == P_INT ? "32" : "64");
    }
    *out = v;
    return check_range(d, text, (double)v, where);
}

static int parse_real(const struct param_def *d, const char *text, const char *where, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text || *end != '\0') {
        return config_error(where, "%s = %s is not a number", d->name, text);
    }
    if (errno == ERANGE || !isfinite(x)) {
        return config_error(where, "%s = %s is not a finite double-precision number", d->name,
                            text);
    }
    *out = x;
    return check_range(d, text, x, where);
}

static int parse_word(const struct param_def *d, const char *text, const char *where,
                      const struct choice **out)
{
    char allowed[256];
    for (const struct choice *c = d->choices; c->word; c++) {
        if (!words_equal(text, c->word)) {
            continue;
        }
        if (c->value == UNSUPPORTED) {
            list_words(d->choices, allowed, sizeof allowed);
            return config_error(where, "%s = %s is not supported by halomd (allowed: %s)%s%s",
                                d->name, text, allowed, c->hint ? "; " : "",
                                c->hint ? c->hint : "");
        }
        /* an alias stands for the first word with its value */
        const struct choice *canon = d->choices;
        while (canon->value != c->value) {
            canon++;
        }
        *out = canon;
        return HMD_OK;
    }
    list_words(d->choices, allowed, sizeof allowed);
    return config_error(where, "%s = %s is not one of: %s", d->name, text, allowed);
}

/* Parses `text` (trimmed, non-empty) as the value of `d` and stores it in `p`; errors start
 * with `where`. Nothing is stored on error. */
static int parse_value(struct hmd_params *p, const struct param_def *d, const char *text,
                       const char *where)
{
    /* initialised because the compiler cannot see that every error path returns nonzero */
    long long i = 0;
    double x = 0;
    const struct choice *c = NULL;
    int rc;
    switch (d->type) {
    case P_INT:
        if ((rc = parse_integer(d, text, where, &i)) == HMD_OK) {
            *(int *)field(p, d) = (int)i;
        }
        return rc;
    case P_INT64:
        if ((rc = parse_integer(d, text, where, &i)) == HMD_OK) {
            *(int64_t *)field(p, d) = (int64_t)i;
        }
        return rc;
    case P_REAL:
        if ((rc = parse_real(d, text, where, &x)) == HMD_OK) {
            *(double *)field(p, d) = x;
        }
        return rc;
    case P_BOOL:
        if ((rc = parse_word(d, text, where, &c)) == HMD_OK) {
            *(bool *)field(p, d) = c->value;
        }
        return rc;
    case P_ENUM:
        if ((rc = parse_word(d, text, where, &c)) == HMD_OK) {
            *(int *)field(p, d) = c->value;
        }
        return rc;
    case P_WORD:
        if ((rc = parse_word(d, text, where, &c)) == HMD_OK) {
            snprintf(field(p, d), d->size, "%s", c->word);
        }
        return rc;
    case P_PATH:
    case P_TEXT:
        if (strlen(text) >= d->size) {
            return config_error(where, "%s is longer than %zu characters", d->name, d->size - 1);
        }
        memcpy(field(p, d), text, strlen(text) + 1);
        return HMD_OK;
    }
    hmd_fatal("parameter %s has no type", d->name);
}

/* The shortest "%.*g" text that strtod reads back as exactly `x`, in plain notation ("300",
 * not "3e+02") where %g has one. */
static void format_real(double x, char *buf, size_t n)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int digits = 1; digits <= 17; digits++) {
            snprintf(buf, n, "%.*g", digits, x);
            if (strtod(buf, NULL) == x && (pass == 1 || !strchr(buf, 'e'))) {
                return;
            }
        }
    }
}

static void format_word(const struct choice *c, int value, char *buf, size_t n)
{
    for (; c->word; c++) {
        if (c->value == value) {
            snprintf(buf, n, "%s", c->word);
            return;
        }
    }
    snprintf(buf, n, "%d", value); /* not a valid value; hmd_params_check says so */
}

/* The value of `d` in `p` as text that parse_value reads back to the same value. */
static void format_value(const struct hmd_params *p, const struct param_def *d, char *buf, size_t n)
{
    const void *f = field_const(p, d);
    switch (d->type) {
    case P_INT:
        snprintf(buf, n, "%d", *(const int *)f);
        return;
    case P_INT64:
        snprintf(buf, n, "%" PRId64, *(const int64_t *)f);
        return;
    case P_REAL:
        format_real(*(const double *)f, buf, n);
        return;
    case P_BOOL:
        format_word(d->choices, *(const bool *)f, buf, n);
        return;
    case P_ENUM:
        format_word(d->choices, *(const int *)f, buf, n);
        return;
    case P_WORD:
    case P_PATH:
    case P_TEXT:
        snprintf(buf, n, "%.*s", (int)d->size - 1, (const char *)f);
        return;
    }
    hmd_fatal("parameter %s has no type", d->name);
}

static bool is_given(struct hmd_param_origin o)
{
    return o.file != NULL && o.file != derived_origin;
}

/* Whether the key holds a value: a default, a given one or a derived one. */
static bool has_value(const struct hmd_params *p, size_t i)
{
    return params[i].def[0] != '\0' || p->origin[i].file != NULL;
}

static void describe_origin(struct hmd_param_origin o, char *buf, size_t n)
{
    if (o.file == NULL) {
        snprintf(buf, n, "default");
    } else if (o.line > 0) {
        snprintf(buf, n, "%s:%d", o.file, o.line);
    } else {
        snprintf(buf, n, "%s", o.file);
    }
}

void hmd_params_defaults(struct hmd_params *p)
{
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < NPARAMS; i++) {
        if (params[i].def[0] != '\0' && parse_value(p, &params[i], params[i].def, "default")) {
            hmd_fatal("%s", hmd_error_msg());
        }
    }
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) {
        s++;
    }
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) {
        end--;
    }
    *end = '\0';
    return s;
}

/* Applies one `key = value ; comment` line (modified in place) coming from `origin`. Blank and
 * comment-only lines do nothing. An unknown key is copied to `unknown` (capacity unknown_len)
 * without a message when `unknown` is given, so that the suggestion can wait for the whole
 * file; otherwise its message is recorded at once. */
static int assign(struct hmd_params *p, char *line, struct hmd_param_origin origin,
                  const char *where, char *unknown, size_t unknown_len)
{
    char *comment = strchr(line, ';');
    if (comment) {
        *comment = '\0';
    }
    char *key = trim(line);
    if (*key == '\0') {
        return HMD_OK;
    }
    char *eq = strchr(key, '=');
    if (!eq) {
        return config_error(where,
                            "'%s' is not a 'key = value' line; add '=' and a value, or "
                            "start a comment with ';'",
                            key);
    }
    *eq = '\0';
    key = trim(key);
    char *value = trim(eq + 1);
    if (*key == '\0') {
        return config_error(where, "no key before '='; write 'key = value'");
    }
    int i = find_key(key);
    if (i < 0 && unknown) {
        snprintf(unknown, unknown_len, "%s", key);
        return HMD_ECONFIG;
    }
    if (i < 0) {
        return unknown_key(p, key, where);
    }
    const struct param_def *d = &params[i];
    if (*value == '\0') {
        return config_error(where,
                            "%s has no value; give one, or remove the line to use the "
                            "default",
                            d->name);
    }
    if (p->origin[i].file == origin.file) {
        if (origin.file == set_origin) {
            return config_error(where, "%s is given twice with -set; give it once", d->name);
        }
        return config_error(where,
                            "%s is given twice, first at line %d; remove one of the "
                            "two lines",
                            d->name, p->origin[i].line);
    }
    int rc = parse_value(p, d, value, where);
    if (rc == HMD_OK) {
        p->origin[i] = origin;
    }
    return rc;
}

/* One bad line of a parameter file: its message, or its unknown key (the message is made
 * once every line is read). */
struct bad_line {
    int line;
    char unknown[128];
    char *msg;
};

/* The messages of every bad line, in line order, one per line, as the current message. */
static int report_bad_lines(const struct hmd_params *p, const char *path,
                            const struct bad_line *bad, int nbad, int status)
{
    char all[6144];
    size_t len = 0;
    all[0] = '\0';
    for (int k = 0; k < nbad && len + 1 < sizeof all; k++) { /* until the buffer is full */
        const char *msg = bad[k].msg;
        if (!msg) {
            char where[WHERE_MAX];
            snprintf(where, sizeof where, "%s:%d", path, bad[k].line);
            unknown_key(p, bad[k].unknown, where);
            msg = hmd_error_msg();
        }
        int n = snprintf(all + len, sizeof all - len, "%s%s", k ? "\n" : "", msg);
        len = n < 0 ? len : len + (size_t)n;
    }
    return hmd_error_set(status, "%s", all);
}

int hmd_params_read(struct hmd_params *p, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open parameter file %s: %s; check the path",
                             path, strerror(errno));
    }
    snprintf(p->origin_file, sizeof p->origin_file, "%s", path);
    char *line = NULL;
    size_t cap = 0;
    int rc = HMD_OK, nbad = 0;
    struct bad_line *bad = NULL;
    for (int n = 1; rc != HMD_ENOMEM && getline(&line, &cap, f) >= 0; n++) {
        char where[WHERE_MAX];
        snprintf(where, sizeof where, "%s:%d", path, n);
        /* a UTF-8 byte-order mark, as some Windows editors write it, is not part of a key */
        char *text = n == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0 ? line + 3 : line;
        struct bad_line b = {.line = n};
        int line_rc = assign(p, text, (struct hmd_param_origin){p->origin_file, n}, where,
                             b.unknown, sizeof b.unknown);
        if (line_rc == HMD_OK) {
            continue;
        }
        rc = rc ? rc : line_rc;
        struct bad_line *grown = realloc(bad, sizeof *bad * (size_t)(nbad + 1));
        bad = grown ? grown : bad;
        if (!grown || (!b.unknown[0] && !(b.msg = strdup(hmd_error_msg())))) {
            rc = hmd_error_set(HMD_ENOMEM, "%s: out of memory", path);
            break;
        }
        bad[nbad++] = b;
    }
    /* getline stops at the end of the file or on an error (a directory, an I/O error) */
    if (rc == HMD_OK && !feof(f)) {
        rc =
            hmd_error_set(HMD_ENOINPUT, "cannot read parameter file %s: %s", path, strerror(errno));
    } else if (rc != HMD_OK && rc != HMD_ENOMEM) {
        rc = report_bad_lines(p, path, bad, nbad, rc);
    }
    for (int k = 0; k < nbad; k++) {
        free(bad[k].msg);
    }
    free(bad);
    free(line);
    fclose(f);
    return rc;
}

int hmd_params_set(struct hmd_params *p, const char *assignment)
{
    char where[WHERE_MAX];
    snprintf(where, sizeof where, "-set %s", assignment);
    if (!strchr(assignment, '=')) {
        return config_error(where, "expected -set key=value");
    }
    /* in a file ';' would start a comment; refusing it keeps -set values writable as files */
    if (strchr(assignment, ';')) {
        return config_error(where, "';' is not allowed in a -set value");
    }
    char *line = strdup(assignment);
    if (!line) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory", where);
    }
    int rc = assign(p, line, (struct hmd_param_origin){set_origin, 0}, where, NULL, 0);
    free(line);
    return rc;
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* nstenergy and nstlog must be multiples of nstcalcenergy: where they are not, nstcalcenergy
 * becomes the greatest common divisor of the three (grompp adjusts it too, with a note). */
static void fit_nstcalcenergy(struct hmd_params *p)
{
    int g = p->nstcalcenergy;
    g = p->nstenergy > 0 ? gcd(g, p->nstenergy) : g;
    g = p->nstlog > 0 ? gcd(g, p->nstlog) : g;
    if (g == p->nstcalcenergy) {
        return;
    }
    char from[WHERE_MAX];
    describe_origin(p->origin[key_index("nstcalcenergy")], from, sizeof from);
    size_t len = strlen(p->notes);
    snprintf(p->notes + len, sizeof p->notes - len,
             "%snstcalcenergy = %d (%s) changed to %d, so that nstenergy = %d and nstlog = %d "
             "are multiples of it",
             len ? "\n" : "", p->nstcalcenergy, from, g, p->nstenergy, p->nstlog);
    p->nstcalcenergy = g;
    p->origin[key_index("nstcalcenergy")] = (struct hmd_param_origin){derived_origin, 0};
}

/* Sets `key` to `x` with the origin "derived". */
static void derive(struct hmd_params *p, const char *key, double *value, double x)
{
    *value = x;
    p->origin[key_index(key)] = (struct hmd_param_origin){derived_origin, 0};
}

int hmd_params_numbers(const char *text, double *out, int max)
{
    int n = 0;
    for (const char *c = text;;) {
        while (isspace((unsigned char)*c)) {
            c++;
        }
        if (!*c) {
            return n;
        }
        char *end;
        const double v = strtod(c, &end);
        if (end == c || !isfinite(v) || n == max || (*end && !isspace((unsigned char)*end))) {
            return -1;
        }
        out[n++] = v;
        c = end;
    }
}

/* pcoupl: ref-p and compressibility hold as many numbers as pcoupltype asks for, the
 * compressibilities >= 0 and not all 0, and ref-t (the noise's temperature) is given. */
static int check_pcoupl(const struct hmd_params *p)
{
    if (p->pcoupl == HMD_PCOUPL_NO) {
        return HMD_OK;
    }
    char from[WHERE_MAX];
    const int want = p->pcoupltype == HMD_PCOUPLTYPE_ISOTROPIC       ? 1
                     : p->pcoupltype == HMD_PCOUPLTYPE_SEMIISOTROPIC ? 2
                                                                     : 6;
    const char *keys[2] = {"ref-p", "compressibility"};
    const char *texts[2] = {p->ref_p, p->compressibility};
    for (int k = 0; k < 2; k++) {
        double v[6];
        const int n = hmd_params_numbers(texts[k], v, 6);
        bool bad = n != want;
        for (int i = 0; k == 1 && i < n && !bad; i++) {
            bad = v[i] < 0;
        }
        if (bad) {
            describe_origin(p->origin[key_index(keys[k])], from, sizeof from);
            return hmd_error_set(HMD_ECONFIG, "%s = '%s' (%s): pcoupltype %s needs %d number%s%s",
                                 keys[k], texts[k], from,
                                 params[key_index("pcoupltype")].choices[p->pcoupltype].word, want,
                                 want == 1   ? ""
                                 : want == 2 ? "s (xy z)"
                                             : "s (xx yy zz xy xz yz)",
                                 k ? ", each >= 0" : "");
        }
    }
    if (!is_given(p->origin[key_index("ref-t")])) {
        return hmd_error_set(HMD_ECONFIG, "pcoupl = c-rescale needs ref-t, the temperature of its "
                                          "noise; add 'ref-t = <K>' or -set ref-t=<K>");
    }
    return HMD_OK;
}

int hmd_params_check(struct hmd_params *p, double rcut)
{
    HMD_ASSERT(isfinite(rcut) && rcut > 0);
    /* Code such as the Python binding may have written the struct directly, so every value
     * goes through the parser once more. */
    for (size_t i = 0; i < NPARAMS; i++) {
        char text[HMD_PATH_MAX];
        char where[WHERE_MAX + 32];
        char from[WHERE_MAX];
        if (!has_value(p, i)) {
            continue;
        }
        format_value(p, &params[i], text, sizeof text);
        describe_origin(p->origin[i], from, sizeof from);
        snprintf(where, sizeof where, "run parameters (%s from %s)", params[i].name, from);
        int rc = parse_value(p, &params[i], text, where);
        if (rc != HMD_OK) {
            return rc;
        }
    }
    fit_nstcalcenergy(p);

    char from[WHERE_MAX], other[WHERE_MAX];
    int tc = key_index("tcoupl");
    if (p->tcoupl != HMD_TCOUPL_NO && !is_given(p->origin[key_index("ref-t")])) {
        char word[32];
        format_value(p, &params[tc], word, sizeof word);
        describe_origin(p->origin[tc], from, sizeof from);
        return hmd_error_set(HMD_ECONFIG,
                             "tcoupl = %s (%s) needs ref-t, the reference temperature; add "
                             "'ref-t = <K>' to the parameter file or -set ref-t=<K>",
                             word, from);
    }

    const int pc = check_pcoupl(p);
    if (pc) {
        return pc;
    }

    struct hmd_param_origin rl = p->origin[key_index("rlist")];
    struct hmd_param_origin vb = p->origin[key_index("verlet-buffer")];
    if (is_given(rl) && is_given(vb)) {
        describe_origin(rl, from, sizeof from);
        describe_origin(vb, other, sizeof other);
        return hmd_error_set(HMD_ECONFIG,
                             "rlist (%s) and verlet-buffer (%s) are both given; give only one, "
                             "since rlist = model cut-off (%g Å) + verlet-buffer",
                             from, other, rcut);
    }
    if (!is_given(rl)) {
        derive(p, "rlist", &p->rlist, rcut + p->verlet_buffer);
    } else if (p->rlist >= rcut) {
        derive(p, "verlet-buffer", &p->verlet_buffer, p->rlist - rcut);
    } else {
        describe_origin(rl, from, sizeof from);
        return hmd_error_set(HMD_ECONFIG,
                             "rlist = %g Å (%s) is shorter than the model cut-off (%g Å); set "
                             "rlist >= %g or leave it out to use the cut-off + verlet-buffer",
                             p->rlist, from, rcut, rcut);
    }
    return HMD_OK;
}

int hmd_params_write(const struct hmd_params *p, FILE *out)
{
    fprintf(out, "; halomd run parameters: every key, defaults included "
                 "(lengths in Å, times in ps, temperatures in K)\n");
    for (size_t i = 0; i < NPARAMS; i++) {
        char value[HMD_PATH_MAX];
        char from[WHERE_MAX];
        struct hmd_param_origin o = p->origin[i];
        /* unset and derived keys are commented out so that reading back leaves them unset */
        bool unset = !has_value(p, i);
        if (unset) {
            value[0] = '\0';
            snprintf(from, sizeof from, "not set");
        } else {
            format_value(p, &params[i], value, sizeof value);
            describe_origin(o, from, sizeof from);
        }
        const char *mark = unset || o.file == derived_origin ? "; " : "";
        fprintf(out, "%s%-*s = %-12s ; %s\n", mark, 15 - (int)strlen(mark), params[i].name, value,
                from);
    }
    if (fflush(out) != 0 || ferror(out)) {
        return hmd_error_set(HMD_EIO, "writing the run parameters failed: %s", strerror(errno));
    }
    return HMD_OK;
}

static const char *type_name(enum param_type t)
{
    switch (t) {
    case P_INT:
    case P_INT64:
        return "integer";
    case P_REAL:
        return "real";
    case P_BOOL:
        return "bool";
    case P_ENUM:
    case P_WORD:
        return "enum";
    case P_PATH:
        return "path";
    case P_TEXT:
        return "text";
    }
    hmd_fatal("parameter type %d has no name", (int)t);
}

int hmd_params_write_reference(FILE *out)
{
    fprintf(out, "| Key | Type | Default | Unit | Allowed | Meaning |\n"
                 "|-----|------|---------|------|---------|---------|\n");
    for (size_t i = 0; i < NPARAMS; i++) {
        const struct param_def *d = &params[i];
        char allowed[256];
        if (d->choices) {
            list_words(d->choices, allowed, sizeof allowed);
        } else if (d->type == P_PATH) {
            snprintf(allowed, sizeof allowed, "a file path without ';'");
        } else if (d->type == P_TEXT) {
            snprintf(allowed, sizeof allowed, "names separated by spaces");
        } else {
            range_text(d, allowed, sizeof allowed);
        }
        fprintf(out, "| `%s` | %s | %s%s%s | %s | %s | %s |\n", d->name, type_name(d->type),
                d->def[0] ? "`" : "", d->def[0] ? d->def : "none", d->def[0] ? "`" : "", d->unit,
                allowed, d->doc);
    }
    if (fflush(out) != 0 || ferror(out)) {
        return hmd_error_set(HMD_EIO, "writing the parameter reference failed: %s",
                             strerror(errno));
    }
    return HMD_OK;
}

struct hmd_param_origin hmd_params_origin(const struct hmd_params *p, const char *key)
{
    int i = find_key(key);
    return i < 0 ? (struct hmd_param_origin){NULL, 0} : p->origin[i];
}

void hmd_params_origin_text(const struct hmd_params *p, const char *key, char *buf, size_t n)
{
    describe_origin(hmd_params_origin(p, key), buf, n);
}
