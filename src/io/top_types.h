/* The parameter tables of a GROMACS topology, for io/topology.c: [ defaults ], [ atomtypes ],
 * [ nonbond_params ], [ pairtypes ], [ bondtypes ], [ angletypes ], [ dihedraltypes ], and how
 * grompp looks parameters up in them. Values are kept in GROMACS's units (nm, kJ/mol, degrees)
 * as written; the reader converts what it takes out.
 *
 * Lookup rules (grompp's, gmxpreprocess/toppush.cpp): bonded types match on the atoms' bonded
 * types (the atomtype's bond_type column, its name when absent), forwards or backwards, first
 * matching line wins; dihedrals may use the wildcard X, and the line with the most non-wildcard
 * matches wins (the first of them on ties); consecutive type-9 lines of the same types form one
 * entry of several terms. A later line for the same types replaces an earlier one (grompp warns),
 * except type 9, where only consecutive lines may repeat. Pair (1-4) and nonbonded parameters
 * match on the atom types themselves.
 */
#ifndef HMD_IO_TOP_TYPES_H
#define HMD_IO_TOP_TYPES_H

#include <stdbool.h>

#include "io/topology.h"

/* The bonded type tables, by the function they belong to. */
enum hmd_top_table {
    HMD_TOP_TAB_BOND,     /* [ bondtypes ] 1 */
    HMD_TOP_TAB_ANGLE,    /* [ angletypes ] 1 */
    HMD_TOP_TAB_UB,       /* [ angletypes ] 5 */
    HMD_TOP_TAB_PROPER,   /* [ dihedraltypes ] 1 and 9 (grompp keeps them in one list) */
    HMD_TOP_TAB_IMPROPER, /* [ dihedraltypes ] 2 */
    HMD_TOP_TAB_PERIODIC, /* [ dihedraltypes ] 4 */
    HMD_TOP_NTABLES
};

struct hmd_top_atomtype {
    char name[HMD_TOP_NAME];
    int btype;     /* index of its bonded type name */
    double mass;   /* g/mol */
    double charge; /* e */
    char ptype;    /* 'A' atom; 'S', 'V', 'D': shells and virtual sites (refused when used) */
    double v, w;   /* sigma (nm), epsilon (kJ/mol) for comb-rule 2 and 3; c6, c12 for 1 */
    struct hmd_top_source src;
};

struct hmd_top_btype_entry {
    int type[4]; /* bonded type indices, -1 = wildcard X (dihedrals) */
    double p[4]; /* parameters as written (A state) */
    int np;      /* how many of p */
    struct hmd_top_source src;
};

struct hmd_top_pairtype {
    int i, j;    /* atom type indices, i <= j */
    double v, w; /* as [ atomtypes ]: sigma, epsilon or c6, c12 */
};

struct hmd_top_types {
    /* [ defaults ] */
    bool have_defaults;
    int comb_rule; /* 1, 2, 3 */
    bool gen_pairs;
    double fudge_lj, fudge_qq;
    /* [ atomtypes ] and the bonded type names they use */
    struct hmd_top_atomtype *at;
    int nat, capat;
    char (*btname)[HMD_TOP_NAME];
    int nbt, capbt;
    /* bonded tables */
    struct hmd_top_btype_entry *tab[HMD_TOP_NTABLES];
    int ntab[HMD_TOP_NTABLES], captab[HMD_TOP_NTABLES];
    /* [ pairtypes ] and [ nonbond_params ]: the last line for a pair of types wins */
    struct hmd_top_pairtype *pt, *nb;
    int npt, cappt, nnb, capnb;
};

/* Index of the atom type / bonded type called `name`, or -1. */
int hmd_top_types_atomtype(const struct hmd_top_types *t, const char *name);
int hmd_top_types_btype(const struct hmd_top_types *t, const char *name);

/* One [ atomtypes ] line split into tok[0..n) (nbfunc 1: two nonbonded parameters), at src;
 * a type defined again replaces the earlier definition. HMD_EDATA names src. */
int hmd_top_types_add_atomtype(struct hmd_top_types *t, char **tok, int n,
                               struct hmd_top_source src);

/* One line of a bonded type table: `type` from the line's names (-1 = X), np parameters p;
 * `repeat` for [ dihedraltypes ] 9, whose consecutive lines for the same types add terms. A
 * second, separate block of type 9 for the same types is HMD_EDATA (as in grompp). */
int hmd_top_types_add_bonded(struct hmd_top_types *t, int table, bool repeat, const int type[4],
                             int ntype, const double *p, int np, struct hmd_top_source src);

/* One [ pairtypes ] (pairs = true) or [ nonbond_params ] line for atom types i and j. */
int hmd_top_types_add_pair(struct hmd_top_types *t, bool pairs, int i, int j, double v, double w);

/* The entry of `table` for atoms of bonded types type[0..ntype) (hmd_top_kind_atoms of the
 * table's kind), and through *nterms the number of consecutive entries it begins (type 9's
 * several terms; 1 otherwise). NULL when none matches. */
const struct hmd_top_btype_entry *hmd_top_types_lookup(const struct hmd_top_types *t, int table,
                                                       const int *type, int ntype, int *nterms);

/* c6 (kJ/mol nm^6) and c12 (kJ/mol nm^12) of the Lennard-Jones interaction of atom types i and
 * j: [ nonbond_params ] when it has the pair, else the combination rule. */
void hmd_top_types_lj(const struct hmd_top_types *t, int i, int j, double *c6, double *c12);

/* c6 and c12 (GROMACS units) of the 1-4 pair of atom types i and j: [ pairtypes ], else with
 * gen-pairs the nonbonded ones with epsilon (comb-rule 2, 3) or c6 and c12 (comb-rule 1) scaled
 * by fudgeLJ. False when there is neither (gen-pairs = no and no [ pairtypes ] line). */
bool hmd_top_types_pair(const struct hmd_top_types *t, int i, int j, double *c6, double *c12);

/* c6 and c12 from a pair's two parameters as the combination rule reads them (sigma and
 * epsilon for comb-rule 2 and 3, a negative sigma meaning c6 = 0; c6 and c12 for 1). */
void hmd_top_types_lj_params(int comb_rule, double v, double w, double *c6, double *c12);

void hmd_top_types_free(struct hmd_top_types *t);

#endif /* HMD_IO_TOP_TYPES_H */
