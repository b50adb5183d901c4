/* libFuzzer harness: hmd_model_read_dp (io/model_dp.h) on arbitrary bytes (HDF5 files). */
#include <hdf5.h>
#include <string.h>

#include "fuzz_common.h"
#include "io/model_dp.h"
#include "nnp/model.h"

/* HDF5 keeps freed blocks of at most 64 KiB per free list by default, so the metadata cache of
 * every file it opens (over 512 KiB, zeroed) comes from fresh pages: a third of the harness's
 * time went to those page faults. With 16 MiB per list (64 MiB in all) it is reused. halomd
 * opens one model per run and keeps HDF5's defaults. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    H5set_free_list_limits(64 << 20, 16 << 20, 64 << 20, 16 << 20, 64 << 20, 16 << 20);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hmd_dp_model m;
    memset(&m, 0, sizeof m);
    hmd_model_read_dp(fuzz_input_file(data, size, ".dp"), &m);
    hmd_model_free(&m);
    return 0;
}
