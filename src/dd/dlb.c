#include "dd/dlb.h"

#include <stdlib.h>

#include "comm/comm.h"

void hmd_dd_dlb_balance(struct hmd_dlb *dlb, struct hmd_domain *dd, double spent,
                        enum hmd_dlb_mode mode, double threshold)
{
    const int nranks = dd->nranks;
    if (nranks < 2) {
        return;
    }
    double *load = calloc(nranks, sizeof(double));
    if (!load) {
        return; /* balancing is an optimisation; without memory the run goes on unbalanced */
    }
    load[dd->rank] = spent;
    hmd_comm_sum(load, nranks);
    double avg = 0.0, mx = 0.0;
    for (int r = 0; r < nranks; r++) {
        avg += load[r] / nranks;
        mx = load[r] > mx ? load[r] : mx;
    }
    if (avg > 0.0) {
        const double imbalance = mx / avg - 1.0;
        dlb->intervals++;
        dlb->sum_imbalance += imbalance;
        dlb->last_imbalance = imbalance;
        dlb->max_imbalance = imbalance > dlb->max_imbalance ? imbalance : dlb->max_imbalance;
        dlb->lost += mx - avg;
        if (mode == HMD_DLB_YES || (mode == HMD_DLB_AUTO && imbalance > threshold)) {
            double min_frac[3];
            for (int d = 0; d < 3; d++) {
                min_frac[d] = 0.5 / dd->grid[d]; /* no slab below half its even share */
            }
            hmd_domain_balance(dd, load, min_frac);
            dlb->moves++;
        }
    }
    free(load);
}
