#include "dd/collect.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "dd/domain.h"

int hmd_collect_scatter(const struct hmd_atoms *all, int natoms, const struct hmd_box *box,
                        const struct hmd_domain *dd, struct hmd_atoms *mine)
{
    /* every rank receives the whole system once and keeps its part: simple, and done once */
    const int root = 0, me = hmd_comm_rank();
    struct hmd_atoms tmp = {0};
    const struct hmd_atoms *src = all;
    int rc = HMD_OK;
    if (me != root) {
        rc = hmd_atoms_reserve(&tmp, natoms);
        src = &tmp;
    }
    int bad = rc != HMD_OK;
    hmd_comm_max_int(&bad, 1);
    if (bad) {
        hmd_atoms_free(&tmp);
        return hmd_error_set(HMD_ENOMEM, "out of memory distributing %d atoms", natoms);
    }
    hmd_comm_bcast(src->x, sizeof(double) * 3 * natoms, root);
    hmd_comm_bcast(src->v, sizeof(double) * 3 * natoms, root);
    hmd_comm_bcast(src->mass, sizeof(double) * natoms, root);
    hmd_comm_bcast(src->type, sizeof(int) * natoms, root);
    hmd_comm_bcast(src->id, sizeof(int64_t) * natoms, root);
    int n = 0;
    mine->nlocal = 0;
    mine->nghost = 0;
    for (int i = 0; i < natoms && !rc; i++) {
        double x[3], s[3];
        memcpy(x, src->x + 3 * i, sizeof x);
        hmd_box_wrap(box, x, NULL);
        hmd_box_to_frac(box, x, s);
        if (hmd_domain_owner(dd, s) != dd->rank) {
            continue;
        }
        rc = hmd_atoms_reserve(mine, n + 1);
        if (rc) {
            break;
        }
        memcpy(mine->x + 3 * n, x, sizeof x);
        memcpy(mine->v + 3 * n, src->v + 3 * i, sizeof(double) * 3);
        mine->mass[n] = src->mass[i];
        mine->type[n] = src->type[i];
        mine->id[n] = src->id[i];
        n++;
    }
    mine->nlocal = n;
    hmd_atoms_free(&tmp);
    bad = rc != HMD_OK;
    hmd_comm_max_int(&bad, 1);
    return bad ? hmd_error_set(HMD_ENOMEM, "out of memory distributing %d atoms", natoms) : HMD_OK;
}

int hmd_collect_gather(const int64_t *id, const double *values, int nlocal, int ncomp, double *out,
                       int natoms)
{
    /* records: id then the values, as doubles (ids below 2^53 are exact) */
    const int rec = ncomp + 1, root = 0, nranks = hmd_comm_size();
    double *send = malloc(sizeof(double) * rec * (nlocal > 0 ? nlocal : 1));
    double *recv = hmd_comm_rank() == root ? malloc(sizeof(double) * rec * (natoms + 1)) : NULL;
    size_t *counts = malloc(sizeof(size_t) * nranks);
    int bad = !send || !counts || (hmd_comm_rank() == root && !recv);
    hmd_comm_max_int(&bad, 1);
    if (bad) {
        free(send);
        free(recv);
        free(counts);
        return hmd_error_set(HMD_ENOMEM, "out of memory gathering %d atoms", natoms);
    }
    for (int k = 0; k < nlocal; k++) {
        send[(size_t)rec * k] = (double)id[k];
        memcpy(send + (size_t)rec * k + 1, values + (size_t)ncomp * k, sizeof(double) * ncomp);
    }
    hmd_comm_gatherv(send, sizeof(double) * rec * nlocal, recv, counts, root);
    if (hmd_comm_rank() == root) {
        size_t total = 0;
        for (int r = 0; r < nranks; r++) {
            total += counts[r] / (sizeof(double) * rec);
        }
        for (size_t q = 0; q < total; q++) {
            const double *r = recv + (size_t)rec * q;
            const int64_t g = (int64_t)r[0];
            if (g >= 0 && g < natoms) {
                memcpy(out + (size_t)ncomp * g, r + 1, sizeof(double) * ncomp);
            }
        }
    }
    free(send);
    free(recv);
    free(counts);
    return HMD_OK;
}
