/* GROMACS .gro reader.
 *
 * A frame is: a title line, the atom count, one fixed-column line per atom
 * (`%5d%-5s%5s%5d` residue number, residue name, atom name, atom number, then x y z and
 * optionally vx vy vz), and the box line. Coordinates have no fixed width: like GROMACS, the
 * width is the distance between the first two decimal points of the first atom line (8 for the
 * default %8.3f; velocities use the same width with one more decimal). Frames follow each
 * other until the end of the file.
 */
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "core/error.h"
#include "io/structure.h"

#define NM_TO_ANGSTROM 10.0

/* Coordinates start after the four 5-column fields. */
enum { gro_coord_col = 20 };

/* The part of a fixed-width field that the line actually holds. */
static size_t field_len(const char *line, size_t line_len, size_t start, size_t width)
{
    if (start >= line_len) {
        return 0;
    }
    return line_len - start < width ? line_len - start : width;
}

static bool is_blank(const char *s)
{
    return s[strspn(s, " \t")] == '\0';
}

/* A line holding only 3 or 9 numbers is a box line. */
static bool looks_like_box(const char *line)
{
    char copy[512], *tok[10];
    snprintf(copy, sizeof copy, "%s", line);
    int n = hmd_text_split(copy, tok, 10);
    if (n != 3 && n != 9) {
        return false;
    }
    for (int k = 0; k < n; k++) {
        double value;
        if (!hmd_text_parse_double(tok[k], strlen(tok[k]), &value)) {
            return false;
        }
    }
    return true;
}

/* Field width of the coordinates from the spacing of the decimal points, as GROMACS infers it. */
static int coordinate_width(const struct hmd_text_file *tf, int atom, int *width)
{
    const char *line = tf->line;
    const char *p1 = tf->len > gro_coord_col ? strchr(line + gro_coord_col, '.') : NULL;
    const char *p2 = p1 ? strchr(p1 + 1, '.') : NULL;
    const char *p3 = p2 ? strchr(p2 + 1, '.') : NULL;
    if (!p3) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: atom %d: expected x, y, z with decimal points from column 21 "
                             "on (.gro is fixed format: %%5d%%-5s%%5s%%5d%%8.3f%%8.3f%%8.3f)",
                             tf->path, tf->lineno, atom);
    }
    long w = p2 - p1;
    if (p3 - p2 != w || p1 - (line + gro_coord_col) >= w) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: atom %d: the decimal points of x, y, z are not evenly spaced "
                             "from column 21 on (.gro is fixed format: "
                             "%%5d%%-5s%%5s%%5d%%8.3f%%8.3f%%8.3f)",
                             tf->path, tf->lineno, atom);
    }
    *width = (int)w;
    return HMD_OK;
}

/* Reads three fields of `width` columns from column `start` (0-based) into out (scaled). */
static int read_vector(const struct hmd_text_file *tf, int atom, const char *what, size_t start,
                       int width, double out[3])
{
    for (int d = 0; d < 3; d++) {
        size_t from = start + (size_t)d * (size_t)width;
        size_t len = field_len(tf->line, tf->len, from, (size_t)width);
        if (!hmd_text_parse_double(tf->line + from, len, &out[d])) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d: %s %c in columns %zu-%zu is '%.*s', not a finite "
                                 "number (.gro is fixed format; the field width %d comes from the "
                                 "decimal points of the first atom line)",
                                 tf->path, tf->lineno, atom, what, "xyz"[d], from + 1,
                                 from + (size_t)width, (int)len, tf->line + from, width);
        }
        out[d] *= NM_TO_ANGSTROM;
    }
    return HMD_OK;
}

static int read_atom(const struct hmd_text_file *tf, struct hmd_frame *frame, int i, int *width)
{
    int atom = i + 1;
    if (i == 0) {
        int status = coordinate_width(tf, atom, width);
        if (status != HMD_OK) {
            return status;
        }
    }
    long long resnr;
    if (!hmd_text_parse_int(tf->line, field_len(tf->line, tf->len, 0, 5), &resnr)) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: atom %d: residue number in columns 1-5 is '%.5s', not an "
                             "integer (.gro is fixed format: %%5d%%-5s%%5s%%5d%%8.3f...)",
                             tf->path, tf->lineno, atom, tf->line);
    }
    frame->resnr[i] = (int)resnr;
    hmd_text_copy_trimmed(frame->resname[i], sizeof frame->resname[i], tf->line + 5,
                          field_len(tf->line, tf->len, 5, 5));
    hmd_text_copy_trimmed(frame->name[i], sizeof frame->name[i], tf->line + 10,
                          field_len(tf->line, tf->len, 10, 5));
    frame->line[i] = tf->lineno;
    hmd_frame_set_element(frame, i, hmd_element_guess(frame->name[i], frame->resname[i]));

    int status = read_vector(tf, atom, "coordinate", gro_coord_col, *width, &frame->x[3 * i]);
    if (status != HMD_OK) {
        return status;
    }
    /* Whether there are velocities is decided by the first atom line: GROMACS writes them on
     * every line or on none. */
    size_t vel_col = gro_coord_col + 3 * (size_t)*width;
    if (i == 0 && vel_col < tf->len && !is_blank(tf->line + vel_col)) {
        frame->v = calloc(3 * (size_t)frame->natoms, sizeof *frame->v);
        if (!frame->v) {
            return hmd_error_set(HMD_ENOMEM, "%s: out of memory for %d velocities", tf->path,
                                 frame->natoms);
        }
    }
    if (frame->v) {
        status = read_vector(tf, atom, "velocity", vel_col, *width, &frame->v[3 * i]);
    }
    return status;
}

static int read_box(const struct hmd_text_file *tf, struct hmd_frame *frame)
{
    char *tok[10];
    int n = hmd_text_split(tf->line, tok, 10);
    if (n != 3 && n != 9) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: box line: expected 3 or 9 numbers (nm: v1(x) v2(y) v3(z) "
                             "[v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)]); found %d fields",
                             tf->path, tf->lineno, n);
    }
    double b[9] = {0};
    bool all_zero = true;
    for (int k = 0; k < n; k++) {
        if (!hmd_text_parse_double(tok[k], strlen(tok[k]), &b[k])) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: box line: value %d is '%s', not a finite number", tf->path,
                                 tf->lineno, k + 1, tok[k]);
        }
        b[k] *= NM_TO_ANGSTROM;
        all_zero = all_zero && b[k] == 0.0;
    }
    if (all_zero) {
        frame->has_box = false; /* GROMACS writes a zero box for a system without one */
        return HMD_OK;
    }
    const double h[3][3] = {{b[0], b[3], b[4]}, {b[5], b[1], b[6]}, {b[7], b[8], b[2]}};
    const bool periodic[3] = {true, true, true};
    int status = hmd_box_init(&frame->box, h, periodic);
    if (status != HMD_OK) {
        return hmd_error_prefix(status, "%s:%d: box line: ", tf->path, tf->lineno);
    }
    frame->has_box = true;
    return HMD_OK;
}

/* Reads the frame whose title is the current line of tf. */
static int read_frame(struct hmd_text_file *tf, struct hmd_frame *frame)
{
    char title[sizeof frame->title];
    hmd_text_copy_trimmed(title, sizeof title, tf->line, tf->len);
    int status = hmd_text_next(tf);
    if (status <= 0) {
        return status < 0 ? status
                          : hmd_error_set(HMD_EDATA,
                                          "%s:%d: file ends after the title; expected the number "
                                          "of atoms on the next line",
                                          tf->path, tf->lineno);
    }
    long long natoms;
    if (!hmd_text_parse_int(tf->line, tf->len, &natoms) || natoms <= 0 || natoms > 1000000000) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: expected the number of atoms (a positive integer) on the line "
                             "after the title; found '%s'",
                             tf->path, tf->lineno, tf->line);
    }
    int count_line = tf->lineno;
    /* an atom line holds at least the 44 columns up to z */
    status = hmd_text_check_count(tf, natoms, 44, "atoms", count_line);
    if (status != HMD_OK) {
        return status;
    }
    status = hmd_frame_alloc(frame, (int)natoms);
    if (status != HMD_OK) {
        return status;
    }
    memcpy(frame->title, title, sizeof title);
    hmd_text_title_time(title, &frame->time);
    frame->resname = calloc((size_t)natoms, sizeof *frame->resname);
    frame->resnr = calloc((size_t)natoms, sizeof *frame->resnr);
    if (!frame->resname || !frame->resnr) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory for %lld atoms", tf->path, natoms);
    }
    int width = 0;
    for (int i = 0; i < frame->natoms; i++) {
        status = hmd_text_next(tf);
        if (status == 0) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: file ends after %d of the %d atoms declared on line %d "
                                 "(and before the box line)",
                                 tf->path, tf->lineno, i, frame->natoms, count_line);
        }
        if (status < 0) {
            return status;
        }
        status = read_atom(tf, frame, i, &width);
        if (status == HMD_EDATA && looks_like_box(tf->line)) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: expected atom %d of the %d declared on line %d; found "
                                 "what looks like the box line, so the file has fewer atom lines "
                                 "than declared",
                                 tf->path, tf->lineno, i + 1, frame->natoms, count_line);
        }
        if (status != HMD_OK) {
            return status;
        }
    }
    status = hmd_text_next(tf);
    if (status == 0) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: file ends after the %d atoms; expected the box line (nm: "
                             "v1(x) v2(y) v3(z) ...)",
                             tf->path, tf->lineno, frame->natoms);
    }
    return status < 0 ? status : read_box(tf, frame);
}

int hmd_gro_read(const char *path, struct hmd_frame **frames, int *nframes)
{
    return hmd_frames_read_sequence(path, read_frame, true, "a .gro title line", frames, nframes);
}
