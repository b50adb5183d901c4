#include "md/forces.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "comm/halo.h"
#include "core/error.h"
#include "core/timer.h"

void hmd_forces_init(struct hmd_forces *fs, const struct hmd_dp_model *model,
                     const struct hmd_domain *dd, double skin, int type0, int64_t natoms)
{
    memset(fs, 0, sizeof *fs);
    fs->natoms = natoms;
    fs->model = model;
    fs->dd = dd;
    fs->rlist = model->rcut + skin;
    fs->type0 = type0;
}

int hmd_forces_rebuild(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box)
{
    atoms->nghost = 0;
    for (int i = 0; i < atoms->nlocal; i++) {
        hmd_box_wrap(box, atoms->x + 3 * i, NULL);
    }
    int rc = hmd_comm_agree(hmd_halo_migrate(atoms, box, fs->dd));
    int64_t held = atoms->nlocal;
    hmd_comm_sum_i64(&held, 1);
    if (!rc && held != fs->natoms) {
        rc = hmd_error_set(HMD_ESOFTWARE, "the ranks hold %lld atoms, the system has %lld",
                           (long long)held, (long long)fs->natoms);
    }
    if (!rc) {
        rc = hmd_halo_borders(&fs->plan, atoms, box, fs->dd, fs->rlist);
    }
    if (rc) {
        return rc;
    }
    const int nall = hmd_atoms_nall(atoms);
    if (nall > fs->cap_atoms) {
        int cap = nall + nall / 4 + 16;
        double *ae = realloc(fs->atom_energy, (size_t)cap * sizeof(double));
        if (ae) {
            fs->atom_energy = ae;
        }
        double *av = realloc(fs->atom_virial, (size_t)cap * 9 * sizeof(double));
        if (av) {
            fs->atom_virial = av;
        }
        rc = (ae && av) ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory for per-atom energies");
        if (rc) {
            return hmd_comm_agree(rc);
        }
        fs->cap_atoms = cap;
    }
    fs->nbuilds++;
    return hmd_comm_agree(
        hmd_nbr_list_build(&fs->nl, box, atoms->nlocal, nall, atoms->x, fs->rlist));
}

void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms)
{
    hmd_halo_forward_x(&fs->plan, atoms->x);
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

int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, bool atomic)
{
    struct hmd_dp_output out = {
        .atom_energy = atomic ? fs->atom_energy : NULL,
        .force = atoms->f,
        .atom_virial = atomic ? fs->atom_virial : NULL,
    };
    const double t0 = hmd_wtime();
    int rc =
        hmd_comm_agree(hmd_dp_compute_cpu(fs->model, &fs->ws, atoms->nlocal, hmd_atoms_nall(atoms),
                                          atoms->x, atoms->type, fs->type0, &fs->nl, &out));
    fs->t_force += hmd_wtime() - t0;
    if (rc) {
        return rc;
    }
    hmd_halo_reverse(&fs->plan, atoms->f, 3);
    if (atomic) {
        hmd_halo_reverse(&fs->plan, fs->atom_virial, 9);
    }
    double sums[10];
    sums[0] = out.energy;
    memcpy(sums + 1, out.virial, sizeof out.virial);
    hmd_comm_sum(sums, 10);
    fs->energy = sums[0];
    memcpy(fs->virial, sums + 1, sizeof fs->virial);
    return HMD_OK;
}

void hmd_forces_free(struct hmd_forces *fs)
{
    hmd_halo_plan_free(&fs->plan);
    hmd_nbr_list_free(&fs->nl);
    hmd_dp_workspace_free(&fs->ws);
    free(fs->atom_energy);
    free(fs->atom_virial);
    memset(fs, 0, sizeof *fs);
}
