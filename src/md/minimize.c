/* Steepest descent and FIRE (em/minimize.h). */
#include "md/minimize.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/units.h"

/* The largest force and its atom; HMD_EDATA when a force or the energy is not finite. */
static int force_max(int n, const double *f, double energy, double *fmax, int *atom)
{
    double m2 = 0;
    *atom = 0;
    for (int i = 0; i < n; i++) {
        const double *g = f + 3 * i;
        const double s = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        if (!isfinite(s)) {
            return hmd_error_set(HMD_EDATA, "minimisation: the force on atom %d is not finite",
                                 i + 1);
        }
        if (s > m2) {
            m2 = s;
            *atom = i;
        }
    }
    if (!isfinite(energy)) {
        return hmd_error_set(HMD_EDATA, "minimisation: the energy is not finite");
    }
    *fmax = sqrt(m2);
    return HMD_OK;
}

/* The result at the positions returned. */
static void finish(struct hmd_em_result *r, double e, double fmax, int atom, double emtol)
{
    r->energy = e;
    r->fmax = fmax;
    r->fmax_atom = atom;
    r->converged = fmax < emtol;
}

static int check_opts(const struct hmd_em_opts *o, int n)
{
    if (n < 1 || !(o->emtol > 0) || !(o->emstep > 0) || o->nsteps < -1) {
        return hmd_error_set(HMD_ECONFIG,
                             "minimisation: emtol %g and emstep %g must be positive, nsteps %lld "
                             ">= -1 (%d atoms)",
                             o->emtol, o->emstep, (long long)o->nsteps, n);
    }
    return HMD_OK;
}

/* One force call, counted, with its maximum. */
static int evaluate(hmd_em_force_fn force, void *ctx, int n, const double *x, double *f, double *e,
                    double *fmax, int *atom, struct hmd_em_result *r)
{
    r->evaluations++;
    int rc = force(ctx, n, x, f, e);
    return rc ? rc : force_max(n, f, *e, fmax, atom);
}

int hmd_em_steep(int n, double *x, hmd_em_force_fn force, void *ctx, const struct hmd_em_opts *opts,
                 struct hmd_em_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = check_opts(opts, n);
    if (rc) {
        return rc;
    }
    const size_t len = 3 * (size_t)n;
    double *f = malloc(len * sizeof *f), *xt = malloc(len * sizeof *xt),
           *ft = malloc(len * sizeof *ft);
    if (!f || !xt || !ft) {
        free(f);
        free(xt);
        free(ft);
        return hmd_error_set(HMD_ENOMEM, "minimisation: out of memory for %d atoms", n);
    }
    double e = 0, fmax = 0, h = opts->emstep;
    int atom = 0;
    rc = evaluate(force, ctx, n, x, f, &e, &fmax, &atom, r);
    while (!rc && fmax >= opts->emtol && (opts->nsteps < 0 || r->steps < opts->nsteps) &&
           h > 1e-12) {
        const double k = h / fmax;
        for (size_t j = 0; j < len; j++) {
            xt[j] = x[j] + k * f[j];
        }
        double et = INFINITY, fmt = INFINITY;
        int at = 0;
        r->steps++;
        r->evaluations++;
        rc = force(ctx, n, xt, ft, &et);
        /* a trial into non-finite forces (atoms pushed together) is a rejected trial */
        const bool finite = !rc && force_max(n, ft, et, &fmt, &at) == HMD_OK;
        if (finite && et < e) { /* accepted: GROMACS's 1.2 / 0.2 step control */
            memcpy(x, xt, len * sizeof *x);
            double *swap = f;
            f = ft;
            ft = swap;
            e = et;
            fmax = fmt;
            atom = at;
            h *= 1.2;
        } else {
            h *= 0.2;
        }
    }
    if (!rc) {
        finish(r, e, fmax, atom, opts->emtol);
    }
    free(f);
    free(xt);
    free(ft);
    return rc;
}

int hmd_em_fire(int n, double *x, const double *mass, hmd_em_force_fn force, void *ctx,
                const struct hmd_em_opts *opts, struct hmd_em_result *r)
{
    memset(r, 0, sizeof *r);
    int rc = check_opts(opts, n);
    if (rc) {
        return rc;
    }
    /* FIRE's parameters (Bitzek et al. 2006) */
    const int n_min = 5;
    const double f_inc = 1.1, f_dec = 0.5, alpha0 = 0.1, f_alpha = 0.99;
    const size_t len = 3 * (size_t)n;
    double *f = malloc(len * sizeof *f), *v = calloc(len, sizeof *v);
    if (!f || !v) {
        free(f);
        free(v);
        return hmd_error_set(HMD_ENOMEM, "minimisation: out of memory for %d atoms", n);
    }
    double e = 0, fmax = 0, dt = opts->emstep, alpha = alpha0;
    const double dt_max = 10 * opts->emstep;
    int atom = 0, downhill = 0;
    rc = evaluate(force, ctx, n, x, f, &e, &fmax, &atom, r);
    /* a = F / m in Å/ps^2: F (eV/Å) / m (g/mol) / HMD_MVV2E */
    while (!rc && fmax >= opts->emtol && (opts->nsteps < 0 || r->steps < opts->nsteps)) {
        r->steps++;
        double power = 0, vv = 0, ff = 0;
        for (size_t j = 0; j < len; j++) {
            power += f[j] * v[j];
            vv += v[j] * v[j];
            ff += f[j] * f[j];
        }
        if (power > 0) {
            const double mix = ff > 0 ? alpha * sqrt(vv / ff) : 0;
            for (size_t j = 0; j < len; j++) {
                v[j] = (1 - alpha) * v[j] + mix * f[j];
            }
            if (++downhill > n_min) {
                dt = dt * f_inc < dt_max ? dt * f_inc : dt_max;
                alpha *= f_alpha;
            }
        } else {
            memset(v, 0, len * sizeof *v);
            dt *= f_dec;
            alpha = alpha0;
            downhill = 0;
        }
        /* velocity Verlet */
        for (int i = 0; i < n; i++) {
            const double inv_m = 1.0 / ((mass ? mass[i] : 1.0) * HMD_MVV2E);
            for (int d = 0; d < 3; d++) {
                const size_t j = 3 * (size_t)i + d;
                v[j] += 0.5 * dt * f[j] * inv_m;
                x[j] += dt * v[j];
            }
        }
        rc = evaluate(force, ctx, n, x, f, &e, &fmax, &atom, r);
        for (int i = 0; !rc && i < n; i++) {
            const double inv_m = 1.0 / ((mass ? mass[i] : 1.0) * HMD_MVV2E);
            for (int d = 0; d < 3; d++) {
                v[3 * (size_t)i + d] += 0.5 * dt * f[3 * (size_t)i + d] * inv_m;
            }
        }
    }
    if (!rc) {
        finish(r, e, fmax, atom, opts->emtol);
    }
    free(f);
    free(v);
    return rc;
}
