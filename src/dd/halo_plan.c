#include "dd/halo_plan.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int hmd_halo_plan_add_swap(struct hmd_halo_plan *plan, int dim, int dir, int pulse, int to,
                           int from, const double shift[3], int recv_offset)
{
    if (plan->nswap == plan->cap_swap) {
        int cap = plan->cap_swap ? 2 * plan->cap_swap : 16;
        void *p = realloc(plan->swap, (size_t)cap * sizeof *plan->swap);
        if (!p) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for the halo plan");
        }
        plan->swap = p;
        plan->cap_swap = cap;
    }
    struct hmd_halo_swap *s = &plan->swap[plan->nswap];
    *s = (struct hmd_halo_swap){.dim = dim,
                                .dir = dir,
                                .pulse = pulse,
                                .to = to,
                                .from = from,
                                .send_offset = plan->nsend_total,
                                .recv_offset = recv_offset};
    memcpy(s->shift, shift, sizeof s->shift);
    return plan->nswap++;
}

int hmd_halo_plan_add_send(struct hmd_halo_plan *plan, int k)
{
    if (plan->nsend_total == plan->cap_send) {
        int cap = plan->cap_send ? 2 * plan->cap_send : 1024;
        void *p = realloc(plan->send_list, (size_t)cap * sizeof *plan->send_list);
        if (!p) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for the halo plan");
        }
        plan->send_list = p;
        plan->cap_send = cap;
    }
    plan->send_list[plan->nsend_total++] = k;
    plan->swap[plan->nswap - 1].nsend++;
    return HMD_OK;
}

int hmd_halo_plan_reserve_buffers(struct hmd_halo_plan *plan, size_t doubles)
{
    if (doubles <= plan->cap_buf) {
        return HMD_OK;
    }
    size_t cap = doubles + doubles / 4 + 64;
    double *s = realloc(plan->sendbuf, cap * sizeof(double));
    if (s) {
        plan->sendbuf = s;
    }
    double *r = realloc(plan->recvbuf, cap * sizeof(double));
    if (r) {
        plan->recvbuf = r;
    }
    if (!s || !r) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for halo buffers");
    }
    plan->cap_buf = cap;
    return HMD_OK;
}

void hmd_halo_plan_clear(struct hmd_halo_plan *plan)
{
    plan->nswap = 0;
    plan->nsend_total = 0;
}

void hmd_halo_plan_free(struct hmd_halo_plan *plan)
{
    free(plan->swap);
    free(plan->send_list);
    free(plan->sendbuf);
    free(plan->recvbuf);
    memset(plan, 0, sizeof *plan);
}

int hmd_halo_plan_self_images(const struct hmd_halo_plan *plan, int nlocal, int self, int *src,
                              double *shift)
{
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        if (sw->to != self || sw->from != self || sw->nsend != sw->nrecv) {
            return hmd_error_set(HMD_ENOTSUP, "the halo exchanges with another rank");
        }
        const int *send = plan->send_list + sw->send_offset;
        for (int n = 0; n < sw->nsend; n++) {
            const int k = send[n], g = sw->recv_offset + n - nlocal;
            const bool ghost = k >= nlocal; /* an image of an image: compose */
            src[g] = ghost ? src[k - nlocal] : k;
            for (int d = 0; d < 3; d++) {
                shift[3 * g + d] = (ghost ? shift[3 * (k - nlocal) + d] : 0.0) + sw->shift[d];
            }
        }
    }
    return HMD_OK;
}
