#include "md/integrate.h"

#include <math.h>

#include "comm/comm.h"
#include "core/rng.h"
#include "core/units.h"

void hmd_integrate_first_half_cpu(struct hmd_atoms *a, double dt)
{
    for (int i = 0; i < a->nlocal; i++) {
        /* f/m in eV/Å/(g/mol) is (1/MVV2E) Å/ps^2 */
        const double k = 0.5 * dt / (a->mass[i] * HMD_MVV2E);
        for (int d = 0; d < 3; d++) {
            a->v[3 * i + d] += k * a->f[3 * i + d];
            a->x[3 * i + d] += dt * a->v[3 * i + d];
        }
    }
}

void hmd_integrate_second_half_cpu(struct hmd_atoms *a, double dt)
{
    for (int i = 0; i < a->nlocal; i++) {
        const double k = 0.5 * dt / (a->mass[i] * HMD_MVV2E);
        for (int d = 0; d < 3; d++) {
            a->v[3 * i + d] += k * a->f[3 * i + d];
        }
    }
}

double hmd_integrate_kinetic_energy(const struct hmd_atoms *a, double ke[9])
{
    for (int k = 0; k < 9; k++) {
        ke[k] = 0.0;
    }
    for (int i = 0; i < a->nlocal; i++) {
        const double *v = a->v + 3 * i;
        for (int p = 0; p < 3; p++) {
            for (int q = 0; q < 3; q++) {
                ke[3 * p + q] += a->mass[i] * v[p] * v[q];
            }
        }
    }
    for (int k = 0; k < 9; k++) {
        ke[k] *= HMD_MVV2E;
    }
    hmd_comm_sum(ke, 9);
    return 0.5 * (ke[0] + ke[4] + ke[8]);
}

void hmd_integrate_remove_com(struct hmd_atoms *a)
{
    double p[4] = {0, 0, 0, 0}; /* momentum and total mass */
    for (int i = 0; i < a->nlocal; i++) {
        p[3] += a->mass[i];
        for (int d = 0; d < 3; d++) {
            p[d] += a->mass[i] * a->v[3 * i + d];
        }
    }
    hmd_comm_sum(p, 4);
    const double mtot = p[3];
    if (mtot <= 0) {
        return;
    }
    for (int i = 0; i < a->nlocal; i++) {
        for (int d = 0; d < 3; d++) {
            a->v[3 * i + d] -= p[d] / mtot;
        }
    }
}

void hmd_integrate_generate_velocities(struct hmd_atoms *a, double temp, uint64_t seed,
                                       int remove_com, double ndof)
{
    for (int i = 0; i < a->nlocal; i++) {
        double g[3];
        hmd_rng_normals(seed, (uint64_t)a->id[i], 0, HMD_RNG_GEN_VEL, 3, g);
        const double sigma = sqrt(HMD_BOLTZMANN * temp / (a->mass[i] * HMD_MVV2E));
        for (int d = 0; d < 3; d++) {
            a->v[3 * i + d] = sigma * g[d];
        }
    }
    if (remove_com) {
        hmd_integrate_remove_com(a);
    }
    double ke[9];
    double kin = hmd_integrate_kinetic_energy(a, ke);
    double now = ndof > 0 ? 2.0 * kin / (ndof * HMD_BOLTZMANN) : 0.0;
    double scale = now > 0 ? sqrt(temp / now) : 0.0;
    for (int i = 0; i < 3 * a->nlocal; i++) {
        a->v[i] *= scale;
    }
}
