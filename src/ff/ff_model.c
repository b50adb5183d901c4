/* The classical force field of a system (ff/ff_model.h). */
#include "ff/ff_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/units.h"

_Static_assert((int)HMD_FF_KIND_BOND == (int)HMD_TOP_BOND &&
                   (int)HMD_FF_KIND_ANGLE == (int)HMD_TOP_ANGLE &&
                   (int)HMD_FF_KIND_UREY_BRADLEY == (int)HMD_TOP_UREY_BRADLEY &&
                   (int)HMD_FF_KIND_PROPER == (int)HMD_TOP_PROPER &&
                   (int)HMD_FF_KIND_IMPROPER == (int)HMD_TOP_IMPROPER &&
                   (int)HMD_FF_KIND_PERIODIC_IMPROPER == (int)HMD_TOP_PERIODIC_IMPROPER &&
                   (int)HMD_FF_KIND_PAIR == (int)HMD_TOP_PAIR,
               "ff/ff_kernels.h's kinds follow io/topology.h's");
_Static_assert((int)HMD_FF_TERM_BOND == (int)HMD_FF_KIND_BOND &&
                   (int)HMD_FF_TERM_PERIODIC_IMPROPER == (int)HMD_FF_KIND_PERIODIC_IMPROPER &&
                   (int)HMD_FF_TERM_LJ14 == (int)HMD_FF_KIND_PAIR,
               "hmd_ff_term_of_kind: the bonded terms follow the kinds");

const char *hmd_ff_term_name(int term)
{
    static const char *names[HMD_FF_NTERMS] = {
        "Bond",           "Angle", "U-B",        "Proper Dih.", "Improper Dih.",
        "Per. Imp. Dih.", "LJ-14", "Coulomb-14", "LJ (SR)",     "Coulomb (SR)",
    };
    return term >= 0 && term < HMD_FF_NTERMS ? names[term] : "?";
}

int hmd_ff_nb_init(struct hmd_ff_nb *nb, const struct hmd_ff_settings *s)
{
    memset(nb, 0, sizeof *nb);
    if (!(s->rcoulomb > 0) || !(s->rvdw > 0) || !isfinite(s->rcoulomb) || !isfinite(s->rvdw)) {
        return hmd_error_set(HMD_ECONFIG, "rcoulomb = %g and rvdw = %g: both must be > 0 (Å)",
                             s->rcoulomb, s->rvdw);
    }
    if (!(s->epsilon_r >= 0) || !(s->epsilon_rf >= 0)) {
        return hmd_error_set(HMD_ECONFIG, "epsilon-r = %g and epsilon-rf = %g must be >= 0",
                             s->epsilon_r, s->epsilon_rf);
    }
    const bool sw = s->vdw_modifier == HMD_FF_VDW_FORCE_SWITCH ||
                    s->vdw_modifier == HMD_FF_VDW_POTENTIAL_SWITCH;
    if (sw && !(s->rvdw_switch >= 0 && s->rvdw_switch < s->rvdw)) {
        return hmd_error_set(HMD_ECONFIG,
                             "rvdw-switch = %g Å must be >= 0 and below rvdw = %g Å for "
                             "vdw-modifier = %s",
                             s->rvdw_switch, s->rvdw,
                             s->vdw_modifier == HMD_FF_VDW_FORCE_SWITCH ? "force-switch"
                                                                        : "potential-switch");
    }
    const double rc = s->rcoulomb, rv = s->rvdw;
    nb->rcoul2 = rc * rc;
    nb->rvdw2 = rv * rv;
    nb->rc2 = fmax(nb->rcoul2, nb->rvdw2);
    nb->epsfac = s->epsilon_r == 0 ? 0.0 : HMD_COULOMB_EV_A / s->epsilon_r;
    if (s->coulomb == HMD_FF_COULOMB_REACTION_FIELD) {
        /* GROMACS's calc_rffac; epsilon-rf = 0 is infinity */
        nb->k_rf = s->epsilon_rf == 0 ? 1.0 / (2.0 * rc * rc * rc)
                                      : (s->epsilon_rf - s->epsilon_r) /
                                            (2.0 * s->epsilon_rf + s->epsilon_r) / (rc * rc * rc);
        nb->c_rf = 1.0 / rc + nb->k_rf * rc * rc;
    } else {
        /* the Verlet scheme's plain cut-off: reaction field without the field */
        nb->k_rf = 0.0;
        nb->c_rf = s->coulomb_shift ? 1.0 / rc : 0.0;
    }
    nb->vdw_mod = s->vdw_modifier;
    nb->rsw = sw ? s->rvdw_switch : 0.0;
    const double rv6 = rv * rv * rv * rv * rv * rv;
    nb->sh6 = -1.0 / rv6;
    nb->sh12 = -1.0 / (rv6 * rv6);
    if (s->vdw_modifier == HMD_FF_VDW_FORCE_SWITCH) {
        /* GROMACS's force_switch_constants, for r^-6 and r^-12 */
        const double rsw = s->rvdw_switch, w = rv - rsw;
        for (int k = 0; k < 2; k++) {
            const double p = k ? 12.0 : 6.0, rcp2 = pow(rv, p + 2);
            nb->fs_c2[k] = ((p + 1) * rsw - (p + 4) * rv) / (rcp2 * w * w);
            nb->fs_c3[k] = -((p + 1) * rsw - (p + 3) * rv) / (rcp2 * w * w * w);
            nb->fs_cpot[k] = -pow(rv, -p) + p * nb->fs_c2[k] / 3 * w * w * w +
                             p * nb->fs_c3[k] / 4 * w * w * w * w;
        }
    } else if (s->vdw_modifier == HMD_FF_VDW_POTENTIAL_SWITCH) {
        const double w = rv - s->rvdw_switch;
        nb->ps_c3 = -10.0 / (w * w * w);
        nb->ps_c4 = 15.0 / (w * w * w * w);
        nb->ps_c5 = -6.0 / (w * w * w * w * w);
    }
    return HMD_OK;
}

/* CSR of interactions by atom: by their first atom (owners) or by every atom. */
static int by_atom(const struct hmd_ff_model *m, bool every, int **start, int **list)
{
    *start = calloc((size_t)m->natoms + 1, sizeof **start);
    size_t total = 0;
    for (int k = 0; k < m->ninter; k++) {
        total += every ? (size_t)hmd_top_kind_atoms(m->inter[k].kind) : 1;
    }
    *list = malloc(sizeof **list * (total + 1));
    int *fill = malloc(sizeof *fill * ((size_t)m->natoms + 1));
    if (!*start || !*list || !fill) {
        free(fill);
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
    }
    for (int k = 0; k < m->ninter; k++) {
        const int n = every ? hmd_top_kind_atoms(m->inter[k].kind) : 1;
        for (int a = 0; a < n; a++) {
            (*start)[m->inter[k].atom[a] + 1]++;
        }
    }
    for (int i = 0; i < m->natoms; i++) {
        (*start)[i + 1] += (*start)[i];
    }
    memcpy(fill, *start, sizeof *fill * (size_t)m->natoms);
    for (int k = 0; k < m->ninter; k++) {
        const int n = every ? hmd_top_kind_atoms(m->inter[k].kind) : 1;
        for (int a = 0; a < n; a++) {
            (*list)[fill[m->inter[k].atom[a]]++] = k;
        }
    }
    free(fill);
    return HMD_OK;
}

/* Hybrid ML/MM: the bonded interactions and 1-4 pairs whose atoms all lie in the group are the
 * Deep Potential's; the rest keep their order. */
static void drop_group_interactions(struct hmd_ff_model *m)
{
    if (!m->group) {
        return;
    }
    int kept = 0;
    for (int k = 0; k < m->ninter; k++) {
        const struct hmd_top_interaction *in = &m->inter[k];
        bool inside = true;
        for (int a = 0; a < hmd_top_kind_atoms(in->kind); a++) {
            inside = inside && m->group[in->atom[a]];
        }
        if (!inside) {
            m->inter[kept++] = *in;
        }
    }
    m->ninter = kept;
}

static void *copy(const void *src, size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (p && bytes) {
        memcpy(p, src, bytes);
    }
    return p;
}

int hmd_ff_model_create(struct hmd_ff_model *m, const struct hmd_topology *top,
                        const struct hmd_ff_settings *s)
{
    memset(m, 0, sizeof *m);
    int rc = hmd_ff_nb_init(&m->nb, s);
    if (rc) {
        return rc;
    }
    const size_t n = (size_t)top->natoms, nt = (size_t)top->ntypes;
    m->natoms = top->natoms;
    m->ntypes = top->ntypes;
    m->cutoff = fmax(s->rcoulomb, s->rvdw);
    m->charge = copy(top->charge, sizeof *m->charge * n);
    m->type = copy(top->type, sizeof *m->type * n);
    m->c6 = copy(top->c6, sizeof *m->c6 * nt * nt);
    m->c12 = copy(top->c12, sizeof *m->c12 * nt * nt);
    m->excl_start = copy(top->excl_start, sizeof *m->excl_start * (n + 1));
    m->excl = copy(top->excl, sizeof *m->excl * (size_t)top->excl_start[n]);
    m->ninter = top->ninter;
    m->inter = copy(top->inter, sizeof *m->inter * (size_t)top->ninter);
    m->group = s->nnp_group ? copy(s->nnp_group, n) : NULL;
    if (!m->charge || !m->type || !m->c6 || !m->c12 || !m->excl_start || !m->excl || !m->inter ||
        (s->nnp_group && !m->group)) {
        hmd_ff_model_free(m);
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
    }
    drop_group_interactions(m);
    for (int k = 0; k < m->ninter; k++) {
        struct hmd_top_interaction *in = &m->inter[k];
        if (in->kind == HMD_TOP_PAIR) {
            in->p[2] =
                top->fudge_qq * m->nb.epsfac * m->charge[in->atom[0]] * m->charge[in->atom[1]];
        }
    }
    if ((rc = by_atom(m, false, &m->own_start, &m->own)) ||
        (rc = by_atom(m, true, &m->member_start, &m->member))) {
        hmd_ff_model_free(m);
        return rc;
    }
    static const int term_of_kind[HMD_TOP_NKINDS] = {
        HMD_FF_TERM_BOND,   HMD_FF_TERM_ANGLE,    HMD_FF_TERM_UB,
        HMD_FF_TERM_PROPER, HMD_FF_TERM_IMPROPER, HMD_FF_TERM_PERIODIC_IMPROPER,
        HMD_FF_TERM_LJ14,
    };
    bool present[HMD_FF_NTERMS] = {false};
    for (int k = 0; k < HMD_TOP_NKINDS; k++) {
        present[term_of_kind[k]] = top->count[k] > 0;
    }
    present[HMD_FF_TERM_COUL14] = present[HMD_FF_TERM_LJ14];
    present[HMD_FF_TERM_LJ_SR] = present[HMD_FF_TERM_COUL_SR] = true;
    for (int t = 0; t < HMD_FF_NTERMS; t++) {
        m->slot[t] = present[t] ? m->nterms : -1;
        if (present[t]) {
            m->names[m->nterms++] = hmd_ff_term_name(t);
        }
    }
    return HMD_OK;
}

bool hmd_ff_model_excluded(const struct hmd_ff_model *m, int a, int b)
{
    int lo = m->excl_start[a], hi = m->excl_start[a + 1];
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (m->excl[mid] < b) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo < m->excl_start[a + 1] && m->excl[lo] == b;
}

void hmd_ff_model_free(struct hmd_ff_model *m)
{
    free(m->charge);
    free(m->type);
    free(m->group);
    free(m->c6);
    free(m->c12);
    free(m->excl_start);
    free(m->excl);
    free(m->inter);
    free(m->own_start);
    free(m->own);
    free(m->member_start);
    free(m->member);
    memset(m, 0, sizeof *m);
}
