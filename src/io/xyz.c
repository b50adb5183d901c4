/* Extended XYZ reader (the subset ASE writes), with plain XYZ as the special case.
 *
 * A frame is: the atom count, a comment line, one line per atom. In extended XYZ the comment
 * line holds key=value pairs (values may be double-quoted or in braces; keys are
 * case-insensitive): Lattice="ax ay az bx by bz cx cy cz" (Å), Properties=name:type:count:...
 * describing the atom columns (types S string, R real, I integer, L logical), pbc="T T T" and
 * Time (ps). Other keys (energy, stress, ...) are ignored. A comment line without any
 * key=value pair is plain XYZ: columns species x y z, no cell.
 */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/elements.h"
#include "core/error.h"
#include "core/units.h"
#include "io/structure.h"

/* Where each property starts among the columns of an atom line; -1 when absent. */
struct layout {
    int ncols;
    int species, z, pos, vel, momenta, masses;
    bool explicit_properties; /* columns come from Properties, so their count must match */
};

struct header {
    struct layout layout;
    bool has_lattice;
    double lattice[9]; /* Å */
    bool has_pbc;
    bool pbc[3];
    double time; /* ps */
};

/* Next key[=value] item of a comment line, starting at p, cut in place. Quoted values lose
 * their quotes and backslash escapes. Returns where the following item starts, or NULL when
 * there is none; *value is NULL for a bare key. */
static char *next_pair(char *p, char **key, char **value)
{
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (!*p) {
        return NULL;
    }
    *key = p;
    *value = NULL;
    p += strcspn(p, "= \t");
    if (*p != '=') {
        if (*p) {
            *p++ = '\0';
        }
        return p;
    }
    *p++ = '\0';
    char close = *p == '"' ? '"' : *p == '{' ? '}' : '\0';
    if (!close) {
        *value = p;
        p += strcspn(p, " \t");
        if (*p) {
            *p++ = '\0';
        }
        return p;
    }
    *value = ++p;
    char *out = p;
    /* An unterminated quote runs to the end of the line: comments are free text too. */
    while (*p && *p != close) {
        if (*p == '\\' && p[1]) {
            p++;
        }
        *out++ = *p++;
    }
    if (*p) {
        p++;
    }
    *out = '\0';
    return p;
}

static int property_error(const struct hmd_text_file *tf, const char *properties, const char *what)
{
    return hmd_error_set(HMD_EDATA,
                         "%s:%d: Properties=%s: %s (expected name:type:count triples, e.g. "
                         "species:S:1:pos:R:3)",
                         tf->path, tf->lineno, properties, what);
}

/* Copies the text before the next ':' into out and moves *p past the ':'. */
static void next_item(const char **p, char *out, size_t n)
{
    size_t len = strcspn(*p, ":");
    hmd_text_copy_trimmed(out, n, *p, len);
    *p += len;
    if (**p == ':') {
        (*p)++;
    }
}

static int parse_properties(const struct hmd_text_file *tf, const char *properties,
                            struct layout *lay)
{
    static const struct {
        const char *name;
        char type;
        int count;
        size_t offset; /* member of struct layout */
    } known[] = {
        {"species", 'S', 1, offsetof(struct layout, species)},
        {"Z", 'I', 1, offsetof(struct layout, z)},
        {"pos", 'R', 3, offsetof(struct layout, pos)},
        {"vel", 'R', 3, offsetof(struct layout, vel)},
        {"velo", 'R', 3, offsetof(struct layout, vel)},
        {"velocities", 'R', 3, offsetof(struct layout, vel)},
        {"momenta", 'R', 3, offsetof(struct layout, momenta)},
        {"masses", 'R', 1, offsetof(struct layout, masses)},
    };
    *lay = (struct layout){.species = -1,
                           .z = -1,
                           .pos = -1,
                           .vel = -1,
                           .momenta = -1,
                           .masses = -1,
                           .explicit_properties = true};
    const char *p = properties;
    while (*p) {
        char name[64], type[8], count_text[16];
        next_item(&p, name, sizeof name);
        next_item(&p, type, sizeof type);
        next_item(&p, count_text, sizeof count_text);
        long long count;
        if (!name[0] || !type[0] || !count_text[0]) {
            return property_error(tf, properties, "a name, type or count is missing");
        }
        if (strlen(type) != 1 || !strchr("SRILsril", type[0])) {
            return property_error(tf, properties, "types are S, R, I or L");
        }
        if (!hmd_text_parse_int(count_text, strlen(count_text), &count) || count < 1 ||
            count > 1000) {
            return property_error(tf, properties, "a column count is not a positive integer");
        }
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
            if (strcasecmp(name, known[k].name) != 0) {
                continue;
            }
            char t = (char)toupper((unsigned char)type[0]);
            if (t != known[k].type || count != known[k].count) {
                return hmd_error_set(
                    HMD_EDATA, "%s:%d: Properties: %s is %c:%lld; expected %s:%c:%d", tf->path,
                    tf->lineno, name, t, count, known[k].name, known[k].type, known[k].count);
            }
            *(int *)((char *)lay + known[k].offset) = lay->ncols;
        }
        lay->ncols += (int)count;
    }
    if (lay->pos < 0) {
        return property_error(tf, properties, "there is no pos:R:3 (positions) column");
    }
    if (lay->species < 0 && lay->z < 0) {
        return property_error(tf, properties, "there is neither a species:S:1 nor a Z:I:1 column");
    }
    return HMD_OK;
}

static int parse_lattice(const struct hmd_text_file *tf, char *value, double lattice[9])
{
    char *tok[10];
    int n = hmd_text_split(value, tok, 10);
    if (n != 9) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Lattice has %d values; expected 9 (\"ax ay az bx by bz cx cy "
                             "cz\" in Å)",
                             tf->path, tf->lineno, n);
    }
    for (int k = 0; k < 9; k++) {
        if (!hmd_text_parse_double(tok[k], strlen(tok[k]), &lattice[k])) {
            return hmd_error_set(HMD_EDATA, "%s:%d: Lattice value %d is '%s', not a finite number",
                                 tf->path, tf->lineno, k + 1, tok[k]);
        }
    }
    return HMD_OK;
}

static int parse_pbc(const struct hmd_text_file *tf, char *value, bool pbc[3])
{
    char *tok[4];
    int n = hmd_text_split(value, tok, 4);
    for (int d = 0; d < 3 && n == 3; d++) {
        if (strcasecmp(tok[d], "T") == 0 || strcasecmp(tok[d], "True") == 0) {
            pbc[d] = true;
        } else if (strcasecmp(tok[d], "F") == 0 || strcasecmp(tok[d], "False") == 0) {
            pbc[d] = false;
        } else {
            n = -1;
        }
    }
    if (n != 3) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: pbc: expected three of T, F, True, False, e.g. pbc=\"T T T\"",
                             tf->path, tf->lineno);
    }
    return HMD_OK;
}

/* Reads the key=value pairs of the comment line (the current line of tf). */
static int parse_comment(const struct hmd_text_file *tf, struct header *hdr)
{
    /* Without Properties, ASE assumes species:S:1:pos:R:3 */
    *hdr = (struct header){
        .layout = {
            .ncols = 4, .species = 0, .z = -1, .pos = 1, .vel = -1, .momenta = -1, .masses = -1}};
    char *copy = strdup(tf->line);
    if (!copy) {
        return hmd_error_set(HMD_ENOMEM, "%s:%d: out of memory", tf->path, tf->lineno);
    }
    int status = HMD_OK;
    char *key, *value;
    for (char *p = next_pair(copy, &key, &value); p && status == HMD_OK;
         p = next_pair(p, &key, &value)) {
        if (!value) {
            continue;
        }
        if (strcasecmp(key, "Properties") == 0) {
            status = parse_properties(tf, value, &hdr->layout);
        } else if (strcasecmp(key, "Lattice") == 0) {
            status = parse_lattice(tf, value, hdr->lattice);
            hdr->has_lattice = true;
        } else if (strcasecmp(key, "pbc") == 0) {
            status = parse_pbc(tf, value, hdr->pbc);
            hdr->has_pbc = true;
        } else if (strcasecmp(key, "Time") == 0 &&
                   !hmd_text_parse_double(value, strlen(value), &hdr->time)) {
            status = hmd_error_set(HMD_EDATA, "%s:%d: Time is '%s', not a finite number (ps)",
                                   tf->path, tf->lineno, value);
        }
    }
    free(copy);
    return status;
}

static int set_box(const struct hmd_text_file *tf, const struct header *hdr,
                   struct hmd_frame *frame)
{
    bool pbc[3] = {true, true, true};
    if (hdr->has_pbc) {
        memcpy(pbc, hdr->pbc, sizeof pbc);
    }
    bool any_periodic = pbc[0] || pbc[1] || pbc[2];
    if (!hdr->has_lattice) {
        if (hdr->has_pbc && any_periodic) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: pbc has periodic directions but there is no Lattice; add "
                                 "Lattice=\"ax ay az bx by bz cx cy cz\"",
                                 tf->path, tf->lineno);
        }
        frame->has_box = false;
        return HMD_OK;
    }
    bool zero = true;
    for (int k = 0; k < 9; k++) {
        zero = zero && hdr->lattice[k] == 0.0;
    }
    if (zero && !any_periodic) {
        frame->has_box = false;
        return HMD_OK;
    }
    const double(*h)[3] = (const double(*)[3])hdr->lattice;
    int status = hmd_box_init(&frame->box, h, pbc);
    if (status != HMD_OK) {
        return hmd_error_prefix(status, "%s:%d: Lattice: ", tf->path, tf->lineno);
    }
    frame->has_box = true;
    return HMD_OK;
}

static int column_error(const struct hmd_text_file *tf, int atom, const char *what, int col,
                        const char *text)
{
    return hmd_error_set(HMD_EDATA, "%s:%d: atom %d: %s (column %d) is '%s', not a finite number",
                         tf->path, tf->lineno, atom, what, col + 1, text);
}

/* Parses `count` reals from tok[first...] into out. */
static int read_reals(const struct hmd_text_file *tf, int atom, const char *what, char **tok,
                      int first, int count, double *out)
{
    for (int k = 0; k < count; k++) {
        if (!hmd_text_parse_double(tok[first + k], strlen(tok[first + k]), &out[k])) {
            return column_error(tf, atom, what, first + k, tok[first + k]);
        }
    }
    return HMD_OK;
}

static int read_atom(struct hmd_text_file *tf, const struct layout *lay, struct hmd_frame *frame,
                     int i, char **tok)
{
    int atom = i + 1;
    int n = hmd_text_split(tf->line, tok, lay->ncols + 1);
    if (n < lay->ncols || (n > lay->ncols && lay->explicit_properties)) {
        return hmd_error_set(HMD_EDATA, "%s:%d: atom %d: expected %d columns%s; found %d", tf->path,
                             tf->lineno, atom, lay->ncols,
                             lay->explicit_properties ? " (from Properties)" : " (species x y z)",
                             n);
    }
    frame->line[i] = tf->lineno;
    int z = 0;
    if (lay->species >= 0) {
        const char *species = tok[lay->species];
        snprintf(frame->name[i], sizeof frame->name[i], "%s", species);
        long long number;
        if (hmd_text_parse_int(species, strlen(species), &number)) {
            z = hmd_element_symbol((int)number) ? (int)number : 0; /* atomic numbers */
        } else {
            z = hmd_element_number(species);
            z = z ? z : hmd_element_guess(species, NULL);
        }
    } else {
        long long number;
        const char *text = tok[lay->z];
        if (!hmd_text_parse_int(text, strlen(text), &number) || !hmd_element_symbol((int)number)) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d: Z (column %d) is '%s', not an atomic number",
                                 tf->path, tf->lineno, atom, lay->z + 1, text);
        }
        z = (int)number;
        snprintf(frame->name[i], sizeof frame->name[i], "%s", hmd_element_symbol(z));
    }
    hmd_frame_set_element(frame, i, z);

    int status = read_reals(tf, atom, "pos", tok, lay->pos, 3, &frame->x[3 * i]);
    if (status == HMD_OK && lay->masses >= 0) {
        status = read_reals(tf, atom, "masses", tok, lay->masses, 1, &frame->mass[i]);
        if (status == HMD_OK && !(frame->mass[i] > 0)) {
            status = hmd_error_set(HMD_EDATA, "%s:%d: atom %d: mass %g is not positive", tf->path,
                                   tf->lineno, atom, frame->mass[i]);
        }
    }
    if (status != HMD_OK) {
        return status;
    }
    double *v = frame->v ? &frame->v[3 * i] : NULL;
    if (lay->vel >= 0) {
        return read_reals(tf, atom, "vel", tok, lay->vel, 3, v);
    }
    if (lay->momenta >= 0) {
        status = read_reals(tf, atom, "momenta", tok, lay->momenta, 3, v);
        double m = lay->masses >= 0 ? frame->mass[i] : hmd_element_mass(z);
        if (status == HMD_OK && m <= 0) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d '%s': momenta need a mass and the element is "
                                 "unknown; add a masses:R:1 column",
                                 tf->path, tf->lineno, atom, frame->name[i]);
        }
        for (int d = 0; d < 3 && status == HMD_OK; d++) {
            v[d] /= m * hmd_ase_time_unit_ps();
        }
    }
    return status;
}

/* Reads the frame whose atom count is the current line of tf. */
static int read_frame(struct hmd_text_file *tf, struct hmd_frame *frame)
{
    long long natoms;
    if (!hmd_text_parse_int(tf->line, tf->len, &natoms) || natoms <= 0 || natoms > 1000000000) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: expected the number of atoms (a positive integer alone on the "
                             "line) at the start of an XYZ frame; found '%s'",
                             tf->path, tf->lineno, tf->line);
    }
    int count_line = tf->lineno;
    int status = hmd_text_next(tf);
    if (status <= 0) {
        return status < 0 ? status
                          : hmd_error_set(HMD_EDATA,
                                          "%s:%d: file ends after the atom count; expected the "
                                          "comment line",
                                          tf->path, tf->lineno);
    }
    struct header hdr;
    status = parse_comment(tf, &hdr);
    if (status == HMD_OK) { /* an atom line holds at least "X 0 0 0" */
        status = hmd_text_check_count(tf, natoms, 8, "atoms", count_line);
    }
    if (status == HMD_OK) {
        status = hmd_frame_alloc(frame, (int)natoms);
    }
    if (status != HMD_OK) {
        return status;
    }
    hmd_text_copy_trimmed(frame->title, sizeof frame->title, tf->line, tf->len);
    frame->time = hdr.time;
    status = set_box(tf, &hdr, frame);
    if (status != HMD_OK) {
        return status;
    }
    const struct layout *lay = &hdr.layout;
    if (lay->masses >= 0) {
        frame->mass = calloc((size_t)natoms, sizeof *frame->mass);
    }
    if (lay->vel >= 0 || lay->momenta >= 0) {
        frame->v = calloc(3 * (size_t)natoms, sizeof *frame->v);
    }
    char **tok = malloc(((size_t)lay->ncols + 1) * sizeof *tok);
    if (!tok || (lay->masses >= 0 && !frame->mass) ||
        ((lay->vel >= 0 || lay->momenta >= 0) && !frame->v)) {
        free(tok);
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory for %lld atoms", tf->path, natoms);
    }
    for (int i = 0; i < frame->natoms && status == HMD_OK; i++) {
        status = hmd_text_next(tf);
        if (status == 0) {
            status = hmd_error_set(HMD_EDATA,
                                   "%s:%d: file ends after %d of the %d atoms declared on line %d",
                                   tf->path, tf->lineno, i, frame->natoms, count_line);
        } else if (status == 1) {
            status = read_atom(tf, lay, frame, i, tok);
        }
    }
    free(tok);
    return status;
}

int hmd_xyz_read(const char *path, struct hmd_frame **frames, int *nframes)
{
    return hmd_frames_read_sequence(path, read_frame, false, "the number of atoms", frames,
                                    nframes);
}
