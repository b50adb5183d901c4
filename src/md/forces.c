#include "md/forces.h"

#include <stdlib.h>
#include <string.h>

#include "comm/halo.h"
#include "core/error.h"

void hmd_forces_init(struct hmd_forces *fs, const struct hmd_dp_model *model, double skin)
{
    memset(fs, 0, sizeof *fs);
    fs->model = model;
    fs->rlist = model->rcut + skin;
}

int hmd_forces_rebuild(struct hmd_forces *fs, struct hmd_atoms *atoms, const struct hmd_box *box)
{
    for (int i = 0; i < atoms->nlocal; i++) {
        hmd_box_wrap(box, atoms->x + 3 * i, NULL);
    }
    int rc = hmd_halo_borders_self(&fs->plan, atoms, box, fs->rlist);
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
        if (!ae || !av) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for per-atom energies and virials");
        }
        fs->cap_atoms = cap;
    }
    fs->nbuilds++;
    return hmd_nbr_list_build(&fs->nl, box, atoms->nlocal, nall, atoms->x, fs->rlist);
}

void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms)
{
    hmd_halo_forward_x(&fs->plan, atoms->x);
}

bool hmd_forces_list_expired(const struct hmd_forces *fs, const struct hmd_atoms *atoms)
{
    return 2.0 * hmd_nbr_list_max_displacement(&fs->nl, atoms->x) > fs->rlist - fs->model->rcut;
}

int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, bool atomic)
{
    struct hmd_dp_output out = {
        .atom_energy = atomic ? fs->atom_energy : NULL,
        .force = atoms->f,
        .atom_virial = atomic ? fs->atom_virial : NULL,
    };
    /* one rank: home atom 0 is the system's atom 0 (ids follow the input order) */
    int rc = hmd_dp_compute_cpu(fs->model, &fs->ws, atoms->nlocal, hmd_atoms_nall(atoms), atoms->x,
                                atoms->type, atoms->type[0], &fs->nl, &out);
    if (rc) {
        return rc;
    }
    hmd_halo_reverse(&fs->plan, atoms->f, 3);
    if (atomic) {
        hmd_halo_reverse(&fs->plan, fs->atom_virial, 9);
    }
    fs->energy = out.energy;
    memcpy(fs->virial, out.virial, sizeof fs->virial);
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
