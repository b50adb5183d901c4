#include "io/text.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"

int hmd_text_open(struct hmd_text_file *tf, const char *path)
{
    memset(tf, 0, sizeof *tf);
    tf->path = path;
    tf->fp = fopen(path, "r");
    if (!tf->fp) {
        return hmd_error_set(HMD_ENOINPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    return HMD_OK;
}

int hmd_text_check_count(const struct hmd_text_file *tf, long long count, long long min_bytes,
                         const char *what, int decl_line)
{
    struct stat st;
    const long here = ftell(tf->fp);
    if (here < 0 || fstat(fileno(tf->fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        return HMD_OK;
    }
    const long long left = (long long)st.st_size - here;
    if (count <= left / min_bytes + 1) {
        return HMD_OK;
    }
    return hmd_error_set(HMD_EDATA,
                         "%s:%d: %lld %s declared on line %d, but the remaining %lld bytes of the "
                         "file hold at most %lld: a truncated or damaged file?",
                         tf->path, tf->lineno, count, what, decl_line, left, left / min_bytes + 1);
}

int hmd_text_next(struct hmd_text_file *tf)
{
    errno = 0;
    ssize_t n = getline(&tf->line, &tf->cap, tf->fp);
    if (n < 0) {
        if (errno == ENOMEM) {
            return hmd_error_set(HMD_ENOMEM, "%s:%d: out of memory reading a line", tf->path,
                                 tf->lineno + 1);
        }
        if (ferror(tf->fp)) {
            return hmd_error_set(HMD_EIO, "%s:%d: read failed: %s", tf->path, tf->lineno + 1,
                                 strerror(errno));
        }
        return 0;
    }
    tf->lineno++;
    tf->len = strlen(tf->line);
    while (tf->len > 0 && (tf->line[tf->len - 1] == '\n' || tf->line[tf->len - 1] == '\r')) {
        tf->line[--tf->len] = '\0';
    }
    return 1;
}

void hmd_text_close(struct hmd_text_file *tf)
{
    if (tf->fp) {
        fclose(tf->fp);
    }
    free(tf->line);
    memset(tf, 0, sizeof *tf);
}

int hmd_text_split(char *s, char **tok, int max)
{
    int n = 0;
    for (;;) {
        while (*s && isspace((unsigned char)*s)) {
            s++;
        }
        if (!*s) {
            return n;
        }
        if (n < max) {
            tok[n] = s;
        }
        n++;
        while (*s && !isspace((unsigned char)*s)) {
            s++;
        }
        if (*s) {
            *s++ = '\0';
        }
    }
}

/* Copies s[0..len) without surrounding blanks into buf; false when it is empty or too long. */
static bool trimmed_field(const char *s, size_t len, char *buf, size_t n)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1])) {
        len--;
    }
    if (len == 0 || len >= n) {
        return false;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    return true;
}

bool hmd_text_parse_double(const char *s, size_t len, double *out)
{
    char buf[128];
    if (!trimmed_field(s, len, buf, sizeof buf)) {
        return false;
    }
    char *end;
    double value = strtod(buf, &end);
    if (*end != '\0' || !isfinite(value)) {
        return false;
    }
    *out = value;
    return true;
}

bool hmd_text_parse_int(const char *s, size_t len, long long *out)
{
    char buf[64];
    if (!trimmed_field(s, len, buf, sizeof buf)) {
        return false;
    }
    char *end;
    errno = 0;
    long long value = strtoll(buf, &end, 10);
    if (*end != '\0' || errno == ERANGE) {
        return false;
    }
    *out = value;
    return true;
}

void hmd_text_copy_trimmed(char *dst, size_t n, const char *s, size_t len)
{
    while (len > 0 && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)s[len - 1])) {
        len--;
    }
    if (len >= n) {
        len = n - 1;
    }
    memcpy(dst, s, len);
    dst[len] = '\0';
}

bool hmd_text_title_time(const char *title, double *t)
{
    for (const char *p = strstr(title, "t="); p; p = strstr(p + 2, "t=")) {
        if (p != title && !isspace((unsigned char)p[-1])) {
            continue; /* "dt=", "start=" */
        }
        char *end;
        double value = strtod(p + 2, &end);
        if (end != p + 2 && isfinite(value)) {
            *t = value;
            return true;
        }
    }
    return false;
}
