/* Helper of the checkpoint tests (tests/production): writes, checks and measures checkpoints.
 *
 *   cpt_tool write PATH NATOMS [COUNT]  writes checkpoints of steps s+1, s+2, ... to PATH (s the
 *                                       step of PATH when it reads, else 0), COUNT of them or
 *                                       until killed; every number is a function of the step
 *   cpt_tool check PATH                 reads PATH and checks every number against its step;
 *                                       prints the step; exit 0, or 1 with the message
 *   cpt_tool make PATH NATOMS STEP DT [CUT] a checkpoint for the command-line tests: atoms
 *                                       in a 13 Å cube, at rest; CUT > 0 truncates the file
 *                                       to CUT bytes, CUT < 0 flips the byte at -CUT
 *   cpt_tool mem PATH NATOMS            writes and reads back one checkpoint of NATOMS atoms
 *                                       and prints, as JSON, the peak memory of each beyond the
 *                                       arrays themselves (getrusage's high-water mark)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "io/checkpoint.h"

static double value(int64_t step, size_t k, int which)
{
    return which ? -(double)k / 7.0 + 1e-3 * (double)step : (double)k / 3.0 + (double)step;
}

static void fill(struct hmd_checkpoint *c, int64_t step)
{
    c->step = step;
    c->thermostat_work = step / 3.0;
    c->gen_seed = step;
    for (size_t k = 0; k < 3 * (size_t)c->natoms; k++) {
        c->x[k] = value(step, k, 0);
        c->v[k] = value(step, k, 1);
    }
}

static int check(const char *path, int64_t *step)
{
    struct hmd_checkpoint c;
    int rc = hmd_checkpoint_read(path, &c);
    if (rc) {
        return rc;
    }
    for (size_t k = 0; !rc && k < 3 * (size_t)c.natoms; k++) {
        if (c.x[k] != value(c.step, k, 0) || c.v[k] != value(c.step, k, 1)) {
            rc = hmd_error_set(HMD_EDATA, "%s: number %zu differs from step %" PRId64 "'s", path, k,
                               c.step);
        }
    }
    if (!rc && (c.thermostat_work != c.step / 3.0 || c.gen_seed != c.step)) {
        rc = hmd_error_set(HMD_EDATA, "%s: scalars differ from step %" PRId64 "'s", path, c.step);
    }
    *step = c.step;
    hmd_checkpoint_free(&c);
    return rc;
}

static int make(const char *path, int natoms, int64_t step, double dt, long cut)
{
    struct hmd_checkpoint c = {.step = step, .dt = dt, .natoms = natoms, .has_box = true};
    c.h[0][0] = c.h[1][1] = c.h[2][2] = 13.0;
    snprintf(c.model, sizeof c.model, "m.dp");
    c.x = calloc(3 * (size_t)natoms, sizeof(double));
    c.v = calloc(3 * (size_t)natoms, sizeof(double));
    for (int i = 0; c.x && i < natoms; i++) { /* molecules of 3 atoms 4 Å apart */
        c.x[3 * i] = 1.0 + (i % 3 == 1) + 4.0 * (i / 3);
        c.x[3 * i + 1] = 1.0 + (i % 3 == 2) + 4.0 * (i / 3);
        c.x[3 * i + 2] = 1.0 + 4.0 * (i / 3);
    }
    int rc = hmd_checkpoint_write(path, &c, NULL, 0);
    free(c.x);
    free(c.v);
    if (rc) {
        fprintf(stderr, "%s\n", hmd_error_msg());
        return 1;
    }
    FILE *fp = cut ? fopen(path, "r+b") : NULL;
    if (cut > 0 && (!fp || ftruncate(fileno(fp), cut) != 0)) {
        return 1;
    }
    if (cut < 0) {
        int b = fp && fseek(fp, -cut, SEEK_SET) == 0 ? fgetc(fp) : EOF;
        if (b == EOF || fseek(fp, -cut, SEEK_SET) != 0 || fputc(b ^ 1, fp) == EOF) {
            return 1;
        }
    }
    return fp && fclose(fp) != 0 ? 1 : 0;
}

static long peak_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "check") == 0) {
        int64_t step = -1;
        if (check(argv[2], &step)) {
            fprintf(stderr, "%s\n", hmd_error_msg());
            return 1;
        }
        printf("%" PRId64 "\n", step);
        return 0;
    }
    if (argc >= 6 && strcmp(argv[1], "make") == 0) {
        return make(argv[2], atoi(argv[3]), atoll(argv[4]), atof(argv[5]),
                    argc > 6 ? atol(argv[6]) : 0);
    }
    if (argc < 4) {
        fprintf(stderr, "usage: cpt_tool write|mem PATH NATOMS [COUNT] | check PATH\n");
        return 2;
    }
    const int natoms = atoi(argv[3]);
    struct hmd_checkpoint c = {.dt = 0.001, .natoms = natoms, .has_box = true};
    c.h[0][0] = c.h[1][1] = c.h[2][2] = 30.0;
    snprintf(c.model, sizeof c.model, "model.dp");
    c.x = malloc(sizeof(double) * 3 * natoms);
    c.v = malloc(sizeof(double) * 3 * natoms);
    if (natoms < 1 || !c.x || !c.v) {
        fprintf(stderr, "cannot allocate %d atoms\n", natoms);
        return 2;
    }
    if (strcmp(argv[1], "mem") == 0) {
        fill(&c, 1); /* touches every page of the arrays */
        const long base = peak_kib();
        double t0 = now();
        int rc = hmd_checkpoint_write(argv[2], &c, NULL, 0);
        const double t_write = now() - t0;
        const long after_write = peak_kib();
        free(c.x);
        free(c.v);
        /* the reader allocates its own arrays: its overhead is beyond those, from `base` */
        t0 = now();
        struct hmd_checkpoint r;
        rc = rc ? rc : hmd_checkpoint_read(argv[2], &r);
        const double t_read = now() - t0;
        const long after_read = peak_kib();
        if (rc) {
            fprintf(stderr, "%s\n", hmd_error_msg());
            return 1;
        }
        hmd_checkpoint_free(&r);
        printf("{\"natoms\": %d, \"arrays_MiB\": %.1f, \"peak_before_MiB\": %.1f, "
               "\"write_extra_peak_MiB\": %.1f, \"read_extra_peak_MiB\": %.1f, "
               "\"write_s\": %.3f, \"read_s\": %.3f}\n",
               natoms, 48.0 * natoms / (1 << 20), base / 1024.0, (after_write - base) / 1024.0,
               (after_read - base) / 1024.0, t_write, t_read);
        return 0;
    }
    int64_t step = 0;
    if (check(argv[2], &step)) {
        step = 0;
    }
    const long count = argc > 4 ? atol(argv[4]) : -1;
    for (long n = 0; count < 0 || n < count; n++) {
        fill(&c, ++step);
        if (hmd_checkpoint_write(argv[2], &c, NULL, 0)) {
            fprintf(stderr, "%s\n", hmd_error_msg());
            return 1;
        }
    }
    free(c.x);
    free(c.v);
    return 0;
}
