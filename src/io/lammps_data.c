/* LAMMPS data file reader (the format read_data reads).
 *
 * Units: the file does not say which LAMMPS `units` style it was written for; `units metal` is
 * assumed (Å, Å/ps, g/mol), the style DeePMD-kit models are used with. The first line is a
 * title. Header lines are numbers followed by a keyword (`N atoms`, `N atom types`, `xlo xhi`,
 * `ylo yhi`, `zlo zhi`, `xy xz yz`; other counts such as bonds are ignored). Sections start at a
 * line holding only their name (a word, e.g. `Atoms # full`, `Pair Coeffs`) and run to the next
 * such line; sections other than Masses, Atoms and Velocities are skipped. `#` starts a
 * comment, which names the atom style after `Atoms` and may name the element after a mass.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/elements.h"
#include "core/error.h"
#include "io/structure.h"

/* Tolerance (g/mol) for recognising an element from a mass without an element comment. */
#define MASS_TOLERANCE 0.1

/* Columns of an Atoms line per atom style: 0-based column of the type and of x, and the count
 * without image flags. */
/* clang-format off */
static const struct atom_style {
    const char *name;
    int type_col, x_col, ncols;
    const char *columns;
} atom_styles[] = {
    {"atomic",    1, 2, 5, "id type x y z"},
    {"charge",    1, 3, 6, "id type q x y z"},
    {"full",      2, 4, 7, "id mol type q x y z"},
    {"molecular", 2, 3, 6, "id mol type x y z"},
    {"bond",      2, 3, 6, "id mol type x y z"},
    {"angle",     2, 3, 6, "id mol type x y z"},
};
/* clang-format on */

struct atom {
    long long id;
    int type;    /* 1..ntypes */
    double x[3]; /* Å, image flags applied, origin not yet shifted */
    int line;
};

struct velocity {
    long long id;
    double v[3]; /* Å/ps */
    int line;
};

static const char *const bounds[3] = {"xlo xhi", "ylo yhi", "zlo zhi"};

enum section { SECTION_HEADER, SECTION_MASSES, SECTION_ATOMS, SECTION_VELOCITIES, SECTION_OTHER };

struct data {
    struct hmd_text_file tf;
    enum section section;
    /* header */
    long long natoms, ntypes;
    int natoms_line, ntypes_line, box_line; /* where they were declared; 0 = not yet */
    double lo[3], hi[3], tilt[3];           /* xlo ylo zlo, xhi yhi zhi, xy xz yz (Å) */
    bool has_bounds[3];
    /* Masses, indexed by type */
    double *mass; /* g/mol, 0 = not given */
    int *type_z;  /* element per type, 0 = unknown */
    /* Atoms */
    const struct atom_style *style; /* NULL until the Atoms hint or first line tells */
    int atoms_line;                 /* line of the Atoms keyword; 0 = no section */
    struct atom *atoms;
    long long natoms_read;
    /* Velocities */
    int velocities_line;
    struct velocity *vel;
    long long nvel;
};

/* Cell vectors as rows: a = (xhi-xlo, 0, 0), b = (xy, yhi-ylo, 0), c = (xz, yz, zhi-zlo). */
static void cell_vectors(const struct data *d, double h[3][3])
{
    const double cell[3][3] = {{d->hi[0] - d->lo[0], 0, 0},
                               {d->tilt[0], d->hi[1] - d->lo[1], 0},
                               {d->tilt[1], d->tilt[2], d->hi[2] - d->lo[2]}};
    memcpy(h, cell, sizeof cell);
}

static bool parse_ll(const char *tok, long long *out)
{
    return hmd_text_parse_int(tok, strlen(tok), out);
}

static bool parse_real(const char *tok, double *out)
{
    return hmd_text_parse_double(tok, strlen(tok), out);
}

/* Header line: numbers, then the keyword they belong to. */
static int read_header_line(struct data *d, char **tok, int n)
{
    const struct hmd_text_file *tf = &d->tf;
    int nnum = 0;
    while (nnum < n && (isdigit((unsigned char)tok[nnum][0]) || strchr("+-.", tok[nnum][0]))) {
        nnum++;
    }
    char keyword[64] = "";
    for (int k = nnum; k < n; k++) {
        size_t used = strlen(keyword);
        snprintf(keyword + used, sizeof keyword - used, "%s%s", k > nnum ? " " : "", tok[k]);
    }
    if (nnum == 0 || !keyword[0]) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: expected a header line (numbers and a keyword, e.g. "
                             "'64 atoms') or a section name",
                             tf->path, tf->lineno);
    }
    for (int a = 0; a < 3; a++) {
        if (strcmp(keyword, bounds[a]) != 0) {
            continue;
        }
        if (nnum != 2 || !parse_real(tok[0], &d->lo[a]) || !parse_real(tok[1], &d->hi[a]) ||
            !(d->hi[a] > d->lo[a])) {
            return hmd_error_set(HMD_EDATA, "%s:%d: expected '<lo> <hi> %s' with hi > lo", tf->path,
                                 tf->lineno, keyword);
        }
        d->has_bounds[a] = true;
        d->box_line = d->box_line ? d->box_line : tf->lineno;
        return HMD_OK;
    }
    if (strcmp(keyword, "xy xz yz") == 0) {
        for (int k = 0; k < 3; k++) {
            if (nnum != 3 || !parse_real(tok[k], &d->tilt[k])) {
                return hmd_error_set(HMD_EDATA, "%s:%d: expected '<xy> <xz> <yz> xy xz yz'",
                                     tf->path, tf->lineno);
            }
        }
        return HMD_OK;
    }
    if (strcmp(keyword, "avec") == 0 || strcmp(keyword, "bvec") == 0 ||
        strcmp(keyword, "cvec") == 0 || strcmp(keyword, "abc origin") == 0) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: general triclinic cells (avec, bvec, cvec) are not supported; "
                             "write the data file with xlo xhi, ylo yhi, zlo zhi and xy xz yz",
                             tf->path, tf->lineno);
    }
    bool is_atoms = strcmp(keyword, "atoms") == 0;
    if (is_atoms || strcmp(keyword, "atom types") == 0) {
        long long value;
        if (nnum != 1 || !parse_ll(tok[0], &value) || value <= 0 || value > 1000000000) {
            return hmd_error_set(HMD_EDATA, "%s:%d: expected '<N> %s' with N a positive integer",
                                 tf->path, tf->lineno, keyword);
        }
        if (is_atoms) {
            d->natoms = value;
            d->natoms_line = tf->lineno;
        } else {
            d->ntypes = value;
            d->ntypes_line = tf->lineno;
        }
    }
    return HMD_OK; /* bonds, angles, bond types, ...: not needed */
}

/* Checks the header when the first section starts, and allocates per-type and per-atom data. */
static int end_header(struct data *d, const char *section)
{
    const struct hmd_text_file *tf = &d->tf;
    if (!d->natoms_line || !d->ntypes_line) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: the header before the first section ('%s') has no "
                             "'<N> %s' line",
                             tf->path, tf->lineno, section,
                             d->natoms_line ? "atom types" : "atoms");
    }
    for (int a = 0; a < 3; a++) {
        if (!d->has_bounds[a]) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: the header before the first section ('%s') has no "
                                 "'<lo> <hi> %s' line",
                                 tf->path, tf->lineno, section, bounds[a]);
        }
    }
    /* An atom takes a line of at least five fields ("1 1 0 0 0", 10 bytes), a type at least
     * a number somewhere: counts the rest of the file cannot hold are refused before anything
     * is allocated for them (4 bytes an atom here, so that a file cut inside an earlier
     * section still gets that section's own message). */
    int rc = hmd_text_check_count(tf, d->natoms, 4, "atoms", d->natoms_line);
    rc = rc ? rc : hmd_text_check_count(tf, d->ntypes, 2, "atom types", d->ntypes_line);
    if (rc) {
        return rc;
    }
    d->mass = calloc((size_t)d->ntypes + 1, sizeof *d->mass);
    d->type_z = calloc((size_t)d->ntypes + 1, sizeof *d->type_z);
    d->atoms = calloc((size_t)d->natoms, sizeof *d->atoms);
    d->vel = calloc((size_t)d->natoms, sizeof *d->vel);
    if (!d->mass || !d->type_z || !d->atoms || !d->vel) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory for %lld atoms", tf->path, d->natoms);
    }
    return HMD_OK;
}

static int start_section(struct data *d, char **tok, int n, const char *comment)
{
    const struct hmd_text_file *tf = &d->tf;
    char name[64] = "";
    for (int k = 0; k < n; k++) {
        size_t used = strlen(name);
        snprintf(name + used, sizeof name - used, "%s%s", k ? " " : "", tok[k]);
    }
    if (d->section == SECTION_HEADER) {
        int status = end_header(d, name);
        if (status != HMD_OK) {
            return status;
        }
    }
    d->section = SECTION_OTHER;
    if (strcmp(name, "Masses") == 0) {
        d->section = SECTION_MASSES;
    } else if (strcmp(name, "Velocities") == 0) {
        if (d->velocities_line) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: second Velocities section (the first is on line %d)",
                                 tf->path, tf->lineno, d->velocities_line);
        }
        d->section = SECTION_VELOCITIES;
        d->velocities_line = tf->lineno;
    } else if (strcmp(name, "Atoms") == 0) {
        if (d->atoms_line) {
            return hmd_error_set(HMD_EDATA, "%s:%d: second Atoms section (the first is on line %d)",
                                 tf->path, tf->lineno, d->atoms_line);
        }
        d->section = SECTION_ATOMS;
        d->atoms_line = tf->lineno;
        char hint[32];
        hmd_text_copy_trimmed(hint, sizeof hint, comment, strcspn(comment, " \t"));
        for (size_t s = 0; s < sizeof atom_styles / sizeof atom_styles[0] && hint[0]; s++) {
            if (strcmp(hint, atom_styles[s].name) == 0) {
                d->style = &atom_styles[s];
            }
        }
        if (hint[0] && !d->style) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom style '%s' is not supported; use atomic, charge or "
                                 "full (or molecular, bond, angle)",
                                 tf->path, tf->lineno, hint);
        }
    }
    return HMD_OK;
}

static int read_mass(struct data *d, char **tok, int n, const char *comment)
{
    const struct hmd_text_file *tf = &d->tf;
    long long type;
    double mass;
    if (n != 2 || !parse_ll(tok[0], &type) || !parse_real(tok[1], &mass) || !(mass > 0)) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Masses: expected '<type> <mass in g/mol>' with a positive "
                             "mass",
                             tf->path, tf->lineno);
    }
    if (type < 1 || type > d->ntypes) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Masses: type %lld is not declared (the header declares %lld "
                             "atom types on line %d)",
                             tf->path, tf->lineno, type, d->ntypes, d->ntypes_line);
    }
    d->mass[type] = mass;
    /* ASE, VMD topotools and moltemplate name the element after the mass: "1 15.999 # O". */
    char symbol[8];
    hmd_text_copy_trimmed(symbol, sizeof symbol, comment, strcspn(comment, " \t"));
    int z = hmd_element_number(symbol);
    d->type_z[type] = z ? z : hmd_element_from_mass(mass, MASS_TOLERANCE);
    return HMD_OK;
}

static int read_atom(struct data *d, char **tok, int n)
{
    const struct hmd_text_file *tf = &d->tf;
    if (!d->style) {
        /* No hint: the column count tells atomic, charge and full (the first three styles)
         * apart, with or without three image flags. */
        for (size_t s = 0; s < 3; s++) {
            if (n == atom_styles[s].ncols || n == atom_styles[s].ncols + 3) {
                d->style = &atom_styles[s];
            }
        }
        if (!d->style) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: Atoms: cannot tell the atom style from %d columns; name "
                                 "it after the section, e.g. 'Atoms # full'",
                                 tf->path, tf->lineno, n);
        }
    }
    const struct atom_style *style = d->style;
    if (n != style->ncols && n != style->ncols + 3) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Atoms (style %s): expected %d columns (%s) or %d with image "
                             "flags; found %d",
                             tf->path, tf->lineno, style->name, style->ncols, style->columns,
                             style->ncols + 3, n);
    }
    if (d->natoms_read == d->natoms) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Atoms: more atoms than the %lld declared on line %d", tf->path,
                             tf->lineno, d->natoms, d->natoms_line);
    }
    struct atom *a = &d->atoms[d->natoms_read];
    long long type;
    if (!parse_ll(tok[0], &a->id) || a->id <= 0) {
        return hmd_error_set(HMD_EDATA, "%s:%d: Atoms: atom id '%s' is not a positive integer",
                             tf->path, tf->lineno, tok[0]);
    }
    if (!parse_ll(tok[style->type_col], &type)) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Atoms: atom %lld: type '%s' is not an integer (type labels "
                             "are not supported)",
                             tf->path, tf->lineno, a->id, tok[style->type_col]);
    }
    if (type < 1 || type > d->ntypes) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Atoms: atom %lld has type %lld, but the header declares %lld "
                             "atom types (line %d)",
                             tf->path, tf->lineno, a->id, type, d->ntypes, d->ntypes_line);
    }
    a->type = (int)type;
    for (int k = 0; k < 3; k++) {
        const char *text = tok[style->x_col + k];
        if (!parse_real(text, &a->x[k])) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: Atoms: atom %lld: %c is '%s', not a finite number",
                                 tf->path, tf->lineno, a->id, "xyz"[k], text);
        }
    }
    /* Image flags: the atom sits image[k] cells away from where it is written. */
    double h[3][3];
    cell_vectors(d, h);
    for (int k = 0; k < 3 && n == style->ncols + 3; k++) {
        long long image;
        const char *text = tok[style->ncols + k];
        if (!parse_ll(text, &image) || image < -1000000 || image > 1000000) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: Atoms: atom %lld: image flag %c is '%s', not an integer",
                                 tf->path, tf->lineno, a->id, "xyz"[k], text);
        }
        for (int j = 0; j < 3; j++) {
            a->x[j] += (double)image * h[k][j];
        }
    }
    a->line = tf->lineno;
    d->natoms_read++;
    return HMD_OK;
}

static int read_velocity(struct data *d, char **tok, int n)
{
    const struct hmd_text_file *tf = &d->tf;
    if (d->nvel == d->natoms) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: Velocities: more lines than the %lld atoms declared on line "
                             "%d",
                             tf->path, tf->lineno, d->natoms, d->natoms_line);
    }
    struct velocity *v = &d->vel[d->nvel];
    bool ok = n >= 4 && parse_ll(tok[0], &v->id);
    for (int k = 0; k < 3 && ok; k++) {
        ok = parse_real(tok[1 + k], &v->v[k]);
    }
    if (!ok) {
        return hmd_error_set(HMD_EDATA, "%s:%d: Velocities: expected '<id> <vx> <vy> <vz>' (Å/ps)",
                             tf->path, tf->lineno);
    }
    v->line = tf->lineno;
    d->nvel++;
    return HMD_OK;
}

static int compare_atoms(const void *pa, const void *pb)
{
    const struct atom *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

static int compare_velocities(const void *pa, const void *pb)
{
    const struct velocity *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

/* Message for an id found on two lines of a section, naming the later line. */
static int duplicate_error(const struct data *d, const char *section, long long id, int line1,
                           int line2)
{
    return hmd_error_set(HMD_EDATA,
                         "%s:%d: %s: atom id %lld appears twice (also on line %d); ids must be "
                         "unique",
                         d->tf.path, line1 > line2 ? line1 : line2, section, id,
                         line1 > line2 ? line2 : line1);
}

/* Sorts the atoms by id and checks the counts, ids, masses and velocities. */
static int check(struct data *d)
{
    const struct hmd_text_file *tf = &d->tf;
    if (d->section == SECTION_HEADER || !d->atoms_line) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: no Atoms section (a line 'Atoms # full' or similar, followed "
                             "by one line per atom)",
                             tf->path, tf->lineno);
    }
    if (d->natoms_read != d->natoms) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: the Atoms section has %lld atoms, but line %d declares %lld",
                             tf->path, d->atoms_line, d->natoms_read, d->natoms_line, d->natoms);
    }
    qsort(d->atoms, (size_t)d->natoms, sizeof *d->atoms, compare_atoms);
    for (long long i = 1; i < d->natoms; i++) {
        if (d->atoms[i].id == d->atoms[i - 1].id) {
            return duplicate_error(d, "Atoms", d->atoms[i].id, d->atoms[i].line,
                                   d->atoms[i - 1].line);
        }
    }
    for (long long t = 1; t <= d->ntypes; t++) {
        if (d->mass[t] == 0) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom type %lld has no mass; list every type in a Masses "
                                 "section ('<type> <mass> # <element>')",
                                 tf->path, d->ntypes_line, t);
        }
    }
    qsort(d->vel, (size_t)d->nvel, sizeof *d->vel, compare_velocities);
    for (long long k = 0; k < d->nvel; k++) {
        const struct velocity *v = &d->vel[k];
        struct atom key = {.id = v->id};
        if (!bsearch(&key, d->atoms, (size_t)d->natoms, sizeof *d->atoms, compare_atoms)) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: Velocities: atom id %lld is not in the Atoms section",
                                 tf->path, v->line, v->id);
        }
        if (k > 0 && v->id == v[-1].id) {
            return duplicate_error(d, "Velocities", v->id, v->line, v[-1].line);
        }
    }
    if (d->velocities_line && d->nvel != d->natoms) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: the Velocities section has %lld lines, but line %d declares "
                             "%lld atoms",
                             tf->path, d->velocities_line, d->nvel, d->natoms_line, d->natoms);
    }
    return HMD_OK;
}

/* Fills the frame from the checked data: atoms in id order, cell origin at zero. */
static int build_frame(struct data *d, struct hmd_frame *frame)
{
    const struct hmd_text_file *tf = &d->tf;
    double h[3][3];
    cell_vectors(d, h);
    const bool periodic[3] = {true, true, true}; /* the data file does not say; LAMMPS's default */
    int status = hmd_box_init(&frame->box, h, periodic);
    if (status != HMD_OK) {
        return hmd_error_prefix(status, "%s:%d: box: ", tf->path, d->box_line);
    }
    frame->has_box = true;
    frame->mass = calloc((size_t)d->natoms, sizeof *frame->mass);
    frame->v = d->velocities_line ? calloc(3 * (size_t)d->natoms, sizeof *frame->v) : NULL;
    if (!frame->mass || (d->velocities_line && !frame->v)) {
        return hmd_error_set(HMD_ENOMEM, "%s: out of memory for %lld atoms", tf->path, d->natoms);
    }
    for (int i = 0; i < frame->natoms; i++) {
        const struct atom *a = &d->atoms[i];
        for (int k = 0; k < 3; k++) {
            frame->x[3 * i + k] = a->x[k] - d->lo[k];
        }
        frame->mass[i] = d->mass[a->type];
        hmd_frame_set_element(frame, i, d->type_z[a->type]);
        snprintf(frame->name[i], sizeof frame->name[i], "%d", a->type);
        frame->line[i] = a->line;
    }
    /* Both lists are sorted by id and hold the same ids (check() made sure). */
    for (long long k = 0; k < d->nvel; k++) {
        memcpy(&frame->v[3 * k], d->vel[k].v, sizeof d->vel[k].v);
    }
    return HMD_OK;
}

/* LAMMPS write_data names the units style in the title ("..., units = real"); anything but
 * metal would be misread. */
static int check_units(const struct hmd_text_file *tf)
{
    const char *units = strstr(tf->line, "units = ");
    if (!units) {
        return HMD_OK;
    }
    units += strlen("units = ");
    size_t len = strcspn(units, " \t,");
    if (len == 5 && strncmp(units, "metal", 5) == 0) {
        return HMD_OK;
    }
    return hmd_error_set(HMD_EDATA,
                         "%s:1: the title says 'units = %.*s'; halomd reads LAMMPS data files in "
                         "units metal (Å, Å/ps, g/mol): write it from a metal run",
                         tf->path, (int)len, units);
}

static int read_line(struct data *d)
{
    char *line = d->tf.line;
    char *hash = strchr(line, '#');
    const char *comment = "";
    if (hash) {
        *hash = '\0';
        comment = hash + 1 + strspn(hash + 1, " \t");
    }
    char *tok[16];
    int n = hmd_text_split(line, tok, 16);
    if (n == 0) {
        return HMD_OK;
    }
    if (isalpha((unsigned char)tok[0][0])) {
        return start_section(d, tok, n < 16 ? n : 16, comment);
    }
    if (n > 16 && d->section != SECTION_OTHER) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: %d fields; no header, Masses, Atoms or Velocities line has "
                             "more than 16",
                             d->tf.path, d->tf.lineno, n);
    }
    switch (d->section) {
    case SECTION_HEADER:
        return read_header_line(d, tok, n);
    case SECTION_MASSES:
        return read_mass(d, tok, n, comment);
    case SECTION_ATOMS:
        return read_atom(d, tok, n);
    case SECTION_VELOCITIES:
        return read_velocity(d, tok, n);
    case SECTION_OTHER:
        break;
    }
    return HMD_OK;
}

int hmd_lammps_data_read(const char *path, struct hmd_frame **frames, int *nframes)
{
    *frames = NULL;
    *nframes = 0;
    struct data d = {.section = SECTION_HEADER};
    struct hmd_frame frame = {0};
    int frames_cap = 0;
    int status = hmd_text_open(&d.tf, path);
    if (status != HMD_OK) {
        return status;
    }
    char title[sizeof frame.title] = "";
    int more = hmd_text_next(&d.tf);
    if (more == 0) {
        status = hmd_error_set(HMD_EDATA,
                               "%s:1: file is empty; expected a title line, then the header", path);
        goto free_data;
    }
    hmd_text_copy_trimmed(title, sizeof title, d.tf.line, d.tf.len);
    status = check_units(&d.tf);
    if (status != HMD_OK) {
        goto free_data;
    }
    while (more == 1 && (more = hmd_text_next(&d.tf)) == 1) {
        status = read_line(&d);
        if (status != HMD_OK) {
            goto free_data;
        }
    }
    status = more < 0 ? more : check(&d);
    if (status == HMD_OK) {
        status = hmd_frame_alloc(&frame, (int)d.natoms);
    }
    if (status == HMD_OK) {
        memcpy(frame.title, title, sizeof title);
        status = build_frame(&d, &frame);
    }
    if (status == HMD_OK) {
        status = hmd_frames_append(frames, nframes, &frames_cap, &frame);
    }
free_data:
    hmd_frame_free(&frame);
    free(d.mass);
    free(d.type_z);
    free(d.atoms);
    free(d.vel);
    hmd_text_close(&d.tf);
    return status;
}
