/* Shared by the libFuzzer harnesses of tests/fuzz: every reader takes a path, so each input is
 * written to a file of this process (with the extension that selects the format) and read.
 * Whatever the input, a reader must return a status: a crash, a sanitizer report, a leak, a
 * timeout or an allocation above the harness's -malloc_limit_mb is a finding. */
#ifndef HMD_TESTS_FUZZ_COMMON_H
#define HMD_TESTS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The path of this process's input file with extension `ext` (".gro"), holding data[0..size). */
static inline const char *fuzz_input_file(const uint8_t *data, size_t size, const char *ext)
{
    static char path[256];
    const char *dir = getenv("HMD_FUZZ_TMP");
    snprintf(path, sizeof path, "%s/hmd_fuzz_%d%s", dir ? dir : "/tmp", (int)getpid(), ext);
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        abort(); /* the harness's own failure: no place to write the input */
    }
    if (size && fwrite(data, 1, size, fp) != size) {
        abort();
    }
    fclose(fp);
    return path;
}

#endif /* HMD_TESTS_FUZZ_COMMON_H */
