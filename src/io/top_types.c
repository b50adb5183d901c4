/* Parameter tables of GROMACS topologies (io/top_types.h). */
#include "io/top_types.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/text.h"

/* Grows *arr (elements of `size` bytes, *n used, *cap room) to hold one more. */
static int grow(void **arr, int n, int *cap, size_t size)
{
    if (n < *cap) {
        return HMD_OK;
    }
    int c = *cap ? 2 * *cap : 64;
    void *a = realloc(*arr, size * (size_t)c);
    if (!a) {
        return hmd_error_set(HMD_ENOMEM, "out of memory reading a topology");
    }
    *arr = a;
    *cap = c;
    return HMD_OK;
}

int hmd_top_types_atomtype(const struct hmd_top_types *t, const char *name)
{
    for (int i = 0; i < t->nat; i++) {
        if (!strcmp(t->at[i].name, name)) {
            return i;
        }
    }
    return -1;
}

int hmd_top_types_btype(const struct hmd_top_types *t, const char *name)
{
    for (int i = 0; i < t->nbt; i++) {
        if (!strcmp(t->btname[i], name)) {
            return i;
        }
    }
    return -1;
}

static bool is_ptype(const char *s)
{
    return strlen(s) == 1 && isalpha((unsigned char)s[0]);
}

static bool number(const char *s, double *x)
{
    return hmd_text_parse_double(s, strlen(s), x);
}

int hmd_top_types_add_atomtype(struct hmd_top_types *t, char **tok, int n,
                               struct hmd_top_source src)
{
    if (n < 6) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: an atom type needs name, mass, charge, particle type and "
                             "two Lennard-Jones parameters (%d fields)",
                             src.file, src.line, n);
    }
    /* grompp's way of telling the optional columns (bonded type, atomic number) apart: where
     * the one-letter particle type stands */
    int first; /* column of the mass */
    const char *btype = tok[0];
    if (is_ptype(tok[5])) {
        btype = tok[1];
        first = 3;
    } else if (is_ptype(tok[3])) {
        first = 1;
    } else {
        first = 2;
        if (isalpha((unsigned char)tok[1][0])) {
            btype = tok[1];
        }
    }
    double mass, q, v, w;
    if (n < first + 5 || !is_ptype(tok[first + 2])) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: cannot read the atom type %s: expected name [bond_type] "
                             "[atomic number] mass charge ptype V W",
                             src.file, src.line, tok[0]);
    }
    if (!number(tok[first], &mass) || !number(tok[first + 1], &q) || !number(tok[first + 3], &v) ||
        !number(tok[first + 4], &w)) {
        return hmd_error_set(HMD_EDATA, "%s:%d: the atom type %s has a field that is not a number",
                             src.file, src.line, tok[0]);
    }
    if (strlen(tok[0]) >= HMD_TOP_NAME || strlen(btype) >= HMD_TOP_NAME) {
        return hmd_error_set(HMD_EDATA, "%s:%d: atom type name %s is longer than %d characters",
                             src.file, src.line, tok[0], HMD_TOP_NAME - 1);
    }
    if (w < 0 || (t->comb_rule == 1 && v < 0)) {
        return hmd_error_set(HMD_EDATA,
                             "%s:%d: the atom type %s has a negative %s; the combination rule "
                             "takes its square root",
                             src.file, src.line, tok[0],
                             t->comb_rule == 1 ? "c6 or c12" : "epsilon");
    }
    int b = hmd_top_types_btype(t, btype);
    if (b < 0) {
        int rc = grow((void **)&t->btname, t->nbt, &t->capbt, sizeof *t->btname);
        if (rc) {
            return rc;
        }
        b = t->nbt++;
        snprintf(t->btname[b], HMD_TOP_NAME, "%s", btype);
    }
    int k = hmd_top_types_atomtype(t, tok[0]);
    if (k < 0) {
        int rc = grow((void **)&t->at, t->nat, &t->capat, sizeof *t->at);
        if (rc) {
            return rc;
        }
        k = t->nat++;
    }
    struct hmd_top_atomtype *a = &t->at[k];
    snprintf(a->name, sizeof a->name, "%s", tok[0]);
    a->btype = b;
    a->mass = mass;
    a->charge = q;
    a->ptype = (char)toupper((unsigned char)tok[first + 2][0]);
    a->v = v;
    a->w = w;
    a->src = src;
    return HMD_OK;
}

static bool same_types(const int *a, const int *b, int n, bool reversed)
{
    for (int k = 0; k < n; k++) {
        if (a[k] != b[reversed ? n - 1 - k : k]) {
            return false;
        }
    }
    return true;
}

static int table_atoms(int table)
{
    return table == HMD_TOP_TAB_BOND ? 2 : table <= HMD_TOP_TAB_UB ? 3 : 4;
}

int hmd_top_types_add_bonded(struct hmd_top_types *t, int table, bool repeat, const int type[4],
                             int ntype, const double *p, int np, struct hmd_top_source src)
{
    struct hmd_top_btype_entry *e = t->tab[table];
    int n = t->ntab[table];
    /* grompp's push_bondtype: a line repeating the types of the line just before continues a
     * type-9 block; identical parameters are not added twice; other repeats replace */
    const bool continuation = repeat && n > 0 && same_types(e[n - 1].type, type, ntype, false);
    bool add = true;
    for (int i = 0; i < n; i++) {
        if (!same_types(e[i].type, type, ntype, false) &&
            !same_types(e[i].type, type, ntype, true)) {
            continue;
        }
        bool identical = e[i].np == np && !memcmp(e[i].p, p, sizeof *p * (size_t)np);
        if (!repeat || identical) {
            add = false;
        }
        if (identical) {
            continue;
        }
        if (repeat && !continuation) {
            return hmd_error_set(HMD_EDATA,
                                 "%s:%d: a second block of [ dihedraltypes ] 9 for the same "
                                 "atom types as %s:%d, with other parameters (grompp refuses "
                                 "this too: the lines of one entry must follow each other)",
                                 src.file, src.line, e[i].src.file, e[i].src.line);
        }
        if (!repeat) {
            memcpy(e[i].p, p, sizeof *p * (size_t)np);
            e[i].np = np;
            e[i].src = src;
        }
    }
    if (!add) {
        return HMD_OK;
    }
    int rc = grow((void **)&t->tab[table], n, &t->captab[table], sizeof *e);
    if (rc) {
        return rc;
    }
    e = &t->tab[table][t->ntab[table]++];
    memset(e, 0, sizeof *e);
    memcpy(e->type, type, sizeof *type * (size_t)ntype);
    memcpy(e->p, p, sizeof *p * (size_t)np);
    e->np = np;
    e->src = src;
    return HMD_OK;
}

int hmd_top_types_add_pair(struct hmd_top_types *t, bool pairs, int i, int j, double v, double w)
{
    if (i > j) {
        int k = i;
        i = j;
        j = k;
    }
    struct hmd_top_pairtype **list = pairs ? &t->pt : &t->nb;
    int *n = pairs ? &t->npt : &t->nnb, *cap = pairs ? &t->cappt : &t->capnb;
    for (int k = 0; k < *n; k++) {
        if ((*list)[k].i == i && (*list)[k].j == j) {
            (*list)[k].v = v;
            (*list)[k].w = w;
            return HMD_OK;
        }
    }
    int rc = grow((void **)list, *n, cap, sizeof **list);
    if (rc) {
        return rc;
    }
    (*list)[(*n)++] = (struct hmd_top_pairtype){i, j, v, w};
    return HMD_OK;
}

/* Non-wildcard atoms of entry e matched by `type` in one direction, -1 when it does not
 * match (grompp's natom_match). */
static int dihedral_matches(const struct hmd_top_btype_entry *e, const int *type, bool reversed)
{
    int n = 0;
    for (int k = 0; k < 4; k++) {
        int want = e->type[reversed ? 3 - k : k];
        if (want >= 0) {
            if (want != type[k]) {
                return -1;
            }
            n++;
        }
    }
    return n;
}

const struct hmd_top_btype_entry *hmd_top_types_lookup(const struct hmd_top_types *t, int table,
                                                       const int *type, int ntype, int *nterms)
{
    const struct hmd_top_btype_entry *e = t->tab[table];
    const int n = t->ntab[table];
    int best = -1, best_matches = -1;
    if (table_atoms(table) == 4) {
        /* the first line, forwards before backwards, with the most non-wildcard matches */
        for (int i = 0; i < n && best_matches < 4; i++) {
            for (int rev = 0; rev < 2; rev++) {
                int m = dihedral_matches(&e[i], type, rev);
                if (m > best_matches) {
                    best_matches = m;
                    best = i;
                }
            }
        }
    } else {
        for (int i = 0; i < n && best < 0; i++) {
            if (same_types(e[i].type, type, ntype, false) ||
                same_types(e[i].type, type, ntype, true)) {
                best = i;
            }
        }
    }
    if (best < 0) {
        *nterms = 0;
        return NULL;
    }
    int k = best + 1;
    while (k < n && same_types(e[k].type, e[best].type, 4, false)) {
        k++;
    }
    *nterms = table == HMD_TOP_TAB_PROPER ? k - best : 1;
    return &e[best];
}

static const struct hmd_top_pairtype *find_pair(const struct hmd_top_pairtype *list, int n, int i,
                                                int j)
{
    if (i > j) {
        int k = i;
        i = j;
        j = k;
    }
    for (int k = 0; k < n; k++) {
        if (list[k].i == i && list[k].j == j) {
            return &list[k];
        }
    }
    return NULL;
}

void hmd_top_types_lj_params(int comb_rule, double v, double w, double *c6, double *c12)
{
    if (comb_rule == 1) {
        *c6 = v;
        *c12 = w;
        return;
    }
    const double v2 = v * v, v6 = v2 * v2 * v2;
    *c6 = v >= 0 ? 4 * w * v6 : 0.0;
    *c12 = 4 * w * v6 * v6;
}

/* The nonbonded parameters of types i and j in the combination rule's form (v, w). */
static void combined(const struct hmd_top_types *t, int i, int j, double *v, double *w)
{
    const struct hmd_top_pairtype *nb = find_pair(t->nb, t->nnb, i, j);
    if (nb) {
        *v = nb->v;
        *w = nb->w;
        return;
    }
    const struct hmd_top_atomtype *a = &t->at[i], *b = &t->at[j];
    *w = sqrt(a->w * b->w);
    if (t->comb_rule == 1) {
        *v = sqrt(a->v * b->v);
        return;
    }
    /* a negative sigma (c6 = 0) stays negative through the rule, as in grompp */
    *v = t->comb_rule == 2 ? (fabs(a->v) + fabs(b->v)) * 0.5 : sqrt(fabs(a->v * b->v));
    if (a->v < 0 || b->v < 0) {
        *v = -*v;
    }
}

void hmd_top_types_lj(const struct hmd_top_types *t, int i, int j, double *c6, double *c12)
{
    double v, w;
    combined(t, i, j, &v, &w);
    hmd_top_types_lj_params(t->comb_rule, v, w, c6, c12);
}

bool hmd_top_types_pair(const struct hmd_top_types *t, int i, int j, double *c6, double *c12)
{
    const struct hmd_top_pairtype *pt = find_pair(t->pt, t->npt, i, j);
    double v, w;
    if (pt) {
        v = pt->v;
        w = pt->w;
    } else if (t->gen_pairs) {
        combined(t, i, j, &v, &w);
        w *= t->fudge_lj; /* epsilon, or c12 */
        if (t->comb_rule == 1) {
            v *= t->fudge_lj; /* c6 */
        }
    } else {
        return false;
    }
    hmd_top_types_lj_params(t->comb_rule, v, w, c6, c12);
    return true;
}

void hmd_top_types_free(struct hmd_top_types *t)
{
    free(t->at);
    free(t->btname);
    for (int k = 0; k < HMD_TOP_NTABLES; k++) {
        free(t->tab[k]);
    }
    free(t->pt);
    free(t->nb);
    memset(t, 0, sizeof *t);
}
