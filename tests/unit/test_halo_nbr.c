/* Unit tests of the one-rank halo (dd/borders, the host transport of halo/transport.h, the
 * flattened plan the GPU's self transport replays) and the neighbour list (nbr/nbr_list)
 * against brute force over periodic images, for orthorhombic and triclinic cells, with cells
 * thinner than the cut-off (several pulses), on fresh random configurations. */
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
#include "dd/borders.h"
#include "dd/domain.h"
#include "halo/transport.h"
#include "nbr/nbr_list.h"

static double urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (*s >> 8) / 16777216.0;
}

static void random_atoms(struct hmd_atoms *a, const struct hmd_box *box, int n, unsigned seed)
{
    assert_int_equal(hmd_atoms_reserve(a, n), HMD_OK);
    for (int i = 0; i < n; i++) {
        double s[3] = {urand(&seed), urand(&seed), urand(&seed)};
        hmd_box_to_cart(box, s, a->x + 3 * i);
        a->type[i] = i % 2;
        a->id[i] = i;
    }
    a->nlocal = n;
    a->nghost = 0;
}

/* Counts, by brute force over lattice images, the neighbours of home atom i within rc. */
static int brute_count(const struct hmd_atoms *a, const struct hmd_box *box, int i, double rc)
{
    int count = 0, nimg = 6;
    for (int j = 0; j < a->nlocal; j++) {
        for (int p = -nimg; p <= nimg; p++) {
            for (int q = -nimg; q <= nimg; q++) {
                for (int r = -nimg; r <= nimg; r++) {
                    int n[3] = {p, q, r};
                    bool skip = (j == i && p == 0 && q == 0 && r == 0);
                    for (int d = 0; d < 3; d++) {
                        skip = skip || (!box->periodic[d] && n[d] != 0);
                    }
                    if (skip) {
                        continue;
                    }
                    double d2 = 0;
                    for (int k = 0; k < 3; k++) {
                        double x = a->x[3 * j + k] + p * box->h[0][k] + q * box->h[1][k] +
                                   r * box->h[2][k] - a->x[3 * i + k];
                        d2 += x * x;
                    }
                    count += d2 <= rc * rc;
                }
            }
        }
    }
    return count;
}

/* The GPU self transport's kernels replayed on the host from hmd_halo_plan_flatten_self must
 * equal the host transport bit for bit (x0 [nall][3]: home positions to start from). */
static void check_flattened(const struct hmd_halo_plan *plan, struct hmd_halo_transport *host,
                            const struct hmd_box *box, const double *x0, int nall, unsigned seed)
{
    const int nlocal = plan->nlocal, ng = nall - nlocal;
    const int total = hmd_halo_plan_chain_total(plan);
    assert_true(total >= ng);
    int *root = malloc(sizeof(int) * (ng + 1)), *chain_off = malloc(sizeof(int) * (ng + 1));
    int *chain = malloc(sizeof(int) * (total + 1)), *child_off = malloc(sizeof(int) * (nall + 1));
    int *child = malloc(sizeof(int) * (ng + 1));
    assert_int_equal(
        hmd_halo_plan_flatten_self(plan, 0, nall, root, chain_off, chain, child_off, child),
        HMD_OK);
    double *xa = malloc(sizeof(double) * 3 * nall), *xb = malloc(sizeof(double) * 3 * nall);
    memcpy(xa, x0, sizeof(double) * 3 * nall);
    for (int k = 0; k < 3 * nlocal; k++) {
        xa[k] += 0.37 * (urand(&seed) - 0.5); /* digits that rounding can tell apart */
    }
    memcpy(xb, xa, sizeof(double) * 3 * nall);
    hmd_halo_transport_forward(host, xa, box, NULL);
    double shift[HMD_HALO_MAX_SWAPS][3];
    for (int s = 0; s < plan->nswap; s++) {
        hmd_halo_swap_shift(&plan->swap[s], box, shift[s]);
    }
    for (int g = 0; g < ng; g++) { /* forward_kernel */
        double v[3] = {xb[3 * root[g]], xb[3 * root[g] + 1], xb[3 * root[g] + 2]};
        for (int c = chain_off[g]; c < chain_off[g + 1]; c++) {
            for (int d = 0; d < 3; d++) {
                v[d] += shift[chain[c]][d];
            }
        }
        memcpy(xb + 3 * (nlocal + g), v, sizeof v);
    }
    assert_memory_equal(xa, xb, sizeof(double) * 3 * nall);
    /* reverse_kernel: a depth-first fold of each home atom's images */
    for (int k = 0; k < 3 * nall; k++) {
        xa[k] = xb[k] = urand(&seed) - 0.5;
    }
    hmd_halo_transport_reverse(host, xa, 3, NULL);
    for (int i = 0; i < nlocal; i++) {
        int node[HMD_HALO_MAX_SWAPS + 1], next[HMD_HALO_MAX_SWAPS + 1], top = 0;
        double acc[HMD_HALO_MAX_SWAPS + 1][3];
        node[0] = i;
        next[0] = child_off[i];
        memcpy(acc[0], xb + 3 * i, sizeof acc[0]);
        for (;;) {
            if (next[top] < child_off[node[top] + 1]) {
                const int c = child[next[top]++];
                top++;
                assert_true(top <= HMD_HALO_MAX_SWAPS);
                node[top] = c;
                next[top] = child_off[c];
                memcpy(acc[top], xb + 3 * c, sizeof acc[top]);
            } else if (top > 0) {
                for (int d = 0; d < 3; d++) {
                    acc[top - 1][d] += acc[top][d];
                }
                top--;
            } else {
                break;
            }
        }
        assert_memory_equal(acc[0], xa + 3 * i, sizeof acc[0]);
    }
    free(root);
    free(chain_off);
    free(chain);
    free(child_off);
    free(child);
    free(xa);
    free(xb);
}

/* hmd_atoms_copy_images (the borders' images of this rank's own atoms) writes what a record
 * packed with the shift and unpacked writes, bit for bit, for every border field; records of
 * a list packed and unpacked at once equal those of one atom at a time. */
static void test_images_equal_records(void **state)
{
    (void)state;
    const int n = 300, m = 200;
    struct hmd_atoms a = {0}, b = {0};
    assert_int_equal(hmd_atoms_add_field(&a, HMD_FIELD_CHARGE), HMD_OK);
    assert_int_equal(hmd_atoms_add_field(&b, HMD_FIELD_CHARGE), HMD_OK);
    assert_int_equal(hmd_atoms_reserve(&a, n + m), HMD_OK);
    assert_int_equal(hmd_atoms_reserve(&b, n + m), HMD_OK);
    unsigned seed = 7;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            a.x[3 * i + k] = b.x[3 * i + k] = 100.0 * urand(&seed) - 50.0;
        }
        a.type[i] = b.type[i] = (int)(4 * urand(&seed));
        a.id[i] = b.id[i] = ((int64_t)1 << 40) + i;
        a.charge[i] = b.charge[i] = urand(&seed) - 0.5;
    }
    int list[200];
    for (int j = 0; j < m; j++) {
        list[j] = (int)(n * urand(&seed));
    }
    const double shift[3] = {31.3, -0.7, 1e-3};
    const unsigned fields = hmd_atoms_fields_with(&a, HMD_FIELD_BORDER);
    const int width = hmd_atoms_record_width(fields);
    double *rec = malloc(sizeof(double) * width);
    for (int j = 0; j < m; j++) {
        hmd_atoms_pack(&a, list[j], fields, shift, rec);
        hmd_atoms_unpack(&a, n + j, fields, rec);
    }
    hmd_atoms_copy_images(&b, list, m, n, fields, shift);
    /* records of the whole list at once: the same as one at a time */
    double *recs = malloc(sizeof(double) * width * m);
    hmd_atoms_pack_list(&a, list, m, fields, shift, recs);
    for (int j = 0; j < m; j++) {
        hmd_atoms_pack(&a, list[j], fields, shift, rec);
        assert_memory_equal(rec, recs + (size_t)j * width, sizeof(double) * width);
    }
    struct hmd_atoms c = {0};
    assert_int_equal(hmd_atoms_add_field(&c, HMD_FIELD_CHARGE), HMD_OK);
    assert_int_equal(hmd_atoms_reserve(&c, n + m), HMD_OK);
    hmd_atoms_unpack_list(&c, n, m, fields, recs);
    assert_memory_equal(c.x + 3 * n, b.x + 3 * n, sizeof(double) * 3 * m);
    assert_memory_equal(c.type + n, b.type + n, sizeof(int) * m);
    assert_memory_equal(c.id + n, b.id + n, sizeof(int64_t) * m);
    assert_memory_equal(c.charge + n, b.charge + n, sizeof(double) * m);
    free(recs);
    hmd_atoms_free(&c);
    assert_memory_equal(a.x, b.x, sizeof(double) * 3 * (n + m));
    assert_memory_equal(a.type, b.type, sizeof(int) * (n + m));
    assert_memory_equal(a.id, b.id, sizeof(int64_t) * (n + m));
    assert_memory_equal(a.charge, b.charge, sizeof(double) * (n + m));
    free(rec);
    hmd_atoms_free(&a);
    hmd_atoms_free(&b);
}

static void check_cell(const double h[3][3], const bool pbc[3], int n, double rc, unsigned seed)
{
    struct hmd_box box;
    struct hmd_atoms a = {0};
    struct hmd_halo_plan plan = {0};
    struct hmd_nbr_list nl = {0};
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    random_atoms(&a, &box, n, seed);
    struct hmd_domain dd;
    assert_int_equal(hmd_domain_init(&dd, &box, 1, 0, NULL, rc), HMD_OK);
    assert_int_equal(hmd_dd_borders(&plan, &a, &box, &dd, rc), HMD_OK);
    struct hmd_halo_transport host = {0};
    assert_int_equal(hmd_halo_transport_open_host(&host), HMD_OK);
    const struct hmd_halo_arrays arrays = {&plan, &box, hmd_atoms_nall(&a), a.x, a.f, NULL};
    assert_int_equal(hmd_halo_transport_setup(&host, &arrays), HMD_OK);
    const int nall = hmd_atoms_nall(&a);
    /* every ghost is its owner (same id) displaced by a whole lattice vector */
    for (int g = a.nlocal; g < nall; g++) {
        int64_t o = a.id[g];
        double d[3], s[3];
        for (int k = 0; k < 3; k++) {
            d[k] = a.x[3 * g + k] - a.x[3 * o + k];
        }
        hmd_box_to_frac(&box, d, s);
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(s[k] - round(s[k])) < 1e-9);
        }
        assert_int_equal(a.type[g], a.type[o]);
    }
    assert_int_equal(hmd_nbr_list_build(&nl, &box, a.nlocal, nall, a.x, rc), HMD_OK);
    for (int i = 0; i < a.nlocal; i++) {
        int listed = nl.offset[i + 1] - nl.offset[i];
        assert_int_equal(listed, brute_count(&a, &box, i, rc));
        for (int k = nl.offset[i]; k < nl.offset[i + 1]; k++) {
            for (int m = k + 1; m < nl.offset[i + 1]; m++) {
                assert_int_not_equal(nl.index[k], nl.index[m]);
            }
        }
    }
    /* forward after moving home atoms reproduces the shifted images exactly */
    double *saved = malloc(sizeof(double) * 3 * nall);
    memcpy(saved, a.x, sizeof(double) * 3 * nall);
    for (int i = 0; i < 3 * a.nlocal; i++) {
        a.x[i] += 0.01;
    }
    hmd_halo_transport_forward(&host, a.x, &box, NULL);
    for (int g = a.nlocal; g < nall; g++) {
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(a.x[3 * g + k] - saved[3 * g + k] - 0.01) < 1e-12);
        }
    }
    /* the flattened plan (what the GPU's self transport replays) gives the host transport's
     * results bit for bit: forward from random home positions, reverse of random values */
    check_flattened(&plan, &host, &box, a.x, nall, seed);
    /* reverse sums each ghost's value onto its owner exactly once */
    double *v = calloc((size_t)nall * 3, sizeof(double));
    for (int k = 0; k < 3 * nall; k++) {
        v[k] = 1.0;
    }
    hmd_halo_transport_reverse(&host, v, 3, NULL);
    double total = 0;
    for (int i = 0; i < a.nlocal; i++) {
        total += v[3 * i];
    }
    assert_true(fabs(total - nall) < 1e-9);
    free(v);
    free(saved);
    hmd_nbr_list_free(&nl);
    hmd_halo_transport_close(&host);
    hmd_halo_plan_free(&plan);
    hmd_domain_free(&dd);
    hmd_atoms_free(&a);
}

static void test_orthorhombic(void **state)
{
    const double h[3][3] = {{14, 0, 0}, {0, 15, 0}, {0, 0, 16}};
    const bool pbc[3] = {true, true, true};
    check_cell(h, pbc, 120, 6.0, 1u);
}

static void test_triclinic(void **state)
{
    const double h[3][3] = {{13, 0, 0}, {4, 12, 0}, {-3, 2.5, 12.5}};
    const bool pbc[3] = {true, true, true};
    check_cell(h, pbc, 100, 6.0, 2u);
}

static void test_cell_thinner_than_cutoff(void **state)
{
    /* 5 Å thick cells with an 8 Å cut-off: two or more pulses per direction */
    const double h[3][3] = {{5, 0, 0}, {1.5, 6, 0}, {0.5, -1, 7}};
    const bool pbc[3] = {true, true, true};
    check_cell(h, pbc, 12, 8.0, 3u);
}

static void test_partly_periodic(void **state)
{
    const double h[3][3] = {{9, 0, 0}, {2, 10, 0}, {0, 0, 11}};
    const bool pbc[3] = {true, false, true};
    check_cell(h, pbc, 40, 6.0, 4u);
}

static void test_too_small_cell_is_refused(void **state)
{
    const double h[3][3] = {{0.5, 0, 0}, {0, 10, 0}, {0, 0, 10}};
    const bool pbc[3] = {true, true, true};
    struct hmd_box box;
    struct hmd_atoms a = {0};
    struct hmd_halo_plan plan = {0};
    assert_int_equal(hmd_box_init(&box, h, pbc), HMD_OK);
    random_atoms(&a, &box, 3, 5u);
    struct hmd_domain dd;
    assert_int_equal(hmd_domain_init(&dd, &box, 1, 0, NULL, 8.0), HMD_OK);
    assert_int_equal(hmd_dd_borders(&plan, &a, &box, &dd, 8.0), HMD_EDATA);
    assert_non_null(strstr(hmd_error_msg(), "too small"));
    hmd_domain_free(&dd);
    hmd_halo_plan_free(&plan);
    hmd_atoms_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_images_equal_records),
        cmocka_unit_test(test_orthorhombic),
        cmocka_unit_test(test_triclinic),
        cmocka_unit_test(test_cell_thinner_than_cutoff),
        cmocka_unit_test(test_partly_periodic),
        cmocka_unit_test(test_too_small_cell_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
