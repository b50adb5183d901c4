#include "dd/halo_plan.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int hmd_halo_plan_add_swap(struct hmd_halo_plan *plan, int dim, int dir, int pulse, int to,
                           int from, const int image[3], int recv_offset)
{
    if (plan->nswap == HMD_HALO_MAX_SWAPS) {
        return hmd_error_set(HMD_ESOFTWARE, "more than %d halo swaps", HMD_HALO_MAX_SWAPS);
    }
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
    memcpy(s->image, image, sizeof s->image);
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

int hmd_halo_plan_is_self(const struct hmd_halo_plan *plan, int self)
{
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        if (sw->to != self || sw->from != self || sw->nsend != sw->nrecv) {
            return 0;
        }
    }
    return 1;
}

int hmd_halo_plan_chain_total(const struct hmd_halo_plan *plan)
{
    /* a ghost's chain is one swap longer than its source's */
    int *depth = malloc(sizeof(int) * (plan->nsend_total + 1));
    if (!depth) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the halo map");
    }
    int g = 0, total = 0;
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        for (int n = 0; n < sw->nsend; n++, g++) {
            const int k = plan->send_list[sw->send_offset + n];
            depth[g] = (k < plan->nlocal ? 0 : depth[k - plan->nlocal]) + 1;
            total += depth[g];
        }
    }
    free(depth);
    return total;
}

int hmd_halo_plan_flatten_self(const struct hmd_halo_plan *plan, int self, int nall, int *root,
                               int *chain_offset, int *chain, int *child_offset, int *child)
{
    if (!hmd_halo_plan_is_self(plan, self)) {
        return hmd_error_set(HMD_ENOTSUP, "the halo exchanges with another rank");
    }
    const int nlocal = plan->nlocal;
    /* forward: a ghost's chain is its source's chain and then its own swap */
    chain_offset[0] = 0;
    int g = 0;
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        const int *send = plan->send_list + sw->send_offset;
        for (int n = 0; n < sw->nsend; n++, g++) {
            const int k = send[n];
            int *out = chain + chain_offset[g];
            if (k < nlocal) {
                root[g] = k;
                chain_offset[g + 1] = chain_offset[g] + 1;
            } else {
                const int p = k - nlocal, len = chain_offset[p + 1] - chain_offset[p];
                root[g] = root[p];
                memcpy(out, chain + chain_offset[p], sizeof(int) * len);
                out += len;
                chain_offset[g + 1] = chain_offset[g] + len + 1;
            }
            chain[chain_offset[g + 1] - 1] = s;
        }
    }
    /* reverse: children of every atom, listed by later swaps first (the reverse order), which
     * within a swap is the order of the send list: a counting sort over the swaps reversed */
    for (int k = 0; k <= nall; k++) {
        child_offset[k] = 0;
    }
    for (int s = 0; s < plan->nswap; s++) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        for (int n = 0; n < sw->nsend; n++) {
            child_offset[plan->send_list[sw->send_offset + n] + 1]++;
        }
    }
    for (int k = 0; k < nall; k++) {
        child_offset[k + 1] += child_offset[k];
    }
    int *fill = malloc(sizeof(int) * (nall > 0 ? nall : 1));
    if (!fill) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the halo map");
    }
    memcpy(fill, child_offset, sizeof(int) * nall);
    for (int s = plan->nswap - 1; s >= 0; s--) {
        const struct hmd_halo_swap *sw = &plan->swap[s];
        for (int n = 0; n < sw->nsend; n++) {
            child[fill[plan->send_list[sw->send_offset + n]]++] = sw->recv_offset + n;
        }
    }
    free(fill);
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
    memset(plan, 0, sizeof *plan);
}
