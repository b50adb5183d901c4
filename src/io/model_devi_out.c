#include "io/model_devi_out.h"

#include <inttypes.h>

#include "core/error.h"

int hmd_model_devi_out_header(FILE *fp, const char *path, const char *header, bool atomic)
{
    /* numpy.savetxt: "# " before every line of DeePMD-kit's header text, whose names are
     * left-aligned in fields of 10 (step) and 19 characters */
    int bad = fprintf(fp, "# %s\n# %-10s", header, "step") < 0;
    static const char *const names[] = {"max_devi_v", "min_devi_v", "avg_devi_v", "max_devi_f",
                                        "min_devi_f", "avg_devi_f", "devi_e"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        bad |= fprintf(fp, "%-19s", names[k]) < 0;
    }
    if (atomic) {
        bad |= fprintf(fp, "%-19s", "atm_devi_f(N)") < 0;
    }
    bad |= fputc('\n', fp) == EOF;
    return bad ? hmd_error_set(HMD_EIO, "cannot write %s", path) : HMD_OK;
}

int hmd_model_devi_out_row(FILE *fp, const char *path, int64_t step, const struct hmd_model_devi *d,
                           const double *atom_devi, int natoms)
{
    int bad = fprintf(fp, "%12" PRId64 "%19.6e%19.6e%19.6e%19.6e%19.6e%19.6e%19.6e", step,
                      d->max_devi_v, d->min_devi_v, d->avg_devi_v, d->max_devi_f, d->min_devi_f,
                      d->avg_devi_f, d->devi_e) < 0;
    for (int i = 0; atom_devi && i < natoms; i++) {
        bad |= fprintf(fp, "%19.6e", atom_devi[i]) < 0;
    }
    bad |= fputc('\n', fp) == EOF;
    return bad ? hmd_error_set(HMD_EIO, "cannot write %s", path) : HMD_OK;
}
