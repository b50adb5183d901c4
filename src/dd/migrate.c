#include "dd/migrate.h"

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
    return rc;
}
