/* Output groups by GROMACS's default group names (io/out_groups.h). */
#include "io/out_groups.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"

static bool is_water(const char *resname)
{
    static const char *const names[] = {"SOL",  "WAT", "HOH",  "TIP3", "TIP4",
                                        "TIP5", "SPC", "SPCE", NULL};
    for (int k = 0; names[k]; k++) {
        if (strcasecmp(resname, names[k]) == 0) {
            return true;
        }
    }
    return false;
}

/* Marks the atoms of group `name` in `on`; returns how many atoms it has. */
static int mark(const char *name, const struct hmd_frame *f, bool *on)
{
    int count = 0;
    for (int i = 0; i < f->natoms; i++) {
        const char *res = f->resname ? f->resname[i] : "";
        bool in;
        if (strcasecmp(name, "System") == 0) {
            in = true;
        } else if (strcasecmp(name, "Water") == 0) {
            in = is_water(res);
        } else if (strcasecmp(name, "non-Water") == 0) {
            in = !is_water(res);
        } else if (name[0] == '@') {
            in = strcmp(name + 1, f->element[i]) == 0;
        } else {
            in = strcmp(name, res) == 0;
        }
        if (in) {
            on[i] = true;
            count++;
        }
    }
    return count;
}

/* "SOL, NA" : the distinct residue names of the frame, for a message. */
static void residue_names(const struct hmd_frame *f, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; f->resname && i < f->natoms && len + 16 < cap; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) {
            seen = strcmp(f->resname[j], f->resname[i]) == 0;
        }
        if (!seen) {
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? ", " : "", f->resname[i]);
        }
    }
}

int hmd_out_group_select(const char *spec, const char *key, const struct hmd_frame *frame,
                         int **select, int *nselect)
{
    *select = NULL;
    *nselect = 0;
    char *copy = strdup(spec ? spec : "");
    bool *on = calloc(frame->natoms > 0 ? (size_t)frame->natoms : 1, sizeof *on);
    if (!copy || !on) {
        free(copy);
        free(on);
        return hmd_error_set(HMD_ENOMEM, "out of memory resolving %s", key);
    }
    int rc = HMD_OK, names = 0;
    bool all = false;
    char *save = NULL;
    for (char *tok = strtok_r(copy, " \t", &save); tok && !rc; tok = strtok_r(NULL, " \t", &save)) {
        names++;
        all = all || strcasecmp(tok, "System") == 0;
        if (mark(tok, frame, on) == 0) {
            char have[256];
            residue_names(frame, have, sizeof have);
            rc = hmd_error_set(HMD_ECONFIG,
                               "%s: group '%s' has no atoms (groups: System, Water, non-Water, "
                               "@<element>, or a residue name: %s)",
                               key, tok, have[0] ? have : "this structure has none");
        }
    }
    if (!rc && names == 0) {
        rc = hmd_error_set(HMD_ECONFIG, "%s is empty; give a group name such as System", key);
    }
    int n = 0;
    for (int i = 0; !rc && i < frame->natoms; i++) {
        n += on[i];
    }
    if (!rc && !(all && n == frame->natoms)) {
        *select = malloc(sizeof(int) * (size_t)n);
        if (!*select) {
            rc = hmd_error_set(HMD_ENOMEM, "out of memory resolving %s", key);
        }
        for (int i = 0, k = 0; !rc && i < frame->natoms; i++) {
            if (on[i]) {
                (*select)[k++] = i;
            }
        }
    }
    if (!rc) {
        *nselect = n;
    }
    free(copy);
    free(on);
    return rc;
}

int hmd_out_group_copy(const char *path, int natoms, const int *select, int nselect, int **copy,
                       int *n)
{
    *copy = NULL;
    *n = select ? nselect : natoms;
    if (natoms < 1 || *n < 1) {
        return hmd_error_set(HMD_ECONFIG, "%s: nothing to write (%d of %d atoms selected)", path,
                             *n, natoms);
    }
    for (int k = 0; select && k < *n; k++) {
        if (select[k] < 0 || select[k] >= natoms) {
            return hmd_error_set(HMD_ECONFIG, "%s: selected atom %d is not among the %d atoms",
                                 path, select[k], natoms);
        }
    }
    if (select && !(*copy = malloc(sizeof(int) * (size_t)*n))) {
        return hmd_error_set(HMD_ENOMEM, "out of memory opening %s", path);
    }
    if (select) {
        memcpy(*copy, select, sizeof(int) * (size_t)*n);
    }
    return HMD_OK;
}
