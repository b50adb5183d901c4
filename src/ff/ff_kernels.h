/* The classical force field's formulas, written once for the CPU reference (ff/classical.c) and
 * its CUDA twin (cuda/ff_classical.cu): GROMACS 2022's definitions (nbnxm kernels,
 * listed-forces bonded.cpp and pairs.cpp), in double, in halomd's units (Å, eV, e).
 *
 * Conventions: d = x_i - x_j; a pair function returns fscal with the force on i = fscal d (and
 * -fscal d on j); bonded functions write the force on each of their atoms into f[k][3].
 */
#ifndef HMD_FF_FF_KERNELS_H
#define HMD_FF_FF_KERNELS_H

#include <float.h>
#include <math.h>

#include "core/hd.h"

/* vdw-modifier */
enum {
    HMD_FF_VDW_NONE,
    HMD_FF_VDW_POTENTIAL_SHIFT,
    HMD_FF_VDW_FORCE_SWITCH,
    HMD_FF_VDW_POTENTIAL_SWITCH,
};

/* The nonbonded constants (hmd_ff_nb_init in ff/ff_model.c). */
struct hmd_ff_nb {
    double rc2;       /* the longer cut-off, squared (Å^2): pairs beyond do nothing */
    double rcoul2;    /* Coulomb cut-off squared (Å^2) */
    double epsfac;    /* 1/(4 pi eps0 epsilon-r) (eV Å / e^2) */
    double k_rf;      /* reaction-field coefficient (Å^-3); 0 for plain cut-off */
    double c_rf;      /* potential shift (Å^-1) */
    double rvdw2;     /* Lennard-Jones cut-off squared (Å^2) */
    int vdw_mod;      /* HMD_FF_VDW_* */
    double rsw;       /* where a switch starts (Å) */
    double sh6, sh12; /* potential-shift: added to r^-6 and r^-12 (-rvdw^-6, -rvdw^-12) */
    /* force-switch of the r^-p term, p = 6 [0] and 12 [1]: F/p = r^-(p+1) + c2 t^2 + c3 t^3
     * with t = r - rsw, V = r^-p - p c2/3 t^3 - p c3/4 t^4 + cpot */
    double fs_c2[2], fs_c3[2], fs_cpot[2];
    /* potential-switch: S = 1 + c3 t^3 + c4 t^4 + c5 t^5 */
    double ps_c3, ps_c4, ps_c5;
};

/* A nonbonded pair at squared distance r2 (Å^2, 0 < r2 < nb->rc2), charges' product qq (e^2),
 * Lennard-Jones c6 (eV Å^6) and c12 (eV Å^12): adds the Coulomb energy to *vc and the
 * Lennard-Jones energy to *vlj (eV); returns fscal (eV/Å^2). */
HMD_HD static inline double hmd_ff_pair(const struct hmd_ff_nb *nb, double r2, double qq, double c6,
                                        double c12, double *vc, double *vlj)
{
    const double rinv = 1.0 / sqrt(r2), rinv2 = rinv * rinv;
    double fscal = 0.0;
    if (r2 < nb->rcoul2 && qq != 0.0) {
        const double q = nb->epsfac * qq;
        *vc += q * (rinv + nb->k_rf * r2 - nb->c_rf);
        fscal += q * (rinv * rinv2 - 2.0 * nb->k_rf);
    }
    if (r2 < nb->rvdw2 && (c6 != 0.0 || c12 != 0.0)) {
        const double rinv6 = rinv2 * rinv2 * rinv2;
        double v6 = rinv6, v12 = rinv6 * rinv6;   /* the r^-6 and r^-12 terms */
        double fr6 = 6.0 * v6, fr12 = 12.0 * v12; /* their forces times r */
        double scale = 1.0, dscale_r = 0.0;
        const double r = r2 * rinv, t = r - nb->rsw;
        if (nb->vdw_mod == HMD_FF_VDW_POTENTIAL_SHIFT) {
            v6 += nb->sh6;
            v12 += nb->sh12;
        } else if (nb->vdw_mod == HMD_FF_VDW_FORCE_SWITCH) {
            if (t > 0.0) {
                const double t2 = t * t, t3 = t2 * t, t4 = t2 * t2;
                fr6 += 6.0 * r * (nb->fs_c2[0] * t2 + nb->fs_c3[0] * t3);
                fr12 += 12.0 * r * (nb->fs_c2[1] * t2 + nb->fs_c3[1] * t3);
                v6 -= 6.0 * (nb->fs_c2[0] / 3.0 * t3 + nb->fs_c3[0] / 4.0 * t4);
                v12 -= 12.0 * (nb->fs_c2[1] / 3.0 * t3 + nb->fs_c3[1] / 4.0 * t4);
            }
            v6 += nb->fs_cpot[0];
            v12 += nb->fs_cpot[1];
        } else if (nb->vdw_mod == HMD_FF_VDW_POTENTIAL_SWITCH && t > 0.0) {
            const double t2 = t * t, t3 = t2 * t;
            scale = 1.0 + t3 * (nb->ps_c3 + t * (nb->ps_c4 + t * nb->ps_c5));
            dscale_r = r * t2 * (3.0 * nb->ps_c3 + t * (4.0 * nb->ps_c4 + t * 5.0 * nb->ps_c5));
        }
        const double v = c12 * v12 - c6 * v6;
        *vlj += v * scale;
        fscal += ((c12 * fr12 - c6 * fr6) * scale - v * dscale_r) * rinv2;
    }
    return fscal;
}

/* An excluded pair (same molecule, nrexcl) at r2: the reaction-field correction
 * qq (k_rf r^2 - c_rf) within rcoulomb, added to *vc; returns fscal. */
HMD_HD static inline double hmd_ff_excluded(const struct hmd_ff_nb *nb, double r2, double qq,
                                            double *vc)
{
    if (r2 >= nb->rcoul2 || qq == 0.0) {
        return 0.0;
    }
    const double q = nb->epsfac * qq;
    *vc += q * (nb->k_rf * r2 - nb->c_rf);
    return -2.0 * q * nb->k_rf;
}

/* The self term of an atom of charge q (e): -q^2 c_rf / 2 (eV). */
HMD_HD static inline double hmd_ff_self(const struct hmd_ff_nb *nb, double q)
{
    return -0.5 * nb->epsfac * q * q * nb->c_rf;
}

HMD_HD static inline void hmd_ff_sub3(const double *a, const double *b, double *d)
{
    d[0] = a[0] - b[0];
    d[1] = a[1] - b[1];
    d[2] = a[2] - b[2];
}

HMD_HD static inline double hmd_ff_dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

HMD_HD static inline void hmd_ff_cross3(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* Harmonic spring between i and j: V = k/2 (|x_i - x_j| - r0)^2, forces into fi, fj. */
HMD_HD static inline double hmd_ff_spring(const double *xi, const double *xj, double r0, double k,
                                          double *fi, double *fj)
{
    double d[3];
    hmd_ff_sub3(xi, xj, d);
    const double r = sqrt(hmd_ff_dot3(d, d)), dr = r - r0;
    const double fscal = r > 0.0 ? -k * dr / r : 0.0;
    for (int c = 0; c < 3; c++) {
        fi[c] += fscal * d[c];
        fj[c] -= fscal * d[c];
    }
    return 0.5 * k * dr * dr;
}

/* Harmonic angle i-j-k (j the vertex): V = k/2 (theta - theta0)^2, theta = acos of the cosine
 * (GROMACS's bond_angle); forces added to f[0..2]. */
HMD_HD static inline double hmd_ff_angle(const double *xi, const double *xj, const double *xk,
                                         double theta0, double k, double (*f)[3])
{
    double rij[3], rkj[3];
    hmd_ff_sub3(xi, xj, rij);
    hmd_ff_sub3(xk, xj, rkj);
    const double nij2 = hmd_ff_dot3(rij, rij), nkj2 = hmd_ff_dot3(rkj, rkj);
    const double ipab = nij2 * nkj2;
    double c = ipab > 0.0 ? hmd_ff_dot3(rij, rkj) / sqrt(ipab) : 1.0;
    c = c > 1.0 ? 1.0 : (c < -1.0 ? -1.0 : c);
    const double dtheta = acos(c) - theta0;
    const double c2 = c * c;
    if (c2 < 1.0) {
        const double st = -k * dtheta / sqrt(1.0 - c2); /* -dV/dtheta / sin(theta) */
        const double sth = st * c;
        const double cik = st / sqrt(ipab), cii = sth / nij2, ckk = sth / nkj2;
        for (int m = 0; m < 3; m++) {
            const double fi = -(cik * rkj[m] - cii * rij[m]);
            const double fk = -(cik * rij[m] - ckk * rkj[m]);
            f[0][m] += fi;
            f[1][m] -= fi + fk;
            f[2][m] += fk;
        }
    }
    return 0.5 * k * dtheta * dtheta;
}

/* The dihedral angle i-j-k-l (radians, in (-pi, pi], IUPAC sign as GROMACS's dih_angle) and the
 * vectors the forces need. */
struct hmd_ff_dih {
    double rij[3], rkj[3], rkl[3], m[3], n[3];
};

HMD_HD static inline double hmd_ff_dihedral_angle(const double *xi, const double *xj,
                                                  const double *xk, const double *xl,
                                                  struct hmd_ff_dih *g)
{
    hmd_ff_sub3(xi, xj, g->rij);
    hmd_ff_sub3(xk, xj, g->rkj);
    hmd_ff_sub3(xk, xl, g->rkl);
    hmd_ff_cross3(g->rij, g->rkj, g->m);
    hmd_ff_cross3(g->rkj, g->rkl, g->n);
    double w[3];
    hmd_ff_cross3(g->m, g->n, w);
    const double phi = atan2(sqrt(hmd_ff_dot3(w, w)), hmd_ff_dot3(g->m, g->n));
    return hmd_ff_dot3(g->rij, g->n) < 0.0 ? -phi : phi;
}

/* Forces of a dihedral potential with dV/dphi = ddphi on its four atoms (GROMACS's do_dih_fup;
 * none when i-j-k or j-k-l is collinear). */
HMD_HD static inline void hmd_ff_dihedral_forces(const struct hmd_ff_dih *g, double ddphi,
                                                 double (*f)[3])
{
    const double iprm = hmd_ff_dot3(g->m, g->m), iprn = hmd_ff_dot3(g->n, g->n);
    const double nrkj2 = hmd_ff_dot3(g->rkj, g->rkj), toler = nrkj2 * DBL_EPSILON;
    if (!(iprm > toler && iprn > toler)) {
        return;
    }
    const double nrkj = sqrt(nrkj2);
    const double a = -ddphi * nrkj / iprm, b = ddphi * nrkj / iprn;
    const double p = hmd_ff_dot3(g->rij, g->rkj) / nrkj2, q = hmd_ff_dot3(g->rkl, g->rkj) / nrkj2;
    for (int c = 0; c < 3; c++) {
        const double fi = a * g->m[c], fl = b * g->n[c];
        const double s = p * fi - q * fl;
        f[0][c] += fi;
        f[1][c] -= fi - s;
        f[2][c] -= fl + s;
        f[3][c] += fl;
    }
}

/* Interaction kinds (io/topology.h's enum hmd_top_kind). */
enum {
    HMD_FF_KIND_BOND,
    HMD_FF_KIND_ANGLE,
    HMD_FF_KIND_UREY_BRADLEY,
    HMD_FF_KIND_PROPER,
    HMD_FF_KIND_IMPROPER,
    HMD_FF_KIND_PERIODIC_IMPROPER,
    HMD_FF_KIND_PAIR,
};

/* One bonded interaction of `kind` with parameters p (io/topology.h; a pair's p[2] is its
 * Coulomb prefactor fudgeQQ q_i q_j / (4 pi eps0 epsilon-r), eV Å) on the atoms at x[0..n):
 * forces added to f[0..n), energies to v[0] (v[1]: a pair's Coulomb). */
HMD_HD static inline void hmd_ff_bonded(int kind, const double *p, const double *const *x,
                                        double (*f)[3], double *v)
{
    switch (kind) {
    case HMD_FF_KIND_BOND:
        v[0] += hmd_ff_spring(x[0], x[1], p[0], p[1], f[0], f[1]);
        return;
    case HMD_FF_KIND_ANGLE:
        v[0] += hmd_ff_angle(x[0], x[1], x[2], p[0], p[1], f);
        return;
    case HMD_FF_KIND_UREY_BRADLEY:
        v[0] += hmd_ff_angle(x[0], x[1], x[2], p[0], p[1], f);
        v[0] += hmd_ff_spring(x[0], x[2], p[2], p[3], f[0], f[2]);
        return;
    case HMD_FF_KIND_PROPER:
    case HMD_FF_KIND_PERIODIC_IMPROPER: {
        struct hmd_ff_dih g;
        const double phi = hmd_ff_dihedral_angle(x[0], x[1], x[2], x[3], &g);
        const double arg = p[2] * phi - p[0];
        v[0] += p[1] * (1.0 + cos(arg));
        hmd_ff_dihedral_forces(&g, -p[1] * p[2] * sin(arg), f);
        return;
    }
    case HMD_FF_KIND_IMPROPER: {
        struct hmd_ff_dih g;
        const double pi = 3.14159265358979323846;
        double dp = hmd_ff_dihedral_angle(x[0], x[1], x[2], x[3], &g) - p[0];
        dp = dp >= pi ? dp - 2.0 * pi : (dp < -pi ? dp + 2.0 * pi : dp);
        v[0] += 0.5 * p[1] * dp * dp;
        hmd_ff_dihedral_forces(&g, p[1] * dp, f);
        return;
    }
    case HMD_FF_KIND_PAIR: {
        double d[3];
        hmd_ff_sub3(x[0], x[1], d);
        const double rinv2 = 1.0 / hmd_ff_dot3(d, d), rinv = sqrt(rinv2);
        const double rinv6 = rinv2 * rinv2 * rinv2;
        v[0] += p[1] * rinv6 * rinv6 - p[0] * rinv6;
        v[1] += p[2] * rinv;
        const double fscal =
            (12.0 * p[1] * rinv6 * rinv6 - 6.0 * p[0] * rinv6 + p[2] * rinv) * rinv2;
        for (int c = 0; c < 3; c++) {
            f[0][c] += fscal * d[c];
            f[1][c] -= fscal * d[c];
        }
        return;
    }
    }
}

/* The providers' energy terms (names: ff/ff_model.h). */
enum hmd_ff_term {
    HMD_FF_TERM_BOND,
    HMD_FF_TERM_ANGLE,
    HMD_FF_TERM_UB,
    HMD_FF_TERM_PROPER,
    HMD_FF_TERM_IMPROPER,
    HMD_FF_TERM_PERIODIC_IMPROPER,
    HMD_FF_TERM_LJ14,
    HMD_FF_TERM_COUL14,
    HMD_FF_TERM_LJ_SR,
    HMD_FF_TERM_COUL_SR,
    HMD_FF_NTERMS
};

/* The term an interaction of `kind` reports to (a pair: LJ-14; its Coulomb goes to Coulomb-14). */
HMD_HD static inline int hmd_ff_term_of_kind(int kind)
{
    return kind == HMD_FF_KIND_PAIR ? HMD_FF_TERM_LJ14 : kind; /* bond .. periodic improper */
}

/* Atoms an interaction of `kind` joins. */
HMD_HD static inline int hmd_ff_kind_atoms(int kind)
{
    return kind == HMD_FF_KIND_BOND || kind == HMD_FF_KIND_PAIR ? 2
           : kind <= HMD_FF_KIND_UREY_BRADLEY                   ? 3
                                                                : 4;
}

/* hmd_ff_bonded, and the interaction's virial w[9] += sum_a f_a (x) (x_a - x_0) (row-major,
 * W_qr = sum f_q x_r); returns its atom count. f, v, w are added to. */
HMD_HD static inline int hmd_ff_term(int kind, const double *p, const double *const *x,
                                     double (*f)[3], double *v, double *w)
{
    const int n = hmd_ff_kind_atoms(kind);
    double g[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    hmd_ff_bonded(kind, p, x, g, v);
    for (int a = 0; a < n; a++) {
        for (int q = 0; q < 3; q++) {
            f[a][q] += g[a][q];
            for (int r = 0; r < 3; r++) {
                w[3 * q + r] += g[a][q] * (x[a][r] - x[0][r]);
            }
        }
    }
    return n;
}

/* Pair lists (ff/ff_plan.h) encode an excluded partner j as -(j + 1). */
HMD_HD static inline int hmd_ff_pair_decode(int e, int *excluded)
{
    *excluded = e < 0;
    return e < 0 ? -e - 1 : e;
}

/* What centre i's pairs give in the full mode (every pair from both sides): the whole force on
 * i, the whole energies and virial (xx yy zz xy xz yz) of its pairs, of which it counts half. */
struct hmd_ff_centre_sum {
    double f[3], vc, vlj, w[6];
};

/* Adds what list entry `code` (a partner j, hmd_ff_pair_decode) gives centre i at xi with
 * charge qi and type row `row` (its type times ntypes) to s: the force on i, the pair's whole
 * energies and virial. Atoms at x [][3] with charges q and Lennard-Jones types `type` (c6, c12
 * by type pair, ntypes a side). */
HMD_HD static inline void hmd_ff_centre_entry(const struct hmd_ff_nb *nb, const double *x,
                                              const double *q, const int *type, const double *c6,
                                              const double *c12, int code, const double *xi,
                                              double qi, int row, struct hmd_ff_centre_sum *s)
{
    int excluded;
    const int j = hmd_ff_pair_decode(code, &excluded);
    double d[3];
    hmd_ff_sub3(xi, x + 3 * j, d);
    const double r2 = hmd_ff_dot3(d, d);
    if (r2 >= nb->rc2) {
        return;
    }
    const int t = row + type[j];
    const double fscal = excluded ? hmd_ff_excluded(nb, r2, qi * q[j], &s->vc)
                                  : hmd_ff_pair(nb, r2, qi * q[j], c6[t], c12[t], &s->vc, &s->vlj);
    for (int c = 0; c < 3; c++) {
        s->f[c] += fscal * d[c];
    }
    s->w[0] += fscal * d[0] * d[0];
    s->w[1] += fscal * d[1] * d[1];
    s->w[2] += fscal * d[2] * d[2];
    s->w[3] += fscal * d[0] * d[1];
    s->w[4] += fscal * d[0] * d[2];
    s->w[5] += fscal * d[1] * d[2];
}

HMD_HD static inline void hmd_ff_centre_zero(struct hmd_ff_centre_sum *s)
{
    s->f[0] = s->f[1] = s->f[2] = 0.0;
    s->vc = s->vlj = 0.0;
    for (int c = 0; c < 6; c++) {
        s->w[c] = 0.0;
    }
}

/* Centre i's partners pair[start..end) (hmd_ff_centre_entry's arguments), summed in list order
 * into *s (set, not added to). */
HMD_HD static inline void hmd_ff_centre_pairs(const struct hmd_ff_nb *nb, const double *x,
                                              const double *q, const int *type, int ntypes,
                                              const double *c6, const double *c12, const int *pair,
                                              int start, int end, int i,
                                              struct hmd_ff_centre_sum *s)
{
    hmd_ff_centre_zero(s);
    const int row = type[i] * ntypes;
    for (int e = start; e < end; e++) {
        hmd_ff_centre_entry(nb, x, q, type, c6, c12, pair[e], x + 3 * i, q[i], row, s);
    }
}

/* The 3 x 3 index of the symmetric virial's six components (xx yy zz xy xz yz). */
HMD_HD static inline int hmd_ff_sym6(int q)
{
    const int sym[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
    return sym[q];
}

#endif /* HMD_FF_FF_KERNELS_H */
