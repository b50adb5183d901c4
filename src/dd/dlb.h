/* Dynamic load balancing at neighbour-list steps: the force time every rank spent since the
 * last balancing decides how far the subdomain boundaries move (hmd_domain_balance), and what
 * the imbalance cost is recorded for the performance table. Collective. */
#ifndef HMD_DD_DLB_H
#define HMD_DD_DLB_H

#include "core/params.h"
#include "dd/domain.h"

struct hmd_dlb {
    long intervals;       /* intervals measured */
    long moves;           /* times the boundaries moved */
    double sum_imbalance; /* of max/avg - 1 over intervals */
    double max_imbalance;
    double last_imbalance; /* of the last interval */
    double lost;           /* seconds of force time lost waiting for the slowest rank */
};

/* Records the imbalance (max/avg - 1) of the force time `spent` (s) of every rank since the
 * last call, and the time lost to it (max - avg); moves the boundaries of dd when `mode` is
 * yes, or auto with an imbalance above `threshold`. Nothing with one rank. Collective. */
void hmd_dd_dlb_balance(struct hmd_dlb *dlb, struct hmd_domain *dd, double spent,
                        enum hmd_dlb_mode mode, double threshold);

#endif /* HMD_DD_DLB_H */
