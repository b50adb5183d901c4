/* Physics checks of the Deep Potential CPU reference on fresh random configurations, in small
 * triclinic cells (several periodic images of the same atom are neighbours):
 *   - forces equal minus the (fourth-order) central finite differences of the energy;
 *   - the virial equals minus the finite strain derivative of the energy;
 *   - forces sum to zero; the energy is invariant under a rigid translation.
 * Models: DeePMD-kit's own two-side test model, our water models and DPA-1 models, networks and
 * tabulated (compressed) embeddings. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/atoms.h"
#include "core/box.h"
#include "core/error.h"
#include "io/model_dp.h"
#include "ff/dp.h"
#include "md/forces.h"
#include "nnp/compress.h"

static double urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0;
}

/* Water-like random configuration: O on a jittered grid, two H about 1 Å from each O. */
static void water_config(struct hmd_atoms *a, const struct hmd_box *box, int nside, unsigned seed)
{
    const int nmol = nside * nside * nside;
    assert_int_equal(hmd_atoms_reserve(a, 3 * nmol), HMD_OK);
    int n = 0;
    for (int m = 0; m < nmol; m++) {
        double s[3] = {(m % nside + 0.5 + 0.3 * (urand(&seed) - 0.5)) / nside,
                       ((m / nside) % nside + 0.5 + 0.3 * (urand(&seed) - 0.5)) / nside,
                       (m / (nside * nside) + 0.5 + 0.3 * (urand(&seed) - 0.5)) / nside};
        double o[3];
        hmd_box_to_cart(box, s, o);
        for (int k = 0; k < 3; k++) {
            a->x[3 * n + k] = o[k];
        }
        a->type[n++] = 0;
        for (int hyd = 0; hyd < 2; hyd++) {
            double u[3] = {urand(&seed) - 0.5, urand(&seed) - 0.5, urand(&seed) - 0.5};
            double norm = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
            for (int k = 0; k < 3; k++) {
                a->x[3 * n + k] = o[k] + 0.98 * u[k] / norm;
            }
            a->type[n++] = 1;
        }
    }
    for (int i = 0; i < n; i++) {
        a->id[i] = i;
        a->mass[i] = 1.0;
    }
    a->nlocal = n;
    a->nghost = 0;
}

/* Smallest |r - rcut| over all pairs and periodic images (images up to two cells away). */
static double gap_to_rcut(const struct hmd_atoms *a, const struct hmd_box *box, double rcut)
{
    double gap = INFINITY;
    for (int i = 0; i < a->nlocal; i++) {
        for (int j = 0; j < a->nlocal; j++) {
            for (int n = 0; n < 125; n++) {
                const int img[3] = {n % 5 - 2, (n / 5) % 5 - 2, n / 25 - 2};
                double d2 = 0;
                for (int k = 0; k < 3; k++) {
                    double d = a->x[3 * j + k] - a->x[3 * i + k];
                    for (int v = 0; v < 3; v++) {
                        d += img[v] * box->h[v][k];
                    }
                    d2 += d * d;
                }
                gap = fmin(gap, fabs(sqrt(d2) - rcut));
            }
        }
    }
    return gap;
}

struct setup {
    struct hmd_dp_model model;
    struct hmd_domain dd;
    struct hmd_forces fs;
};

/* The force calculation of s with the CPU Deep Potential, no skin, for n atoms. */
static void init_forces(struct setup *s, int64_t n)
{
    struct hmd_force_provider dp;
    assert_int_equal(hmd_forces_init(&s->fs, &s->dd, 0.0, n, 0), HMD_OK);
    assert_int_equal(hmd_ff_dp_create(&dp, &s->model), HMD_OK);
    assert_int_equal(hmd_forces_add_provider(&s->fs, dp), HMD_OK);
}

static double energy_of(struct setup *s, struct hmd_atoms *a, const struct hmd_box *box)
{
    /* one rank: the domain is the whole cell, whatever the cell */
    hmd_domain_free(&s->dd);
    assert_int_equal(hmd_domain_init(&s->dd, box, 1, 0, NULL, s->fs.rlist), HMD_OK);
    assert_int_equal(hmd_forces_rebuild(&s->fs, a, box), HMD_OK);
    assert_int_equal(hmd_forces_compute(&s->fs, a, box, false), HMD_OK);
    return s->fs.energy;
}

/* With `compress` not NULL the model's embedding nets are tabulated first: the tables are C2
 * piecewise quintics, so the same derivative checks hold for the compressed model. */
static void check_model(const char *file, const double h[3][3], int nside, unsigned seed,
                        const struct hmd_compress_opts *compress)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", HMD_TEST_DATA, file);
    struct setup s = {0};
    int rc = hmd_model_read_dp(path, &s.model);
    if (!rc && compress) {
        rc = hmd_model_compress(&s.model, compress);
    }
    if (rc) {
        fail_msg("%s", hmd_error_msg());
    }
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    struct hmd_atoms a = {0};
    /* DPA-1 in concat mode with set_davg_zero false is discontinuous at rcut, in DeePMD-kit
     * too (a neighbour leaving the cut-off becomes padding, whose type embedding is atom 0's):
     * there the configuration keeps every pair 0.013 Å from rcut, more than the strain
     * derivatives below move one. */
    const bool jumps = s.model.kind == HMD_DESCRIPTOR_DPA1 && !s.model.dpa1.strip;
    do {
        hmd_atoms_free(&a);
        water_config(&a, &box, nside, seed++);
    } while (jumps && gap_to_rcut(&a, &box, s.model.rcut) < 0.013);
    const int n = a.nlocal;
    init_forces(&s, n);
    double e0 = energy_of(&s, &a, &box);
    double *f = malloc(sizeof(double) * 3 * n), *x0 = malloc(sizeof(double) * 3 * n);
    memcpy(f, a.f, sizeof(double) * 3 * n);
    double w[9];
    memcpy(w, s.fs.virial, sizeof w);

    /* forces sum to zero */
    double fbig = 0;
    for (int k = 0; k < 3; k++) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            sum += f[3 * i + k];
            fbig = fmax(fbig, fabs(f[3 * i + k]));
        }
        assert_true(fabs(sum) < 1e-10 * n * fbig);
    }
    /* forces against fourth-order central differences (E is ~1e4 eV, so round-off of E over a
     * small step would dominate a two-point difference); positions are wrapped by the
     * rebuild, so each energy starts from the saved positions */
    const double dh = 1e-3;
    memcpy(x0, a.x, sizeof(double) * 3 * n);
    double worst = 0;
    for (int c = 0; c < 3 * n; c += 1 + (3 * n) / 60) {
        double e_at[4];
        const double step[4] = {2 * dh, dh, -dh, -2 * dh};
        for (int k = 0; k < 4; k++) {
            memcpy(a.x, x0, sizeof(double) * 3 * n);
            a.x[c] += step[k];
            e_at[k] = energy_of(&s, &a, &box);
        }
        double fd = -(-e_at[0] + 8 * e_at[1] - 8 * e_at[2] + e_at[3]) / (12 * dh);
        worst = fmax(worst, fabs(fd - f[c]));
    }
    if (worst > 1e-7 * fbig) {
        fail_msg("%s: force vs finite difference off by %g eV/Å (max force %g)", file, worst, fbig);
    }
    /* virial: W_ba = -dE/de_ab for x -> x (1 + e), cell likewise */
    double wmax = 0, wworst = 0;
    for (int k = 0; k < 9; k++) {
        wmax = fmax(wmax, fabs(w[k]));
    }
    for (int p = 0; p < 3; p++) {
        for (int q = 0; q < 3; q++) {
            double e_at[4];
            const double step[4] = {2 * dh, dh, -dh, -2 * dh};
            for (int k4 = 0; k4 < 4; k4++) {
                double eps = step[k4], hh[3][3];
                struct hmd_box sb;
                for (int r = 0; r < 3; r++) {
                    for (int k = 0; k < 3; k++) {
                        hh[r][k] = h[r][k] + (k == q ? eps * h[r][p] : 0.0);
                    }
                }
                assert_int_equal(hmd_box_init(&sb, hh, pbc), HMD_OK);
                for (int i = 0; i < n; i++) {
                    for (int k = 0; k < 3; k++) {
                        a.x[3 * i + k] = x0[3 * i + k] + (k == q ? eps * x0[3 * i + p] : 0.0);
                    }
                }
                e_at[k4] = energy_of(&s, &a, &sb);
            }
            double dedeps = (-e_at[0] + 8 * e_at[1] - 8 * e_at[2] + e_at[3]) / (12 * dh);
            wworst = fmax(wworst, fabs(-dedeps - w[3 * q + p]));
        }
    }
    if (wworst > 1e-7 * fmax(wmax, 1.0)) {
        fail_msg("%s: virial vs strain derivative off by %g eV (max %g)", file, wworst, wmax);
    }
    /* rigid translation leaves the energy unchanged */
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            a.x[3 * i + k] = x0[3 * i + k] + 0.37 * (k + 1);
        }
    }
    assert_true(fabs(energy_of(&s, &a, &box) - e0) < 1e-10 * fabs(e0));
    free(f);
    free(x0);
    hmd_atoms_free(&a);
    hmd_forces_free(&s.fs);
    hmd_domain_free(&s.dd);
    hmd_model_free(&s.model);
}

static void test_deeppot_two_side_triclinic(void **state)
{
    const double h[3][3] = {{8.5, 0, 0}, {2.0, 8.0, 0}, {-1.5, 1.0, 9.0}};
    check_model("deeppot.dp", h, 3, 11u, NULL);
}

static void test_water_one_side_triclinic(void **state)
{
    const double h[3][3] = {{9.0, 0, 0}, {-2.5, 9.5, 0}, {1.0, 2.0, 9.2}};
    check_model("se_e2_a_water_one_side.dp", h, 3, 12u, NULL);
}

/* Smooth DPA-1 models only (smooth_type_embedding false is not continuous at rcut). 8 molecules:
 * fewer neighbours than sel, so no neighbour is ever cut by the nearest-sel rule, which would
 * make the energy jump. */
static void test_dpa1_concat_triclinic(void **state)
{
    const double h[3][3] = {{8.0, 0, 0}, {1.5, 8.5, 0}, {-1.0, 0.5, 8.2}};
    check_model("dpa1_small_tebd2_excl.dp", h, 2, 13u, NULL);
}

static void test_se_atten_v2_triclinic(void **state)
{
    const double h[3][3] = {{8.0, 0, 0}, {1.5, 8.5, 0}, {-1.0, 0.5, 8.2}};
    check_model("se_atten_v2_small.dp", h, 2, 17u, NULL);
}

/* DeePMD-kit's default tables (stride 0.01, extrapolate 5); the configurations come closer
 * than the models' min_nbor_dist, so the second table part is exercised too. */
static const struct hmd_compress_opts default_tables = {
    .extrapolate = 5, .stride0 = 0.01, .stride1 = 0.1};

static void test_compressed_water_two_side_triclinic(void **state)
{
    const double h[3][3] = {{9.0, 0, 0}, {-2.5, 9.5, 0}, {1.0, 2.0, 9.2}};
    check_model("se_e2_a_water_two_side.dp", h, 3, 14u, &default_tables);
}

static void test_compressed_dpa1_strip_triclinic(void **state)
{
    const double h[3][3] = {{8.0, 0, 0}, {1.5, 8.5, 0}, {-1.0, 0.5, 8.2}};
    check_model("dpa1_small_strip_l0.dp", h, 2, 15u, &default_tables);
}

/* Energy and forces of `file` on a random water configuration, networks or tables. */
static double forces_of(const char *file, const struct hmd_compress_opts *compress,
                        const double h[3][3], unsigned seed, double *f, int *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/models/%s", HMD_TEST_DATA, file);
    struct setup s = {0};
    int rc = hmd_model_read_dp(path, &s.model);
    if (!rc && compress) {
        rc = hmd_model_compress(&s.model, compress);
    }
    if (rc) {
        fail_msg("%s", hmd_error_msg());
    }
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    struct hmd_atoms a = {0};
    water_config(&a, &box, 3, seed);
    *n = a.nlocal;
    init_forces(&s, a.nlocal);
    const double e = energy_of(&s, &a, &box);
    for (int i = 0; i < a.nlocal; i++) {
        for (int k = 0; k < 3; k++) {
            f[3 * a.id[i] + k] = a.f[3 * i + k];
        }
    }
    hmd_atoms_free(&a);
    hmd_forces_free(&s.fs);
    hmd_domain_free(&s.dd);
    hmd_model_free(&s.model);
    return e;
}

/* The tables stand in for the networks: with DeePMD-kit's default strides the energy and the
 * forces agree to the ~1e-7 relative accuracy DeePMD-kit documents for compression. */
static void test_compressed_close_to_network(void **state)
{
    const double h[3][3] = {{9.0, 0, 0}, {-2.5, 9.5, 0}, {1.0, 2.0, 9.2}};
    const char *files[] = {"se_e2_a_water_one_side.dp", "se_e2_a_water_two_side.dp",
                           "dpa1_small_strip_l0.dp"};
    for (int k = 0; k < 3; k++) {
        double f0[3 * 81], f1[3 * 81];
        int n0, n1;
        const double e0 = forces_of(files[k], NULL, h, 16u, f0, &n0);
        const double e1 = forces_of(files[k], &default_tables, h, 16u, f1, &n1);
        assert_int_equal(n0, n1);
        double fbig = 0, df = 0;
        for (int c = 0; c < 3 * n0; c++) {
            fbig = fmax(fbig, fabs(f0[c]));
            df = fmax(df, fabs(f1[c] - f0[c]));
        }
        if (fabs(e1 - e0) > 1e-7 * fabs(e0) || df > 1e-5 * fbig) {
            fail_msg("%s: tables vs networks: energy %.3g relative, forces %.3g relative", files[k],
                     fabs(e1 - e0) / fabs(e0), df / fbig);
        }
        print_message("%s: tables vs networks: energy %.2g, forces %.2g (relative)\n", files[k],
                      fabs(e1 - e0) / fabs(e0), df / fbig);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deeppot_two_side_triclinic),
        cmocka_unit_test(test_water_one_side_triclinic),
        cmocka_unit_test(test_dpa1_concat_triclinic),
        cmocka_unit_test(test_se_atten_v2_triclinic),
        cmocka_unit_test(test_compressed_water_two_side_triclinic),
        cmocka_unit_test(test_compressed_dpa1_strip_triclinic),
        cmocka_unit_test(test_compressed_close_to_network),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
