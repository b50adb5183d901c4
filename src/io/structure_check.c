/* Position checks of a structure frame (io/structure_check.h). */
#include "io/structure_check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"

/* " (line 12)" when the reader recorded the line of atom i. */
static void line_note(const struct hmd_frame *f, int i, char *out, size_t cap)
{
    if (f->line && f->line[i] > 0) {
        snprintf(out, cap, " (line %d)", f->line[i]);
    } else {
        out[0] = '\0';
    }
}

static uint64_t cell_hash(int64_t a, int64_t b, int64_t c)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15u ^ (uint64_t)b * 0xC2B2AE3D27D4EB4Fu ^
                 (uint64_t)c * 0x165667B19E3779F9u;
    return h ^ (h >> 29);
}

/* The position of atom i wrapped into the cell along its periodic vectors. */
static void wrapped(const struct hmd_frame *f, int i, double r[3])
{
    r[0] = f->x[3 * i];
    r[1] = f->x[3 * i + 1];
    r[2] = f->x[3 * i + 2];
    if (f->has_box) {
        int image[3];
        hmd_box_wrap(&f->box, r, image);
    }
}

static int overlaps(const struct hmd_frame *f, const char *path, int index)
{
    const int n = f->natoms;
    size_t nb = 1;
    while (nb < 2 * (size_t)n) {
        nb <<= 1;
    }
    int *head = malloc(nb * sizeof *head), *next = malloc((size_t)n * sizeof *next);
    int64_t(*cell)[3] = malloc((size_t)n * sizeof *cell);
    double(*r)[3] = malloc((size_t)n * sizeof *r);
    if (!head || !next || !cell || !r) {
        free(head);
        free(next);
        free(cell);
        free(r);
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory checking %d atoms", path, n);
    }
    for (size_t b = 0; b < nb; b++) {
        head[b] = -1;
    }
    const double w = HMD_STRUCTURE_MIN_DIST, w2 = w * w;
    int rc = HMD_OK;
    for (int i = 0; i < n && !rc; i++) {
        if (!f->element[i][0]) {
            continue; /* a virtual site (TIP4P's MW) sits close to its atom by design */
        }
        wrapped(f, i, r[i]);
        for (int d = 0; d < 3; d++) {
            cell[i][d] = (int64_t)floor(r[i][d] / w);
        }
        /* the 27 cells around: any atom closer than w is in one of them */
        for (int dz = -1; dz <= 1 && !rc; dz++) {
            for (int dy = -1; dy <= 1 && !rc; dy++) {
                for (int dx = -1; dx <= 1 && !rc; dx++) {
                    const int64_t c[3] = {cell[i][0] + dx, cell[i][1] + dy, cell[i][2] + dz};
                    for (int j = head[cell_hash(c[0], c[1], c[2]) & (nb - 1)]; j >= 0;
                         j = next[j]) {
                        if (cell[j][0] != c[0] || cell[j][1] != c[1] || cell[j][2] != c[2]) {
                            continue;
                        }
                        const double d0 = r[i][0] - r[j][0], d1 = r[i][1] - r[j][1],
                                     d2 = r[i][2] - r[j][2];
                        const double dd = d0 * d0 + d1 * d1 + d2 * d2;
                        if (dd < w2) {
                            char li[32], lj[32];
                            line_note(f, j, lj, sizeof lj);
                            line_note(f, i, li, sizeof li);
                            rc = hmd_error_set(HMD_EDATA,
                                               "%s: frame %d: atoms %d%s and %d%s overlap (%.3g Å "
                                               "apart, closer than %g Å): a duplicated atom? two "
                                               "atoms at one place make the forces infinite",
                                               path, index, j + 1, lj, i + 1, li, sqrt(dd), w);
                            break;
                        }
                    }
                }
            }
        }
        const size_t b = cell_hash(cell[i][0], cell[i][1], cell[i][2]) & (nb - 1);
        next[i] = head[b];
        head[b] = i;
    }
    free(head);
    free(next);
    free(cell);
    free(r);
    return rc;
}

int hmd_structure_check(const struct hmd_frame *f, const char *path, int index)
{
    for (int i = 0; i < f->natoms; i++) {
        for (int d = 0; d < 3; d++) {
            const double x = f->x[3 * i + d];
            if (!(fabs(x) <= HMD_STRUCTURE_MAX_COORD)) {
                char li[32];
                line_note(f, i, li, sizeof li);
                return hmd_error_set(HMD_EDATA,
                                     "%s: frame %d: atom %d%s has %c = %g Å, beyond %g Å: not a "
                                     "position (units? a damaged file?)",
                                     path, index, i + 1, li, "xyz"[d], x, HMD_STRUCTURE_MAX_COORD);
            }
        }
    }
    return f->natoms > 1 ? overlaps(f, path, index) : HMD_OK;
}
