/* The host transport: the plan replayed on host arrays, swap by swap, over comm/comm.h's
 * blocking exchange (MPI point-to-point; a copy when the peer is this rank). Ghosts are
 * received in place (a swap's ghosts are contiguous); reverse receives into a buffer and adds
 * in send-list order. */
#include "halo/transport.h"

#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"

struct host_transport {
    const struct hmd_halo_plan *plan; /* borrowed, from setup */
    double *sendbuf, *recvbuf;        /* (owned) */
    size_t cap;                       /* doubles each holds */
};

static int reserve(struct host_transport *h, size_t doubles)
{
    if (doubles <= h->cap) {
        return HMD_OK;
    }
    const size_t cap = doubles + doubles / 4 + 64;
    double *s = realloc(h->sendbuf, cap * sizeof(double));
    if (s) {
        h->sendbuf = s;
    }
    double *r = realloc(h->recvbuf, cap * sizeof(double));
    if (r) {
        h->recvbuf = r;
    }
    if (!s || !r) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for halo buffers");
    }
    h->cap = cap;
    return HMD_OK;
}

static int host_setup(void *t, const struct hmd_halo_arrays *a)
{
    struct host_transport *h = t;
    h->plan = a->plan;
    /* the reverse sends up to 9 values per atom (atomic virials) */
    int most = 0;
    for (int s = 0; s < a->plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &a->plan->swap[s];
        most = sw->nsend > most ? sw->nsend : most;
        most = sw->nrecv > most ? sw->nrecv : most;
    }
    return reserve(h, (size_t)most * 9);
}

static int host_forward(void *t, double *x, const struct hmd_box *box, void *stream)
{
    (void)stream;
    const struct host_transport *h = t;
    const struct hmd_halo_plan *plan = h->plan;
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        double shift[3];
        hmd_halo_swap_shift(sw, box, shift);
        for (int n = 0; n < sw->nsend; n++) {
            const double *src = x + 3 * (size_t)send[n];
            double *dst = h->sendbuf + 3 * (size_t)n;
            dst[0] = src[0] + shift[0];
            dst[1] = src[1] + shift[1];
            dst[2] = src[2] + shift[2];
        }
        /* received straight into the ghost slots: they are contiguous */
        hmd_comm_exchange(sw->to, h->sendbuf, sw->to < 0 ? 0 : sizeof(double) * 3 * sw->nsend,
                          sw->from, x + 3 * (size_t)sw->recv_offset,
                          sw->from < 0 ? 0 : sizeof(double) * 3 * sw->nrecv, HMD_TAG_FORWARD);
    }
    return HMD_OK;
}

static int host_reverse(void *t, double *v, int ncomp, void *stream)
{
    (void)stream;
    const struct host_transport *h = t;
    const struct hmd_halo_plan *plan = h->plan;
    for (int s = plan->nswap - 1; s >= 0; s--) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        /* the ghosts' values go back to the rank they came from */
        hmd_comm_exchange(sw->from, v + (size_t)ncomp * sw->recv_offset,
                          sw->from < 0 ? 0 : sizeof(double) * ncomp * sw->nrecv, sw->to, h->recvbuf,
                          sw->to < 0 ? 0 : sizeof(double) * ncomp * sw->nsend, HMD_TAG_REVERSE);
        for (int n = 0; n < sw->nsend && sw->to >= 0; n++) {
            const double *src = h->recvbuf + (size_t)ncomp * n;
            double *dst = v + (size_t)ncomp * send[n];
            for (int c = 0; c < ncomp; c++) {
                dst[c] += src[c];
            }
        }
    }
    return HMD_OK;
}

static void host_destroy(void *t)
{
    struct host_transport *h = t;
    if (h) {
        free(h->sendbuf);
        free(h->recvbuf);
        free(h);
    }
}

static const struct hmd_halo_transport_ops host_ops = {
    .name = "host",
    .device = false,
    .capturable = false,
    .setup = host_setup,
    .forward = host_forward,
    .reverse = host_reverse,
    .sum = NULL, /* the host step sums with comm/comm.h */
    .device_bytes = NULL,
    .destroy = host_destroy,
};

int hmd_halo_transport_open_host(struct hmd_halo_transport *t)
{
    struct host_transport *h = calloc(1, sizeof *h);
    if (!h) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the halo transport");
    }
    t->ops = &host_ops;
    t->self = h;
    return HMD_OK;
}
