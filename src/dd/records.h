/* Records of doubles between neighbouring ranks, for the list-step verbs of dd/ (borders,
 * migrate): the count travels first so the receiver can size its buffer. Internal to src/dd.
 * Collective: both peers call it with matching tags. */
#ifndef HMD_DD_RECORDS_H
#define HMD_DD_RECORDS_H

#include <stddef.h>

struct hmd_dd_buffers {
    double *send, *recv; /* (owned) */
    size_t cap;          /* doubles each holds */
};

/* Makes both buffers hold at least `doubles` doubles, keeping the contents of `send`.
 * HMD_ENOMEM on failure. */
int hmd_dd_buffers_reserve(struct hmd_dd_buffers *b, size_t doubles);

/* Sends n records of `width` doubles from b->send to rank `to` and receives records from
 * `from` into b->recv (grown to fit); a peer of -1 is none. *nrecv gets the records received.
 * HMD_ENOMEM (this rank only: the caller agrees with the others). */
int hmd_dd_exchange_records(struct hmd_dd_buffers *b, int to, int n, int from, int width, int tag,
                            int *nrecv);

void hmd_dd_buffers_free(struct hmd_dd_buffers *b);

#endif /* HMD_DD_RECORDS_H */
