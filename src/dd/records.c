#include "dd/records.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"

int hmd_dd_buffers_reserve(struct hmd_dd_buffers *b, size_t doubles)
{
    if (doubles <= b->cap) {
        return HMD_OK;
    }
    const size_t cap = doubles + doubles / 4 + 64;
    double *s = realloc(b->send, cap * sizeof(double));
    if (s) {
        b->send = s;
    }
    double *r = realloc(b->recv, cap * sizeof(double));
    if (r) {
        b->recv = r;
    }
    if (!s || !r) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for halo buffers");
    }
    b->cap = cap;
    return HMD_OK;
}

int hmd_dd_exchange_records(struct hmd_dd_buffers *b, int to, int n, int from, int width, int tag,
                            int *nrecv)
{
    int count = 0;
    hmd_comm_exchange(to, &n, to < 0 ? 0 : sizeof n, from, &count, from < 0 ? 0 : sizeof count,
                      tag);
    /* both peers exchange the data even when this rank is short of memory, so that neither
     * waits for the other; the error then goes up */
    const int rc = hmd_dd_buffers_reserve(b, (size_t)(count > n ? count : n) * width);
    const size_t room = rc ? 0 : b->cap;
    hmd_comm_exchange(to, b->send, to < 0 || rc ? 0 : sizeof(double) * width * n, from, b->recv,
                      from < 0 ? 0 : sizeof(double) * room, tag + 1);
    *nrecv = from < 0 || rc ? 0 : count;
    return rc;
}

void hmd_dd_buffers_free(struct hmd_dd_buffers *b)
{
    free(b->send);
    free(b->recv);
    memset(b, 0, sizeof *b);
}
