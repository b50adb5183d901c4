#include "io/deepmd_data.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/npy.h"
#include "io/text.h"

/* Folders below a root that hmd_deepmd_find_systems descends into (a guard against link
 * loops; data trees are a few levels deep). */
enum { MAX_DEPTH = 16 };

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* "dir/name" in a new string, or NULL. */
static char *join(const char *dir, const char *name)
{
    const size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    if (s) {
        snprintf(s, n, "%s/%s", dir, name);
    }
    return s;
}

/* A growing array of strings. */
struct strings {
    char **v;
    int n, cap;
};

static int strings_push(struct strings *s, char *str)
{
    if (!str) {
        return hmd_error_set(HMD_ENOMEM, "out of memory listing folders");
    }
    if (s->n == s->cap) {
        int cap = 2 * s->cap + 8;
        char **v = realloc(s->v, sizeof(char *) * (size_t)cap);
        if (!v) {
            free(str);
            return hmd_error_set(HMD_ENOMEM, "out of memory listing folders");
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = str;
    return HMD_OK;
}

static void strings_free(struct strings *s)
{
    for (int k = 0; k < s->n; k++) {
        free(s->v[k]);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- whitespace-separated tokens of a .raw file, with their lines ---- */

struct tokens {
    struct strings words;
    int *line; /* [words.n] line of each word */
};

/* Reads every word of `path` (a '#' starts a comment, as numpy.loadtxt takes it). */
static int read_tokens(const char *path, struct tokens *tk)
{
    memset(tk, 0, sizeof *tk);
    struct hmd_text_file tf;
    int rc = hmd_text_open(&tf, path);
    int capline = 0;
    while (!rc && (rc = hmd_text_next(&tf)) == 1) {
        rc = HMD_OK;
        char *hash = strchr(tf.line, '#');
        if (hash) {
            *hash = '\0';
        }
        for (char *save = NULL, *w = strtok_r(tf.line, " \t\r", &save); w && !rc;
             w = strtok_r(NULL, " \t\r", &save)) {
            rc = strings_push(&tk->words, strdup(w));
            if (!rc && tk->words.n > capline) {
                capline = 2 * tk->words.n + 8;
                int *line = realloc(tk->line, sizeof(int) * (size_t)capline);
                rc = line ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory reading %s", path);
                tk->line = line ? line : tk->line;
            }
            if (!rc) {
                tk->line[tk->words.n - 1] = tf.lineno;
            }
        }
    }
    hmd_text_close(&tf);
    if (rc < 0) {
        strings_free(&tk->words);
        free(tk->line);
        memset(tk, 0, sizeof *tk);
        return rc;
    }
    return HMD_OK;
}

static void tokens_free(struct tokens *tk)
{
    strings_free(&tk->words);
    free(tk->line);
}

static int read_types(struct hmd_deepmd_system *sys, const char *path)
{
    struct tokens tk;
    int rc = read_tokens(path, &tk);
    if (rc) {
        return rc;
    }
    if (tk.words.n == 0) {
        rc = hmd_error_set(HMD_EDATA, "%s: no atom types (expected one integer per atom)", path);
    }
    sys->type = rc ? NULL : malloc(sizeof(int) * (size_t)tk.words.n);
    if (!rc && !sys->type) {
        rc = hmd_error_set(HMD_ENOMEM, "out of memory reading %s", path);
    }
    for (int i = 0; i < tk.words.n && !rc; i++) {
        long long t;
        const char *w = tk.words.v[i];
        if (!hmd_text_parse_int(w, strlen(w), &t) || t < 0 || t > 1000000) {
            rc =
                hmd_error_set(HMD_EDATA, "%s:%d: '%s' is not an atom type (a non-negative integer)",
                              path, tk.line[i], w);
        } else {
            sys->type[i] = (int)t;
        }
    }
    sys->natoms = rc ? 0 : tk.words.n;
    tokens_free(&tk);
    return rc;
}

static int read_type_map(struct hmd_deepmd_system *sys, const char *path)
{
    struct tokens tk;
    int rc = read_tokens(path, &tk);
    if (rc) {
        return rc;
    }
    sys->type_map = tk.words.n ? calloc((size_t)tk.words.n, sizeof *sys->type_map) : NULL;
    if (tk.words.n && !sys->type_map) {
        rc = hmd_error_set(HMD_ENOMEM, "out of memory reading %s", path);
    }
    for (int t = 0; t < tk.words.n && !rc; t++) {
        if (strlen(tk.words.v[t]) >= sizeof sys->type_map[t]) {
            rc = hmd_error_set(HMD_EDATA, "%s:%d: type name '%s' is longer than %zu characters",
                               path, tk.line[t], tk.words.v[t], sizeof sys->type_map[t] - 1);
        } else {
            strcpy(sys->type_map[t], tk.words.v[t]);
        }
    }
    sys->ntypes = rc ? 0 : tk.words.n;
    tokens_free(&tk);
    return rc;
}

/* The set.* folders of dir, sorted. */
static int list_sets(const char *dir, struct strings *sets)
{
    DIR *d = opendir(dir);
    if (!d) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open %s: %s", dir, strerror(errno));
    }
    int rc = HMD_OK;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (strncmp(e->d_name, "set.", 4) != 0) {
            continue;
        }
        char *path = join(dir, e->d_name);
        if (path && !is_dir(path)) {
            free(path);
            continue;
        }
        rc = strings_push(sets, path);
    }
    closedir(d);
    if (!rc && sets->n == 0) {
        rc = hmd_error_set(HMD_ENOINPUT,
                           "%s: no set.* folder (a DeePMD-kit system has "
                           "set.000/coord.npy, ...)",
                           dir);
    }
    if (!rc) {
        qsort(sets->v, (size_t)sets->n, sizeof(char *), compare_strings);
    }
    return rc;
}

/* One array of a set; *found is false (and nothing is read) when the file is absent. */
static int read_array(const char *set, const char *name, struct hmd_npy *arr, bool *found)
{
    char *path = join(set, name);
    if (!path) {
        return hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    memset(arr, 0, sizeof *arr);
    *found = is_file(path);
    int rc = *found ? hmd_npy_read(path, arr) : HMD_OK;
    free(path);
    return rc;
}

/* The arrays of the system, by name, and the values per frame each must have. */
enum { COORD, BOX, ENERGY, FORCE, VIRIAL, NARRAYS };
static const char *const array_file[NARRAYS] = {"coord.npy", "box.npy", "energy.npy", "force.npy",
                                                "virial.npy"};

static int64_t per_frame(const struct hmd_deepmd_system *sys, int k)
{
    switch (k) {
    case COORD:
    case FORCE:
        return 3 * (int64_t)sys->natoms;
    case ENERGY:
        return 1;
    default:
        return 9;
    }
}

static double **array_field(struct hmd_deepmd_system *sys, int k)
{
    double **fields[NARRAYS] = {&sys->coord, &sys->box, &sys->energy, &sys->force, &sys->virial};
    return fields[k];
}

/* Frames of a set from its coord.npy, checked as DeePMD-kit does: one row per frame of
 * natoms * 3 values (a 1-D array is one frame). */
static int set_frames(const struct hmd_deepmd_system *sys, const char *set,
                      const struct hmd_npy *coord, int *nframes)
{
    const int64_t want = 3 * (int64_t)sys->natoms;
    int64_t rows = -1;
    if (coord->ndim == 1 && coord->shape[0] == want) {
        rows = 1;
    } else if (coord->ndim == 2 && coord->shape[1] == want) {
        rows = coord->shape[0];
    }
    if (rows < 0 || rows > 100000000) {
        return hmd_error_set(HMD_EDATA,
                             "%s/coord.npy: expected shape (nframes, %lld) for the %d atoms of "
                             "type.raw",
                             set, (long long)want, sys->natoms);
    }
    *nframes = (int)rows;
    return HMD_OK;
}

/* Appends the arrays of one set (read into arr[]) to the system's arrays. */
static int append_set(struct hmd_deepmd_system *sys, struct hmd_npy arr[NARRAYS],
                      const bool found[NARRAYS], int nframes, const char *set)
{
    for (int k = 0; k < NARRAYS; k++) {
        if (!found[k]) {
            continue;
        }
        const int64_t n = per_frame(sys, k);
        if (arr[k].count != n * nframes) {
            return hmd_error_set(HMD_EDATA,
                                 "%s/%s: %lld values, expected %lld (%d frames of %lld, as "
                                 "coord.npy and type.raw say)",
                                 set, array_file[k], (long long)arr[k].count,
                                 (long long)(n * nframes), nframes, (long long)n);
        }
        double **dst = array_field(sys, k);
        const size_t old = (size_t)(n * sys->nframes), add = (size_t)(n * nframes);
        double *grown = realloc(*dst, sizeof(double) * (old + add + 1));
        if (!grown) {
            return hmd_error_set(HMD_ENOMEM, "out of memory reading %s", set);
        }
        if (add) {
            memcpy(grown + old, arr[k].data, sizeof(double) * add);
        }
        *dst = grown;
    }
    sys->nframes += nframes;
    sys->nsets++;
    return HMD_OK;
}

static int read_sets(struct hmd_deepmd_system *sys, const struct strings *sets)
{
    bool first_found[NARRAYS] = {false};
    int rc = HMD_OK;
    for (int s = 0; s < sets->n && !rc; s++) {
        const char *set = sets->v[s];
        struct hmd_npy arr[NARRAYS];
        bool found[NARRAYS];
        memset(arr, 0, sizeof arr);
        for (int k = 0; k < NARRAYS && !rc; k++) {
            rc = read_array(set, array_file[k], &arr[k], &found[k]);
        }
        char *mixed = rc ? NULL : join(set, "real_atom_types.npy");
        if (!rc && mixed && is_file(mixed)) {
            rc = hmd_error_set(HMD_ENOTSUP,
                               "%s: mixed-type data (real_atom_types.npy) is not supported; "
                               "give each system one type.raw",
                               set);
        }
        free(mixed);
        if (!rc && !found[COORD]) {
            rc = hmd_error_set(HMD_ENOINPUT, "%s: no coord.npy", set);
        }
        if (!rc && sys->pbc && !found[BOX]) {
            rc = hmd_error_set(HMD_ENOINPUT,
                               "%s: no box.npy (a periodic system needs one; a system without "
                               "a cell has a file named nopbc beside type.raw)",
                               set);
        }
        found[BOX] = found[BOX] && sys->pbc;
        for (int k = ENERGY; k < NARRAYS && !rc; k++) {
            if (s == 0) {
                first_found[k] = found[k];
            } else if (found[k] != first_found[k]) {
                rc = hmd_error_set(HMD_EDATA,
                                   "%s: %s %s, but %s %s: give the label in every set or in none",
                                   set, array_file[k], found[k] ? "is there" : "is missing",
                                   sets->v[0], found[k] ? "has none" : "has it");
            }
        }
        int nframes = 0;
        if (!rc) {
            rc = set_frames(sys, set, &arr[COORD], &nframes);
        }
        if (!rc) {
            rc = append_set(sys, arr, found, nframes, set);
        }
        for (int k = 0; k < NARRAYS; k++) {
            hmd_npy_free(&arr[k]);
        }
    }
    if (!rc && sys->nframes == 0) {
        rc = hmd_error_set(HMD_EDATA, "%s: the sets hold no frame", sys->path);
    }
    return rc;
}

void hmd_deepmd_system_free(struct hmd_deepmd_system *sys)
{
    free(sys->path);
    free(sys->type);
    free(sys->type_map);
    for (int k = 0; k < NARRAYS; k++) {
        free(*array_field(sys, k));
    }
    memset(sys, 0, sizeof *sys);
}

int hmd_deepmd_system_read(const char *dir, struct hmd_deepmd_system *sys)
{
    memset(sys, 0, sizeof *sys);
    struct strings sets = {0};
    sys->path = strdup(dir);
    char *types = join(dir, "type.raw"), *map = join(dir, "type_map.raw");
    char *nopbc = join(dir, "nopbc");
    int rc =
        (sys->path && types && map && nopbc) ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    if (!rc && !is_file(types)) {
        rc = hmd_error_set(HMD_ENOINPUT,
                           "%s: no type.raw (not a DeePMD-kit system folder: type.raw, "
                           "set.000/coord.npy, ...)",
                           dir);
    }
    if (!rc) {
        rc = read_types(sys, types);
    }
    if (!rc && is_file(map)) {
        rc = read_type_map(sys, map);
    }
    for (int i = 0; !rc && sys->ntypes && i < sys->natoms; i++) {
        if (sys->type[i] >= sys->ntypes) {
            rc =
                hmd_error_set(HMD_EDATA, "%s: atom %d has type %d, but type_map.raw names %d types",
                              types, i + 1, sys->type[i], sys->ntypes);
        }
    }
    if (!rc) {
        sys->pbc = !is_file(nopbc);
        rc = list_sets(dir, &sets);
    }
    if (!rc) {
        rc = read_sets(sys, &sets);
    }
    strings_free(&sets);
    free(types);
    free(map);
    free(nopbc);
    if (rc) {
        hmd_deepmd_system_free(sys);
    }
    return rc;
}

/* Adds dir (when it holds a type.raw) and every system below it to out. */
static int find_below(const char *dir, int depth, struct strings *out)
{
    char *types = join(dir, "type.raw");
    int rc = types ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    if (!rc && is_file(types)) {
        rc = strings_push(out, strdup(dir));
    }
    free(types);
    DIR *d = rc || depth >= MAX_DEPTH ? NULL : opendir(dir);
    for (struct dirent *e; !rc && d && (e = readdir(d));) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char *sub = join(dir, e->d_name);
        if (!sub) {
            rc = hmd_error_set(HMD_ENOMEM, "out of memory");
        } else if (is_dir(sub)) {
            rc = find_below(sub, depth + 1, out);
        }
        free(sub);
    }
    if (d) {
        closedir(d);
    }
    return rc;
}

int hmd_deepmd_find_systems(const char *root, char ***paths, int *n)
{
    *paths = NULL;
    *n = 0;
    if (!is_dir(root)) {
        return hmd_error_set(HMD_ENOINPUT,
                             "%s: no such folder (expected a DeePMD-kit system "
                             "folder or a folder of them)",
                             root);
    }
    struct strings found = {0};
    int rc = find_below(root, 0, &found);
    if (!rc && found.n == 0) {
        rc = hmd_error_set(HMD_ENOINPUT, "%s: no DeePMD-kit system (no folder with a type.raw)",
                           root);
    }
    if (rc) {
        strings_free(&found);
        return rc;
    }
    qsort(found.v, (size_t)found.n, sizeof(char *), compare_strings);
    *paths = found.v;
    *n = found.n;
    return HMD_OK;
}

int hmd_deepmd_system_frame(const struct hmd_deepmd_system *sys, int f, const char *const *type_map,
                            int ntypes, struct hmd_frame *frame)
{
    int rc = hmd_frame_alloc(frame, sys->natoms);
    frame->mass = rc ? NULL : malloc(sizeof(double) * (size_t)(sys->natoms + 1));
    if (!rc && !frame->mass) {
        rc = hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    for (int i = 0; i < sys->natoms && !rc; i++) {
        const int t = sys->type[i];
        const char *name = sys->ntypes ? sys->type_map[t] : t < ntypes ? type_map[t] : NULL;
        if (!name) {
            rc = hmd_error_set(HMD_EDATA,
                               "%s/type.raw:%d: type %d, but the system has no type_map.raw and "
                               "the model has %d types",
                               sys->path, i + 1, t, ntypes);
        } else if (strlen(name) >= sizeof frame->element[i]) {
            rc = hmd_error_set(HMD_EDATA,
                               "%s/type.raw:%d: type name '%s' is longer than %zu characters "
                               "(halomd maps types by element symbol)",
                               sys->path, i + 1, name, sizeof frame->element[i] - 1);
        } else {
            strcpy(frame->element[i], name);
            snprintf(frame->name[i], sizeof frame->name[i], "%s", name);
            frame->line[i] = i + 1;
            frame->mass[i] = 1.0;
        }
    }
    if (rc) {
        hmd_frame_free(frame);
        return rc;
    }
    const size_t n3 = 3 * (size_t)sys->natoms;
    memcpy(frame->x, sys->coord + n3 * (size_t)f, sizeof(double) * n3);
    if (sys->pbc) {
        double h[3][3];
        memcpy(h, sys->box + 9 * (size_t)f, sizeof h);
        const bool periodic[3] = {true, true, true};
        rc = hmd_box_init(&frame->box, h, periodic);
        if (rc) {
            hmd_frame_free(frame);
            return hmd_error_prefix(rc, "%s frame %d (box.npy): ", sys->path, f + 1);
        }
        frame->has_box = true;
    }
    return HMD_OK;
}
