#include "core/atoms.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define FIELD(name, width, kind, flags, member)                                                    \
    {                                                                                              \
        name, width, kind, flags, offsetof(struct hmd_atoms, member)                               \
    }

const struct hmd_atom_field_info hmd_atom_fields[HMD_NFIELDS] = {
    [HMD_FIELD_X] = FIELD("x", 3, HMD_FIELD_DOUBLE,
                          HMD_FIELD_MIGRATE | HMD_FIELD_BORDER | HMD_FIELD_SHIFTED, x),
    [HMD_FIELD_V] = FIELD("v", 3, HMD_FIELD_DOUBLE, HMD_FIELD_MIGRATE, v),
    [HMD_FIELD_F] = FIELD("f", 3, HMD_FIELD_DOUBLE, 0, f),
    [HMD_FIELD_MASS] = FIELD("mass", 1, HMD_FIELD_DOUBLE, HMD_FIELD_MIGRATE, mass),
    [HMD_FIELD_TYPE] = FIELD("type", 1, HMD_FIELD_INT, HMD_FIELD_MIGRATE | HMD_FIELD_BORDER, type),
    [HMD_FIELD_ID] = FIELD("id", 1, HMD_FIELD_INT64, HMD_FIELD_MIGRATE | HMD_FIELD_BORDER, id),
    [HMD_FIELD_CHARGE] = FIELD("charge", 1, HMD_FIELD_DOUBLE,
                               HMD_FIELD_MIGRATE | HMD_FIELD_BORDER | HMD_FIELD_OPTIONAL, charge),
};

static size_t element_size(enum hmd_field_kind kind)
{
    return kind == HMD_FIELD_DOUBLE ? sizeof(double)
           : kind == HMD_FIELD_INT  ? sizeof(int)
                                    : sizeof(int64_t);
}

static void **array_of(const struct hmd_atoms *a, int f)
{
    return (void **)((char *)a + hmd_atom_fields[f].member);
}

static int held(const struct hmd_atoms *a, int f)
{
    return !(hmd_atom_fields[f].flags & HMD_FIELD_OPTIONAL) || (a->present & HMD_FIELD_BIT(f));
}

static int grow(void **p, size_t elem, int n)
{
    void *q = realloc(*p, elem * (size_t)n);
    if (!q) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for %d atoms", n);
    }
    *p = q;
    return HMD_OK;
}

int hmd_atoms_reserve(struct hmd_atoms *a, int n)
{
    if (n <= a->cap) {
        return HMD_OK;
    }
    const int cap = n + n / 4 + 16;
    for (int f = 0; f < HMD_NFIELDS; f++) {
        const struct hmd_atom_field_info *fi = &hmd_atom_fields[f];
        if (held(a, f)) {
            int rc = grow(array_of(a, f), fi->width * element_size(fi->kind), cap);
            if (rc) {
                return rc;
            }
        }
    }
    a->cap = cap;
    return HMD_OK;
}

int hmd_atoms_add_field(struct hmd_atoms *a, enum hmd_atom_field f)
{
    if (held(a, f)) {
        return HMD_OK;
    }
    const struct hmd_atom_field_info *fi = &hmd_atom_fields[f];
    void *p = calloc((size_t)(a->cap > 0 ? a->cap : 1), fi->width * element_size(fi->kind));
    if (!p) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the atoms' %s", fi->name);
    }
    *array_of(a, f) = p;
    a->present |= HMD_FIELD_BIT(f);
    return HMD_OK;
}

unsigned hmd_atoms_fields_with(const struct hmd_atoms *a, unsigned flags)
{
    unsigned mask = 0;
    for (int f = 0; f < HMD_NFIELDS; f++) {
        if ((hmd_atom_fields[f].flags & flags) == flags && held(a, f)) {
            mask |= HMD_FIELD_BIT(f);
        }
    }
    return mask;
}

int hmd_atoms_record_width(unsigned mask)
{
    int w = 0;
    for (int f = 0; f < HMD_NFIELDS; f++) {
        w += (mask & HMD_FIELD_BIT(f)) ? hmd_atom_fields[f].width : 0;
    }
    return w;
}

/* Column c of field f of atoms list[j] (j < n) into rec[j * width + off], as doubles,
 * T the field's element type. */
#define PACK_COLUMN(T)                                                                             \
    do {                                                                                           \
        const T *q = (const T *)p;                                                                 \
        for (int j = 0; j < n; j++) {                                                              \
            double v = (double)q[(size_t)list[j] * fi->width + c];                                 \
            if (s) {                                                                               \
                v += s[c];                                                                         \
            }                                                                                      \
            rec[(size_t)j * width + off] = v;                                                      \
        }                                                                                          \
    } while (0)

void hmd_atoms_pack_list(const struct hmd_atoms *a, const int *list, int n, unsigned mask,
                         const double shift[3], double *rec)
{
    const size_t width = (size_t)hmd_atoms_record_width(mask);
    size_t off = 0;
    for (int f = 0; f < HMD_NFIELDS; f++) {
        if (!(mask & HMD_FIELD_BIT(f))) {
            continue;
        }
        const struct hmd_atom_field_info *fi = &hmd_atom_fields[f];
        const void *p = *array_of(a, f);
        const double *s = shift && (fi->flags & HMD_FIELD_SHIFTED) ? shift : NULL;
        for (int c = 0; c < fi->width; c++, off++) {
            if (fi->kind == HMD_FIELD_DOUBLE) {
                PACK_COLUMN(double);
            } else if (fi->kind == HMD_FIELD_INT) {
                PACK_COLUMN(int);
            } else {
                PACK_COLUMN(int64_t);
            }
        }
    }
}

#undef PACK_COLUMN

/* Column c of field f of atoms first + j (j < n) from rec[j * width + off], T the field's
 * element type. */
#define UNPACK_COLUMN(T)                                                                           \
    do {                                                                                           \
        T *q = (T *)p;                                                                             \
        for (int j = 0; j < n; j++) {                                                              \
            q[(size_t)(first + j) * fi->width + c] = (T)rec[(size_t)j * width + off];              \
        }                                                                                          \
    } while (0)

void hmd_atoms_unpack_list(struct hmd_atoms *a, int first, int n, unsigned mask, const double *rec)
{
    const size_t width = (size_t)hmd_atoms_record_width(mask);
    size_t off = 0;
    for (int f = 0; f < HMD_NFIELDS; f++) {
        if (!(mask & HMD_FIELD_BIT(f))) {
            continue;
        }
        const struct hmd_atom_field_info *fi = &hmd_atom_fields[f];
        void *p = *array_of(a, f);
        for (int c = 0; c < fi->width; c++, off++) {
            if (fi->kind == HMD_FIELD_DOUBLE) {
                UNPACK_COLUMN(double);
            } else if (fi->kind == HMD_FIELD_INT) {
                UNPACK_COLUMN(int);
            } else {
                UNPACK_COLUMN(int64_t);
            }
        }
    }
}

#undef UNPACK_COLUMN

void hmd_atoms_pack(const struct hmd_atoms *a, int k, unsigned mask, const double shift[3],
                    double *rec)
{
    hmd_atoms_pack_list(a, &k, 1, mask, shift, rec);
}

void hmd_atoms_unpack(struct hmd_atoms *a, int k, unsigned mask, const double *rec)
{
    hmd_atoms_unpack_list(a, k, 1, mask, rec);
}

/* Atoms list[j] into first + j, w elements of type T each, from array p. */
#define COPY_IMAGES(T, p, w)                                                                       \
    do {                                                                                           \
        T *q = (T *)(p);                                                                           \
        for (int j = 0; j < n; j++) {                                                              \
            memcpy(q + (size_t)(first + j) * (w), q + (size_t)list[j] * (w), sizeof(T) * (w));     \
        }                                                                                          \
    } while (0)

void hmd_atoms_copy_images(struct hmd_atoms *a, const int *list, int n, int first, unsigned mask,
                           const double shift[3])
{
    for (int f = 0; f < HMD_NFIELDS; f++) {
        if (!(mask & HMD_FIELD_BIT(f))) {
            continue;
        }
        const struct hmd_atom_field_info *fi = &hmd_atom_fields[f];
        void *p = *array_of(a, f);
        if (shift && (fi->flags & HMD_FIELD_SHIFTED)) { /* positions: width 3, doubles */
            double *q = p;
            for (int j = 0; j < n; j++) {
                const double *src = q + 3 * (size_t)list[j];
                double *dst = q + 3 * (size_t)(first + j);
                dst[0] = src[0] + shift[0];
                dst[1] = src[1] + shift[1];
                dst[2] = src[2] + shift[2];
            }
        } else if (fi->kind == HMD_FIELD_DOUBLE) {
            COPY_IMAGES(double, p, fi->width);
        } else if (fi->kind == HMD_FIELD_INT) {
            COPY_IMAGES(int, p, fi->width);
        } else {
            COPY_IMAGES(int64_t, p, fi->width);
        }
    }
}

#undef COPY_IMAGES

void hmd_atoms_copy(struct hmd_atoms *a, int to, int from, unsigned mask)
{
    for (int f = 0; f < HMD_NFIELDS; f++) {
        if (mask & HMD_FIELD_BIT(f)) {
            const struct hmd_atom_field_info *fi = &hmd_atom_fields[f];
            const size_t bytes = fi->width * element_size(fi->kind);
            char *p = *array_of(a, f);
            memcpy(p + (size_t)to * bytes, p + (size_t)from * bytes, bytes);
        }
    }
}

void hmd_atoms_free(struct hmd_atoms *a)
{
    for (int f = 0; f < HMD_NFIELDS; f++) {
        free(*array_of(a, f));
    }
    memset(a, 0, sizeof *a);
}
