#include "io/index_ndx.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"

/* The group name of a header line "[ name ]" into name[len]; false when it is not one. */
static bool header(char *line, char *name, size_t len)
{
    char *open = strchr(line, '['), *close = strchr(line, ']');
    if (!open || !close || close < open) {
        return false;
    }
    *close = '\0';
    char *s = open + 1;
    while (isspace((unsigned char)*s)) {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) {
        s[--n] = '\0';
    }
    snprintf(name, len, "%s", s);
    return true;
}

/* The atom numbers of one line of the wanted group into mask. */
static int numbers(char *line, const char *path, int lineno, int natoms, unsigned char *mask)
{
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        char *end;
        errno = 0;
        const long v = strtol(tok, &end, 10);
        if (*end || errno || v < 1 || v > natoms) {
            return hmd_error_set(HMD_EDATA, "%s:%d: '%s' is not an atom number of the %d atoms",
                                 path, lineno, tok, natoms);
        }
        mask[v - 1] = 1;
    }
    return HMD_OK;
}

int hmd_index_ndx_group(const char *path, const char *name, int natoms, unsigned char *mask)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open the index file %s: %s", path,
                             strerror(errno));
    }
    memset(mask, 0, (size_t)natoms);
    char line[8192], current[256] = "", groups[1024] = "";
    int lineno = 0, found = 0, rc = HMD_OK;
    bool inside = false, any = false;
    while (!rc && fgets(line, sizeof line, fp)) {
        lineno++;
        char *semi = strchr(line, ';');
        if (semi) {
            *semi = '\0';
        }
        if (header(line, current, sizeof current)) {
            inside = !strcasecmp(current, name);
            found += inside;
            any = true;
            const size_t used = strlen(groups);
            snprintf(groups + used, sizeof groups - used, "%s%s", used ? ", " : "", current);
            if (found > 1 && inside) {
                rc = hmd_error_set(HMD_EDATA, "%s:%d: group '%s' a second time", path, lineno,
                                   current);
            }
            continue;
        }
        char *s = line;
        while (isspace((unsigned char)*s)) {
            s++;
        }
        if (!*s) {
            continue;
        }
        if (!any) {
            rc = hmd_error_set(HMD_EDATA, "%s:%d: atom numbers before the first [ group ]", path,
                               lineno);
        } else if (inside) {
            rc = numbers(s, path, lineno, natoms, mask);
        }
    }
    fclose(fp);
    if (!rc && !found) {
        rc = hmd_error_set(HMD_ECONFIG, "%s has no group '%s' (its groups: %s)", path, name,
                           groups[0] ? groups : "none");
    }
    return rc;
}
