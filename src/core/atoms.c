#include "core/atoms.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

static int grow(void **p, size_t elem, int n)
{
    void *q = realloc(*p, elem * (size_t)n);
    if (!q) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for %d atoms", n);
    }
    *p = q;
    return HMD_OK;
}

int hmd_atoms_reserve(struct hmd_atoms *a, int n)
{
    if (n <= a->cap) {
        return HMD_OK;
    }
    int cap = n + n / 4 + 16;
    int rc = grow((void **)&a->x, 3 * sizeof(double), cap);
    if (!rc) {
        rc = grow((void **)&a->v, 3 * sizeof(double), cap);
    }
    if (!rc) {
        rc = grow((void **)&a->f, 3 * sizeof(double), cap);
    }
    if (!rc) {
        rc = grow((void **)&a->mass, sizeof(double), cap);
    }
    if (!rc) {
        rc = grow((void **)&a->type, sizeof(int), cap);
    }
    if (!rc) {
        rc = grow((void **)&a->id, sizeof(int64_t), cap);
    }
    if (!rc) {
        a->cap = cap;
    }
    return rc;
}

void hmd_atoms_free(struct hmd_atoms *a)
{
    free(a->x);
    free(a->v);
    free(a->f);
    free(a->mass);
    free(a->type);
    free(a->id);
    memset(a, 0, sizeof *a);
}
