/* libFuzzer harness: hmd_model_read_dp (io/model_dp.h) on arbitrary bytes (HDF5 files). */
#include <string.h>

#include "fuzz_common.h"
#include "io/model_dp.h"
#include "nnp/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hmd_dp_model m;
    memset(&m, 0, sizeof m);
    hmd_model_read_dp(fuzz_input_file(data, size, ".dp"), &m);
    hmd_model_free(&m);
    return 0;
}
