/* C-rescale barostat (md/crescale.h). */
#include "md/crescale.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/mat3.h"
#include "core/rng.h"
#include "core/units.h"

int hmd_crescale_check(const struct hmd_crescale *c)
{
    if (!(c->tau_p > 0) || !isfinite(c->tau_p)) {
        return hmd_error_set(HMD_ECONFIG, "tau-p = %g ps: it must be positive", c->tau_p);
    }
    if (!(c->ref_t >= 0) || !isfinite(c->ref_t)) {
        return hmd_error_set(HMD_ECONFIG, "c-rescale: the reference temperature %g K is not >= 0",
                             c->ref_t);
    }
    bool any = false;
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            const double k = c->compressibility[a][b];
            if (!(k >= 0) || !isfinite(k) || !isfinite(c->ref_p[a][b])) {
                return hmd_error_set(HMD_ECONFIG,
                                     "compressibility[%d][%d] = %g 1/bar, ref-p[%d][%d] = %g bar: "
                                     "compressibilities must be finite and >= 0",
                                     a, b, k, a, b, c->ref_p[a][b]);
            }
            any = any || k > 0;
        }
    }
    if (!any) {
        return hmd_error_set(HMD_ECONFIG, "c-rescale: every compressibility is 0 (nothing to "
                                          "couple); water's is 4.5e-5 1/bar");
    }
    return HMD_OK;
}

/* exp of a small lower-triangular matrix (a Taylor series to double precision). */
static void matrix_exp(const double m[3][3], double out[3][3])
{
    double term[3][3], next[3][3];
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            out[a][b] = term[a][b] = a == b;
        }
    }
    for (int k = 1; k <= 20; k++) {
        double size = 0;
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++) {
                next[a][b] = 0;
                for (int j = 0; j < 3; j++) {
                    next[a][b] += term[a][j] * m[j][b];
                }
                next[a][b] /= k;
                size += fabs(next[a][b]);
            }
        }
        memcpy(term, next, sizeof term);
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b < 3; b++) {
                out[a][b] += term[a][b];
            }
        }
        if (size < 1e-18) {
            break;
        }
    }
}

int hmd_crescale_mu(const struct hmd_crescale *c, const double pres[3][3], double volume, double dt,
                    int64_t step, double mu[3][3])
{
    double xi[6];
    hmd_rng_normals(c->seed, HMD_RNG_GLOBAL_STREAM, (uint64_t)step, HMD_RNG_CRESCALE, 6, xi);
    const double kt = HMD_BOLTZMANN * c->ref_t;             /* eV */
    const double kt_v = kt / volume * HMD_EV_PER_A3_TO_BAR; /* bar */
    double gen[3][3] = {{0}};
    bool ok = volume > 0 && isfinite(volume) && dt > 0;
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            ok = ok && isfinite(pres[a][b]);
        }
    }
    if (!ok) {
        return hmd_error_set(HMD_EDATA,
                             "c-rescale at step %lld: pressure or volume (%g Å^3) not finite: "
                             "the system blew up",
                             (long long)step, volume);
    }
    const double scale = dt / c->tau_p;
    if (c->type == HMD_PCOUPL_ISOTROPIC) {
        const double f = c->compressibility[0][0] * scale;
        const double p = (pres[0][0] + pres[1][1] + pres[2][2]) / 3;
        const double e = -f * (c->ref_p[0][0] - p) / 3 + sqrt(2 * kt_v * f) * xi[0] / 3;
        gen[0][0] = gen[1][1] = gen[2][2] = e;
    } else if (c->type == HMD_PCOUPL_SEMIISOTROPIC) {
        const double fxy = c->compressibility[0][0] * scale, fz = c->compressibility[2][2] * scale;
        const double pxy = (pres[0][0] + pres[1][1]) / 2;
        gen[0][0] = gen[1][1] =
            -fxy * (c->ref_p[0][0] - pxy) / 3 + sqrt(4 * kt_v * fxy / 3) * xi[0] / 2;
        gen[2][2] = -fz * (c->ref_p[2][2] - pres[2][2]) / 3 + sqrt(2 * kt_v * fz / 3) * xi[1];
    } else {
        int k = 0;
        for (int a = 0; a < 3; a++) {
            for (int b = 0; b <= a; b++, k++) {
                /* the upper triangle folded onto the lower: a symmetric stress, no rotation */
                const double f =
                    (a == b ? c->compressibility[a][a]
                            : 0.5 * (c->compressibility[a][b] + c->compressibility[b][a])) *
                    scale;
                const double p = 0.5 * (pres[a][b] + pres[b][a]);
                const double p0 = 0.5 * (c->ref_p[a][b] + c->ref_p[b][a]);
                gen[a][b] = -f * (p0 - p) / 3 + sqrt(2 * kt_v * f / 3) * xi[k];
            }
        }
    }
    matrix_exp(gen, mu);
    for (int a = 0; a < 3; a++) {
        if (!(fabs(mu[a][a] - 1) < 0.1) || !isfinite(mu[a][a])) {
            return hmd_error_set(HMD_EDATA,
                                 "c-rescale at step %lld: the cell would scale by %g along %c in "
                                 "one coupling step (pressure %g bar): tau-p too short for this "
                                 "system, or a wrong compressibility",
                                 (long long)step, mu[a][a], "xyz"[a], pres[a][a]);
        }
    }
    return HMD_OK;
}

int hmd_crescale_apply(const double mu[3][3], struct hmd_box *box, int n, double *x, double *v,
                       const double *mass, double *dkin)
{
    double inv[3][3]; /* mu is lower triangular */
    hmd_mat3_lower_inverse(mu, inv);
    double h[3][3];
    for (int a = 0; a < 3; a++) {
        hmd_mat3_row_times(box->h[a], mu, h[a]);
    }
    int rc = hmd_box_init(box, h, box->periodic);
    if (rc) {
        return hmd_error_prefix(rc, "c-rescale: the scaled cell: ");
    }
    double dk = 0;
    for (int i = 0; i < n; i++) {
        double r[3];
        hmd_mat3_row_times(x + 3 * i, mu, r);
        memcpy(x + 3 * i, r, sizeof r);
        if (v) {
            double w[3];
            hmd_mat3_row_times(v + 3 * i, inv, w);
            if (mass) {
                const double *u = v + 3 * i;
                dk += 0.5 * mass[i] *
                      (w[0] * w[0] + w[1] * w[1] + w[2] * w[2] - u[0] * u[0] - u[1] * u[1] -
                       u[2] * u[2]);
            }
            memcpy(v + 3 * i, w, sizeof w);
        }
    }
    if (dkin) {
        *dkin = dk * HMD_MVV2E;
    }
    return HMD_OK;
}
