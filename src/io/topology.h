/* GROMACS topologies (.top with its .itp files), read as `gmx grompp` reads them, into the
 * parameters of a classical force field in halomd's units (Å, eV, e, g/mol, radians).
 *
 * What is read (docs/formats.md, "GROMACS topologies"): the preprocessor of io/top_cpp.h;
 * [ defaults ] (nbfunc 1: Lennard-Jones; comb-rule 1, 2, 3; gen-pairs; fudgeLJ; fudgeQQ);
 * [ atomtypes ]; [ nonbond_params ] 1; [ pairtypes ] 1; [ bondtypes ] 1; [ angletypes ] 1, 5;
 * [ dihedraltypes ] 1, 2, 4, 9 (with the wildcard X, the most specific match first, several
 * lines of type 9 for one set of types making one multi-term entry); [ moleculetype ] with
 * nrexcl; [ atoms ]; [ bonds ] 1, 5; [ pairs ] 1; [ angles ] 1, 5; [ dihedrals ] 1, 2, 4, 9;
 * [ exclusions ]; [ system ]; [ molecules ]. Interactions without parameters take them from
 * the type sections, as grompp does. Force-field tables that only unsupported interactions use
 * ([ constrainttypes ], [ cmaptypes ], [ implicit_genborn_params ]) are skipped; everything
 * that would change the physics and is not implemented ([ constraints ], [ settles ], virtual
 * sites, [ cmap ], position and other restraints, polarisation, other function types, free
 * energy B states that differ, Buckingham) is refused by name.
 *
 * Every error names the file and line (HMD_EDATA; HMD_ENOINPUT for files; HMD_ENOTSUP for what
 * is refused).
 */
#ifndef HMD_IO_TOPOLOGY_H
#define HMD_IO_TOPOLOGY_H

#include <stdbool.h>

#include "io/structure.h"
#include "io/top_cpp.h"

#define HMD_TOP_NAME 16 /* room for a type, atom, residue or molecule name */

/* Interaction kinds, with the meaning of their parameters p[] (halomd units). */
enum hmd_top_kind {
    HMD_TOP_BOND,              /* bonds 1: p = b0 (Å), kb (eV/Å^2); V = kb/2 (r - b0)^2 */
    HMD_TOP_ANGLE,             /* angles 1: theta0 (rad), k (eV/rad^2) */
    HMD_TOP_UREY_BRADLEY,      /* angles 5: theta0 (rad), k (eV/rad^2), r13 (Å), kub (eV/Å^2) */
    HMD_TOP_PROPER,            /* dihedrals 1, 9: phi_s (rad), k (eV), multiplicity;
                                  V = k (1 + cos(n phi - phi_s)) */
    HMD_TOP_IMPROPER,          /* dihedrals 2: xi0 (rad), k (eV/rad^2); V = k/2 (xi - xi0)^2 */
    HMD_TOP_PERIODIC_IMPROPER, /* dihedrals 4: as HMD_TOP_PROPER */
    HMD_TOP_PAIR,              /* pairs 1: c6 (eV Å^6), c12 (eV Å^12); plus Coulomb scaled by
                                  fudgeQQ */
    HMD_TOP_NKINDS
};

/* Atoms an interaction of each kind joins. */
static inline int hmd_top_kind_atoms(int kind)
{
    return kind == HMD_TOP_BOND || kind == HMD_TOP_PAIR ? 2 : kind <= HMD_TOP_UREY_BRADLEY ? 3 : 4;
}

/* One interaction of the system: global atom indices (0-based, the structure's order). */
struct hmd_top_interaction {
    int kind;    /* enum hmd_top_kind */
    int atom[4]; /* hmd_top_kind_atoms(kind) of them */
    double p[4]; /* parameters, see enum hmd_top_kind; unused ones are 0 */
};

/* Where something was written: a file of the topology (valid as long as the topology) and a
 * 1-based line. */
struct hmd_top_source {
    const char *file;
    int line;
};

/* A molecule type and its copies in [ molecules ] (for messages: which molecule an atom of
 * the system belongs to). */
struct hmd_top_molblock {
    char name[HMD_TOP_NAME]; /* molecule type */
    int first;               /* global index of the block's first atom */
    int natoms;              /* atoms of one molecule */
    int count;               /* molecules in the block */
};

/* The system a topology describes. Every array is owned by the struct. */
struct hmd_topology {
    char system[256]; /* [ system ] title */
    int natoms;
    /* nonbonded: the atom types the system uses, Lennard-Jones by type pair */
    int ntypes;
    char (*type_name)[HMD_TOP_NAME]; /* [ntypes] */
    double *c6, *c12;                /* [ntypes][ntypes] eV Å^6, eV Å^12 (symmetric) */
    int comb_rule;                   /* [ defaults ], for information */
    bool gen_pairs;
    double fudge_lj; /* already applied to generated pair parameters */
    double fudge_qq; /* scale of the Coulomb interaction of [ pairs ] */
    /* per atom */
    double *charge;  /* [natoms] e */
    double *mass;    /* [natoms] g/mol */
    int *type;       /* [natoms] index into type_name */
    char (*name)[8]; /* [natoms] atom names, for the check against a structure */
    char (*resname)[8];
    int *resnr;
    struct hmd_top_source *origin; /* [natoms] the [ atoms ] line that declared the atom */
    /* molecules */
    int nblocks;
    struct hmd_top_molblock *block;
    /* interactions, in [ molecules ] order, each molecule's in the order of its sections */
    int ninter;
    struct hmd_top_interaction *inter;
    int count[HMD_TOP_NKINDS]; /* interactions of each kind */
    /* excluded nonbonded pairs (nrexcl bonds apart, and [ exclusions ]): the partners of atom i
     * are excl[excl_start[i] .. excl_start[i+1]), sorted, i itself not among them, every pair
     * listed under both atoms */
    int *excl_start; /* [natoms + 1] */
    int *excl;
    /* the files read (names the origins point to) */
    int nfiles;
    char **files;
};

/* Reads the topology `path` with the preprocessor options `opt` (defines, GMXLIB, the
 * installed force fields, and the structure's atom count that [ molecules ] must make; NULL:
 * defaults). On success *top holds the system (free with
 * hmd_topology_free); on failure it is zeroed and the status carries the message. */
int hmd_topology_read(struct hmd_topology *top, const char *path,
                      const struct hmd_top_cpp_options *opt);

/* Checks that `frame` (read from `frame_path`) has the topology's atoms in the topology's order:
 * the same number, and atom by atom the same name. HMD_EDATA names the first mismatch: the
 * structure's file and line, the atom, its molecule and the topology line that declared it. */
int hmd_topology_check_frame(const struct hmd_topology *top, const struct hmd_frame *frame,
                             const char *frame_path);

/* Excluded pairs of `natoms` atoms joined by the `nbonds` bonds bond[k][0]-bond[k][1] (0-based):
 * every pair at most `nrexcl` bonds apart, as grompp generates them, merged with the `nextra`
 * pairs extra[k] (may be NULL). Writes the CSR arrays of struct hmd_topology (excl_start
 * [natoms + 1], *excl allocated; both owned by the caller). HMD_ENOMEM on failure. */
int hmd_topology_exclusions(int natoms, int nbonds, const int (*bond)[2], int nrexcl, int nextra,
                            const int (*extra)[2], int **excl_start, int **excl);

/* Frees what the topology owns and zeroes it (a zeroed struct is fine). */
void hmd_topology_free(struct hmd_topology *top);

/* Name of an interaction kind in messages ("bond", "Urey-Bradley angle", ...). */
const char *hmd_top_kind_name(int kind);

#endif /* HMD_IO_TOPOLOGY_H */
