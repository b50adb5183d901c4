#include "dd/migrate.h"

#include <stdlib.h>

#include "comm/comm.h"
#include "core/error.h"
#include "dd/records.h"

static double frac(const struct hmd_box *box, const double *x, int d)
{
    return x[0] * box->hinv[0][d] + x[1] * box->hinv[1][d] + x[2] * box->hinv[2][d];
}

/* One exchange along d in direction dir of the home atoms outside the slab. */
static int migrate_direction(struct hmd_dd_buffers *buf, struct hmd_atoms *a,
                             const struct hmd_box *box, const struct hmd_domain *dd, int d, int dir,
                             int *moved)
{
    const int to = dd->neighbor[d][dir], from = dd->neighbor[d][1 - dir];
    const unsigned fields = hmd_atoms_fields_with(a, HMD_FIELD_MIGRATE);
    const int width = hmd_atoms_record_width(fields);
    int n = 0, rc = HMD_OK;
    for (int k = a->nlocal - 1; k >= 0 && to >= 0 && to != dd->rank; k--) {
        const double s = frac(box, a->x + 3 * k, d);
        if (dir == 0 ? s < dd->lo[d] : s >= dd->hi[d]) {
            rc = hmd_dd_buffers_reserve(buf, (size_t)(n + 1) * width);
            if (rc) {
                return rc;
            }
            hmd_atoms_pack(a, k, fields, NULL, buf->send + (size_t)n * width);
            /* the last home atom takes its place */
            if (k != a->nlocal - 1) {
                hmd_atoms_copy(a, k, a->nlocal - 1, fields);
            }
            a->nlocal--;
            n++;
        }
    }
    if (to == dd->rank) {
        return HMD_OK; /* one rank along d: wrapping alone keeps atoms home */
    }
    int nrecv = 0;
    rc = hmd_dd_exchange_records(buf, to, n, from, width, HMD_TAG_MIGRATE, &nrecv);
    if (!rc) {
        rc = hmd_atoms_reserve(a, a->nlocal + nrecv);
    }
    if (rc) {
        return rc;
    }
    for (int q = 0; q < nrecv; q++) {
        hmd_atoms_unpack(a, a->nlocal++, fields, buf->recv + (size_t)q * width);
    }
    *moved += n;
    return HMD_OK;
}

struct id_index {
    int64_t id;
    int k;
};

static int by_id(const void *pa, const void *pb)
{
    const int64_t a = ((const struct id_index *)pa)->id, b = ((const struct id_index *)pb)->id;
    return (a > b) - (a < b);
}

/* Puts the home atoms in global id order, so that every sum over them runs in an order set by
 * the positions alone, not by the history of migrations: a run continued from a checkpoint
 * (which starts from a fresh distribution) then repeats the original bit for bit. */
static int sort_by_id(struct hmd_atoms *a)
{
    const unsigned fields = hmd_atoms_fields_with(a, HMD_FIELD_MIGRATE);
    const int n = a->nlocal, w = hmd_atoms_record_width(fields);
    struct id_index *order = malloc(sizeof *order * ((size_t)n + 1));
    double *rec = malloc(sizeof(double) * (size_t)w * ((size_t)n + 1));
    if (!order || !rec) {
        free(order);
        free(rec);
        return hmd_error_set(HMD_ENOMEM, "out of memory sorting %d atoms", n);
    }
    for (int i = 0; i < n; i++) {
        order[i] = (struct id_index){a->id[i], i};
    }
    qsort(order, (size_t)n, sizeof *order, by_id);
    for (int i = 0; i < n; i++) {
        hmd_atoms_pack(a, order[i].k, fields, NULL, rec + (size_t)w * i);
    }
    for (int i = 0; i < n; i++) {
        hmd_atoms_unpack(a, i, fields, rec + (size_t)w * i);
    }
    free(order);
    free(rec);
    return HMD_OK;
}

int hmd_dd_migrate(struct hmd_atoms *a, const struct hmd_box *box, const struct hmd_domain *dd)
{
    struct hmd_dd_buffers buf = {0};
    int rc = HMD_OK;
    for (int d = 0; d < 3 && !rc; d++) {
        if (dd->grid[d] == 1) {
            continue;
        }
        /* an atom crosses at most one slab per round; repeat until nobody moves */
        for (int round = 0; round < dd->grid[d] && !rc; round++) {
            int moved = 0;
            rc = migrate_direction(&buf, a, box, dd, d, 0, &moved);
            if (!rc) {
                rc = migrate_direction(&buf, a, box, dd, d, 1, &moved);
            }
            int any = moved > 0;
            hmd_comm_max_int(&any, 1);
            if (!any) {
                break;
            }
        }
    }
    hmd_dd_buffers_free(&buf);
    return rc || dd->nranks == 1 ? rc : sort_by_id(a);
}
