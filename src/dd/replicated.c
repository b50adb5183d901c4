#include "dd/replicated.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"

enum { RECORD = 5 }; /* x, y, z, id, type: one atom in the all-gather */

/* Replicated mode: every home atom of every rank into rep->full (positions by id), types into
 * `type` when not NULL. Collective. */
static int gather_all(struct hmd_dd_replicated *rep, const struct hmd_atoms *a, int *type)
{
    const int n = (int)rep->natoms, nranks = hmd_comm_size();
    if (!rep->full) {
        rep->full = malloc(sizeof(double) * 3 * (n + 1));
        rep->records = malloc(sizeof(double) * RECORD * (n + 1));
    }
    double *mine = malloc(sizeof(double) * RECORD * (a->nlocal + 1));
    size_t *counts = malloc(sizeof(size_t) * nranks);
    int rc = (rep->full && rep->records && mine && counts)
                 ? HMD_OK
                 : hmd_error_set(HMD_ENOMEM, "out of memory for replicated positions");
    rc = hmd_comm_agree(rc);
    if (!rc) {
        for (int k = 0; k < a->nlocal; k++) {
            double *r = mine + (size_t)RECORD * k;
            memcpy(r, a->x + 3 * k, sizeof(double) * 3);
            r[3] = (double)a->id[k];
            r[4] = (double)a->type[k];
        }
        hmd_comm_allgatherv(mine, sizeof(double) * RECORD * a->nlocal, rep->records, counts);
        for (int q = 0; q < n; q++) {
            const double *r = rep->records + (size_t)RECORD * q;
            const int64_t id = (int64_t)r[3];
            memcpy(rep->full + 3 * id, r, sizeof(double) * 3);
            if (type) {
                type[id] = (int)r[4];
            }
        }
    }
    free(mine);
    free(counts);
    return rc;
}

int hmd_dd_replicated_borders(struct hmd_dd_replicated *rep, struct hmd_atoms *a,
                              const struct hmd_box *box, const struct hmd_domain *dd, double rlist)
{
    const int n = (int)rep->natoms;
    int *type = malloc(sizeof(int) * (n + 1));
    int rc = type ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    rc = hmd_comm_agree(rc);
    if (!rc) {
        rc = gather_all(rep, a, type);
    }
    if (rc) {
        free(type);
        return rc;
    }
    double face[3], w[3];
    int reach[3];
    hmd_box_face_distances(box, face);
    for (int d = 0; d < 3; d++) {
        w[d] = 2.0 * rlist / face[d];
        reach[d] = box->periodic[d] ? (int)ceil(w[d]) + 1 : 0;
    }
    a->nghost = 0;
    for (int g = 0; g < n && !rc; g++) {
        double s0[3];
        hmd_box_to_frac(box, rep->full + 3 * g, s0);
        for (int i0 = -reach[0]; i0 <= reach[0] && !rc; i0++) {
            for (int i1 = -reach[1]; i1 <= reach[1] && !rc; i1++) {
                for (int i2 = -reach[2]; i2 <= reach[2] && !rc; i2++) {
                    const int img[3] = {i0, i1, i2};
                    bool inside = true, home = i0 == 0 && i1 == 0 && i2 == 0;
                    for (int d = 0; d < 3 && inside; d++) {
                        const double sd = s0[d] + img[d];
                        const bool open = dd->grid[d] == 1 && !box->periodic[d];
                        inside = open || (sd >= dd->lo[d] - w[d] && sd < dd->hi[d] + w[d]);
                        home = home && (open || (sd >= dd->lo[d] && sd < dd->hi[d]));
                    }
                    if (!inside || home) {
                        continue;
                    }
                    const int k = hmd_atoms_nall(a);
                    rc = hmd_atoms_reserve(a, k + 1);
                    if (!rc && a->nghost + 1 > rep->cap_ghost) {
                        int cap = 2 * (a->nghost + 1) + 64;
                        int64_t *src = realloc(rep->ghost_src, sizeof(int64_t) * cap);
                        if (src) {
                            rep->ghost_src = src;
                        }
                        double *sh = realloc(rep->ghost_shift, sizeof(double) * 3 * cap);
                        if (sh) {
                            rep->ghost_shift = sh;
                        }
                        rc = (src && sh) ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
                        rep->cap_ghost = rc ? rep->cap_ghost : cap;
                    }
                    if (rc) {
                        break;
                    }
                    double *shift = rep->ghost_shift + 3 * a->nghost;
                    for (int q = 0; q < 3; q++) {
                        shift[q] = i0 * box->h[0][q] + i1 * box->h[1][q] + i2 * box->h[2][q];
                        a->x[3 * k + q] = rep->full[3 * g + q] + shift[q];
                    }
                    rep->ghost_src[a->nghost] = g;
                    a->type[k] = type[g];
                    a->id[k] = g;
                    a->nghost++;
                }
            }
        }
    }
    free(type);
    return hmd_comm_agree(rc);
}

void hmd_dd_replicated_forward(struct hmd_dd_replicated *rep, struct hmd_atoms *a)
{
    if (gather_all(rep, a, NULL)) {
        hmd_fatal("replicated positions could not be gathered: %s", hmd_error_msg());
    }
    for (int k = 0; k < a->nghost; k++) {
        const double *src = rep->full + 3 * rep->ghost_src[k], *sh = rep->ghost_shift + 3 * k;
        double *x = a->x + 3 * (size_t)(a->nlocal + k);
        x[0] = src[0] + sh[0];
        x[1] = src[1] + sh[1];
        x[2] = src[2] + sh[2];
    }
}

void hmd_dd_replicated_reduce_forces(struct hmd_dd_replicated *rep, struct hmd_atoms *atoms)
{
    const int n = (int)rep->natoms;
    memset(rep->full, 0, sizeof(double) * 3 * n);
    for (int k = 0; k < atoms->nlocal; k++) {
        memcpy(rep->full + 3 * atoms->id[k], atoms->f + 3 * k, sizeof(double) * 3);
    }
    hmd_comm_sum(rep->full, 3 * n);
    for (int k = 0; k < atoms->nlocal; k++) {
        memcpy(atoms->f + 3 * k, rep->full + 3 * atoms->id[k], sizeof(double) * 3);
    }
}

void hmd_dd_replicated_free(struct hmd_dd_replicated *rep)
{
    const int64_t natoms = rep->natoms;
    free(rep->full);
    free(rep->records);
    free(rep->ghost_src);
    free(rep->ghost_shift);
    memset(rep, 0, sizeof *rep);
    rep->natoms = natoms;
}
