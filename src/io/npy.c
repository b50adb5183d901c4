#include "io/npy.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"

/* A header longer than this is not one numpy writes for a plain array (it pads to 64 bytes). */
enum { HEADER_MAX = 1 << 16, CHUNK = 1 << 16 };

/* What the header says. */
struct header {
    char descr[8];
    bool fortran_order;
    int ndim;
    int64_t shape[HMD_NPY_MAX_DIM];
    int seen; /* bit per key: 1 descr, 2 fortran_order, 4 shape */
};

/* The element type: byte order, kind and size. */
struct dtype {
    bool big_endian;
    char kind; /* 'f', 'i', 'u' or 'b' */
    int size;  /* bytes */
};

static int bad(const char *path, const char *what)
{
    return hmd_error_set(HMD_EDATA, "%s: %s", path, what);
}

static const char *skip_blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
        s++;
    }
    return s;
}

/* A quoted Python string without escapes into out[n]; returns the end, or NULL. */
static const char *parse_string(const char *s, char *out, size_t n)
{
    const char quote = *s;
    if (quote != '\'' && quote != '"') {
        return NULL;
    }
    size_t len = 0;
    for (s++; *s && *s != quote; s++) {
        if (*s == '\\' || len + 1 >= n) {
            return NULL;
        }
        out[len++] = *s;
    }
    out[len] = '\0';
    return *s == quote ? s + 1 : NULL;
}

/* A tuple of non-negative integers "(200, 576)", "(3,)" or "()"; returns the end, or NULL. */
static const char *parse_shape(const char *s, struct header *h)
{
    if (*s != '(') {
        return NULL;
    }
    s = skip_blank(s + 1);
    h->ndim = 0;
    while (*s != ')') {
        if (*s < '0' || *s > '9' || h->ndim == HMD_NPY_MAX_DIM) {
            return NULL;
        }
        int64_t v = 0;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (v > (INT64_MAX - 9) / 10) {
                return NULL;
            }
            v = 10 * v + (*s - '0');
        }
        if (*s == 'L') { /* Python 2 long literal */
            s++;
        }
        h->shape[h->ndim++] = v;
        s = skip_blank(s);
        if (*s == ',') {
            s = skip_blank(s + 1);
        } else if (*s != ')') {
            return NULL;
        }
    }
    return s + 1;
}

/* Parses the header dict into h; a message naming the problem on failure. */
static int parse_header(const char *path, const char *text, struct header *h)
{
    memset(h, 0, sizeof *h);
    const char *s = skip_blank(text);
    if (*s != '{') {
        return bad(path, "the .npy header is not a Python dict");
    }
    s = skip_blank(s + 1);
    while (*s != '}') {
        char key[32];
        s = parse_string(s, key, sizeof key);
        if (!s || *(s = skip_blank(s)) != ':') {
            return bad(path, "the .npy header is not a Python dict of quoted keys");
        }
        s = skip_blank(s + 1);
        int bit;
        if (!strcmp(key, "descr")) {
            bit = 1;
            s = parse_string(s, h->descr, sizeof h->descr);
            if (!s) {
                return bad(path, "unsupported data type (descr is not a plain type such as "
                                 "'<f8'; structured arrays are not data)");
            }
        } else if (!strcmp(key, "fortran_order")) {
            bit = 2;
            if (!strncmp(s, "True", 4) || !strncmp(s, "False", 5)) {
                h->fortran_order = *s == 'T';
                s += h->fortran_order ? 4 : 5;
            } else {
                return bad(path, "fortran_order in the .npy header is neither True nor False");
            }
        } else if (!strcmp(key, "shape")) {
            bit = 4;
            s = parse_shape(s, h);
            if (!s) {
                return hmd_error_set(HMD_EDATA,
                                     "%s: the shape in the .npy header is not a tuple of at "
                                     "most %d non-negative integers",
                                     path, HMD_NPY_MAX_DIM);
            }
        } else {
            return hmd_error_set(HMD_EDATA, "%s: unexpected key '%s' in the .npy header", path,
                                 key);
        }
        if (h->seen & bit) {
            return hmd_error_set(HMD_EDATA, "%s: key '%s' twice in the .npy header", path, key);
        }
        h->seen |= bit;
        s = skip_blank(s);
        if (*s == ',') {
            s = skip_blank(s + 1);
        } else if (*s != '}') {
            return bad(path, "the .npy header is not a Python dict");
        }
    }
    if (*skip_blank(s + 1) != '\0') {
        return bad(path, "text after the dict in the .npy header");
    }
    if (h->seen != 7) {
        return bad(path, "the .npy header lacks descr, fortran_order or shape");
    }
    return HMD_OK;
}

static int parse_dtype(const char *path, const char *descr, struct dtype *t)
{
    const char order = descr[0];
    t->kind = descr[1];
    t->size = 0;
    if (descr[1] && descr[2] >= '1' && descr[2] <= '8' && descr[3] == '\0') {
        t->size = descr[2] - '0';
    }
    t->big_endian = order == '>';
    bool ok = (order == '<' || order == '>' || order == '|' || order == '=');
    switch (t->kind) {
    case 'f':
        ok = ok && (t->size == 4 || t->size == 8);
        break;
    case 'i':
    case 'u':
        ok = ok && (t->size == 1 || t->size == 2 || t->size == 4 || t->size == 8);
        break;
    case 'b':
        ok = ok && t->size == 1;
        break;
    default:
        ok = false;
    }
    if (!ok) {
        return hmd_error_set(HMD_EDATA,
                             "%s: unsupported data type '%s' (expected floating point such as "
                             "'<f8' or '<f4', or integers)",
                             path, descr);
    }
    return HMD_OK;
}

/* One element at p as a double. */
static double element(const unsigned char *p, const struct dtype *t)
{
    uint64_t bits = 0;
    for (int k = 0; k < t->size; k++) {
        const int byte = t->big_endian ? k : t->size - 1 - k;
        bits = (bits << 8) | p[byte];
    }
    switch (t->kind) {
    case 'f':
        if (t->size == 8) {
            double d;
            memcpy(&d, &bits, sizeof d);
            return d;
        } else {
            uint32_t b32 = (uint32_t)bits;
            float f;
            memcpy(&f, &b32, sizeof f);
            return (double)f;
        }
    case 'i': {
        const int shift = 64 - 8 * t->size; /* sign-extend */
        return (double)((int64_t)(bits << shift) >> shift);
    }
    default: /* 'u', 'b' */
        return (double)bits;
    }
}

/* Magic, version and header text of fp into text[HEADER_MAX + 1]; sets *data_offset. */
static int read_preamble(const char *path, FILE *fp, char *text, long *data_offset)
{
    unsigned char pre[12];
    if (fread(pre, 1, 8, fp) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        return bad(path, "not a NumPy .npy file (no \\x93NUMPY magic)");
    }
    const int major = pre[6];
    if (major < 1 || major > 3) {
        return hmd_error_set(HMD_EDATA, "%s: .npy format version %d.%d is not supported (1-3)",
                             path, major, pre[7]);
    }
    const size_t lenbytes = major == 1 ? 2 : 4;
    if (fread(pre + 8, 1, lenbytes, fp) != lenbytes) {
        return bad(path, "truncated .npy header");
    }
    uint32_t hlen = pre[8] | (uint32_t)pre[9] << 8;
    if (major > 1) {
        hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
    }
    if (hlen > HEADER_MAX) {
        return hmd_error_set(HMD_EDATA, "%s: .npy header of %u bytes (more than %d)", path, hlen,
                             HEADER_MAX);
    }
    if (fread(text, 1, hlen, fp) != hlen) {
        return bad(path, "truncated .npy header");
    }
    text[hlen] = '\0';
    if (strlen(text) != hlen) {
        return bad(path, "NUL byte in the .npy header");
    }
    *data_offset = (long)(8 + lenbytes + hlen);
    return HMD_OK;
}

/* Reads count elements of type t from fp into out. */
static int read_data(const char *path, FILE *fp, const struct dtype *t, int64_t count, double *out)
{
    unsigned char *buf = malloc(CHUNK);
    if (!buf) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading %s", path);
    }
    const int64_t per = CHUNK / t->size;
    int rc = HMD_OK;
    for (int64_t done = 0; done < count && !rc; done += per) {
        const int64_t n = count - done < per ? count - done : per;
        if (fread(buf, (size_t)t->size, (size_t)n, fp) != (size_t)n) {
            rc = hmd_error_set(HMD_EIO, "%s: read failed", path);
            break;
        }
        for (int64_t k = 0; k < n; k++) {
            out[done + k] = element(buf + k * t->size, t);
        }
    }
    free(buf);
    return rc;
}

int hmd_npy_read(const char *path, struct hmd_npy *arr)
{
    memset(arr, 0, sizeof *arr);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open %s: %s", path, strerror(errno));
    }
    char *text = malloc(HEADER_MAX + 1);
    struct header h;
    struct dtype t;
    struct stat st;
    long offset = 0;
    double *data = NULL;
    int rc = text ? read_preamble(path, fp, text, &offset)
                  : hmd_error_set(HMD_ENOMEM, "out of memory reading %s", path);
    if (!rc) {
        rc = parse_header(path, text, &h);
    }
    if (!rc) {
        rc = parse_dtype(path, h.descr, &t);
    }
    if (!rc && h.fortran_order && h.ndim > 1) {
        rc = bad(path, "Fortran-ordered array; save it in C order "
                       "(numpy.save(path, numpy.ascontiguousarray(a)))");
    }
    int64_t count = 1;
    for (int d = 0; d < h.ndim && !rc; d++) {
        if (h.shape[d] > 0 && count > INT64_MAX / 8 / h.shape[d]) {
            rc = bad(path, "the shape in the .npy header is too large");
        }
        count *= h.shape[d];
    }
    if (!rc && fstat(fileno(fp), &st) != 0) {
        rc = hmd_error_set(HMD_EIO, "cannot stat %s: %s", path, strerror(errno));
    }
    if (!rc && (int64_t)st.st_size - offset != count * t.size) {
        char shape[160] = "";
        size_t len = 0;
        for (int d = 0; d < h.ndim && len < sizeof shape; d++) {
            len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%lld", d ? ", " : "",
                                    (long long)h.shape[d]);
        }
        rc = hmd_error_set(HMD_EDATA,
                           "%s: the header says shape (%s) of '%s' (%lld bytes of data), the "
                           "file has %lld bytes after the header (truncated or not an .npy "
                           "file)",
                           path, shape, h.descr, (long long)(count * t.size),
                           (long long)((int64_t)st.st_size - offset));
    }
    if (!rc && count > 0) {
        data = malloc(sizeof(double) * (size_t)count);
        rc = data ? read_data(path, fp, &t, count, data)
                  : hmd_error_set(HMD_ENOMEM, "out of memory for the %lld values of %s",
                                  (long long)count, path);
    }
    fclose(fp);
    free(text);
    if (rc) {
        free(data);
        return rc;
    }
    arr->ndim = h.ndim;
    memcpy(arr->shape, h.shape, sizeof arr->shape);
    arr->count = count;
    snprintf(arr->descr, sizeof arr->descr, "%s", h.descr);
    arr->data = data;
    return HMD_OK;
}

void hmd_npy_free(struct hmd_npy *arr)
{
    free(arr->data);
    memset(arr, 0, sizeof *arr);
}
