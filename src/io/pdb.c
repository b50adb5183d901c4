/* PDB reader: CRYST1, ATOM/HETATM, MODEL/ENDMDL and END; other records are ignored.
 *
 * Columns follow the wwPDB format 3.3 (1-based): atom name 13-16, residue name 18-20 (read as
 * 18-21, where GROMACS and CHARMM put four-letter names such as "TIP3"), residue number 23-26,
 * x y z 31-38, 39-46, 47-54 (Å), element 77-78. Atoms are collected until ENDMDL or END, so a
 * file with several MODELs, or several END-terminated frames as VMD writes them, gives several
 * frames; a frame takes the last CRYST1 and TITLE seen when it ends.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "core/error.h"
#include "io/structure.h"

/* A fixed-column field: the part of columns [first, last] (1-based) that the line holds. */
struct field {
    const char *s;
    size_t len;
};

static struct field columns(const struct hmd_text_file *tf, size_t first, size_t last)
{
    struct field f = {tf->line + tf->len, 0};
    if (first - 1 < tf->len) {
        f.s = tf->line + first - 1;
        f.len = (last < tf->len ? last : tf->len) - (first - 1);
    }
    return f;
}

static bool is_blank(struct field f)
{
    for (size_t k = 0; k < f.len; k++) {
        if (f.s[k] != ' ') {
            return false;
        }
    }
    return true;
}

static bool record_is(const struct hmd_text_file *tf, const char *name)
{
    char record[7];
    hmd_text_copy_trimmed(record, sizeof record, tf->line, tf->len < 6 ? tf->len : 6);
    return strcmp(record, name) == 0;
}

/* cos of an angle in degrees, exact for the right angles of a rectangular cell. */
static double cos_deg(double deg)
{
    return deg == 90.0 ? 0.0 : cos(deg * acos(-1.0) / 180.0);
}

static int read_cryst1(const struct hmd_text_file *tf, struct hmd_box *box, bool *has_box)
{
    static const struct {
        const char *name;
        size_t first, last;
    } cols[6] = {{"a", 7, 15},      {"b", 16, 24},    {"c", 25, 33},
                 {"alpha", 34, 40}, {"beta", 41, 47}, {"gamma", 48, 54}};
    double v[6];
    for (int k = 0; k < 6; k++) {
        struct field f = columns(tf, cols[k].first, cols[k].last);
        if (!hmd_text_parse_double(f.s, f.len, &v[k])) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: CRYST1: %s in columns %zu-%zu is '%.*s', not a finite "
                                 "number (expected CRYST1%%9.3f%%9.3f%%9.3f%%7.2f%%7.2f%%7.2f)",
                                 tf->path, tf->lineno, cols[k].name, cols[k].first, cols[k].last,
                                 (int)f.len, f.s);
        }
    }
    /* Files without a cell carry a 1 Å cube (or zeros) as a placeholder. */
    if ((v[0] == 1.0 && v[1] == 1.0 && v[2] == 1.0) || (v[0] == 0 && v[1] == 0 && v[2] == 0)) {
        *has_box = false;
        return HMD_OK;
    }
    double ca = cos_deg(v[3]), cb = cos_deg(v[4]), cg = cos_deg(v[5]);
    double sg = sqrt(1.0 - cg * cg);
    double cx = v[2] * cb;
    double cy = sg > 0 ? v[2] * (ca - cb * cg) / sg : 0.0;
    double cz2 = v[2] * v[2] - cx * cx - cy * cy;
    if (v[0] <= 0 || v[1] <= 0 || v[2] <= 0 || sg <= 0 || !(cz2 > 0)) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: CRYST1: a=%g b=%g c=%g alpha=%g beta=%g gamma=%g do not form "
                             "a cell (lengths must be positive, angles in (0, 180) degrees and "
                             "consistent)",
                             tf->path, tf->lineno, v[0], v[1], v[2], v[3], v[4], v[5]);
    }
    const double h[3][3] = {{v[0], 0, 0}, {v[1] * cg, v[1] * sg, 0}, {cx, cy, sqrt(cz2)}};
    const bool periodic[3] = {true, true, true};
    int status = hmd_box_init(box, h, periodic);
    if (status != HMD_OK) {
        return hmd_error_prefix(status, "%s:%d: CRYST1: ", tf->path, tf->lineno);
    }
    *has_box = true;
    return HMD_OK;
}

/* Grows the per-atom arrays of a frame being filled to `cap` atoms. */
static int grow(struct hmd_frame *frame, int cap)
{
    double *x = realloc(frame->x, 3 * (size_t)cap * sizeof *x);
    if (x) {
        frame->x = x;
    }
    char(*element)[4] = realloc(frame->element, (size_t)cap * sizeof *element);
    if (element) {
        frame->element = element;
    }
    char(*name)[8] = realloc(frame->name, (size_t)cap * sizeof *name);
    if (name) {
        frame->name = name;
    }
    char(*resname)[8] = realloc(frame->resname, (size_t)cap * sizeof *resname);
    if (resname) {
        frame->resname = resname;
    }
    int *resnr = realloc(frame->resnr, (size_t)cap * sizeof *resnr);
    if (resnr) {
        frame->resnr = resnr;
    }
    int *line = realloc(frame->line, (size_t)cap * sizeof *line);
    if (line) {
        frame->line = line;
    }
    if (!x || !element || !name || !resname || !resnr || !line) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for %d atoms", cap);
    }
    return HMD_OK;
}

static int read_atom(const struct hmd_text_file *tf, struct hmd_frame *frame, int *cap)
{
    if (frame->natoms == *cap) {
        int status = grow(frame, *cap > 0 ? 2 * *cap : 1024);
        if (status != HMD_OK) {
            return status;
        }
        *cap = *cap > 0 ? 2 * *cap : 1024;
    }
    int i = frame->natoms;
    double *x = &frame->x[3 * i];
    for (int d = 0; d < 3; d++) {
        size_t first = 31 + 8 * (size_t)d;
        struct field f = columns(tf, first, first + 7);
        if (!hmd_text_parse_double(f.s, f.len, &x[d])) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: %c in columns %zu-%zu is '%.*s', not a finite number (PDB "
                                 "is fixed format: x, y, z in columns 31-54, %%8.3f in Å)",
                                 tf->path, tf->lineno, "xyz"[d], first, first + 7, (int)f.len, f.s);
        }
    }
    struct field name = columns(tf, 13, 16), res = columns(tf, 18, 21), resnr = columns(tf, 23, 26);
    hmd_text_copy_trimmed(frame->name[i], sizeof frame->name[i], name.s, name.len);
    hmd_text_copy_trimmed(frame->resname[i], sizeof frame->resname[i], res.s, res.len);
    /* Writers disagree on residue numbers past 9999 (wrapped, hexadecimal, hybrid-36); they
     * only label atoms here, so one that is not a plain integer is kept as 0. */
    long long number;
    frame->resnr[i] = hmd_text_parse_int(resnr.s, resnr.len, &number) ? (int)number : 0;
    frame->line[i] = tf->lineno;

    char symbol[4];
    struct field elem = columns(tf, 77, 78);
    hmd_text_copy_trimmed(symbol, sizeof symbol, elem.s, elem.len);
    int z = hmd_element_number(symbol);
    hmd_frame_set_element(frame, i, z ? z : hmd_element_guess(frame->name[i], frame->resname[i]));
    frame->natoms++;
    return HMD_OK;
}

/* Moves the atoms collected so far into a new frame of the list. */
static int end_frame(struct hmd_frame *frame, int *cap, const struct hmd_box *box, bool has_box,
                     const char *title, struct hmd_frame **frames, int *nframes, int *frames_cap)
{
    if (frame->natoms == 0) {
        return HMD_OK;
    }
    frame->has_box = has_box;
    if (has_box) {
        frame->box = *box;
    }
    snprintf(frame->title, sizeof frame->title, "%s", title);
    hmd_text_title_time(title, &frame->time);
    int status = hmd_frames_append(frames, nframes, frames_cap, frame);
    if (status == HMD_OK) {
        *cap = 0;
    }
    return status;
}

/* Whether the file's last byte is an end of line (or the file is not seekable). */
static bool ends_with_newline(FILE *fp)
{
    if (fseek(fp, -1, SEEK_END) != 0) {
        return true;
    }
    return fgetc(fp) == '\n';
}

int hmd_pdb_read(const char *path, struct hmd_frame **frames, int *nframes)
{
    *frames = NULL;
    *nframes = 0;
    struct hmd_text_file tf;
    int status = hmd_text_open(&tf, path);
    if (status != HMD_OK) {
        return status;
    }
    struct hmd_frame frame = {0};
    int cap = 0, frames_cap = 0;
    struct hmd_box box;
    bool has_box = false;
    char title[sizeof frame.title] = "";
    int more, last_atom_line = 0;
    bool closed = true; /* the last ATOM record is followed by END or ENDMDL */
    while ((more = hmd_text_next(&tf)) == 1) {
        if (record_is(&tf, "ATOM") || record_is(&tf, "HETATM")) {
            status = read_atom(&tf, &frame, &cap);
            closed = false;
            last_atom_line = tf.lineno;
        } else if (record_is(&tf, "CRYST1")) {
            status = read_cryst1(&tf, &box, &has_box);
        } else if (record_is(&tf, "ENDMDL") || record_is(&tf, "END") || record_is(&tf, "MODEL")) {
            closed = closed || !record_is(&tf, "MODEL");
            status = end_frame(&frame, &cap, &box, has_box, title, frames, nframes, &frames_cap);
        } else if (record_is(&tf, "TITLE") && is_blank(columns(&tf, 9, 10))) {
            /* GROMACS writes one TITLE (with "t= ") per MODEL; continuations are not kept */
            struct field f = columns(&tf, 11, 80);
            hmd_text_copy_trimmed(title, sizeof title, f.s, f.len);
        }
        if (status != HMD_OK) {
            goto free_frames;
        }
    }
    if (more == 0 && !closed && !ends_with_newline(tf.fp)) {
        /* cut inside a record: no END or ENDMDL after the last atom, no end of line */
        status = hmd_error_set(HMD_EDATA,
                               "%s:%d: the file ends inside a record, after the ATOM record of "
                               "line %d and without END or ENDMDL: truncated? (a complete PDB "
                               "file ends its lines, and its frames with END or ENDMDL)",
                               path, tf.lineno, last_atom_line);
        goto free_frames;
    }
    status = more < 0 ? more
                      : end_frame(&frame, &cap, &box, has_box, title, frames, nframes, &frames_cap);
    if (status != HMD_OK) {
        goto free_frames;
    }
    if (*nframes == 0) {
        status = tf.lineno == 0
                     ? hmd_error_set(HMD_EDATA, "%s:1: file is empty; expected ATOM records", path)
                     : hmd_error_set(HMD_EDATA, "%s:%d: no ATOM or HETATM records in the file",
                                     path, tf.lineno);
        goto free_frames;
    }
    hmd_text_close(&tf);
    return HMD_OK;
free_frames:
    hmd_frames_free(*frames, *nframes);
    *frames = NULL;
    *nframes = 0;
    hmd_frame_free(&frame);
    hmd_text_close(&tf);
    return status;
}
