#include "io/structure.h"

#include "io/structure_check.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/elements.h"
#include "core/error.h"
#include "io/structure_check.h"

int hmd_frame_alloc(struct hmd_frame *frame, int natoms)
{
    HMD_ASSERT(natoms >= 0);
    memset(frame, 0, sizeof *frame);
    /* calloc(0) may return NULL, which would read as a failure */
    size_t n = natoms > 0 ? (size_t)natoms : 1;
    frame->natoms = natoms;
    frame->x = calloc(3 * n, sizeof *frame->x);
    frame->element = calloc(n, sizeof *frame->element);
    frame->name = calloc(n, sizeof *frame->name);
    frame->line = calloc(n, sizeof *frame->line);
    if (!frame->x || !frame->element || !frame->name || !frame->line) {
        hmd_frame_free(frame);
        return hmd_error_set(HMD_ENOMEM, "out of memory allocating a frame of %d atoms", natoms);
    }
    return HMD_OK;
}

void hmd_frame_free(struct hmd_frame *frame)
{
    free(frame->x);
    free(frame->v);
    free(frame->mass);
    free(frame->element);
    free(frame->name);
    free(frame->resname);
    free(frame->resnr);
    free(frame->line);
    memset(frame, 0, sizeof *frame);
}

void hmd_frames_free(struct hmd_frame *frames, int nframes)
{
    if (!frames) {
        return;
    }
    for (int i = 0; i < nframes; i++) {
        hmd_frame_free(&frames[i]);
    }
    free(frames);
}

/* ---- format detection ---- */

static enum hmd_structure_format format_from_extension(const char *path)
{
    static const struct {
        const char *ext;
        enum hmd_structure_format format;
    } table[] = {
        {".gro", HMD_FORMAT_GRO},         {".pdb", HMD_FORMAT_PDB},
        {".ent", HMD_FORMAT_PDB},         {".xyz", HMD_FORMAT_XYZ},
        {".extxyz", HMD_FORMAT_XYZ},      {".data", HMD_FORMAT_LAMMPS_DATA},
        {".lmp", HMD_FORMAT_LAMMPS_DATA}, {".lammps", HMD_FORMAT_LAMMPS_DATA},
    };
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base : path, '.');
    if (!dot) {
        return HMD_FORMAT_UNKNOWN;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcasecmp(dot, table[i].ext) == 0) {
            return table[i].format;
        }
    }
    return HMD_FORMAT_UNKNOWN;
}

static bool is_lone_integer(const char *s)
{
    long long n;
    return hmd_text_parse_int(s, strlen(s), &n) && n >= 0;
}

/* A PDB record name (the first six columns) that may start a file. */
static bool is_pdb_record(const char *s)
{
    static const char *const records[] = {"HEADER", "TITLE", "COMPND", "REMARK", "CRYST1",
                                          "MODEL",  "ATOM",  "HETATM", "EXPDTA", "AUTHOR"};
    char record[7];
    hmd_text_copy_trimmed(record, sizeof record, s, strnlen(s, 6));
    for (size_t i = 0; i < sizeof records / sizeof records[0]; i++) {
        if (strcmp(record, records[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* A .gro atom line: residue number in columns 1-5 and coordinates from column 21 on. */
static bool is_gro_atom_line(const char *s)
{
    long long resnr;
    return strlen(s) >= 44 && hmd_text_parse_int(s, 5, &resnr) && strchr(s + 20, '.') != NULL;
}

/* A LAMMPS data header line "<N> atoms". */
static bool is_lammps_atoms_line(char *s)
{
    char *tok[3];
    int n = hmd_text_split(s, tok, 3);
    long long count;
    return n >= 2 && hmd_text_parse_int(tok[0], strlen(tok[0]), &count) &&
           strcmp(tok[1], "atoms") == 0 && (n == 2 || tok[2][0] == '#');
}

enum { sniff_lines = 20 };

static enum hmd_structure_format format_from_content(const char *path)
{
    struct hmd_text_file tf = {0};
    if (hmd_text_open(&tf, path) != HMD_OK) {
        return HMD_FORMAT_UNKNOWN;
    }
    char first[3][128] = {{0}};
    enum hmd_structure_format format = HMD_FORMAT_UNKNOWN;
    while (format == HMD_FORMAT_UNKNOWN && tf.lineno < sniff_lines && hmd_text_next(&tf) == 1) {
        if (tf.lineno <= 3) {
            snprintf(first[tf.lineno - 1], sizeof first[0], "%s", tf.line);
        }
        if (tf.lineno == 1 && is_pdb_record(tf.line)) {
            format = HMD_FORMAT_PDB;
        } else if (tf.lineno == 3 && is_lone_integer(first[1]) && is_gro_atom_line(first[2])) {
            format = HMD_FORMAT_GRO;
        } else if (tf.lineno >= 2 && is_lone_integer(first[0])) {
            format = HMD_FORMAT_XYZ;
        } else if (tf.lineno >= 2 && is_lammps_atoms_line(tf.line)) {
            format = HMD_FORMAT_LAMMPS_DATA;
        }
    }
    hmd_text_close(&tf);
    return format;
}

enum hmd_structure_format hmd_structure_detect(const char *path)
{
    enum hmd_structure_format format = format_from_extension(path);
    return format != HMD_FORMAT_UNKNOWN ? format : format_from_content(path);
}

/* The positions of every frame read (io/structure_check.h); frees them on failure. */
static int check_frames(const char *path, struct hmd_frame **frames, int *nframes, int status)
{
    for (int k = 0; status == HMD_OK && k < *nframes; k++) {
        status = hmd_structure_check(&(*frames)[k], path, k + 1);
    }
    if (status != HMD_OK && *frames) {
        hmd_frames_free(*frames, *nframes);
        *frames = NULL;
        *nframes = 0;
    }
    return status;
}

int hmd_structure_read(const char *path, struct hmd_frame **frames, int *nframes)
{
    *frames = NULL;
    *nframes = 0;
    switch (hmd_structure_detect(path)) {
    case HMD_FORMAT_GRO:
        return check_frames(path, frames, nframes, hmd_gro_read(path, frames, nframes));
    case HMD_FORMAT_PDB:
        return check_frames(path, frames, nframes, hmd_pdb_read(path, frames, nframes));
    case HMD_FORMAT_XYZ:
        return check_frames(path, frames, nframes, hmd_xyz_read(path, frames, nframes));
    case HMD_FORMAT_LAMMPS_DATA:
        return check_frames(path, frames, nframes, hmd_lammps_data_read(path, frames, nframes));
    case HMD_FORMAT_UNKNOWN:
        break;
    }
    struct hmd_text_file tf = {0};
    int status = hmd_text_open(&tf, path);
    if (status != HMD_OK) {
        return status;
    }
    hmd_text_close(&tf);
    return hmd_error_set(HMD_EDATA,
                         "%s:1: unknown structure format; accepted are GROMACS .gro, PDB (.pdb, "
                         ".ent), extended XYZ (.xyz, .extxyz) and LAMMPS data (.data, .lmp, "
                         ".lammps), recognised by the extension or by the first lines",
                         path);
}

int hmd_frame_map_types(const struct hmd_frame *frame, const char *path,
                        const char *const *type_map, int ntypes, int *type)
{
    for (int i = 0; i < frame->natoms; i++) {
        type[i] = -1;
        for (int t = 0; t < ntypes && frame->element[i][0]; t++) {
            if (strcasecmp(frame->element[i], type_map[t]) == 0) {
                type[i] = t;
                break;
            }
        }
        if (type[i] >= 0) {
            continue;
        }
        char types[256] = "";
        size_t used = 0;
        for (int t = 0; t < ntypes && used < sizeof types; t++) {
            int n = snprintf(types + used, sizeof types - used, "%s%s", t ? " " : "", type_map[t]);
            used += n > 0 ? (size_t)n : 0;
        }
        if (frame->element[i][0]) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: atom %d '%s' (element %s) has no type in the model (type "
                                 "map: %s)",
                                 path, frame->line[i], i + 1, frame->name[i], frame->element[i],
                                 types);
        }
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: atom %d '%s': its element could not be guessed from the name; "
                             "give the element (PDB columns 77-78, XYZ species, LAMMPS Masses "
                             "comment) (type map: %s)",
                             path, frame->line[i], i + 1, frame->name[i], types);
    }
    return HMD_OK;
}

/* ---- helpers shared by the readers ---- */

void hmd_frame_set_element(struct hmd_frame *frame, int i, int z)
{
    const char *symbol = hmd_element_symbol(z);
    snprintf(frame->element[i], sizeof frame->element[i], "%s", symbol ? symbol : "");
}

int hmd_frames_read_sequence(const char *path,
                             int (*read_one)(struct hmd_text_file *tf, struct hmd_frame *frame),
                             bool first_line_may_be_blank, const char *first_line,
                             struct hmd_frame **frames, int *nframes)
{
    *frames = NULL;
    *nframes = 0;
    struct hmd_text_file tf;
    int status = hmd_text_open(&tf, path);
    if (status != HMD_OK) {
        return status;
    }
    struct hmd_frame frame = {0};
    int cap = 0;
    bool skip_blank = !first_line_may_be_blank;
    while ((status = hmd_text_next(&tf)) == 1) {
        if (skip_blank && tf.line[strspn(tf.line, " \t")] == '\0') {
            continue;
        }
        status = read_one(&tf, &frame);
        if (status == HMD_OK) {
            status = hmd_frames_append(frames, nframes, &cap, &frame);
        }
        if (status != HMD_OK) {
            break;
        }
        skip_blank = true;
    }
    if (status == HMD_OK && *nframes == 0) {
        status = hmd_error_set(HMD_EDATA, "%s:%d: file is empty; expected %s", path,
                               tf.lineno > 0 ? tf.lineno : 1, first_line);
    }
    hmd_frame_free(&frame);
    hmd_text_close(&tf);
    if (status != HMD_OK) {
        hmd_frames_free(*frames, *nframes);
        *frames = NULL;
        *nframes = 0;
    }
    return status;
}

int hmd_frames_append(struct hmd_frame **frames, int *nframes, int *cap, struct hmd_frame *frame)
{
    if (*nframes == *cap) {
        int new_cap = *cap > 0 ? 2 * *cap : 4;
        struct hmd_frame *grown = realloc(*frames, (size_t)new_cap * sizeof *grown);
        if (!grown) {
            return hmd_error_set(HMD_ENOMEM, "out of memory storing frame %d", *nframes + 1);
        }
        *frames = grown;
        *cap = new_cap;
    }
    (*frames)[(*nframes)++] = *frame;
    memset(frame, 0, sizeof *frame);
    return HMD_OK;
}
