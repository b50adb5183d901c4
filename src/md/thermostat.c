#include "md/thermostat.h"

#include <math.h>

#include "core/rng.h"
#include "core/units.h"
#include "md/integrate.h"
#include "core/vrescale_draw.h"

double hmd_vrescale_kinetic(double kin, double kin_ref, double ndof, double c, uint64_t seed,
                            int64_t step)
{
    return hmd_vrescale_kinetic_draw(kin, kin_ref, ndof, c, seed, step);
}

double hmd_thermostat_vrescale_cpu(const struct hmd_thermostat *th, struct hmd_atoms *atoms,
                                   int64_t step)
{
    double ke[9];
    const double kin = hmd_integrate_kinetic_energy(atoms, ke);
    if (kin <= 0.0 || th->ndof <= 0.0) {
        return 0.0;
    }
    const double kin_ref = 0.5 * th->ndof * HMD_BOLTZMANN * th->ref_t;
    const double c = exp(-th->dt / th->tau_t);
    double kin_new = hmd_vrescale_kinetic(kin, kin_ref, th->ndof, c, th->seed, step);
    if (kin_new < 0.0) {
        kin_new = 0.0;
    }
    const double alpha = sqrt(kin_new / kin);
    for (int i = 0; i < 3 * atoms->nlocal; i++) {
        atoms->v[i] *= alpha;
    }
    return kin_new - kin;
}

double hmd_thermostat_langevin_cpu(const struct hmd_thermostat *th, struct hmd_atoms *atoms,
                                   int64_t step)
{
    double ke[9];
    const double before = hmd_integrate_kinetic_energy(atoms, ke);
    const double c1 = exp(-th->dt / th->tau_t), c2 = sqrt(1.0 - c1 * c1);
    for (int i = 0; i < atoms->nlocal; i++) {
        double xi[3];
        hmd_rng_normals(th->seed, (uint64_t)atoms->id[i], (uint64_t)step, HMD_RNG_LANGEVIN, 3, xi);
        const double sigma = sqrt(HMD_BOLTZMANN * th->ref_t / (atoms->mass[i] * HMD_MVV2E));
        for (int d = 0; d < 3; d++) {
            atoms->v[3 * i + d] = c1 * atoms->v[3 * i + d] + c2 * sigma * xi[d];
        }
    }
    return hmd_integrate_kinetic_energy(atoms, ke) - before;
}
