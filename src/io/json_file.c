/* JSON output files (io/json_file.h). */
#include "io/json_file.h"

#include <stdio.h>

#include "core/error.h"
#include "io/backup.h"

int hmd_json_write_file(const char *path, const json_t *root, size_t flags, char *note,
                        size_t note_len)
{
    FILE *fp;
    int rc = hmd_output_open(path, &fp, note, note_len);
    if (rc) {
        return rc;
    }
    if (json_dumpf(root, fp, flags) || fputc('\n', fp) == EOF) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", path);
    }
    if (fclose(fp) && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", path);
    }
    return rc;
}
