#include "md/forces.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "core/timer.h"
#include "dd/borders.h"
#include "dd/migrate.h"

int hmd_forces_init(struct hmd_forces *fs, const struct hmd_domain *dd, double skin, int64_t natoms,
                    int type0)
{
    memset(fs, 0, sizeof *fs);
    fs->natoms = natoms;
    fs->type0 = type0;
    fs->dd = dd;
    fs->skin = skin;
    fs->rlist = skin;
    fs->rep.natoms = natoms;
    return hmd_halo_transport_open_host(&fs->halo);
}

void hmd_forces_set_system(struct hmd_forces *fs, const struct hmd_domain *dd, int64_t natoms,
                           int type0)
{
    fs->dd = dd;
    fs->natoms = natoms;
    fs->type0 = type0;
    hmd_dd_replicated_free(&fs->rep); /* sized for the last system */
    fs->rep.natoms = natoms;
}

int hmd_forces_add_provider(struct hmd_forces *fs, struct hmd_force_provider p)
{
    const char *names[HMD_FORCE_MAX_TERMS];
    const int k = fs->nprovider;
    const int nterms = hmd_force_provider_terms(&p, names);
    const int first = fs->term_offset[k];
    if (k == HMD_FORCES_MAX_PROVIDERS || first + nterms > HMD_FORCES_MAX_TERMS) {
        const char *name = hmd_force_provider_name(&p);
        hmd_force_provider_destroy(&p);
        return hmd_error_set(HMD_ENOTSUP, "more than %d force providers or %d energy terms (%s)",
                             HMD_FORCES_MAX_PROVIDERS, HMD_FORCES_MAX_TERMS, name);
    }
    for (int t = 0; t < nterms; t++) {
        fs->term_name[first + t] = names[t];
    }
    fs->term_offset[k + 1] = first + nterms;
    fs->provider[k] = p;
    fs->nprovider++;
    const double rlist = hmd_force_provider_cutoff(&p) + fs->skin;
    fs->rlist = rlist > fs->rlist ? rlist : fs->rlist;
    return HMD_OK;
}

void hmd_forces_drop_providers(struct hmd_forces *fs)
{
    for (int k = 0; k < fs->nprovider; k++) {
        hmd_force_provider_destroy(&fs->provider[k]);
    }
    fs->nprovider = 0;
    memset(fs->term_offset, 0, sizeof fs->term_offset);
    fs->rlist = fs->skin;
}

void hmd_forces_use_replicated(struct hmd_forces *fs)
{
    fs->replicated = true;
}

bool hmd_forces_on_device(const struct hmd_forces *fs)
{
    for (int k = 0; k < fs->nprovider; k++) {
        if (hmd_force_provider_on_device(&fs->provider[k])) {
            return true;
        }
    }
    return false;
}

/* Whether some provider computes on the host (and needs the host list). */
static bool host_providers(const struct hmd_forces *fs)
{
    for (int k = 0; k < fs->nprovider; k++) {
        if (!hmd_force_provider_on_device(&fs->provider[k])) {
            return true;
        }
    }
    return false;
}

static int grow_atom_arrays(struct hmd_forces *fs, int nall)
{
    if (nall <= fs->cap_atoms) {
        return HMD_OK;
    }
    const int cap = nall + nall / 4 + 16;
    double *ae = realloc(fs->atom_energy, (size_t)cap * sizeof(double));
    if (ae) {
        fs->atom_energy = ae;
    }
    double *av = realloc(fs->atom_virial, (size_t)cap * 9 * sizeof(double));
    if (av) {
        fs->atom_virial = av;
    }
    if (!ae || !av) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for per-atom energies");
    }
    fs->cap_atoms = cap;
    return HMD_OK;
}

/* The io of the host providers over `atoms` (replicated mode: every atom it holds is a centre,
 * the home atoms alone count). */
static struct hmd_force_io host_io(struct hmd_forces *fs, struct hmd_atoms *a,
                                   const struct hmd_box *box)
{
    const int nall = hmd_atoms_nall(a);
    return (struct hmd_force_io){
        .nlocal = fs->replicated ? nall : a->nlocal,
        .nall = nall,
        .ncount = a->nlocal,
        .x = a->x,
        .type = a->type,
        .id = a->id,
        .type0 = fs->type0,
        .box = box,
        .nl = &fs->nl,
        .f = a->f,
    };
}

int hmd_forces_rebuild(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box)
{
    atoms->nghost = 0;
    for (int i = 0; i < atoms->nlocal; i++) {
        hmd_box_wrap(box, atoms->x + 3 * i, NULL);
    }
    int rc = hmd_comm_agree(hmd_dd_migrate(atoms, box, fs->dd));
    int64_t held = atoms->nlocal;
    hmd_comm_sum_i64(&held, 1);
    if (!rc && held != fs->natoms) {
        rc = hmd_error_set(HMD_ESOFTWARE, "the ranks hold %lld atoms, the system has %lld",
                           (long long)held, (long long)fs->natoms);
    }
    if (!rc) {
        rc = fs->replicated
                 ? hmd_dd_replicated_borders(&fs->rep, atoms, box, fs->dd, fs->rlist)
                 : hmd_comm_agree(hmd_dd_borders(&fs->plan, atoms, box, fs->dd, fs->rlist));
    }
    if (rc) {
        return rc;
    }
    const int nall = hmd_atoms_nall(atoms);
    const struct hmd_halo_arrays arrays = {
        .plan = &fs->plan, .box = box, .nall = nall, .x = atoms->x, .f = atoms->f};
    rc = grow_atom_arrays(fs, nall);
    if (!rc && !fs->replicated) {
        rc = hmd_halo_transport_setup(&fs->halo, &arrays);
    }
    fs->nbuilds++;
    const struct hmd_force_io io = host_io(fs, atoms, box);
    if (!rc && host_providers(fs)) {
        rc = hmd_nbr_list_build(&fs->nl, box, io.nlocal, nall, atoms->x, fs->rlist);
    } else if (!rc) {
        /* the device builds its lists; the host keeps the positions displacement is measured
         * from */
        rc = hmd_nbr_list_mark(&fs->nl, io.nlocal, atoms->x, fs->rlist);
    }
    for (int k = 0; k < fs->nprovider && !rc; k++) {
        if (!hmd_force_provider_on_device(&fs->provider[k])) {
            rc = hmd_force_provider_prepare(&fs->provider[k], &io);
        }
    }
    return hmd_comm_agree(rc);
}

void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms,
                              const struct hmd_box *box)
{
    if (fs->replicated) {
        hmd_dd_replicated_forward(&fs->rep, atoms);
    } else {
        hmd_halo_transport_forward(&fs->halo, atoms->x, box, NULL);
    }
}

double hmd_forces_max_displacement(const struct hmd_forces *fs, const struct hmd_atoms *atoms,
                                   int64_t *atom_id)
{
    double best = 0.0;
    int64_t id = -1;
    for (int i = 0; i < fs->nl.ncentre; i++) {
        double d2 = 0.0;
        for (int k = 0; k < 3; k++) {
            const double d = atoms->x[3 * i + k] - fs->nl.x_build[3 * i + k];
            d2 += d * d;
        }
        if (d2 > best) {
            best = d2;
            id = atoms->id[i];
        }
    }
    /* the largest over ranks, and the id of that atom (the smallest id among ties) */
    double pair[2] = {sqrt(best), 0.0};
    hmd_comm_max(pair, 1);
    pair[1] = (sqrt(best) == pair[0] && id >= 0) ? -(double)id : -INFINITY;
    hmd_comm_max(pair + 1, 1);
    if (atom_id) {
        *atom_id = (int64_t)-pair[1];
    }
    return pair[0];
}

int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box,
                       bool atomic)
{
    const int nall = hmd_atoms_nall(atoms);
    double sums[HMD_FORCE_NEV + HMD_FORCES_MAX_TERMS] = {0};
    struct hmd_force_io io = host_io(fs, atoms, box);
    io.ev = sums;
    io.atom_energy = atomic ? fs->atom_energy : NULL;
    io.atom_virial = atomic && !fs->replicated ? fs->atom_virial : NULL;
    memset(atoms->f, 0, sizeof(double) * 3 * (size_t)nall);
    if (io.atom_energy) {
        memset(io.atom_energy, 0, sizeof(double) * io.nlocal);
    }
    if (io.atom_virial) {
        memset(io.atom_virial, 0, sizeof(double) * 9 * (size_t)nall);
    }
    /* the providers alone are timed (the agreement below waits for the slowest rank) */
    const double t0 = hmd_wtime();
    int rc = HMD_OK;
    for (int k = 0; k < fs->nprovider && !rc; k++) {
        if (!hmd_force_provider_on_device(&fs->provider[k])) {
            io.terms = sums + HMD_FORCE_NEV + fs->term_offset[k];
            rc = hmd_force_provider_compute(&fs->provider[k], &io);
        }
    }
    fs->t_force += hmd_wtime() - t0;
    rc = hmd_comm_agree(rc);
    if (rc) {
        return rc;
    }
    if (fs->replicated) {
        hmd_dd_replicated_reduce_forces(&fs->rep, atoms);
    } else {
        hmd_halo_transport_reverse(&fs->halo, atoms->f, 3, NULL);
        if (io.atom_virial) {
            hmd_halo_transport_reverse(&fs->halo, fs->atom_virial, 9, NULL);
        }
    }
    const int nterms = fs->term_offset[fs->nprovider];
    hmd_comm_sum(sums, HMD_FORCE_NEV + nterms); /* the neighbour count is exact in a double */
    memcpy(fs->virial, sums + HMD_FORCE_EV_VIRIAL, sizeof fs->virial);
    fs->energy = sums[HMD_FORCE_EV_ENERGY];
    fs->dropped = (long)sums[HMD_FORCE_EV_DROPPED];
    memcpy(fs->terms, sums + HMD_FORCE_NEV, sizeof(double) * nterms);
    return HMD_OK;
}

size_t hmd_forces_device_bytes(const struct hmd_forces *fs)
{
    size_t bytes = 0;
    for (int k = 0; k < fs->nprovider; k++) {
        bytes += hmd_force_provider_device_bytes(&fs->provider[k]);
    }
    return bytes;
}

void hmd_forces_free(struct hmd_forces *fs)
{
    for (int k = 0; k < fs->nprovider; k++) {
        hmd_force_provider_destroy(&fs->provider[k]);
    }
    hmd_halo_transport_close(&fs->halo);
    hmd_halo_plan_free(&fs->plan);
    hmd_nbr_list_free(&fs->nl);
    hmd_dd_replicated_free(&fs->rep);
    free(fs->atom_energy);
    free(fs->atom_virial);
    memset(fs, 0, sizeof *fs);
}
