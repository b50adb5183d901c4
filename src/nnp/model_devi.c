#include "nnp/model_devi.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

/* Mean and population standard deviation of x[k * stride] over k < n. */
static void mean_std(int n, const double *x, size_t stride, double *mean, double *std)
{
    double m = 0.0, s = 0.0;
    for (int k = 0; k < n; k++) {
        m += x[k * stride];
    }
    m /= n;
    for (int k = 0; k < n; k++) {
        const double d = x[k * stride] - m;
        s += d * d;
    }
    *mean = m;
    *std = sqrt(s / n);
}

void hmd_model_devi_compute(int nmodels, int natoms, const double *const *force,
                            const double *const *virial, const double *energy, double relative,
                            double relative_v, struct hmd_model_devi *out, double *atom_devi)
{
    double vals[64]; /* one value of every model (the ensemble is small) */
    HMD_ASSERT(nmodels >= 1 && nmodels <= 64 && natoms >= 1);
    double fmax = -INFINITY, fmin = INFINITY, fsum = 0.0;
    for (int i = 0; i < natoms; i++) {
        double sq = 0.0, mean_sq = 0.0;
        for (int d = 0; d < 3; d++) {
            for (int k = 0; k < nmodels; k++) {
                vals[k] = force[k][3 * i + d];
            }
            double mean, std;
            mean_std(nmodels, vals, 1, &mean, &std);
            sq += std * std;
            mean_sq += mean * mean;
        }
        double e = sqrt(sq);
        if (relative > 0) {
            e /= sqrt(mean_sq) + relative;
        }
        fmax = fmax > e ? fmax : e;
        fmin = fmin < e ? fmin : e;
        fsum += e;
        if (atom_devi) {
            atom_devi[i] = e;
        }
    }
    double vmax = -INFINITY, vmin = INFINITY, vsq = 0.0;
    for (int c = 0; c < 9; c++) {
        for (int k = 0; k < nmodels; k++) {
            vals[k] = virial[k][c] / natoms;
        }
        double mean, s;
        mean_std(nmodels, vals, 1, &mean, &s);
        if (relative_v > 0) {
            s /= fabs(mean) + relative_v;
        }
        vmax = vmax > s ? vmax : s;
        vmin = vmin < s ? vmin : s;
        vsq += s * s;
    }
    for (int k = 0; k < nmodels; k++) {
        vals[k] = energy[k] / natoms;
    }
    double mean_e;
    mean_std(nmodels, vals, 1, &mean_e, &out->devi_e);
    out->max_devi_f = fmax;
    out->min_devi_f = fmin;
    out->avg_devi_f = fsum / natoms;
    out->max_devi_v = vmax;
    out->min_devi_v = vmin;
    out->avg_devi_v = sqrt(vsq / 9);
}

/* "[O, H]" of a model into buf. */
static void type_list(const struct hmd_dp_model *m, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int t = 0; t < m->ntypes && len < n; t++) {
        len += (size_t)snprintf(buf + len, n - len, "%s%s", t ? ", " : "", m->type_map[t]);
    }
    if (len < n) {
        snprintf(buf + len, n - len, "]");
    }
}

int hmd_model_devi_check(const struct hmd_dp_model *const *models, const char *const *paths,
                         int nmodels, int *map)
{
    const struct hmd_dp_model *m0 = models[0];
    for (int k = 0; k < nmodels; k++) {
        const struct hmd_dp_model *m = models[k];
        if (m->rcut != m0->rcut) {
            return hmd_error_set(HMD_EDATA,
                                 "%s has rcut %g Å, %s %g Å: the models of a deviation share "
                                 "one neighbour list and need the same cut-off",
                                 paths[k], m->rcut, paths[0], m0->rcut);
        }
        bool same = m->ntypes == m0->ntypes;
        for (int t = 0; t < m0->ntypes && same; t++) {
            map[k * m0->ntypes + t] = hmd_model_type_index(m, m0->type_map[t]);
            same = map[k * m0->ntypes + t] >= 0;
        }
        if (!same) {
            char a[256], b[256];
            type_list(m, a, sizeof a);
            type_list(m0, b, sizeof b);
            return hmd_error_set(HMD_EDATA,
                                 "%s has the type map %s, %s has %s: the models of a deviation "
                                 "need the same types (in any order)",
                                 paths[k], a, paths[0], b);
        }
    }
    return HMD_OK;
}
