#include "md/device_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "comm/comm.h"
#include "cuda/cuda_api.h"
#include "md/backend.h"

/* The halo clock: on with several ranks; HMD_HALO_CLOCK=0 or 1 forces it off or on. */
static bool halo_clock_on(void)
{
    const char *v = getenv("HMD_HALO_CLOCK");
    return v && *v ? atoi(v) != 0 : hmd_comm_size() > 1;
}

int hmd_device_run_start(struct hmd_device_run *d, struct hmd_forces *fs, struct hmd_atoms *atoms,
                         const struct hmd_box *box, const struct hmd_thermostat *th,
                         const struct hmd_params *p, int64_t first_step, double thermostat_work)
{
    const struct hmd_cuda_md_config c = {
        .dt = p->dt,
        .tcoupl = p->tcoupl == HMD_TCOUPL_VRESCALE   ? HMD_CUDA_TCOUPL_VRESCALE
                  : p->tcoupl == HMD_TCOUPL_LANGEVIN ? HMD_CUDA_TCOUPL_LANGEVIN
                                                     : HMD_CUDA_TCOUPL_NO,
        .ref_t = th->ref_t,
        .tau_t = th->tau_t,
        .ndof = th->ndof,
        .seed = th->seed,
        .nstcomm = p->com_mode == HMD_COM_LINEAR ? p->nstcomm : 0,
        .first_step = first_step,
        .type0 = fs->type0,
        .thermostat_work = thermostat_work,
        .halo_clock = halo_clock_on(),
    };
    struct hmd_backend_halo h;
    int rc = hmd_backend_open_halo(p->halo_transport, &h, d->transport, sizeof d->transport);
    d->halo = h.transport;
    if (!rc) {
        rc = hmd_cuda_state_create(&d->state, h.has_heap ? &h.heap : NULL);
    }
    if (!rc) {
        rc = hmd_cuda_md_create(&d->md, d->state, fs->provider, fs->nprovider, &d->halo, &c);
    }
    if (!rc) {
        rc = hmd_cuda_md_finish_list_step(d->md, atoms, &fs->plan, box, true, true, NULL);
    }
    return rc ? rc : hmd_device_run_fetch(d, fs, atoms, false, false, true, NULL);
}

/* Migration moves atoms only between ranks (dd/migrate.c): on one, the home atoms stay as they
 * are, and so do their velocities, masses and ids on the device. */
static bool atoms_may_move(void)
{
    return hmd_comm_size() > 1;
}

int hmd_device_run_begin_list_step(struct hmd_device_run *d, struct hmd_atoms *atoms, double *moved)
{
    const int rc =
        hmd_comm_agree(hmd_cuda_md_begin_list_step(d->md, atoms, atoms_may_move(), moved));
    hmd_comm_max(moved, 1);
    return rc;
}

int hmd_device_run_finish_list_step(struct hmd_device_run *d, struct hmd_forces *fs,
                                    struct hmd_atoms *atoms, const struct hmd_box *box,
                                    struct hmd_cuda_list_times *t)
{
    return hmd_cuda_md_finish_list_step(d->md, atoms, &fs->plan, box, false, atoms_may_move(), t);
}

int hmd_device_run_step(struct hmd_device_run *d, const struct hmd_box *box)
{
    return hmd_cuda_md_step(d->md, box);
}

int hmd_device_run_wait(struct hmd_device_run *d)
{
    return hmd_cuda_md_wait(d->md);
}

int hmd_device_run_next_displacement(struct hmd_device_run *d, double *disp)
{
    const int rc = hmd_comm_agree(hmd_cuda_md_next_displacement(d->md, disp));
    hmd_comm_max(disp, 1); /* every rank takes the same decision */
    return rc;
}

/* v[n] summed over ranks in rank order (every rank the same bits). Collective. */
static void sum_in_rank_order(double *v, int n)
{
    const int nranks = hmd_comm_size();
    if (nranks == 1) {
        return;
    }
    double *all = malloc(sizeof(double) * (size_t)n * nranks);
    size_t *counts = malloc(sizeof(size_t) * nranks);
    if (!all || !counts) {
        hmd_fatal("out of memory for %d sums over %d ranks", n, nranks);
    }
    hmd_comm_allgatherv(v, sizeof(double) * n, all, counts);
    for (int c = 0; c < n; c++) {
        double s = 0.0;
        for (int r = 0; r < nranks; r++) {
            s += all[(size_t)r * n + c];
        }
        v[c] = s;
    }
    free(all);
    free(counts);
}

int hmd_device_run_fetch(struct hmd_device_run *d, struct hmd_forces *fs, struct hmd_atoms *atoms,
                         bool x, bool v, bool f, double *thermostat_work)
{
    struct hmd_cuda_md_scalars s = {0};
    const unsigned fields = (x ? HMD_FIELD_BIT(HMD_FIELD_X) : 0) |
                            (v ? HMD_FIELD_BIT(HMD_FIELD_V) : 0) |
                            (f ? HMD_FIELD_BIT(HMD_FIELD_F) : 0);
    int rc = hmd_comm_agree(hmd_cuda_md_fetch(d->md, atoms, fields, &s));
    if (!rc) {
        /* this rank's energies, virial, terms and dropped neighbours, summed over ranks (the
         * thermostat's work is the same on every rank) */
        double sums[12 + HMD_CUDA_MAX_TERMS];
        sums[0] = s.energy;
        memcpy(sums + 1, s.virial, sizeof s.virial);
        sums[10] = s.dropped;
        memcpy(sums + 11, s.terms, sizeof(double) * s.nterms);
        sum_in_rank_order(sums, 11 + s.nterms);
        s.energy = sums[0];
        memcpy(s.virial, sums + 1, sizeof s.virial);
        s.dropped = sums[10];
        memcpy(s.terms, sums + 11, sizeof(double) * s.nterms);
        fs->energy = s.energy;
        memcpy(fs->virial, s.virial, sizeof fs->virial);
        fs->dropped = (long)s.dropped;
        for (int t = 0; t < s.nterms && t < HMD_FORCES_MAX_TERMS; t++) {
            fs->terms[t] = s.terms[t];
        }
        if (thermostat_work) {
            *thermostat_work = s.thermostat_work;
        }
    }
    return rc;
}

int hmd_device_run_halo_times(struct hmd_device_run *d, struct hmd_cuda_md_times *t,
                              double waited[2], bool *has_waited)
{
    const int rc = hmd_cuda_md_halo_times(d->md, t);
    *has_waited = hmd_halo_transport_waited(&d->halo, waited) && t->forwards + t->reverses > 0;
    return rc;
}

size_t hmd_device_run_bytes(const struct hmd_device_run *d, const struct hmd_forces *fs)
{
    if (!d->md) {
        return 0;
    }
    return hmd_cuda_md_device_bytes(d->md) + hmd_cuda_state_device_bytes(d->state) +
           hmd_halo_transport_device_bytes(&d->halo) + hmd_forces_device_bytes(fs);
}

void hmd_device_run_free(struct hmd_device_run *d)
{
    hmd_cuda_md_destroy(d->md);
    hmd_halo_transport_close(&d->halo);
    hmd_cuda_state_destroy(d->state);
    hmd_backend_close_halo();
    memset(d, 0, sizeof *d);
}
