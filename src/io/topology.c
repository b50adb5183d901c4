/* GROMACS topology reader (io/topology.h): sections in the order grompp reads them, molecule
 * types with their interactions in halomd's units, then the system expanded molecule by
 * molecule from [ molecules ].
 *
 * Parameters missing on an interaction line come from the type tables (io/top_types.h) at the
 * moment the line is read, as grompp's push_bond does; angles and dihedrals whose parameters
 * are all zero are dropped as grompp drops them (they add nothing). */
#include "io/topology.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/units.h"
#include "io/text.h"
#include "io/top_types.h"

#define MAX_TOKENS 32
#define DEG2RAD (3.14159265358979323846 / 180.0)

enum section {
    S_NONE,
    S_DEFAULTS,
    S_ATOMTYPES,
    S_BONDTYPES,
    S_PAIRTYPES,
    S_ANGLETYPES,
    S_DIHEDRALTYPES,
    S_NONBOND_PARAMS,
    S_SKIP, /* force-field tables of what halomd does not have, never used by what it reads */
    S_MOLECULETYPE,
    S_ATOMS,
    S_BONDS,
    S_PAIRS,
    S_ANGLES,
    S_DIHEDRALS,
    S_EXCLUSIONS,
    S_SYSTEM,
    S_MOLECULES,
    S_REFUSED,
};

struct section_name {
    const char *name;
    enum section id;
    const char *why; /* S_REFUSED: what to do instead */
};

static const struct section_name sections[] = {
    {"defaults", S_DEFAULTS, NULL},
    {"atomtypes", S_ATOMTYPES, NULL},
    {"bondtypes", S_BONDTYPES, NULL},
    {"pairtypes", S_PAIRTYPES, NULL},
    {"angletypes", S_ANGLETYPES, NULL},
    {"dihedraltypes", S_DIHEDRALTYPES, NULL},
    {"nonbond_params", S_NONBOND_PARAMS, NULL},
    {"constrainttypes", S_SKIP, NULL},
    {"cmaptypes", S_SKIP, NULL},
    {"implicit_genborn_params", S_SKIP, NULL},
    {"implicit_surface_params", S_SKIP, NULL},
    {"moleculetype", S_MOLECULETYPE, NULL},
    {"atoms", S_ATOMS, NULL},
    {"bonds", S_BONDS, NULL},
    {"pairs", S_PAIRS, NULL},
    {"angles", S_ANGLES, NULL},
    {"dihedrals", S_DIHEDRALS, NULL},
    {"exclusions", S_EXCLUSIONS, NULL},
    {"system", S_SYSTEM, NULL},
    {"molecules", S_MOLECULES, NULL},
    {"settles", S_REFUSED,
     "rigid water (SETTLE) is not supported: use flexible water (define = -DFLEXIBLE with "
     "the force field's water models)"},
    {"constraints", S_REFUSED,
     "constraints are not supported (halomd has no constraint algorithm): use a topology "
     "without them (pdb2gmx writes none; grompp's constraints = none keeps bonds as bonds)"},
    {"virtual_sites1", S_REFUSED, "virtual sites are not supported"},
    {"virtual_sites2", S_REFUSED, "virtual sites are not supported"},
    {"virtual_sites3", S_REFUSED, "virtual sites are not supported"},
    {"virtual_sites4", S_REFUSED, "virtual sites are not supported"},
    {"virtual_sitesn", S_REFUSED, "virtual sites are not supported"},
    {"dummies2", S_REFUSED, "virtual sites are not supported"},
    {"dummies3", S_REFUSED, "virtual sites are not supported"},
    {"dummies4", S_REFUSED, "virtual sites are not supported"},
    {"cmap", S_REFUSED, "CMAP corrections are not supported (pdb2gmx -nocmap leaves them out)"},
    {"position_restraints", S_REFUSED, "position restraints are not supported"},
    {"distance_restraints", S_REFUSED, "distance restraints are not supported"},
    {"dihedral_restraints", S_REFUSED, "dihedral restraints are not supported"},
    {"orientation_restraints", S_REFUSED, "orientation restraints are not supported"},
    {"angle_restraints", S_REFUSED, "angle restraints are not supported"},
    {"angle_restraints_z", S_REFUSED, "angle restraints are not supported"},
    {"polarization", S_REFUSED, "polarisation (shell particles) is not supported"},
    {"water_polarization", S_REFUSED, "polarisation (shell particles) is not supported"},
    {"thole_polarization", S_REFUSED, "polarisation (shell particles) is not supported"},
    {"pairs_nb", S_REFUSED, "[ pairs_nb ] (free-energy couplings) is not supported"},
    {"intermolecular_interactions", S_REFUSED, "intermolecular interactions are not supported"},
};

struct molatom {
    int type; /* atom type index */
    double q, m;
    char name[8], resname[8];
    int resnr;
    struct hmd_top_source src;
};

struct moltype {
    char name[HMD_TOP_NAME];
    int nrexcl;
    struct hmd_top_source src;
    struct molatom *atom;
    int natoms, capatoms;
    struct hmd_top_interaction *inter; /* molecule-local atom indices, halomd units */
    int ninter, capinter;
    int (*bond)[2]; /* chemical bonds (exclusion graph) */
    int nbond, capbond;
    int (*extra)[2]; /* [ exclusions ] */
    int nextra, capextra;
};

struct block {
    int moltype, count;
};

struct reader {
    struct hmd_top_cpp *cpp;
    struct hmd_topology *top;
    struct hmd_top_source at; /* the current line */
    char where[4200];         /* "file:line" of it */
    enum section sec;
    struct hmd_top_types types;
    struct moltype *mt;
    int nmt, capmt;
    int cur; /* moleculetype being read, -1 before the first */
    struct block *blocks;
    int nblocks, capblocks;
    bool seen_system, seen_molecules;
    const char *file_key[64]; /* the preprocessor's file names and the topology's copies */
    int nfile_keys;
};

static int grow(void **arr, int n, int *cap, size_t size)
{
    if (n < *cap) {
        return HMD_OK;
    }
    int c = *cap ? 2 * *cap : 16;
    void *a = realloc(*arr, size * (size_t)c);
    if (!a) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
    }
    *arr = a;
    *cap = c;
    return HMD_OK;
}

static int fail(struct reader *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records "<file>:<line>: <message>" for the current line. */
static int fail(struct reader *r, int status, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hmd_error_set(status, "%s: %s", r->where, msg);
}

/* The topology's own copy of a file name of the preprocessor (interned by pointer). */
static const char *own_file(struct reader *r, const char *file)
{
    for (int i = 0; i < r->nfile_keys; i++) {
        if (r->file_key[i] == file) {
            return r->top->files[i];
        }
    }
    struct hmd_topology *t = r->top;
    if (r->nfile_keys == (int)(sizeof r->file_key / sizeof r->file_key[0])) {
        return "(one of more than 64 files)";
    }
    char **f = realloc(t->files, sizeof *f * (size_t)(t->nfiles + 1));
    char *copy = strdup(file);
    if (!f || !copy) {
        free(copy);
        if (f) {
            t->files = f;
        }
        return "(out of memory)";
    }
    t->files = f;
    t->files[t->nfiles++] = copy;
    r->file_key[r->nfile_keys++] = file;
    return copy;
}

static bool parse_num(const char *s, double *x)
{
    return hmd_text_parse_double(s, strlen(s), x);
}

static bool parse_int(const char *s, int *v)
{
    long long x;
    if (!hmd_text_parse_int(s, strlen(s), &x) || x < INT_MIN || x > INT_MAX) {
        return false;
    }
    *v = (int)x;
    return true;
}

static int copy_name(struct reader *r, char *dst, size_t n, const char *src, const char *what)
{
    if (strlen(src) >= n) {
        return fail(r, HMD_EDATA, "%s '%s' is longer than %zu characters", what, src, n - 1);
    }
    memcpy(dst, src, strlen(src) + 1);
    return HMD_OK;
}

/* ---- the force-field sections ---- */

static int read_defaults(struct reader *r, char **tok, int n)
{
    struct hmd_top_types *t = &r->types;
    if (t->have_defaults) {
        return fail(r, HMD_EDATA, "a second [ defaults ] line; a topology has one");
    }
    int nbfunc, comb;
    if (n < 2 || !parse_int(tok[0], &nbfunc) || !parse_int(tok[1], &comb)) {
        return fail(r, HMD_EDATA, "[ defaults ] needs nbfunc and comb-rule as numbers");
    }
    if (nbfunc != 1) {
        return fail(r, HMD_ENOTSUP,
                    "[ defaults ] nbfunc %d is not supported (halomd has 1, Lennard-Jones; 2 is "
                    "Buckingham)",
                    nbfunc);
    }
    if (comb < 1 || comb > 3) {
        return fail(r, HMD_EDATA, "[ defaults ] comb-rule %d is not 1, 2 or 3", comb);
    }
    t->comb_rule = comb;
    t->gen_pairs = n >= 3 && toupper((unsigned char)tok[2][0]) == 'Y';
    t->fudge_lj = 1.0;
    t->fudge_qq = 1.0;
    double power = 12;
    if ((n >= 4 && !parse_num(tok[3], &t->fudge_lj)) ||
        (n >= 5 && !parse_num(tok[4], &t->fudge_qq)) || (n >= 6 && !parse_num(tok[5], &power))) {
        return fail(r, HMD_EDATA, "[ defaults ] fudgeLJ, fudgeQQ and the power must be numbers");
    }
    if (power != 12) {
        return fail(r, HMD_ENOTSUP,
                    "[ defaults ] repulsion power %g is not supported (halomd's "
                    "Lennard-Jones is 12-6)",
                    power);
    }
    t->have_defaults = true;
    return HMD_OK;
}

/* Bonded type indices of names tok[0..n) (X = wildcard where `wild`). */
static int bonded_types(struct reader *r, char **tok, int n, bool wild, int *type)
{
    for (int k = 0; k < n; k++) {
        if (wild && !strcmp(tok[k], "X")) {
            type[k] = -1;
        } else if ((type[k] = hmd_top_types_btype(&r->types, tok[k])) < 0) {
            return fail(r, HMD_EDATA,
                        "unknown bonded atom type %s (no [ atomtypes ] line names it)", tok[k]);
        }
    }
    return HMD_OK;
}

/* The numbers tok[0..n) into p (at most 8). */
static int numbers(struct reader *r, char **tok, int n, double *p)
{
    if (n > 8) {
        return fail(r, HMD_EDATA, "%d parameters; no interaction has more than 8", n);
    }
    for (int k = 0; k < n; k++) {
        if (!parse_num(tok[k], &p[k])) {
            return fail(r, HMD_EDATA, "parameter '%s' is not a number", tok[k]);
        }
    }
    return HMD_OK;
}

/* Parameters of the A state (nA) of a line with n numbers: nA, or nA + nB with a B state. */
static int a_state(struct reader *r, const char *what, int n, int na, int nb)
{
    if (n != na && n != na + nb) {
        return fail(r, HMD_EDATA, "%s: %d parameters; expected %d (or %d with the B state)", what,
                    n, na, na + nb);
    }
    return HMD_OK;
}

struct func_info {
    int table;   /* type table, -1: none */
    int kind;    /* interaction kind, -1: no energy (a connection) */
    int na, nb;  /* parameters of the A and B states */
    bool repeat; /* type 9: several terms */
    const char *name;
};

/* What function `func` of section `sec` is, or a refusal naming it. */
static int function(struct reader *r, enum section sec, int func, struct func_info *f)
{
    static const char *bond_names[] = {
        NULL,   "harmonic",  "G96",       "Morse",    "cubic", "connection", "harmonic potential",
        "FENE", "tabulated", "tabulated", "restraint"};
    static const char *angle_names[] = {
        NULL,      "harmonic", "G96",       "cross bond-bond", "cross bond-angle",  "Urey-Bradley",
        "quartic", NULL,       "tabulated", "linear",          "restricted bending"};
    static const char *dih_names[] = {NULL,
                                      "proper",
                                      "improper",
                                      "Ryckaert-Bellemans",
                                      "periodic improper",
                                      "Fourier",
                                      NULL,
                                      NULL,
                                      "tabulated",
                                      "proper (multiple)",
                                      "restricted",
                                      "combined bending-torsion"};
    memset(f, 0, sizeof *f);
    f->table = -1;
    f->kind = -1;
    const char *what = "";
    const char *have = "";
    const char *name = NULL;
    if (sec == S_BONDS || sec == S_BONDTYPES) {
        what = sec == S_BONDS ? "[ bonds ]" : "[ bondtypes ]";
        have = "1 (harmonic) and 5 (connection)";
        name = func >= 0 && func <= 10 ? bond_names[func] : NULL;
        if (func == 1) {
            *f = (struct func_info){HMD_TOP_TAB_BOND, HMD_TOP_BOND, 2, 2, false, "bond"};
            return HMD_OK;
        }
        if (func == 5 && sec == S_BONDS) {
            *f = (struct func_info){-1, -1, 0, 0, false, "connection"};
            return HMD_OK;
        }
    } else if (sec == S_ANGLES || sec == S_ANGLETYPES) {
        what = sec == S_ANGLES ? "[ angles ]" : "[ angletypes ]";
        have = "1 (harmonic) and 5 (Urey-Bradley)";
        name = func >= 0 && func <= 10 ? angle_names[func] : NULL;
        if (func == 1) {
            *f = (struct func_info){HMD_TOP_TAB_ANGLE, HMD_TOP_ANGLE, 2, 2, false, "angle"};
            return HMD_OK;
        }
        if (func == 5) {
            *f = (struct func_info){HMD_TOP_TAB_UB, HMD_TOP_UREY_BRADLEY, 4, 4,
                                    false,          "Urey-Bradley angle"};
            return HMD_OK;
        }
    } else {
        what = sec == S_DIHEDRALS ? "[ dihedrals ]" : "[ dihedraltypes ]";
        have = "1 and 9 (proper), 2 (improper) and 4 (periodic improper)";
        name = func >= 0 && func <= 11 ? dih_names[func] : NULL;
        if (func == 1 || func == 9) {
            *f = (struct func_info){HMD_TOP_TAB_PROPER, HMD_TOP_PROPER,   3, 2,
                                    func == 9,          "proper dihedral"};
            return HMD_OK;
        }
        if (func == 2) {
            *f = (struct func_info){HMD_TOP_TAB_IMPROPER, HMD_TOP_IMPROPER, 2, 2, false,
                                    "improper dihedral"};
            return HMD_OK;
        }
        if (func == 4) {
            *f = (struct func_info){
                HMD_TOP_TAB_PERIODIC,        HMD_TOP_PERIODIC_IMPROPER, 3, 2, false,
                "periodic improper dihedral"};
            return HMD_OK;
        }
    }
    return fail(r, HMD_ENOTSUP, "%s function %d%s%s%s is not supported (halomd has %s)", what, func,
                name ? " (" : "", name ? name : "", name ? ")" : "", have);
}

/* [ bondtypes ], [ angletypes ], [ dihedraltypes ] lines. */
static int read_bonded_type(struct reader *r, char **tok, int n)
{
    int nat = r->sec == S_BONDTYPES ? 2 : r->sec == S_ANGLETYPES ? 3 : 4;
    int func;
    char *names[4];
    /* grompp also reads dihedral types of two atoms: the middle ones of a proper, the outer
     * ones of an improper (function 2) */
    if (r->sec == S_DIHEDRALTYPES && n >= 3 && strlen(tok[2]) == 1 &&
        isdigit((unsigned char)tok[2][0])) {
        nat = 2;
    }
    if (n < nat + 1 || !parse_int(tok[nat], &func)) {
        return fail(r, HMD_EDATA, "expected %d atom types and a function number", nat);
    }
    struct func_info f;
    if (r->sec == S_DIHEDRALTYPES && func != 1 && func != 2 && func != 4 && func != 9) {
        return HMD_OK; /* a table of functions halomd refuses where they are used */
    }
    if ((r->sec == S_BONDTYPES && func != 1) ||
        (r->sec == S_ANGLETYPES && func != 1 && func != 5)) {
        return HMD_OK;
    }
    int rc = function(r, r->sec, func, &f);
    if (rc) {
        return rc;
    }
    static char wild[] = "X";
    if (nat == 2 && r->sec == S_DIHEDRALTYPES) {
        char *a = tok[0], *b = tok[1];
        names[0] = func == 2 ? a : wild;
        names[1] = func == 2 ? wild : a;
        names[2] = func == 2 ? wild : b;
        names[3] = func == 2 ? b : wild;
    } else {
        memcpy(names, tok, sizeof *names * (size_t)nat);
    }
    const int ntype = nat == 2 && r->sec == S_DIHEDRALTYPES ? 4 : nat;
    int type[4] = {0, 0, 0, 0};
    double p[8];
    int np = n - nat - 1;
    if ((rc = bonded_types(r, names, ntype, r->sec == S_DIHEDRALTYPES, type)) ||
        (rc = a_state(r, f.name, np, f.na, f.nb)) || (rc = numbers(r, tok + nat + 1, np, p))) {
        return rc;
    }
    return hmd_top_types_add_bonded(&r->types, f.table, f.repeat, type, ntype, p, f.na, r->at);
}

/* [ pairtypes ] and [ nonbond_params ] lines. */
static int read_pair_type(struct reader *r, char **tok, int n)
{
    int func;
    double v, w;
    if (n < 5 || !parse_int(tok[2], &func) || !parse_num(tok[3], &v) || !parse_num(tok[4], &w)) {
        return fail(r, HMD_EDATA, "expected two atom types, the function and two parameters");
    }
    if (func != 1) {
        return fail(r, HMD_ENOTSUP, "%s function %d is not supported (halomd has 1, Lennard-Jones)",
                    r->sec == S_PAIRTYPES ? "[ pairtypes ]" : "[ nonbond_params ]", func);
    }
    int i = hmd_top_types_atomtype(&r->types, tok[0]),
        j = hmd_top_types_atomtype(&r->types, tok[1]);
    if (i < 0 || j < 0) {
        return fail(r, HMD_EDATA, "unknown atom type %s (not in [ atomtypes ] so far)",
                    i < 0 ? tok[0] : tok[1]);
    }
    return hmd_top_types_add_pair(&r->types, r->sec == S_PAIRTYPES, i, j, v, w);
}

/* ---- molecule types ---- */

static struct moltype *current(struct reader *r)
{
    return r->cur >= 0 ? &r->mt[r->cur] : NULL;
}

static int read_moleculetype(struct reader *r, char **tok, int n)
{
    if (r->seen_molecules) {
        return fail(r, HMD_EDATA, "[ moleculetype ] after [ molecules ]");
    }
    int nrexcl;
    if (n < 2 || !parse_int(tok[1], &nrexcl) || nrexcl < 0) {
        return fail(r, HMD_EDATA, "[ moleculetype ] needs a name and nrexcl (a number >= 0)");
    }
    for (int i = 0; i < r->nmt; i++) {
        if (!strcasecmp(r->mt[i].name, tok[0])) {
            return fail(r, HMD_EDATA, "molecule type %s is defined twice (first at %s:%d)", tok[0],
                        r->mt[i].src.file, r->mt[i].src.line);
        }
    }
    int rc = grow((void **)&r->mt, r->nmt, &r->capmt, sizeof *r->mt);
    if (rc) {
        return rc;
    }
    struct moltype *m = &r->mt[r->nmt];
    memset(m, 0, sizeof *m);
    if ((rc = copy_name(r, m->name, sizeof m->name, tok[0], "molecule type name"))) {
        return rc;
    }
    m->nrexcl = nrexcl;
    m->src = r->at;
    r->cur = r->nmt++;
    return HMD_OK;
}

static int read_atom(struct reader *r, struct moltype *m, char **tok, int n)
{
    int nr, cg;
    if (n < 6 || !parse_int(tok[0], &nr) || !parse_int(tok[5], &cg)) {
        return fail(r, HMD_EDATA, "[ atoms ] needs nr type resnr residue atom cgnr [charge mass]");
    }
    if (nr != m->natoms + 1) {
        return fail(r, HMD_EDATA,
                    "atom number %d where %d comes next (atoms are numbered 1, 2, ...)", nr,
                    m->natoms + 1);
    }
    int type = hmd_top_types_atomtype(&r->types, tok[1]);
    if (type < 0) {
        return fail(r, HMD_EDATA, "unknown atom type %s (no [ atomtypes ] line names it)", tok[1]);
    }
    const struct hmd_top_atomtype *at = &r->types.at[type];
    if (at->ptype != 'A') {
        return fail(r, HMD_ENOTSUP,
                    "atom type %s is a %s (particle type %c): not supported; halomd has atoms "
                    "only (ptype A)",
                    tok[1], at->ptype == 'S' ? "shell" : "virtual site", at->ptype);
    }
    struct molatom a = {.type = type, .q = at->charge, .m = at->mass, .src = r->at};
    /* residue number, possibly with an insertion code ("151A") */
    char *end;
    long resnr = strtol(tok[2], &end, 10);
    if (end == tok[2] || (end[0] && (end[1] || !isalpha((unsigned char)end[0])))) {
        return fail(r, HMD_EDATA, "residue number '%s' is not a number", tok[2]);
    }
    a.resnr = (int)resnr;
    int rc;
    if ((rc = copy_name(r, a.resname, sizeof a.resname, tok[3], "residue name")) ||
        (rc = copy_name(r, a.name, sizeof a.name, tok[4], "atom name"))) {
        return rc;
    }
    if ((n >= 7 && !parse_num(tok[6], &a.q)) || (n >= 8 && !parse_num(tok[7], &a.m))) {
        return fail(r, HMD_EDATA, "the charge and mass of atom %d must be numbers", nr);
    }
    if (!(a.m > 0)) {
        return fail(r, HMD_EDATA,
                    "atom %d (%s) has mass %g; molecular dynamics needs a positive "
                    "mass (a virtual site?)",
                    nr, a.name, a.m);
    }
    if ((rc = grow((void **)&m->atom, m->natoms, &m->capatoms, sizeof *m->atom))) {
        return rc;
    }
    m->atom[m->natoms++] = a;
    return HMD_OK;
}

/* Atom numbers tok[0..nat) of the current molecule, 0-based into idx. */
static int atom_numbers(struct reader *r, const struct moltype *m, char **tok, int nat, int *idx)
{
    for (int k = 0; k < nat; k++) {
        if (!parse_int(tok[k], &idx[k]) || idx[k] < 1 || idx[k] > m->natoms) {
            return fail(r, HMD_EDATA, "atom '%s' is not one of the %d atoms of molecule type %s",
                        tok[k], m->natoms, m->name);
        }
        idx[k]--;
        for (int l = 0; l < k; l++) {
            if (idx[l] == idx[k]) {
                return fail(r, HMD_EDATA, "atom %d appears twice in one interaction", idx[k] + 1);
            }
        }
    }
    return HMD_OK;
}

static int add_inter(struct moltype *m, int kind, const int *idx, const double *p)
{
    int rc = grow((void **)&m->inter, m->ninter, &m->capinter, sizeof *m->inter);
    if (rc) {
        return rc;
    }
    struct hmd_top_interaction *in = &m->inter[m->ninter++];
    memset(in, 0, sizeof *in);
    in->kind = kind;
    memcpy(in->atom, idx, sizeof *idx * (size_t)hmd_top_kind_atoms(kind));
    memcpy(in->p, p, sizeof in->p);
    return HMD_OK;
}

/* One interaction of `kind` from parameters g (GROMACS units, as written) into halomd units.
 * What adds nothing is dropped as grompp drops it (the same interaction counts): angles whose
 * parameters are all zero, dihedrals of force constant zero (checked against grompp 2022 on
 * AMBER99SB-ILDN's torsions of amplitude 0). */
static int add_converted(struct moltype *m, int kind, const int *idx, const double *g)
{
    const double e = HMD_KJ_PER_MOL_TO_EV, nm = HMD_NM_TO_A;
    double p[4] = {0, 0, 0, 0};
    const int np = kind == HMD_TOP_UREY_BRADLEY                                  ? 4
                   : kind == HMD_TOP_PROPER || kind == HMD_TOP_PERIODIC_IMPROPER ? 3
                                                                                 : 2;
    bool zero = true;
    for (int k = 0; k < np; k++) {
        zero = zero && g[k] == 0;
    }
    if (kind >= HMD_TOP_PROPER && kind <= HMD_TOP_PERIODIC_IMPROPER) {
        zero = g[1] == 0;
    }
    if (zero && kind != HMD_TOP_BOND && kind != HMD_TOP_PAIR) {
        return HMD_OK;
    }
    switch (kind) {
    case HMD_TOP_BOND:
        p[0] = g[0] * nm;
        p[1] = g[1] * e / (nm * nm);
        break;
    case HMD_TOP_UREY_BRADLEY: /* the angle's, then the 1-3 bond's */
    case HMD_TOP_ANGLE:
    case HMD_TOP_IMPROPER:
        p[0] = g[0] * DEG2RAD;
        p[1] = g[1] * e;
        if (kind == HMD_TOP_UREY_BRADLEY) {
            p[2] = g[2] * nm;
            p[3] = g[3] * e / (nm * nm);
        }
        break;
    case HMD_TOP_PROPER:
    case HMD_TOP_PERIODIC_IMPROPER:
        p[0] = g[0] * DEG2RAD;
        p[1] = g[1] * e;
        p[2] = round(g[2]); /* grompp rounds the multiplicity */
        break;
    case HMD_TOP_PAIR: /* c6, c12 already */
        p[0] = g[0] * e * pow(nm, 6);
        p[1] = g[1] * e * pow(nm, 12);
        break;
    }
    return add_inter(m, kind, idx, p);
}

static int add_bond_edge(struct moltype *m, int a, int b)
{
    int rc = grow((void **)&m->bond, m->nbond, &m->capbond, sizeof *m->bond);
    if (!rc) {
        m->bond[m->nbond][0] = a;
        m->bond[m->nbond][1] = b;
        m->nbond++;
    }
    return rc;
}

static int read_pair(struct reader *r, struct moltype *m, char **tok, int n)
{
    int idx[2], func;
    if (n < 3 || !parse_int(tok[2], &func)) {
        return fail(r, HMD_EDATA, "[ pairs ] needs two atoms and a function number");
    }
    int rc = atom_numbers(r, m, tok, 2, idx);
    if (rc) {
        return rc;
    }
    if (func != 1) {
        return fail(r, HMD_ENOTSUP,
                    "[ pairs ] function %d is not supported (halomd has 1, Lennard-Jones and "
                    "Coulomb scaled by fudgeQQ)",
                    func);
    }
    double g[8], c6, c12;
    const int np = n - 3;
    if (np != 0 && (rc = a_state(r, "pair", np, 2, 2))) {
        return rc;
    }
    if (np > 0) {
        if ((rc = numbers(r, tok + 3, np, g))) {
            return rc;
        }
        hmd_top_types_lj_params(r->types.comb_rule, g[0], g[1], &c6, &c12);
    } else if (!hmd_top_types_pair(&r->types, m->atom[idx[0]].type, m->atom[idx[1]].type, &c6,
                                   &c12)) {
        return fail(r, HMD_EDATA,
                    "no parameters for the pair of atom types %s %s: gen-pairs = no and no "
                    "[ pairtypes ] line for them",
                    r->types.at[m->atom[idx[0]].type].name, r->types.at[m->atom[idx[1]].type].name);
    }
    const double cc[2] = {c6, c12};
    return add_converted(m, HMD_TOP_PAIR, idx, cc);
}

/* [ bonds ], [ angles ], [ dihedrals ] lines of the current molecule. */
static int read_bonded(struct reader *r, struct moltype *m, char **tok, int n)
{
    const int nat = r->sec == S_BONDS ? 2 : r->sec == S_ANGLES ? 3 : 4;
    int idx[4], func;
    if (n < nat + 1 || !parse_int(tok[nat], &func)) {
        return fail(r, HMD_EDATA, "expected %d atoms and a function number", nat);
    }
    struct func_info f;
    int rc = atom_numbers(r, m, tok, nat, idx);
    if (rc || (rc = function(r, r->sec, func, &f))) {
        return rc;
    }
    if (r->sec == S_BONDS && (rc = add_bond_edge(m, idx[0], idx[1]))) {
        return rc;
    }
    if (f.kind < 0) {
        return n == nat + 1 ? HMD_OK : fail(r, HMD_EDATA, "a connection has no parameters");
    }
    const int np = n - nat - 1;
    double g[8];
    if (np > 0) {
        if ((rc = a_state(r, f.name, np, f.na, f.nb)) || (rc = numbers(r, tok + nat + 1, np, g))) {
            return rc;
        }
        return add_converted(m, f.kind, idx, g);
    }
    int type[4];
    for (int k = 0; k < nat; k++) {
        type[k] = r->types.at[m->atom[idx[k]].type].btype;
    }
    int nterms;
    const struct hmd_top_btype_entry *e =
        hmd_top_types_lookup(&r->types, f.table, type, nat, &nterms);
    if (!e) {
        char names[4 * HMD_TOP_NAME + 8] = "";
        for (int k = 0; k < nat; k++) {
            strcat(names, k ? "-" : "");
            strcat(names, r->types.btname[type[k]]);
        }
        return fail(r, HMD_EDATA,
                    "no parameters for the %s of atoms %s %s %s%s (bonded types %s): none on "
                    "the line and none in the force field's type tables",
                    f.name, tok[0], tok[1], nat > 2 ? tok[2] : "", nat > 3 ? " ..." : "", names);
    }
    for (int k = 0; k < nterms && !rc; k++) {
        rc = add_converted(m, f.kind, idx, e[k].p);
    }
    return rc;
}

static int read_exclusions(struct reader *r, struct moltype *m, char **tok, int n)
{
    int idx[MAX_TOKENS];
    for (int k = 0; k < n; k++) {
        if (!parse_int(tok[k], &idx[k]) || idx[k] < 1 || idx[k] > m->natoms) {
            return fail(r, HMD_EDATA, "atom '%s' is not one of the %d atoms of molecule type %s",
                        tok[k], m->natoms, m->name);
        }
    }
    for (int k = 1; k < n; k++) {
        int rc = grow((void **)&m->extra, m->nextra, &m->capextra, sizeof *m->extra);
        if (rc) {
            return rc;
        }
        m->extra[m->nextra][0] = idx[0] - 1;
        m->extra[m->nextra][1] = idx[k] - 1;
        m->nextra++;
    }
    return HMD_OK;
}

static int read_molecules(struct reader *r, char **tok, int n)
{
    int count;
    if (n != 2 || !parse_int(tok[1], &count) || count < 0) {
        return fail(r, HMD_EDATA, "[ molecules ] lines are: molecule-type count (a number >= 0)");
    }
    int k = 0;
    while (k < r->nmt && strcasecmp(r->mt[k].name, tok[0])) {
        k++;
    }
    if (k == r->nmt) {
        return fail(r, HMD_EDATA, "no molecule type %s (no [ moleculetype ] names it)", tok[0]);
    }
    if (r->mt[k].natoms == 0 && count > 0) {
        return fail(r, HMD_EDATA, "molecule type %s has no atoms", tok[0]);
    }
    int rc = grow((void **)&r->blocks, r->nblocks, &r->capblocks, sizeof *r->blocks);
    if (!rc) {
        r->blocks[r->nblocks++] = (struct block){k, count};
    }
    return rc;
}

/* One content line of the current section. */
static int read_line(struct reader *r, char **tok, int n)
{
    struct moltype *m = current(r);
    const bool needs_molecule = r->sec >= S_ATOMS && r->sec <= S_EXCLUSIONS;
    if (needs_molecule && !m) {
        return fail(r, HMD_EDATA, "molecule data before any [ moleculetype ]");
    }
    if (needs_molecule && r->sec != S_ATOMS && m->natoms == 0) {
        return fail(r, HMD_EDATA, "interactions before the [ atoms ] of molecule type %s", m->name);
    }
    if (r->sec >= S_ATOMTYPES && r->sec <= S_NONBOND_PARAMS && !r->types.have_defaults) {
        return fail(r, HMD_EDATA, "force-field tables before [ defaults ]");
    }
    switch (r->sec) {
    case S_NONE: /* ignored by grompp too (force fields open with a banner of '*' lines) */
        return HMD_OK;
    case S_DEFAULTS:
        return read_defaults(r, tok, n);
    case S_ATOMTYPES:
        return hmd_top_types_add_atomtype(&r->types, tok, n, r->at);
    case S_BONDTYPES:
    case S_ANGLETYPES:
    case S_DIHEDRALTYPES:
        return read_bonded_type(r, tok, n);
    case S_PAIRTYPES:
    case S_NONBOND_PARAMS:
        return read_pair_type(r, tok, n);
    case S_SKIP:
        return HMD_OK;
    case S_MOLECULETYPE:
        return read_moleculetype(r, tok, n);
    case S_ATOMS:
        return read_atom(r, m, tok, n);
    case S_PAIRS:
        return read_pair(r, m, tok, n);
    case S_BONDS:
    case S_ANGLES:
    case S_DIHEDRALS:
        return read_bonded(r, m, tok, n);
    case S_EXCLUSIONS:
        return read_exclusions(r, m, tok, n);
    case S_SYSTEM: {
        size_t len = strlen(r->top->system);
        for (int k = 0; k < n; k++) {
            snprintf(r->top->system + len, sizeof r->top->system - len, "%s%s", len ? " " : "",
                     tok[k]);
            len = strlen(r->top->system);
        }
        return HMD_OK;
    }
    case S_MOLECULES:
        return read_molecules(r, tok, n);
    case S_REFUSED:
        break;
    }
    hmd_fatal("topology section %d has no reader", (int)r->sec);
}

static int section_header(struct reader *r, char *s)
{
    char *close = strchr(s, ']');
    if (!close) {
        return fail(r, HMD_EDATA, "a section header needs a closing ']'");
    }
    *close = '\0';
    char name[64];
    hmd_text_copy_trimmed(name, sizeof name, s + 1, strlen(s + 1));
    for (char *c = name; *c; c++) {
        *c = (char)tolower((unsigned char)*c);
    }
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++) {
        if (!strcmp(sections[i].name, name)) {
            if (sections[i].id == S_REFUSED) {
                return fail(r, HMD_ENOTSUP, "[ %s ]: %s", name, sections[i].why);
            }
            if (sections[i].id == S_MOLECULES) {
                r->seen_molecules = true;
            }
            r->sec = sections[i].id;
            return HMD_OK;
        }
    }
    return fail(r, HMD_EDATA, "unknown section [ %s ]", name);
}

/* ---- the system ---- */

int hmd_topology_exclusions(int natoms, int nbonds, const int (*bond)[2], int nrexcl, int nextra,
                            const int (*extra)[2], int **excl_start, int **excl)
{
    *excl_start = NULL;
    *excl = NULL;
    /* the bond graph as adjacency lists */
    int *deg = calloc((size_t)natoms + 1, sizeof *deg);
    int *adj = malloc(sizeof *adj * (size_t)(2 * nbonds + 1));
    int *dist = malloc(sizeof *dist * (size_t)(natoms + 1));
    int *queue = malloc(sizeof *queue * (size_t)(natoms + 1));
    int *start = calloc((size_t)natoms + 1, sizeof *start);
    int rc = deg && adj && dist && queue && start
                 ? HMD_OK
                 : hmd_error_set(HMD_ENOMEM, "out of memory for the exclusions");
    int *list = NULL;
    size_t nlist = 0, caplist = 0;
    if (!rc) {
        for (int k = 0; k < nbonds; k++) {
            deg[bond[k][0] + 1]++;
            deg[bond[k][1] + 1]++;
        }
        for (int i = 0; i < natoms; i++) {
            deg[i + 1] += deg[i];
        }
        int *fill = queue; /* as scratch */
        memcpy(fill, deg, sizeof *fill * (size_t)natoms);
        for (int k = 0; k < nbonds; k++) {
            adj[fill[bond[k][0]]++] = bond[k][1];
            adj[fill[bond[k][1]]++] = bond[k][0];
        }
        for (int i = 0; i < natoms; i++) {
            dist[i] = -1;
        }
    }
    for (int i = 0; i < natoms && !rc; i++) {
        /* breadth-first search to nrexcl bonds, then the [ exclusions ] of atom i */
        size_t first = nlist;
        int head = 0, tail = 0;
        queue[tail++] = i;
        dist[i] = 0;
        while (head < tail) {
            int a = queue[head++];
            if (dist[a] == nrexcl) {
                continue;
            }
            for (int e = deg[a]; e < deg[a + 1]; e++) {
                if (dist[adj[e]] < 0) {
                    dist[adj[e]] = dist[a] + 1;
                    queue[tail++] = adj[e];
                }
            }
        }
        size_t need = nlist + (size_t)tail + 2 * (size_t)nextra;
        if (need > caplist) {
            size_t cap = 2 * need + 64;
            int *l = realloc(list, sizeof *l * cap);
            if (!l) {
                rc = hmd_error_set(HMD_ENOMEM, "out of memory for the exclusions");
                break;
            }
            list = l;
            caplist = cap;
        }
        for (int k = 0; k < tail; k++) {
            if (queue[k] != i) {
                list[nlist++] = queue[k];
            }
            dist[queue[k]] = -1;
        }
        for (int k = 0; k < nextra; k++) {
            int a = extra[k][0], b = extra[k][1];
            if ((a == i || b == i) && a != b) {
                list[nlist++] = a == i ? b : a;
            }
        }
        /* sorted, without repeats */
        int *seg = list + first;
        size_t m = nlist - first;
        for (size_t x = 1; x < m; x++) {
            int v = seg[x];
            size_t y = x;
            while (y > 0 && seg[y - 1] > v) {
                seg[y] = seg[y - 1];
                y--;
            }
            seg[y] = v;
        }
        size_t u = 0;
        for (size_t x = 0; x < m; x++) {
            if (u == 0 || seg[u - 1] != seg[x]) {
                seg[u++] = seg[x];
            }
        }
        nlist = first + u;
        start[i + 1] = (int)nlist;
    }
    free(deg);
    free(adj);
    free(dist);
    free(queue);
    if (rc) {
        free(start);
        free(list);
        return rc;
    }
    *excl_start = start;
    *excl = list ? list : malloc(sizeof(int));
    if (!*excl) {
        free(start);
        *excl_start = NULL;
        return hmd_error_set(HMD_ENOMEM, "out of memory for the exclusions");
    }
    return HMD_OK;
}

/* The whole system from the molecule types and [ molecules ]. */
static int expand(struct reader *r, const struct hmd_top_cpp_options *opt)
{
    struct hmd_topology *t = r->top;
    long long natoms = 0, ninter = 0, nexcl = 0;
    int **mstart = calloc((size_t)r->nmt + 1, sizeof *mstart);
    int **mexcl = calloc((size_t)r->nmt + 1, sizeof *mexcl);
    int rc = mstart && mexcl ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    for (int b = 0; b < r->nblocks && !rc; b++) {
        const struct moltype *m = &r->mt[r->blocks[b].moltype];
        int k = r->blocks[b].moltype;
        if (!mstart[k] && r->blocks[b].count > 0) {
            rc = hmd_topology_exclusions(m->natoms, m->nbond, (const int(*)[2])m->bond, m->nrexcl,
                                         m->nextra, (const int(*)[2])m->extra, &mstart[k],
                                         &mexcl[k]);
        }
        natoms += (long long)r->blocks[b].count * m->natoms;
        ninter += (long long)r->blocks[b].count * m->ninter;
        if (!rc && mstart[k]) {
            nexcl += (long long)r->blocks[b].count * mstart[k][m->natoms];
        }
    }
    if (!rc && opt && opt->natoms > 0 && natoms != opt->natoms) {
        rc = hmd_error_set(HMD_EDATA,
                           "%s has %lld atoms, the topology's [ molecules ] %lld; the structure "
                           "and the topology must describe the same system",
                           opt->structure ? opt->structure : "the structure", opt->natoms, natoms);
    }
    if (!rc && (natoms > INT_MAX / 2 || ninter > INT_MAX / 2 || nexcl > INT_MAX / 2)) {
        rc = hmd_error_set(HMD_EDATA, "the topology's system is too large (%lld atoms)", natoms);
    }
    if (!rc && natoms == 0) {
        rc = hmd_error_set(HMD_EDATA,
                           "the topology has no atoms (an empty or missing [ molecules ])");
    }
    /* the atom types used, numbered in the order of [ atomtypes ] */
    int *compact = rc ? NULL : malloc(sizeof *compact * (size_t)(r->types.nat + 1));
    if (!rc && !compact) {
        rc = hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    if (!rc) {
        for (int i = 0; i < r->types.nat; i++) {
            compact[i] = -1;
        }
        for (int b = 0; b < r->nblocks; b++) {
            const struct moltype *m = &r->mt[r->blocks[b].moltype];
            for (int a = 0; a < m->natoms && r->blocks[b].count > 0; a++) {
                compact[m->atom[a].type] = 0;
            }
        }
        for (int i = 0; i < r->types.nat; i++) {
            if (compact[i] == 0) {
                compact[i] = t->ntypes++;
            }
        }
        const size_t n = (size_t)natoms, nt = (size_t)t->ntypes;
        t->natoms = (int)natoms;
        t->type_name = calloc(nt, sizeof *t->type_name);
        t->c6 = malloc(sizeof *t->c6 * nt * nt);
        t->c12 = malloc(sizeof *t->c12 * nt * nt);
        t->charge = malloc(sizeof *t->charge * n);
        t->mass = malloc(sizeof *t->mass * n);
        t->type = malloc(sizeof *t->type * n);
        t->name = malloc(sizeof *t->name * n);
        t->resname = malloc(sizeof *t->resname * n);
        t->resnr = malloc(sizeof *t->resnr * n);
        t->origin = malloc(sizeof *t->origin * n);
        t->block = calloc((size_t)r->nblocks + 1, sizeof *t->block);
        t->inter = malloc(sizeof *t->inter * (size_t)(ninter + 1));
        t->excl_start = malloc(sizeof *t->excl_start * (n + 1));
        t->excl = malloc(sizeof *t->excl * (size_t)(nexcl + 1));
        if (!t->type_name || !t->c6 || !t->c12 || !t->charge || !t->mass || !t->type || !t->name ||
            !t->resname || !t->resnr || !t->origin || !t->block || !t->inter || !t->excl_start ||
            !t->excl) {
            rc = hmd_error_set(HMD_ENOMEM, "out of memory for a system of %lld atoms", natoms);
        }
    }
    if (!rc) {
        for (int i = 0; i < r->types.nat; i++) {
            if (compact[i] < 0) {
                continue;
            }
            snprintf(t->type_name[compact[i]], HMD_TOP_NAME, "%s", r->types.at[i].name);
            for (int j = 0; j < r->types.nat; j++) {
                if (compact[j] < 0) {
                    continue;
                }
                double c6, c12;
                hmd_top_types_lj(&r->types, i, j, &c6, &c12);
                const size_t k = (size_t)compact[i] * (size_t)t->ntypes + (size_t)compact[j];
                t->c6[k] = c6 * HMD_KJ_PER_MOL_TO_EV * pow(HMD_NM_TO_A, 6);
                t->c12[k] = c12 * HMD_KJ_PER_MOL_TO_EV * pow(HMD_NM_TO_A, 12);
            }
        }
        int g = 0, ni = 0, ne = 0;
        t->excl_start[0] = 0;
        for (int b = 0; b < r->nblocks; b++) {
            const struct moltype *m = &r->mt[r->blocks[b].moltype];
            const int *ms = mstart[r->blocks[b].moltype], *mx = mexcl[r->blocks[b].moltype];
            struct hmd_top_molblock *blk = &t->block[t->nblocks++];
            snprintf(blk->name, sizeof blk->name, "%s", m->name);
            blk->first = g;
            blk->natoms = m->natoms;
            blk->count = r->blocks[b].count;
            for (int c = 0; c < r->blocks[b].count; c++) {
                const int base = g;
                for (int a = 0; a < m->natoms; a++, g++) {
                    const struct molatom *ma = &m->atom[a];
                    t->charge[g] = ma->q;
                    t->mass[g] = ma->m;
                    t->type[g] = compact[ma->type];
                    memcpy(t->name[g], ma->name, sizeof t->name[g]);
                    memcpy(t->resname[g], ma->resname, sizeof t->resname[g]);
                    t->resnr[g] = ma->resnr;
                    t->origin[g] = ma->src;
                    for (int e = ms[a]; e < ms[a + 1]; e++) {
                        t->excl[ne++] = base + mx[e];
                    }
                    t->excl_start[g + 1] = ne;
                }
                for (int k = 0; k < m->ninter; k++) {
                    struct hmd_top_interaction in = m->inter[k];
                    for (int x = 0; x < hmd_top_kind_atoms(in.kind); x++) {
                        in.atom[x] += base;
                    }
                    t->inter[ni++] = in;
                    t->count[in.kind]++;
                }
            }
        }
        t->ninter = ni;
        t->comb_rule = r->types.comb_rule;
        t->gen_pairs = r->types.gen_pairs;
        t->fudge_lj = r->types.fudge_lj;
        t->fudge_qq = r->types.fudge_qq;
    }
    for (int k = 0; mstart && mexcl && k < r->nmt; k++) {
        free(mstart[k]);
        free(mexcl[k]);
    }
    free(mstart);
    free(mexcl);
    free(compact);
    return rc;
}

static void reader_free(struct reader *r)
{
    for (int i = 0; i < r->nmt; i++) {
        free(r->mt[i].atom);
        free(r->mt[i].inter);
        free(r->mt[i].bond);
        free(r->mt[i].extra);
    }
    free(r->mt);
    free(r->blocks);
    hmd_top_types_free(&r->types);
    hmd_top_cpp_close(r->cpp);
}

int hmd_topology_read(struct hmd_topology *top, const char *path,
                      const struct hmd_top_cpp_options *opt)
{
    memset(top, 0, sizeof *top);
    struct reader r = {.top = top, .cur = -1};
    int rc = hmd_top_cpp_open(&r.cpp, path, opt);
    char *line;
    const char *file;
    int lineno;
    while (!rc && (rc = hmd_top_cpp_next(r.cpp, &line, &file, &lineno)) == 1) {
        rc = HMD_OK;
        r.at = (struct hmd_top_source){own_file(&r, file), lineno};
        snprintf(r.where, sizeof r.where, "%s:%d", r.at.file, lineno);
        char *semi = strchr(line, ';');
        if (semi) {
            *semi = '\0';
        }
        char *s = line;
        while (isspace((unsigned char)*s)) {
            s++;
        }
        if (*s == '\0') {
            continue;
        }
        if (*s == '[') {
            rc = section_header(&r, s);
            continue;
        }
        char *tok[MAX_TOKENS];
        int n = hmd_text_split(s, tok, MAX_TOKENS);
        if (n > MAX_TOKENS && r.sec != S_SYSTEM && r.sec != S_SKIP) {
            rc = fail(&r, HMD_EDATA, "more than %d fields on a line", MAX_TOKENS);
        } else {
            rc = read_line(&r, tok, n < MAX_TOKENS ? n : MAX_TOKENS);
        }
    }
    if (!rc && !r.seen_molecules) {
        rc = hmd_error_set(HMD_EDATA,
                           "%s: no [ molecules ] section: the topology does not say "
                           "what the system is made of",
                           path);
    }
    if (!rc) {
        rc = expand(&r, opt);
    }
    reader_free(&r);
    if (rc) {
        hmd_topology_free(top);
    }
    return rc;
}

int hmd_topology_check_frame(const struct hmd_topology *top, const struct hmd_frame *frame,
                             const char *frame_path)
{
    if (frame->natoms != top->natoms) {
        return hmd_error_set(HMD_EDATA,
                             "%s has %d atoms, the topology's [ molecules ] %d; the structure "
                             "and the topology must describe the same system",
                             frame_path, frame->natoms, top->natoms);
    }
    for (int i = 0; i < top->natoms; i++) {
        if (!strcmp(frame->name[i], top->name[i])) {
            continue;
        }
        int b = 0;
        while (b + 1 < top->nblocks && top->block[b + 1].first <= i) {
            b++;
        }
        const struct hmd_top_molblock *blk = &top->block[b];
        const int in_block = i - blk->first;
        char line[32] = "";
        if (frame->line) {
            snprintf(line, sizeof line, ":%d", frame->line[i]);
        }
        return hmd_error_set(HMD_EDATA,
                             "%s%s: atom %d is %s in the structure but %s in the topology "
                             "(atom %d of molecule %s number %d, declared at %s:%d); the atoms "
                             "must be in the topology's order",
                             frame_path, line, i + 1, frame->name[i], top->name[i],
                             in_block % blk->natoms + 1, blk->name, in_block / blk->natoms + 1,
                             top->origin[i].file, top->origin[i].line);
    }
    return HMD_OK;
}

void hmd_topology_free(struct hmd_topology *top)
{
    free(top->type_name);
    free(top->c6);
    free(top->c12);
    free(top->charge);
    free(top->mass);
    free(top->type);
    free(top->name);
    free(top->resname);
    free(top->resnr);
    free(top->origin);
    free(top->block);
    free(top->inter);
    free(top->excl_start);
    free(top->excl);
    for (int i = 0; i < top->nfiles; i++) {
        free(top->files[i]);
    }
    free(top->files);
    memset(top, 0, sizeof *top);
}

const char *hmd_top_kind_name(int kind)
{
    static const char *names[HMD_TOP_NKINDS] = {
        "bond",
        "angle",
        "Urey-Bradley angle",
        "proper dihedral",
        "improper dihedral",
        "periodic improper dihedral",
        "1-4 pair",
    };
    return kind >= 0 && kind < HMD_TOP_NKINDS ? names[kind] : "interaction";
}
