#include "md/forces.h"

#include "cuda/cuda_api.h"

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

void hmd_forces_use_replicated(struct hmd_forces *fs)
{
    fs->replicated = true;
}

enum { RECORD = 5 }; /* x, y, z, id, type: one atom in the all-gather */

/* Replicated mode: every home atom of every rank into fs->full (positions by id), types into
 * `type` when not NULL. Collective. */
static int gather_all(struct hmd_forces *fs, const struct hmd_atoms *a, int *type)
{
    const int n = (int)fs->natoms, nranks = hmd_comm_size();
    if (!fs->full) {
        fs->full = malloc(sizeof(double) * 3 * (n + 1));
        fs->records = malloc(sizeof(double) * RECORD * (n + 1));
    }
    double *mine = malloc(sizeof(double) * RECORD * (a->nlocal + 1));
    size_t *counts = malloc(sizeof(size_t) * nranks);
    int rc = (fs->full && fs->records && mine && counts)
                 ? HMD_OK
                 : hmd_error_set(HMD_ENOMEM, "out of memory for replicated positions");
    rc = hmd_comm_agree(rc);
    if (!rc) {
        for (int k = 0; k < a->nlocal; k++) {
            double *r = mine + (size_t)RECORD * k;
            memcpy(r, a->x + 3 * k, sizeof(double) * 3);
            r[3] = (double)a->id[k];
            r[4] = (double)a->type[k];
        }
        hmd_comm_allgatherv(mine, sizeof(double) * RECORD * a->nlocal, fs->records, counts);
        for (int q = 0; q < n; q++) {
            const double *r = fs->records + (size_t)RECORD * q;
            const int64_t id = (int64_t)r[3];
            memcpy(fs->full + 3 * id, r, sizeof(double) * 3);
            if (type) {
                type[id] = (int)r[4];
            }
        }
    }
    free(mine);
    free(counts);
    return rc;
}

/* Replicated mode: ghosts are every atom or image within 2 x rlist of the subdomain (home
 * atoms excluded), taken from the gathered positions. */
static int replicated_borders(struct hmd_forces *fs, struct hmd_atoms *a, const struct hmd_box *box)
{
    const int n = (int)fs->natoms;
    int *type = malloc(sizeof(int) * (n + 1));
    int rc = type ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    rc = hmd_comm_agree(rc);
    if (!rc) {
        rc = gather_all(fs, a, type);
    }
    if (rc) {
        free(type);
        return rc;
    }
    const struct hmd_domain *dd = fs->dd;
    double face[3], w[3];
    int reach[3];
    hmd_box_face_distances(box, face);
    for (int d = 0; d < 3; d++) {
        w[d] = 2.0 * fs->rlist / face[d];
        reach[d] = box->periodic[d] ? (int)ceil(w[d]) + 1 : 0;
    }
    a->nghost = 0;
    for (int g = 0; g < n && !rc; g++) {
        double s0[3];
        hmd_box_to_frac(box, fs->full + 3 * g, s0);
        for (int i0 = -reach[0]; i0 <= reach[0] && !rc; i0++) {
            for (int i1 = -reach[1]; i1 <= reach[1] && !rc; i1++) {
                for (int i2 = -reach[2]; i2 <= reach[2] && !rc; i2++) {
                    const int img[3] = {i0, i1, i2};
                    bool inside = true, home = i0 == 0 && i1 == 0 && i2 == 0;
                    for (int d = 0; d < 3 && inside; d++) {
                        const double sd = s0[d] + img[d];
                        const bool open = dd->grid[d] == 1 && !box->periodic[d];
                        inside = open || (sd >= dd->lo[d] - w[d] && sd < dd->hi[d] + w[d]);
                        home = home && (open || (sd >= dd->lo[d] && sd < dd->hi[d]));
                    }
                    if (!inside || home) {
                        continue;
                    }
                    const int k = hmd_atoms_nall(a);
                    rc = hmd_atoms_reserve(a, k + 1);
                    if (!rc && a->nghost + 1 > fs->cap_ghost) {
                        int cap = 2 * (a->nghost + 1) + 64;
                        int64_t *src = realloc(fs->ghost_src, sizeof(int64_t) * cap);
                        if (src) {
                            fs->ghost_src = src;
                        }
                        double *sh = realloc(fs->ghost_shift, sizeof(double) * 3 * cap);
                        if (sh) {
                            fs->ghost_shift = sh;
                        }
                        rc = (src && sh) ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
                        fs->cap_ghost = rc ? fs->cap_ghost : cap;
                    }
                    if (rc) {
                        break;
                    }
                    double *shift = fs->ghost_shift + 3 * a->nghost;
                    for (int q = 0; q < 3; q++) {
                        shift[q] = i0 * box->h[0][q] + i1 * box->h[1][q] + i2 * box->h[2][q];
                        a->x[3 * k + q] = fs->full[3 * g + q] + shift[q];
                    }
                    fs->ghost_src[a->nghost] = g;
                    a->type[k] = type[g];
                    a->id[k] = g;
                    a->nghost++;
                }
            }
        }
    }
    free(type);
    return hmd_comm_agree(rc);
}

/* Replicated mode's forward: all positions gathered, ghosts set from them. */
static void replicated_forward(struct hmd_forces *fs, struct hmd_atoms *a)
{
    if (gather_all(fs, a, NULL)) {
        hmd_fatal("replicated positions could not be gathered: %s", hmd_error_msg());
    }
    for (int k = 0; k < a->nghost; k++) {
        const double *src = fs->full + 3 * fs->ghost_src[k], *sh = fs->ghost_shift + 3 * k;
        double *x = a->x + 3 * (size_t)(a->nlocal + k);
        x[0] = src[0] + sh[0];
        x[1] = src[1] + sh[1];
        x[2] = src[2] + sh[2];
    }
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
        rc = fs->replicated ? replicated_borders(fs, atoms, box)
                            : hmd_halo_borders(&fs->plan, atoms, box, fs->dd, fs->rlist);
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
    /* replicated mode evaluates every atom it holds: all are centres */
    const int ncentre = fs->replicated ? nall : atoms->nlocal;
    if (fs->cuda) {
        /* the GPU builds its own list at every evaluation; the host keeps the positions the
         * rebuild criterion measures from */
        return hmd_comm_agree(hmd_nbr_list_mark(&fs->nl, ncentre, atoms->x, fs->rlist));
    }
    return hmd_comm_agree(hmd_nbr_list_build(&fs->nl, box, ncentre, nall, atoms->x, fs->rlist));
}

void hmd_forces_update_ghosts(struct hmd_forces *fs, struct hmd_atoms *atoms)
{
    if (fs->replicated) {
        replicated_forward(fs, atoms);
    } else {
        hmd_halo_forward_x(&fs->plan, atoms->x);
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

int hmd_forces_compute(struct hmd_forces *fs, struct hmd_atoms *atoms, bool atomic)
{
    const int nall = hmd_atoms_nall(atoms);
    struct hmd_dp_output out = {
        .ncount = atoms->nlocal,
        .atom_energy = atomic ? fs->atom_energy : NULL,
        .force = atoms->f,
        .atom_virial = atomic && !fs->replicated ? fs->atom_virial : NULL,
    };
    /* the DP alone is timed (the agreement below waits for the slowest rank) */
    const double t0 = hmd_wtime();
    int rc;
    if (fs->cuda) {
        out.atom_virial = NULL; /* not on the GPU */
        rc = hmd_cuda_dp_compute(fs->cuda, fs->nl.ncentre, nall, atoms->x, atoms->type, fs->type0,
                                 fs->rlist, &out);
    } else {
        rc = hmd_dp_compute_cpu(fs->model, &fs->ws, fs->nl.ncentre, nall, atoms->x, atoms->type,
                                fs->type0, &fs->nl, &out);
    }
    fs->t_force += hmd_wtime() - t0;
    rc = hmd_comm_agree(rc);
    if (rc) {
        return rc;
    }
    if (fs->replicated) {
        /* the baseline's second collective: every rank's home forces into one array */
        const int n = (int)fs->natoms;
        memset(fs->full, 0, sizeof(double) * 3 * n);
        for (int k = 0; k < atoms->nlocal; k++) {
            memcpy(fs->full + 3 * atoms->id[k], atoms->f + 3 * k, sizeof(double) * 3);
        }
        hmd_comm_sum(fs->full, 3 * n);
        for (int k = 0; k < atoms->nlocal; k++) {
            memcpy(atoms->f + 3 * k, fs->full + 3 * atoms->id[k], sizeof(double) * 3);
        }
    } else {
        hmd_halo_reverse(&fs->plan, atoms->f, 3);
        if (out.atom_virial) {
            hmd_halo_reverse(&fs->plan, fs->atom_virial, 9);
        }
    }
    double sums[11]; /* the neighbour count is exact in a double */
    sums[0] = out.energy;
    memcpy(sums + 1, out.virial, sizeof out.virial);
    sums[10] = (double)out.dropped;
    hmd_comm_sum(sums, 11);
    fs->energy = sums[0];
    memcpy(fs->virial, sums + 1, sizeof fs->virial);
    fs->dropped = (long)sums[10];
    return HMD_OK;
}

/* precision = mixed where the CPU would compute: refused, with auto's reason `why` (or NULL) */
static int mixed_needs_gpu(const char *why)
{
    return hmd_error_set(HMD_ENOTSUP,
                         "precision = mixed runs on the GPU only (backend = cuda)%s%s; the CPU "
                         "computes in double (precision = double)",
                         why ? ", and the GPU cannot be used: " : "", why ? why : "");
}

int hmd_forces_select_backend(struct hmd_forces *fs, const char *backend,
                              enum hmd_precision precision, char *what, size_t len)
{
    const bool mixed = precision == HMD_PRECISION_MIXED;
    snprintf(what, len, "cpu");
    if (!strcmp(backend, "cpu")) {
        return mixed ? mixed_needs_gpu(NULL) : HMD_OK;
    }
    char device[256] = "";
    int rc = hmd_cuda_device_info(device, sizeof device);
    if (!rc) {
        rc = hmd_forces_use_cuda(fs, precision);
    }
    if (rc && !strcmp(backend, "auto")) {
        char why[1024];
        snprintf(why, sizeof why, "%s", hmd_error_msg());
        hmd_error_clear();
        if (mixed) {
            return mixed_needs_gpu(why);
        }
        snprintf(what, len, "cpu (auto: %s)", why);
        return HMD_OK;
    }
    if (!rc) {
        snprintf(what, len, "cuda%s, %s",
                 mixed ? " (precision = mixed: fp32 descriptor networks)" : "", device);
    }
    return rc;
}

int hmd_forces_use_cuda(struct hmd_forces *fs, enum hmd_precision precision)
{
    if (fs->replicated || hmd_comm_size() > 1) {
        return hmd_error_set(HMD_ENOTSUP, "backend = cuda runs on one rank in this version (no "
                                          "mpirun, dd-mode = halo)");
    }
    return hmd_cuda_dp_create(&fs->cuda, fs->model, precision == HMD_PRECISION_MIXED);
}

void hmd_forces_free(struct hmd_forces *fs)
{
    hmd_cuda_dp_destroy(fs->cuda);
    hmd_halo_plan_free(&fs->plan);
    hmd_nbr_list_free(&fs->nl);
    hmd_dp_workspace_free(&fs->ws);
    free(fs->atom_energy);
    free(fs->atom_virial);
    free(fs->full);
    free(fs->records);
    free(fs->ghost_src);
    free(fs->ghost_shift);
    memset(fs, 0, sizeof *fs);
}
