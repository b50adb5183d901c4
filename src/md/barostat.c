/* Pressure coupling (pcoupl = c-rescale), on the host step and on the device step alike: the
 * run's parameters turned into md/crescale.h's, and one coupling every nstpcouple steps, between
 * steps (after the outputs and any checkpoint of step s, so that they all describe one state):
 * the pressure tensor of step s (kinetic part and virial), the scaling matrix, the cell, the
 * home atoms' positions and velocities scaled (on the device by cuda/md/scale.cu, with the
 * host's arithmetic; md/device_state.c). The ghosts follow at the next forward halo, which
 * takes the new cell's shifts; the list criterion adds the cell's change since the last
 * rebuild (md_barostat_drift), so that no ghost moves further than the buffer allows
 * unnoticed. The subdomains are fractional and scale with the cell.
 *
 * Barostat work: the energy each coupling gives the system, the kinetic change of the velocity
 * scaling, the potential change of the position scaling to first order (-sum_ab W_ba (mu-1)_ab)
 * and P0 dV, so that conserved = K + U + P0 V - thermostat work - barostat work stays flat up
 * to the integrator's error and second order in (mu - 1). */
#include "md/run_internal.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/units.h"
#include "md/integrate.h"

/* The numbers of ref-p or compressibility as the 3x3 layout of struct hmd_crescale. */
static void to_matrix(const char *text, enum hmd_pcoupltype type, double m[3][3])
{
    double v[6] = {0};
    hmd_params_numbers(text, v, 6); /* counted by hmd_params_check */
    memset(m, 0, sizeof(double) * 9);
    if (type == HMD_PCOUPLTYPE_ISOTROPIC) {
        m[0][0] = m[1][1] = m[2][2] = v[0];
    } else if (type == HMD_PCOUPLTYPE_SEMIISOTROPIC) {
        m[0][0] = m[1][1] = v[0];
        m[2][2] = v[1];
    } else { /* xx yy zz xy xz yz, as GROMACS */
        m[0][0] = v[0];
        m[1][1] = v[1];
        m[2][2] = v[2];
        m[0][1] = m[1][0] = v[3];
        m[0][2] = m[2][0] = v[4];
        m[1][2] = m[2][1] = v[5];
    }
}

int md_barostat_setup(struct md *md)
{
    const struct hmd_params *p = &md->p;
    memcpy(md->h_list, md->sys.box.h, sizeof md->h_list); /* the first list's cell */
    if (p->pcoupl == HMD_PCOUPL_NO) {
        return HMD_OK;
    }
    const bool *pbc = md->sys.box.periodic;
    if (!md->sys.has_box || !pbc[0] || !pbc[1] || !pbc[2]) {
        return hmd_error_set(HMD_ECONFIG,
                             "pcoupl = c-rescale needs a cell periodic along a, b "
                             "and c; %s has none",
                             md->opt->conf);
    }
    static const enum hmd_pcoupl_type types[] = {
        [HMD_PCOUPLTYPE_ISOTROPIC] = HMD_PCOUPL_ISOTROPIC,
        [HMD_PCOUPLTYPE_SEMIISOTROPIC] = HMD_PCOUPL_SEMIISOTROPIC,
        [HMD_PCOUPLTYPE_ANISOTROPIC] = HMD_PCOUPL_ANISOTROPIC,
    };
    struct hmd_crescale *c = &md->baro;
    c->type = types[p->pcoupltype];
    c->tau_p = p->tau_p;
    c->ref_t = p->ref_t;
    c->seed = (uint64_t)p->ld_seed;
    to_matrix(p->ref_p, p->pcoupltype, c->ref_p);
    to_matrix(p->compressibility, p->pcoupltype, c->compressibility);
    return hmd_crescale_check(c);
}

void md_note_list_build(struct md *md)
{
    md->list_step = md->step;
    memcpy(md->h_list, md->sys.box.h, sizeof md->h_list);
}

double md_barostat_drift(const struct md *md)
{
    double drift = 0.0;
    for (int d = 0; md->p.pcoupl != HMD_PCOUPL_NO && d < 3; d++) {
        double s = 0.0;
        for (int k = 0; k < 3; k++) {
            const double e = md->sys.box.h[d][k] - md->h_list[d][k];
            s += e * e;
        }
        drift += sqrt(s);
    }
    return drift;
}

int md_barostat_step(struct md *md)
{
    if (md->p.pcoupl == HMD_PCOUPL_NO || md->step == 0 || md->step % md->p.nstpcouple != 0) {
        return HMD_OK;
    }
    const bool device = hmd_device_run_on(&md->gpu);
    /* the queued steps' time is theirs (Force) */
    int rc = device ? hmd_comm_agree(md_device_wait(md)) : HMD_OK;
    if (rc) {
        return rc;
    }
    hmd_timer_start(&md->timers, HMD_TIMER_INTEGRATE);
    double ke[9], pres[3][3], mu[3][3];
    if (device) {
        rc = md_device_kinetic(md, ke);
    } else {
        hmd_integrate_kinetic_energy(&md->sys.atoms, ke);
    }
    if (rc) {
        hmd_timer_stop(&md->timers, HMD_TIMER_INTEGRATE);
        return rc;
    }
    const double v0 = hmd_box_volume(&md->sys.box);
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            pres[a][b] = (ke[3 * a + b] + md->fs.virial[3 * a + b]) / v0 * HMD_EV_PER_A3_TO_BAR;
        }
    }
    const double dt = md->p.nstpcouple * md->p.dt;
    rc = hmd_comm_agree(hmd_crescale_mu(&md->baro, pres, v0, dt, md->step, mu));
    double dkin = 0.0;
    struct hmd_atoms *at = &md->sys.atoms;
    if (!rc && device) { /* the cell here, the atoms there */
        rc = hmd_comm_agree(hmd_crescale_apply(mu, &md->sys.box, 0, NULL, NULL, NULL, NULL));
        rc = rc ? rc : md_device_scale(md, mu, &dkin);
    } else if (!rc) {
        rc = hmd_crescale_apply(mu, &md->sys.box, at->nlocal, at->x, at->v, at->mass, &dkin);
    }
    rc = hmd_comm_agree(rc);
    if (!rc) {
        hmd_comm_sum(&dkin, 1);
        double du = 0.0; /* first order: dx_b = sum_a x_a (mu - 1)_ab, virial[b][a] = F_b x_a */
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++) {
                du -= md->fs.virial[3 * b + a] * (mu[a][b] - (a == b));
            }
        }
        const double p0 = (md->baro.ref_p[0][0] + md->baro.ref_p[1][1] + md->baro.ref_p[2][2]) /
                          3.0 / HMD_EV_PER_A3_TO_BAR; /* eV/Å^3 */
        md->barostat_work += dkin + du + p0 * (hmd_box_volume(&md->sys.box) - v0);
    }
    hmd_timer_stop(&md->timers, HMD_TIMER_INTEGRATE);
    return rc;
}

double md_barostat_pv(const struct md *md)
{
    if (md->p.pcoupl == HMD_PCOUPL_NO) {
        return 0.0;
    }
    const double p0 = (md->baro.ref_p[0][0] + md->baro.ref_p[1][1] + md->baro.ref_p[2][2]) / 3.0;
    return p0 / HMD_EV_PER_A3_TO_BAR * hmd_box_volume(&md->sys.box);
}
