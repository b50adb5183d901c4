#include "ff/subset.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

struct subset {
    struct hmd_force_provider inner; /* owned */
    unsigned char *in;               /* [natoms] by global id */
    int natoms, type0;
    /* the subset of the last prepare: sub atom k is the rank's atom pick[k] */
    int nlocal, nall, ncount;
    int *pick, *inv; /* [nall] sub -> rank's index; [rank's nall] rank's -> sub or -1 */
    double *x, *f, *ae, *av;
    int *type;
    int64_t *id;
    struct hmd_nbr_list nl; /* offset and index only (owned) */
    int cap_inv;
    size_t cap_index;
};

static double subset_cutoff(const void *self)
{
    const struct subset *s = self;
    return hmd_force_provider_cutoff(&s->inner);
}

static int subset_terms(const void *self, const char **names)
{
    const struct subset *s = self;
    return hmd_force_provider_terms(&s->inner, names);
}

#define GROW(ptr, n)                                                                               \
    do {                                                                                           \
        void *grown_ = realloc((ptr), sizeof *(ptr) * (size_t)(n) + 1);                            \
        if (!grown_) {                                                                             \
            return hmd_error_set(HMD_ENOMEM, "out of memory for the nnp-group's atoms");           \
        }                                                                                          \
        (ptr) = grown_;                                                                            \
    } while (0)

static int reserve(struct subset *s, int nall)
{
    if (nall > s->cap_inv) {
        GROW(s->inv, nall);
        GROW(s->pick, nall);
        GROW(s->x, 3 * (size_t)nall);
        GROW(s->f, 3 * (size_t)nall);
        GROW(s->ae, nall);
        GROW(s->av, 9 * (size_t)nall);
        GROW(s->type, nall);
        GROW(s->id, nall);
        GROW(s->nl.offset, nall + 1);
        s->cap_inv = nall;
    }
    return HMD_OK;
}

/* The subset's atoms: home atoms (counted ones first, as they come), then ghosts. */
static void pick_atoms(struct subset *s, const struct hmd_force_io *io)
{
    s->nall = s->nlocal = s->ncount = 0;
    for (int i = 0; i < io->nall; i++) {
        s->inv[i] = -1;
        if (!s->in[io->id[i]]) {
            continue;
        }
        s->inv[i] = s->nall;
        s->pick[s->nall] = i;
        s->type[s->nall] = io->type[i];
        s->id[s->nall] = io->id[i];
        s->nall++;
        s->nlocal += i < io->nlocal;
        s->ncount += i < io->ncount;
    }
}

/* The host list of the subset's centres, their subset neighbours only. */
static int cut_list(struct subset *s, const struct hmd_nbr_list *nl)
{
    size_t n = 0;
    for (int k = 0; k < s->nlocal; k++) {
        const int i = s->pick[k];
        s->nl.offset[k] = (int)n;
        for (int e = nl->offset[i]; e < nl->offset[i + 1]; e++) {
            const int j = s->inv[nl->index[e]];
            if (j < 0) {
                continue;
            }
            if (n == s->cap_index) {
                const size_t cap = 2 * n + 1024;
                int *grown = realloc(s->nl.index, sizeof *grown * cap);
                if (!grown) {
                    return hmd_error_set(HMD_ENOMEM, "out of memory for the nnp-group's list");
                }
                s->nl.index = grown;
                s->cap_index = cap;
            }
            s->nl.index[n++] = j;
        }
    }
    s->nl.offset[s->nlocal] = (int)n;
    s->nl.ncentre = s->nlocal;
    s->nl.rlist = nl->rlist;
    return HMD_OK;
}

static void copy_positions(struct subset *s, const double *x)
{
    for (int k = 0; k < s->nall; k++) {
        memcpy(s->x + 3 * k, x + 3 * s->pick[k], sizeof(double) * 3);
    }
}

/* The inner provider's io over the subset, accumulators `io`'s or the subset's scratch. */
static struct hmd_force_io sub_io(struct subset *s, const struct hmd_force_io *io)
{
    return (struct hmd_force_io){
        .nlocal = s->nlocal,
        .nall = s->nall,
        .ncount = s->ncount,
        .x = s->x,
        .type = s->type,
        .id = s->id,
        .type0 = s->type0,
        .box = io->box,
        .nl = &s->nl,
        .f = io->f ? s->f : NULL,
        .ev = io->ev,
        .terms = io->terms,
        .atom_energy = io->atom_energy ? s->ae : NULL,
        .atom_virial = io->atom_virial ? s->av : NULL,
    };
}

static int subset_prepare(void *self, const struct hmd_force_io *io)
{
    struct subset *s = self;
    int rc = reserve(s, io->nall);
    if (rc) {
        return rc;
    }
    pick_atoms(s, io);
    rc = cut_list(s, io->nl);
    if (rc) {
        return rc;
    }
    copy_positions(s, io->x);
    const struct hmd_force_io sub = sub_io(s, io);
    return hmd_force_provider_prepare(&s->inner, &sub);
}

static int subset_compute(void *self, const struct hmd_force_io *io)
{
    struct subset *s = self;
    copy_positions(s, io->x);
    const struct hmd_force_io sub = sub_io(s, io);
    memset(s->f, 0, sizeof(double) * 3 * (size_t)s->nall);
    if (sub.atom_energy) {
        memset(s->ae, 0, sizeof(double) * (size_t)s->nlocal);
    }
    if (sub.atom_virial) {
        memset(s->av, 0, sizeof(double) * 9 * (size_t)s->nall);
    }
    const int rc = hmd_force_provider_compute(&s->inner, &sub);
    if (rc) {
        return rc;
    }
    for (int k = 0; k < s->nall; k++) {
        const int i = s->pick[k];
        for (int c = 0; c < 3; c++) {
            io->f[3 * i + c] += s->f[3 * k + c];
        }
        if (sub.atom_energy && k < s->nlocal) {
            io->atom_energy[i] += s->ae[k];
        }
        for (int c = 0; sub.atom_virial && c < 9; c++) {
            io->atom_virial[9 * (size_t)i + c] += s->av[9 * (size_t)k + c];
        }
    }
    return HMD_OK;
}

static void subset_destroy(void *self)
{
    struct subset *s = self;
    if (!s) {
        return;
    }
    hmd_force_provider_destroy(&s->inner);
    free(s->in);
    free(s->pick);
    free(s->inv);
    free(s->x);
    free(s->f);
    free(s->ae);
    free(s->av);
    free(s->type);
    free(s->id);
    free(s->nl.offset);
    free(s->nl.index);
    free(s);
}

static const struct hmd_force_provider_ops subset_ops = {
    .name = "deep-potential (nnp-group)",
    .kind = HMD_FORCE_HOST,
    .cutoff = subset_cutoff,
    .terms = subset_terms,
    .prepare = subset_prepare,
    .compute = subset_compute,
    .device_bytes = NULL,
    .destroy = subset_destroy,
};

int hmd_ff_subset_create(struct hmd_force_provider *p, struct hmd_force_provider inner,
                         const unsigned char *in, int natoms, int type0)
{
    p->ops = NULL;
    p->self = NULL;
    if (hmd_force_provider_on_device(&inner)) {
        const char *name = hmd_force_provider_name(&inner);
        hmd_force_provider_destroy(&inner);
        return hmd_error_set(HMD_ENOTSUP,
                             "nnp-group: %s runs on the device; the subset of "
                             "atoms is made on the host (backend = cpu)",
                             name);
    }
    struct subset *s = calloc(1, sizeof *s);
    unsigned char *copy = malloc((size_t)natoms + 1);
    if (!s || !copy) {
        free(s);
        free(copy);
        hmd_force_provider_destroy(&inner);
        return hmd_error_set(HMD_ENOMEM, "out of memory for the nnp-group");
    }
    memcpy(copy, in, (size_t)natoms);
    s->inner = inner;
    s->in = copy;
    s->natoms = natoms;
    s->type0 = type0;
    p->ops = &subset_ops;
    p->self = s;
    return HMD_OK;
}
