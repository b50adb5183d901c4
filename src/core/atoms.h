/* Per-atom arrays of one rank: home atoms 0..nlocal-1, then ghosts nlocal..nall-1.
 *
 * Ghosts are copies of atoms owned elsewhere (periodic images on one rank) made by the halo;
 * they carry the fields marked HMD_FIELD_BORDER (positions, types, ids, charges), never
 * velocities. Arrays are x y z interleaved per atom. Capacity grows only at neighbour-list steps
 * (hmd_atoms_reserve).
 *
 * The field table (hmd_atom_fields) says what every per-atom array is and which of them travel:
 * with a migrating atom (HMD_FIELD_MIGRATE) and to ghosts (HMD_FIELD_BORDER). Migration and
 * borders pack and unpack records through hmd_atoms_pack / hmd_atoms_unpack over that table,
 * so a new per-atom field (a charge, a group) is one line of the table, not an edit of every
 * message. Optional fields (HMD_FIELD_OPTIONAL) exist only when `present` says so.
 */
#ifndef HMD_CORE_ATOMS_H
#define HMD_CORE_ATOMS_H

#include <stddef.h>
#include <stdint.h>

struct hmd_atoms {
    int nlocal;       /* home atoms */
    int nghost;       /* ghost atoms after the home atoms */
    int cap;          /* capacity of every array, in atoms */
    unsigned present; /* optional fields held (bits 1 << HMD_FIELD_*); the others always are */
    double *x;        /* [cap][3] positions (Å) */
    double *v;        /* [cap][3] velocities (Å/ps), home atoms */
    double *f;        /* [cap][3] forces (eV/Å) */
    double *mass;     /* [cap] masses (g/mol), home atoms */
    int *type;        /* [cap] model type index */
    int64_t *id;      /* [cap] global atom id, 0-based order of the input file */
    double *charge;   /* [cap] partial charges (e), when present (a classical force field) */
};

/* The per-atom fields, in table order. */
enum hmd_atom_field {
    HMD_FIELD_X,
    HMD_FIELD_V,
    HMD_FIELD_F,
    HMD_FIELD_MASS,
    HMD_FIELD_TYPE,
    HMD_FIELD_ID,
    HMD_FIELD_CHARGE,
    HMD_NFIELDS,
};

/* Bit of a field in a field mask. */
#define HMD_FIELD_BIT(f) (1u << (f))

enum hmd_field_kind { HMD_FIELD_DOUBLE, HMD_FIELD_INT, HMD_FIELD_INT64 };

/* Flags of a field. */
enum {
    HMD_FIELD_MIGRATE = 1 << 0,  /* travels with an atom that changes owner */
    HMD_FIELD_BORDER = 1 << 1,   /* ghosts carry it (sent by borders) */
    HMD_FIELD_SHIFTED = 1 << 2,  /* a position: a ghost's value is the owner's plus the shift */
    HMD_FIELD_OPTIONAL = 1 << 3, /* held only when the atoms' `present` has its bit */
};

struct hmd_atom_field_info {
    const char *name;         /* "x", "v", ... */
    int width;                /* values per atom */
    enum hmd_field_kind kind; /* element type */
    unsigned flags;           /* HMD_FIELD_MIGRATE | ... */
    size_t member;            /* offset of the array pointer in struct hmd_atoms */
};

extern const struct hmd_atom_field_info hmd_atom_fields[HMD_NFIELDS];

/* Grows every array to hold at least n atoms, keeping contents. HMD_ENOMEM on failure. */
int hmd_atoms_reserve(struct hmd_atoms *atoms, int n);

/* Makes an optional field present (allocated to the capacity, zero-filled). HMD_ENOMEM. */
int hmd_atoms_add_field(struct hmd_atoms *atoms, enum hmd_atom_field field);

/* The mask of the fields with every flag of `flags` that `atoms` holds. */
unsigned hmd_atoms_fields_with(const struct hmd_atoms *atoms, unsigned flags);

/* Doubles a record of the fields in `mask` takes (ids and integers travel as doubles: exact
 * up to 2^53). */
int hmd_atoms_record_width(unsigned mask);

/* Writes atom k's fields of `mask` into rec (hmd_atoms_record_width doubles), in table order;
 * HMD_FIELD_SHIFTED fields get shift[3] added (NULL: none). */
void hmd_atoms_pack(const struct hmd_atoms *atoms, int k, unsigned mask, const double shift[3],
                    double *rec);

/* Reads rec (written by hmd_atoms_pack with the same mask) into atom k. */
void hmd_atoms_unpack(struct hmd_atoms *atoms, int k, unsigned mask, const double *rec);

/* hmd_atoms_pack of atoms list[0 .. n) into records rec + j * width, one field at a time over
 * all of them (the same values). */
void hmd_atoms_pack_list(const struct hmd_atoms *atoms, const int *list, int n, unsigned mask,
                         const double shift[3], double *rec);

/* hmd_atoms_unpack of n records rec + j * width into atoms first + j (within the capacity). */
void hmd_atoms_unpack_list(struct hmd_atoms *atoms, int first, int n, unsigned mask,
                           const double *rec);

/* Appends n images: atom first + j (j < n, within the capacity) gets atom list[j]'s fields of
 * `mask`, HMD_FIELD_SHIFTED ones plus shift[3] (NULL: none); the same values as packing
 * list[j] and unpacking the record into first + j, one field at a time over all atoms. The
 * list's atoms must lie below `first`. */
void hmd_atoms_copy_images(struct hmd_atoms *atoms, const int *list, int n, int first,
                           unsigned mask, const double shift[3]);

/* Copies atom `from`'s fields of `mask` to atom `to` (the same struct). */
void hmd_atoms_copy(struct hmd_atoms *atoms, int to, int from, unsigned mask);

/* Frees the arrays and zeroes the struct. */
void hmd_atoms_free(struct hmd_atoms *atoms);

/* nlocal + nghost */
static inline int hmd_atoms_nall(const struct hmd_atoms *atoms)
{
    return atoms->nlocal + atoms->nghost;
}

#endif /* HMD_CORE_ATOMS_H */
