/* The classical force field on the CPU (ff/classical.h): the reference, in double, serial so
 * that every sum has one order. */
#include "ff/classical.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "ff/ff_plan.h"

struct classical {
    struct hmd_ff_model m;
    struct hmd_ff_plan plan;
    bool twin;     /* the GPU's algorithm (hmd_ff_classical_create_twin) */
    double *slots; /* twin: the bonded forces, [nterm][4][3] */
    size_t cap_slots;
};

int hmd_ff_settings_from_params(const struct hmd_params *p, struct hmd_ff_settings *s)
{
    static const int vdw[] = {
        [HMD_VDW_MOD_POTENTIAL_SHIFT] = HMD_FF_VDW_POTENTIAL_SHIFT,
        [HMD_VDW_MOD_NONE] = HMD_FF_VDW_NONE,
        [HMD_VDW_MOD_FORCE_SWITCH] = HMD_FF_VDW_FORCE_SWITCH,
        [HMD_VDW_MOD_POTENTIAL_SWITCH] = HMD_FF_VDW_POTENTIAL_SWITCH,
    };
    memset(s, 0, sizeof *s);
    s->coulomb = p->coulombtype == HMD_COULOMB_REACTION_FIELD ? HMD_FF_COULOMB_REACTION_FIELD
                                                              : HMD_FF_COULOMB_CUTOFF;
    s->coulomb_shift = p->coulomb_modifier == HMD_COULOMB_MOD_POTENTIAL_SHIFT;
    s->rcoulomb = p->rcoulomb;
    s->epsilon_r = p->epsilon_r;
    s->epsilon_rf = p->epsilon_rf;
    s->vdw_modifier = vdw[p->vdw_modifier];
    s->rvdw = p->rvdw;
    s->rvdw_switch = p->rvdw_switch;
    struct hmd_ff_nb nb;
    int rc = hmd_ff_nb_init(&nb, s);
    if (rc) {
        char a[4200], b[4200];
        hmd_params_origin_text(p, "rvdw-switch", a, sizeof a);
        hmd_params_origin_text(p, "rvdw", b, sizeof b);
        return hmd_error_prefix(rc, "run parameters (rvdw-switch from %s, rvdw from %s): ", a, b);
    }
    return HMD_OK;
}

static double cutoff(const void *self)
{
    return ((const struct classical *)self)->m.cutoff;
}

static int terms(const void *self, const char **names)
{
    const struct classical *c = self;
    memcpy(names, c->m.names, sizeof *names * (size_t)c->m.nterms);
    return c->m.nterms;
}

static int prepare(void *self, const struct hmd_force_io *io)
{
    struct classical *c = self;
    int rc = hmd_ff_plan_build(&c->plan, &c->m, c->twin, io->nlocal, io->nall, io->ncount, io->x,
                               io->id, io->box, io->nl);
    const size_t need = 12 * (size_t)c->plan.nterm + 1;
    if (!rc && c->twin && need > c->cap_slots) {
        double *s = realloc(c->slots, sizeof *s * need);
        if (!s) {
            return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
        }
        c->slots = s;
        c->cap_slots = need;
    }
    return rc;
}

/* w += fscal d (x) d, the virial of a pair (symmetric); atom virials half to each atom. */
static void pair_virial(double fscal, const double *d, double *w, double *av, int i, int j)
{
    double v[9];
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            v[3 * a + b] = fscal * d[a] * d[b];
        }
    }
    for (int k = 0; w && k < 9; k++) {
        w[k] += v[k];
    }
    for (int k = 0; av && k < 9; k++) {
        av[9 * i + k] += 0.5 * v[k];
        av[9 * j + k] += 0.5 * v[k];
    }
}

/* The nonbonded pairs of centre i from list[start..end): forces (unless `shadow`: per-atom
 * energies only), energies into e (when counted), virial. */
static void centre_pairs(const struct classical *c, const struct hmd_force_io *io, int i,
                         const int *list, int start, int end, bool shadow, double *e, double *w)
{
    const struct hmd_ff_model *m = &c->m;
    const struct hmd_ff_plan *plan = &c->plan;
    const double *xi = io->x + 3 * i;
    const double qi = plan->q[i];
    const size_t row = (size_t)plan->type[i] * (size_t)m->ntypes;
    const bool counted = i < io->ncount && !shadow;
    double fi[3] = {0, 0, 0}, ec = 0, elj = 0;
    for (int k = start; k < end; k++) {
        int excluded;
        const int j = hmd_ff_pair_decode(list[k], &excluded);
        double d[3];
        hmd_ff_sub3(xi, io->x + 3 * j, d);
        const double r2 = hmd_ff_dot3(d, d);
        if (r2 >= m->nb.rc2) {
            continue;
        }
        double vc = 0, vlj = 0, fscal;
        if (excluded) {
            fscal = hmd_ff_excluded(&m->nb, r2, qi * plan->q[j], &vc);
        } else {
            const size_t t = row + (size_t)plan->type[j];
            fscal = hmd_ff_pair(&m->nb, r2, qi * plan->q[j], m->c6[t], m->c12[t], &vc, &vlj);
        }
        if (io->atom_energy) {
            io->atom_energy[i] += 0.5 * (vc + vlj);
            if (!shadow && j < io->nlocal) {
                io->atom_energy[j] += 0.5 * (vc + vlj);
            }
        }
        if (shadow) {
            continue;
        }
        double *fj = io->f + 3 * j;
        for (int a = 0; a < 3; a++) {
            fi[a] += fscal * d[a];
            fj[a] -= fscal * d[a];
        }
        pair_virial(fscal, d, counted ? w : NULL, io->atom_virial, i, j);
        ec += vc;
        elj += vlj;
    }
    if (shadow) {
        return;
    }
    for (int a = 0; a < 3; a++) {
        io->f[3 * i + a] += fi[a];
    }
    const bool dp_atom = m->group && m->group[io->id[i]];
    const double self = dp_atom ? 0.0 : hmd_ff_self(&m->nb, qi);
    if (io->atom_energy) {
        io->atom_energy[i] += self;
    }
    if (counted) {
        e[HMD_FF_TERM_COUL_SR] += ec + self;
        e[HMD_FF_TERM_LJ_SR] += elj;
    }
}

/* Local interaction t: its atoms' positions into x, forces f, energies v, virial w. */
static int eval_local(const struct classical *c, const struct hmd_force_io *io,
                      const struct hmd_ff_local *t, const double **x, double (*f)[3], double *v,
                      double *w)
{
    const struct hmd_top_interaction *in = &c->m.inter[t->inter];
    for (int a = 0; a < hmd_top_kind_atoms(in->kind); a++) {
        x[a] = io->x + 3 * t->atom[a];
    }
    return hmd_ff_term(in->kind, in->p, x, f, v, w);
}

/* Energies and virial of an owned interaction into e and w when it counts here. */
static void count_term(const struct classical *c, const struct hmd_ff_local *t, const double *v,
                       const double *wt, double *e, double *w)
{
    if (!(t->flags & HMD_FF_COUNTED)) {
        return;
    }
    const int kind = c->m.inter[t->inter].kind;
    e[hmd_ff_term_of_kind(kind)] += v[0];
    e[HMD_FF_TERM_COUL14] += v[1];
    for (int q = 0; q < 9; q++) {
        w[q] += wt[q];
    }
}

/* The per-atom energy shares of the home atoms. */
static void shares(const struct classical *c, const struct hmd_force_io *io)
{
    for (int k = 0; io->atom_energy && k < c->plan.nshare; k++) {
        const struct hmd_ff_local *t = &c->plan.share[k];
        const double *x[4];
        double f[4][3] = {{0}}, v[2] = {0, 0}, w[9] = {0};
        const int n = eval_local(c, io, t, x, f, v, w);
        io->atom_energy[t->target] += (v[0] + v[1]) / n;
    }
}

static void bonded_terms(const struct classical *c, const struct hmd_force_io *io, double *e,
                         double *w)
{
    const struct hmd_ff_plan *plan = &c->plan;
    for (int k = 0; k < plan->nterm; k++) {
        const struct hmd_ff_local *t = &plan->term[k];
        const double *x[4];
        double f[4][3] = {{0}}, v[2] = {0, 0}, wt[9] = {0};
        const int n = eval_local(c, io, t, x, f, v, wt);
        for (int a = 0; a < n; a++) {
            for (int q = 0; q < 3; q++) {
                io->f[3 * t->atom[a] + q] += f[a][q];
            }
            for (int q = 0; io->atom_virial && q < 9; q++) {
                io->atom_virial[9 * t->atom[a] + q] += wt[q] / n;
            }
        }
        count_term(c, t, v, wt, e, w);
    }
    shares(c, io);
}

/* The GPU's algorithm (cuda/ff_classical.cu) on the host, from the full-mode plan: every pair
 * from both sides (half the energy and virial each, no pair forces on ghosts), the bonded
 * forces through their slots, summed atom by atom. */
static void compute_twin(struct classical *c, const struct hmd_force_io *io, double *e, double *w)
{
    const struct hmd_ff_plan *plan = &c->plan;
    const struct hmd_ff_model *m = &c->m;
    for (int i = 0; i < plan->nlocal; i++) {
        struct hmd_ff_centre_sum sum;
        hmd_ff_centre_pairs(&m->nb, io->x, plan->q, plan->type, m->ntypes, m->c6, m->c12,
                            plan->pair, plan->pair_start[i], plan->pair_start[i + 1], i, &sum);
        const bool dp_atom = m->group && m->group[io->id[i]];
        const double self = dp_atom ? 0.0 : hmd_ff_self(&m->nb, plan->q[i]);
        for (int q = 0; q < 3; q++) {
            io->f[3 * i + q] += sum.f[q];
        }
        if (io->atom_energy) {
            io->atom_energy[i] += 0.5 * (sum.vc + sum.vlj) + self;
        }
        if (i < plan->ncount) {
            e[HMD_FF_TERM_COUL_SR] += 0.5 * sum.vc + self;
            e[HMD_FF_TERM_LJ_SR] += 0.5 * sum.vlj;
            for (int q = 0; q < 9; q++) {
                w[q] += 0.5 * sum.w[hmd_ff_sym6(q)];
            }
        }
    }
    for (int k = 0; k < plan->nterm; k++) {
        const double *x[4];
        double v[2] = {0, 0}, wt[9] = {0};
        double(*f)[3] = (double(*)[3])(c->slots + 12 * (size_t)k);
        memset(f, 0, sizeof(double) * 12);
        eval_local(c, io, &plan->term[k], x, f, v, wt);
        count_term(c, &plan->term[k], v, wt, e, w);
    }
    for (int a = 0; a < plan->nall; a++) {
        for (int s = plan->slot_start[a]; s < plan->slot_start[a + 1]; s++) {
            for (int q = 0; q < 3; q++) {
                io->f[3 * a + q] += c->slots[3 * (size_t)plan->slot[s] + q];
            }
        }
    }
    shares(c, io);
}

static int compute(void *self, const struct hmd_force_io *io)
{
    struct classical *c = self;
    const struct hmd_ff_plan *plan = &c->plan;
    if (io->nlocal != plan->nlocal || io->nall != plan->nall || io->ncount != plan->ncount) {
        return hmd_error_set(HMD_ESOFTWARE,
                             "classical force field: compute on %d/%d atoms after "
                             "a prepare for %d/%d",
                             io->nlocal, io->nall, plan->nlocal, plan->nall);
    }
    if (c->twin && io->atom_virial) {
        return hmd_error_set(HMD_ENOTSUP, "the GPU's algorithm has no per-atom virials");
    }
    double e[HMD_FF_NTERMS] = {0}, w[9] = {0};
    if (c->twin) {
        compute_twin(c, io, e, w);
    } else {
        for (int i = 0; i < plan->nlocal; i++) {
            centre_pairs(c, io, i, plan->pair, plan->pair_start[i], plan->pair_start[i + 1], false,
                         e, w);
            if (io->atom_energy) {
                centre_pairs(c, io, i, plan->shadow, plan->shadow_start[i],
                             plan->shadow_start[i + 1], true, e, w);
            }
        }
        bonded_terms(c, io, e, w);
    }
    double total = 0;
    for (int t = 0; t < HMD_FF_NTERMS; t++) {
        total += e[t];
        if (io->terms && c->m.slot[t] >= 0) {
            io->terms[c->m.slot[t]] += e[t];
        }
    }
    io->ev[HMD_FORCE_EV_ENERGY] += total;
    for (int k = 0; k < 9; k++) {
        io->ev[HMD_FORCE_EV_VIRIAL + k] += w[k];
    }
    return HMD_OK;
}

static void destroy(void *self)
{
    struct classical *c = self;
    if (c) {
        hmd_ff_model_free(&c->m);
        hmd_ff_plan_free(&c->plan);
        free(c->slots);
        free(c);
    }
}

static const struct hmd_force_provider_ops classical_ops = {
    .name = "classical",
    .kind = HMD_FORCE_HOST,
    .cutoff = cutoff,
    .terms = terms,
    .prepare = prepare,
    .compute = compute,
    .device_bytes = NULL,
    .destroy = destroy,
};

static int create(struct hmd_force_provider *p, const struct hmd_topology *top,
                  const struct hmd_ff_settings *s, bool twin)
{
    p->ops = NULL;
    p->self = NULL;
    struct classical *c = calloc(1, sizeof *c);
    if (!c) {
        return hmd_error_set(HMD_ENOMEM, "out of memory for the classical force field");
    }
    int rc = hmd_ff_model_create(&c->m, top, s);
    if (rc) {
        free(c);
        return rc;
    }
    c->twin = twin;
    p->ops = &classical_ops;
    p->self = c;
    return HMD_OK;
}

int hmd_ff_classical_create(struct hmd_force_provider *p, const struct hmd_topology *top,
                            const struct hmd_ff_settings *s)
{
    return create(p, top, s, false);
}

int hmd_ff_classical_create_twin(struct hmd_force_provider *p, const struct hmd_topology *top,
                                 const struct hmd_ff_settings *s)
{
    return create(p, top, s, true);
}
