/* Unit tests of src/nnp/mlp: every activation and skip connection, backward pass against
 * central finite differences on fresh random inputs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nnp/mlp.h"

static struct hmd_arena arena; /* packed weights of the test nets, freed at exit */

static double urand(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (*state >> 8) / 16777216.0 * 2.0 - 1.0;
}

/* A 3-layer net 3 -> 3 -> 6 -> 1 exercising SAME and DOUBLE skips, idt and a linear output. */
static void make_net(struct hmd_mlp *net, struct hmd_dense *L, enum hmd_activation act,
                     double *store, unsigned *seed)
{
    const int widths[4] = {3, 3, 6, 1};
    double *p = store;
    for (int l = 0; l < 3; l++) {
        L[l].n_in = widths[l];
        L[l].n_out = widths[l + 1];
        L[l].w = p;
        p += widths[l] * widths[l + 1];
        L[l].b = p;
        p += widths[l + 1];
        L[l].idt = (l == 1) ? p : NULL;
        p += widths[l + 1];
        for (double *q = L[l].w; q < p; q++) {
            *q = urand(seed);
        }
        L[l].act = (l == 2) ? HMD_ACT_NONE : act;
        L[l].silut = (struct hmd_act_silut){0.5, 0, 0};
        if (act == HMD_ACT_SILUT) {
            double s = hmd_sigmoid(0.5);
            L[l].silut.slope = s + 0.5 * s * (1 - s);
            L[l].silut.shift = 0.5 * s;
        }
        L[l].resnet = (l == 0) ? HMD_RESNET_SAME : (l == 1 ? HMD_RESNET_DOUBLE : HMD_RESNET_NONE);
    }
    *net = (struct hmd_mlp){.nlayers = 3, .layers = L, .n_in = 3, .n_out = 1, .width_sum = 10};
    assert_int_equal(hmd_mlp_pack(net, &arena), 0);
}

static double eval(const struct hmd_mlp *net, const double *x, double *work)
{
    return hmd_mlp_forward(net, 1, x, work, NULL)[0];
}

static void check_activation(enum hmd_activation act)
{
    unsigned seed = 12345u + (unsigned)act;
    double store[300], work[64], saved[64], bwork[64], dx[3], one = 1.0;
    struct hmd_dense L[3];
    struct hmd_mlp net;
    make_net(&net, L, act, store, &seed);
    for (int trial = 0; trial < 20; trial++) {
        double x[3] = {2 * urand(&seed), 2 * urand(&seed), 2 * urand(&seed)};
        hmd_mlp_forward(&net, 1, x, work, saved);
        hmd_mlp_backward(&net, 1, saved, &one, dx, bwork);
        for (int k = 0; k < 3; k++) {
            const double h = 1e-6;
            double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
            xp[k] += h;
            xm[k] -= h;
            double fd = (eval(&net, xp, work) - eval(&net, xm, work)) / (2 * h);
            /* relu kinks make FD meaningless exactly at 0; random inputs avoid them */
            assert_true(fabs(fd - dx[k]) < 1e-7 * (1 + fabs(fd)));
        }
    }
}

static void test_activations_backward(void **state)
{
    const enum hmd_activation acts[] = {HMD_ACT_NONE,  HMD_ACT_TANH,     HMD_ACT_RELU,
                                        HMD_ACT_RELU6, HMD_ACT_SOFTPLUS, HMD_ACT_SIGMOID,
                                        HMD_ACT_SILU,  HMD_ACT_GELU,     HMD_ACT_SILUT};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        check_activation(acts[i]);
    }
}

static void test_batched_rows_match_single_rows(void **state)
{
    unsigned seed = 7u;
    double store[300];
    struct hmd_dense L[3];
    struct hmd_mlp net;
    make_net(&net, L, HMD_ACT_TANH, store, &seed);
    enum { ROWS = 11 };
    double x[ROWS * 3], work[ROWS * 10], saved[ROWS * 10], bwork[3 * ROWS * 6], dy[ROWS],
        dx[ROWS * 3];
    for (int i = 0; i < ROWS * 3; i++) {
        x[i] = urand(&seed);
    }
    for (int r = 0; r < ROWS; r++) {
        dy[r] = urand(&seed);
    }
    const double *y = hmd_mlp_forward(&net, ROWS, x, work, saved);
    double ybatch[ROWS];
    for (int r = 0; r < ROWS; r++) {
        ybatch[r] = y[r];
    }
    hmd_mlp_backward(&net, ROWS, saved, dy, dx, bwork);
    for (int r = 0; r < ROWS; r++) {
        double w1[10], s1[10], b1[18], d1[3];
        double y1 = hmd_mlp_forward(&net, 1, x + 3 * r, w1, s1)[0];
        hmd_mlp_backward(&net, 1, s1, dy + r, d1, b1);
        assert_true(fabs(y1 - ybatch[r]) < 1e-14);
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(d1[k] - dx[3 * r + k]) < 1e-14);
        }
    }
}

/* Forward-mode derivative of a one-input net 1 -> 4 -> 8 -> 8 (DOUBLE then SAME skips, idt)
 * against central differences, for every activation. */
static void test_tangent_matches_finite_differences(void **state)
{
    const enum hmd_activation acts[] = {HMD_ACT_TANH, HMD_ACT_GELU,    HMD_ACT_SOFTPLUS,
                                        HMD_ACT_SILU, HMD_ACT_SIGMOID, HMD_ACT_NONE};
    const int widths[4] = {1, 4, 8, 8};
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        unsigned seed = 99u + (unsigned)a;
        double store[400], *p = store;
        struct hmd_dense L[3];
        for (int l = 0; l < 3; l++) {
            const int k = widths[l], n = widths[l + 1];
            L[l] = (struct hmd_dense){.n_in = k, .n_out = n, .act = acts[a]};
            L[l].w = p;
            p += k * n;
            L[l].b = p;
            p += n;
            L[l].idt = p;
            p += n;
            for (double *q = L[l].w; q < p; q++) {
                *q = urand(&seed);
            }
            L[l].resnet =
                (n == 2 * k) ? HMD_RESNET_DOUBLE : (n == k ? HMD_RESNET_SAME : HMD_RESNET_NONE);
        }
        struct hmd_mlp net = {.nlayers = 3, .layers = L, .n_in = 1, .n_out = 8, .width_sum = 20};
        assert_int_equal(hmd_mlp_pack(&net, &arena), 0);
        enum { ROWS = 6 };
        double x[ROWS], work[4 * ROWS * 8], w2[ROWS * 20];
        for (int r = 0; r < ROWS; r++) {
            x[r] = 1.5 * urand(&seed);
        }
        const double *y, *dy;
        hmd_mlp_forward_tangent(&net, ROWS, x, NULL, work, &y, &dy);
        for (int r = 0; r < ROWS; r++) {
            const double h = 1e-6;
            double xp = x[r] + h, xm = x[r] - h, yp[8], ym[8];
            const double *o = hmd_mlp_forward(&net, 1, &xp, w2, NULL);
            memcpy(yp, o, sizeof yp);
            o = hmd_mlp_forward(&net, 1, &xm, w2, NULL);
            memcpy(ym, o, sizeof ym);
            for (int j = 0; j < 8; j++) {
                double fd = (yp[j] - ym[j]) / (2 * h);
                assert_true(fabs(fd - dy[r * 8 + j]) < 1e-7 * (1 + fabs(fd)));
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_activations_backward),
        cmocka_unit_test(test_batched_rows_match_single_rows),
        cmocka_unit_test(test_tangent_matches_finite_differences),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    hmd_arena_free(&arena);
    return failed;
}
