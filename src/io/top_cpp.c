/* The topology preprocessor (io/top_cpp.h). Each open file keeps its own stack of conditional
 * blocks, so an #ifdef must end in the file it starts in (grompp requires the same in
 * practice: its force fields and pdb2gmx's output all do). Files are read one logical line at
 * a time; nothing is kept of a file once it is closed but its name, which messages and the
 * topology's atom origins point to until hmd_top_cpp_close. */
#include "io/top_cpp.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "io/text.h"

enum { MAX_DEPTH = 32 }; /* nested #include files; more is a file that includes itself */

struct define {
    char *name;
    char *value; /* "" when the define has none (a flag: never substituted) */
};

struct cond {
    bool parent_active; /* the block around this one was active */
    bool taking;        /* this branch is taken */
    bool seen_else;
    bool negated; /* #ifndef */
    int line;     /* of the #ifdef / #ifndef */
    char name[64];
};

struct source {
    struct hmd_text_file tf;
    const char *path; /* in cpp->files */
    char *dir;        /* folder of the file, for its own #includes */
    struct cond *cond;
    int ncond, capcond;
};

struct hmd_top_cpp {
    struct source src[MAX_DEPTH];
    int depth; /* open files */
    struct define *defs;
    int ndefs, capdefs;
    char **files; /* every file opened (owned), for messages after it is closed */
    int nfiles, capfiles;
    char *gmxlib; /* owned copies of the search folders; share "" = none */
    char *share;
    char *line; /* the logical line being assembled, then after substitution */
    size_t len, cap;
    char *out;
    size_t outcap;
};

static bool is_word_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

static bool is_name(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_')) {
        return false;
    }
    while (*s && is_word_char(*s)) {
        s++;
    }
    return *s == '\0';
}

/* Makes room for n more characters (and the terminator) in *buf of capacity *cap. */
static int reserve(char **buf, size_t *cap, size_t need)
{
    if (need + 1 <= *cap) {
        return HMD_OK;
    }
    size_t n = *cap ? *cap : 256;
    while (n < need + 1) {
        n *= 2;
    }
    char *b = realloc(*buf, n);
    if (!b) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
    }
    *buf = b;
    *cap = n;
    return HMD_OK;
}

static struct define *find_define(const struct hmd_top_cpp *cpp, const char *name, size_t len)
{
    for (int i = 0; i < cpp->ndefs; i++) {
        if (strlen(cpp->defs[i].name) == len && !memcmp(cpp->defs[i].name, name, len)) {
            return &cpp->defs[i];
        }
    }
    return NULL;
}

int hmd_top_cpp_defined(const struct hmd_top_cpp *cpp, const char *name)
{
    return find_define(cpp, name, strlen(name)) != NULL;
}

/* Defines (or redefines, as GROMACS does silently) name with value (NULL: none). */
static int define(struct hmd_top_cpp *cpp, const char *name, const char *value)
{
    struct define *d = find_define(cpp, name, strlen(name));
    char *v = strdup(value ? value : "");
    if (!v) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
    }
    if (d) {
        free(d->value);
        d->value = v;
        return HMD_OK;
    }
    if (cpp->ndefs == cpp->capdefs) {
        int cap = cpp->capdefs ? 2 * cpp->capdefs : 64;
        struct define *defs = realloc(cpp->defs, sizeof *defs * (size_t)cap);
        if (!defs) {
            free(v);
            return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
        }
        cpp->defs = defs;
        cpp->capdefs = cap;
    }
    char *n = strdup(name);
    if (!n) {
        free(v);
        return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
    }
    cpp->defs[cpp->ndefs++] = (struct define){n, v};
    return HMD_OK;
}

static void undefine(struct hmd_top_cpp *cpp, const char *name)
{
    struct define *d = find_define(cpp, name, strlen(name));
    if (d) {
        free(d->name);
        free(d->value);
        *d = cpp->defs[--cpp->ndefs];
    }
}

/* The -D options of the mdp key `define`. */
static int define_options(struct hmd_top_cpp *cpp, const char *defines)
{
    char *copy = strdup(defines);
    if (!copy) {
        return hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    char *tok[256];
    int n = hmd_text_split(copy, tok, 256);
    int rc = n > 256 ? hmd_error_set(HMD_ECONFIG, "define: more than 256 -D options") : HMD_OK;
    for (int i = 0; i < n && i < 256 && !rc; i++) {
        char *eq = strchr(tok[i], '=');
        if (eq) {
            *eq = '\0';
        }
        if (strncmp(tok[i], "-D", 2) != 0 || !is_name(tok[i] + 2)) {
            if (eq) {
                *eq = '=';
            }
            rc = hmd_error_set(HMD_ECONFIG,
                               "define = %s: '%s' is not -DNAME or -DNAME=value (the "
                               "topology preprocessor takes -D options only)",
                               defines, tok[i]);
        } else {
            rc = define(cpp, tok[i] + 2, eq ? eq + 1 : NULL);
        }
    }
    free(copy);
    return rc;
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        return strdup(".");
    }
    if (slash == path) {
        return strdup("/");
    }
    return strndup(path, (size_t)(slash - path));
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Remembers path (copied) among the files opened; returns the copy or NULL (ENOMEM set). */
static const char *keep_name(struct hmd_top_cpp *cpp, const char *path)
{
    if (cpp->nfiles == cpp->capfiles) {
        int cap = cpp->capfiles ? 2 * cpp->capfiles : 16;
        char **f = realloc(cpp->files, sizeof *f * (size_t)cap);
        if (!f) {
            hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
            return NULL;
        }
        cpp->files = f;
        cpp->capfiles = cap;
    }
    char *p = strdup(path);
    if (!p) {
        hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
        return NULL;
    }
    cpp->files[cpp->nfiles++] = p;
    return p;
}

static int push_file(struct hmd_top_cpp *cpp, const char *path)
{
    const char *kept = keep_name(cpp, path);
    if (!kept) {
        return HMD_ENOMEM;
    }
    struct source *s = &cpp->src[cpp->depth];
    memset(s, 0, sizeof *s);
    s->path = kept;
    s->dir = dir_of(kept);
    if (!s->dir) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
    }
    int rc = hmd_text_open(&s->tf, kept);
    if (rc) {
        free(s->dir);
        return rc;
    }
    cpp->depth++;
    return HMD_OK;
}

static void pop_file(struct hmd_top_cpp *cpp)
{
    struct source *s = &cpp->src[--cpp->depth];
    hmd_text_close(&s->tf);
    free(s->dir);
    free(s->cond);
    memset(s, 0, sizeof *s);
}

/* Tries folder/name; on success the path is in *out (owned). */
static bool try_path(const char *folder, size_t flen, const char *name, char **out)
{
    size_t n = flen + 1 + strlen(name) + 1;
    char *p = malloc(n);
    if (!p) {
        return false;
    }
    snprintf(p, n, "%.*s/%s", (int)flen, folder, name);
    if (is_file(p)) {
        *out = p;
        return true;
    }
    free(p);
    return false;
}

/* grompp's search for an #include of `name` from a file in folder `dir`. */
static int find_include(const struct hmd_top_cpp *cpp, const char *dir, const char *name,
                        const char *where, char **out)
{
    if (name[0] == '/') {
        if (is_file(name) && (*out = strdup(name))) {
            return HMD_OK;
        }
    } else {
        if (try_path(dir, strlen(dir), name, out)) {
            return HMD_OK;
        }
        for (const char *p = cpp->gmxlib; p && *p;) {
            const char *colon = strchr(p, ':');
            size_t len = colon ? (size_t)(colon - p) : strlen(p);
            if (len > 0 && try_path(p, len, name, out)) {
                return HMD_OK;
            }
            p = colon ? colon + 1 : p + len;
        }
        if (cpp->share[0] && try_path(cpp->share, strlen(cpp->share), name, out)) {
            return HMD_OK;
        }
    }
    return hmd_error_set(HMD_ENOINPUT,
                         "%s: #include \"%s\" not found (searched %s, GMXLIB = %s, %s); install "
                         "the force fields (Debian: apt-get install gromacs-data) or set GMXLIB",
                         where, name, dir, cpp->gmxlib && cpp->gmxlib[0] ? cpp->gmxlib : "unset",
                         cpp->share[0] ? cpp->share : "no installed folder");
}

int hmd_top_cpp_open(struct hmd_top_cpp **out, const char *path,
                     const struct hmd_top_cpp_options *opt)
{
    *out = NULL;
    struct hmd_top_cpp *cpp = calloc(1, sizeof *cpp);
    if (!cpp) {
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    const char *gmxlib = opt && opt->gmxlib ? opt->gmxlib : getenv("GMXLIB");
    const char *share = opt && opt->share_top ? opt->share_top : HMD_GMX_SHARE_TOP;
    cpp->gmxlib = strdup(gmxlib ? gmxlib : "");
    cpp->share = strdup(share);
    int rc = cpp->gmxlib && cpp->share ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    if (!rc && opt && opt->defines) {
        rc = define_options(cpp, opt->defines);
    }
    if (!rc) {
        rc = push_file(cpp, path);
    }
    if (rc) {
        hmd_top_cpp_close(cpp);
        return rc;
    }
    *out = cpp;
    return HMD_OK;
}

void hmd_top_cpp_close(struct hmd_top_cpp *cpp)
{
    if (!cpp) {
        return;
    }
    while (cpp->depth > 0) {
        pop_file(cpp);
    }
    for (int i = 0; i < cpp->ndefs; i++) {
        free(cpp->defs[i].name);
        free(cpp->defs[i].value);
    }
    for (int i = 0; i < cpp->nfiles; i++) {
        free(cpp->files[i]);
    }
    free(cpp->defs);
    free(cpp->files);
    free(cpp->gmxlib);
    free(cpp->share);
    free(cpp->line);
    free(cpp->out);
    free(cpp);
}

static bool active(const struct source *s)
{
    return s->ncond == 0 || (s->cond[s->ncond - 1].taking && s->cond[s->ncond - 1].parent_active);
}

/* Reads the next logical line of the top file into cpp->line (continuations joined).
 * Returns 1, 0 at the end of the file, or a negative status. */
static int read_logical(struct hmd_top_cpp *cpp, struct source *s, int *first_line)
{
    cpp->len = 0;
    *first_line = 0;
    for (;;) {
        int got = hmd_text_next(&s->tf);
        if (got <= 0) {
            return got < 0 ? got : (*first_line ? 1 : 0);
        }
        if (!*first_line) {
            *first_line = s->tf.lineno;
        }
        size_t n = s->tf.len;
        while (n > 0 && isspace((unsigned char)s->tf.line[n - 1])) {
            n--;
        }
        bool more = n > 0 && s->tf.line[n - 1] == '\\';
        if (more) {
            n--;
        }
        int rc = reserve(&cpp->line, &cpp->cap, cpp->len + n + 1);
        if (rc) {
            return rc;
        }
        memcpy(cpp->line + cpp->len, s->tf.line, n);
        cpp->len += n;
        if (more) {
            cpp->line[cpp->len++] = ' ';
        }
        cpp->line[cpp->len] = '\0';
        if (!more) {
            return 1;
        }
    }
}

/* Replaces the defined names with values in cpp->line, into cpp->out. */
static int substitute(struct hmd_top_cpp *cpp)
{
    size_t o = 0;
    const char *p = cpp->line;
    while (*p) {
        size_t n = 1;
        const char *text = p;
        if (is_word_char(*p)) {
            n = 0;
            while (is_word_char(p[n])) {
                n++;
            }
            const struct define *d = isdigit((unsigned char)*p) ? NULL : find_define(cpp, p, n);
            if (d && d->value[0]) {
                text = d->value;
                p += n;
                n = strlen(d->value);
            } else {
                p += n;
            }
        } else {
            p++;
        }
        int rc = reserve(&cpp->out, &cpp->outcap, o + n);
        if (rc) {
            return rc;
        }
        memcpy(cpp->out + o, text, n);
        o += n;
    }
    int rc = reserve(&cpp->out, &cpp->outcap, o);
    if (rc) {
        return rc;
    }
    cpp->out[o] = '\0';
    return HMD_OK;
}

/* The word after a directive (comment and blanks cut), in place; "" when there is none. */
static char *directive_argument(char *s)
{
    char *semi = strchr(s, ';');
    if (semi) {
        *semi = '\0';
    }
    while (isspace((unsigned char)*s)) {
        s++;
    }
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) {
        *--end = '\0';
    }
    return s;
}

static int push_cond(struct source *s, bool negated, bool taking, int line, const char *name)
{
    if (s->ncond == s->capcond) {
        int cap = s->capcond ? 2 * s->capcond : 8;
        struct cond *c = realloc(s->cond, sizeof *c * (size_t)cap);
        if (!c) {
            return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
        }
        s->cond = c;
        s->capcond = cap;
    }
    struct cond *c = &s->cond[s->ncond];
    c->parent_active = active(s);
    c->taking = taking;
    c->seen_else = false;
    c->negated = negated;
    c->line = line;
    snprintf(c->name, sizeof c->name, "%s", name);
    s->ncond++;
    return HMD_OK;
}

/* One directive line (after its '#'), in file s at `line`. */
static int directive(struct hmd_top_cpp *cpp, struct source *s, char *text, int line)
{
    char where[4200];
    snprintf(where, sizeof where, "%s:%d", s->path, line);
    while (isspace((unsigned char)*text)) {
        text++;
    }
    size_t n = 0;
    while (isalpha((unsigned char)text[n])) {
        n++;
    }
    char word[16];
    snprintf(word, sizeof word, "%.*s", (int)(n < 15 ? n : 15), text);
    char *arg = text + n;
    const bool on = active(s);
    if (!strcmp(word, "ifdef") || !strcmp(word, "ifndef")) {
        char *name = directive_argument(arg);
        if (!is_name(name)) {
            return hmd_error_set(HMD_EDATA, "%s: #%s needs a name, got '%s'", where, word, name);
        }
        const bool def = hmd_top_cpp_defined(cpp, name), neg = word[2] == 'n';
        return push_cond(s, neg, neg ? !def : def, line, name);
    }
    if (!strcmp(word, "else")) {
        if (s->ncond == 0) {
            return hmd_error_set(HMD_EDATA, "%s: #else without #ifdef or #ifndef", where);
        }
        struct cond *c = &s->cond[s->ncond - 1];
        if (c->seen_else) {
            return hmd_error_set(HMD_EDATA, "%s: a second #else for the #ifdef %s of line %d",
                                 where, c->name, c->line);
        }
        c->seen_else = true;
        c->taking = !c->taking;
        return HMD_OK;
    }
    if (!strcmp(word, "endif")) {
        if (s->ncond == 0) {
            return hmd_error_set(HMD_EDATA, "%s: #endif without #ifdef or #ifndef", where);
        }
        s->ncond--;
        return HMD_OK;
    }
    if (strcmp(word, "define") && strcmp(word, "undef") && strcmp(word, "include")) {
        return hmd_error_set(HMD_EDATA,
                             "%s: #%s is not a topology directive (GROMACS's preprocessor has "
                             "#include, #define, #undef, #ifdef, #ifndef, #else and #endif)",
                             where, word);
    }
    if (!on) {
        return HMD_OK;
    }
    if (!strcmp(word, "define") || !strcmp(word, "undef")) {
        char *body = directive_argument(arg);
        size_t k = 0;
        while (is_word_char(body[k])) {
            k++;
        }
        char *value = body + k;
        if (*value && !isspace((unsigned char)*value)) {
            k = 0; /* "X(" or similar: not a name */
        }
        if (*value) {
            *value++ = '\0';
            while (isspace((unsigned char)*value)) {
                value++;
            }
        }
        if (k == 0 || !is_name(body)) {
            return hmd_error_set(HMD_EDATA, "%s: #%s needs a name", where, word);
        }
        if (word[0] == 'u') {
            undefine(cpp, body);
            return HMD_OK;
        }
        return define(cpp, body, value);
    }
    /* #include "name" or <name> */
    char *body = directive_argument(arg);
    char close = body[0] == '"' ? '"' : body[0] == '<' ? '>' : '\0';
    char *end = close ? strchr(body + 1, close) : NULL;
    if (!end || end == body + 1 || end[1] != '\0') {
        return hmd_error_set(HMD_EDATA, "%s: #include needs \"file\" or <file>, got '%s'", where,
                             body);
    }
    *end = '\0';
    if (cpp->depth == MAX_DEPTH) {
        return hmd_error_set(HMD_EDATA,
                             "%s: #include \"%s\" nests deeper than %d files (does a "
                             "file include itself?)",
                             where, body + 1, MAX_DEPTH);
    }
    char *path = NULL;
    int rc = find_include(cpp, s->dir, body + 1, where, &path);
    if (!rc) {
        rc = push_file(cpp, path);
        if (rc) {
            hmd_error_prefix(rc, "%s: ", where);
        }
    }
    free(path);
    return rc;
}

int hmd_top_cpp_next(struct hmd_top_cpp *cpp, char **line, const char **file, int *lineno)
{
    while (cpp->depth > 0) {
        struct source *s = &cpp->src[cpp->depth - 1];
        int first = 0;
        int got = read_logical(cpp, s, &first);
        if (got < 0) {
            return got;
        }
        if (got == 0) {
            if (s->ncond > 0) {
                const struct cond *c = &s->cond[s->ncond - 1];
                return hmd_error_set(HMD_EDATA, "%s:%d: #if%sdef %s has no #endif in this file",
                                     s->path, c->line, c->negated ? "n" : "", c->name);
            }
            pop_file(cpp);
            continue;
        }
        char *p = cpp->line;
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (*p == '#') {
            int rc = directive(cpp, s, p + 1, first);
            if (rc) {
                return rc;
            }
            continue;
        }
        if (!active(s)) {
            continue;
        }
        int rc = substitute(cpp);
        if (rc) {
            return rc;
        }
        *line = cpp->out;
        *file = s->path;
        *lineno = first;
        return 1;
    }
    return 0;
}
