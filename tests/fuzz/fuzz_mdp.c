/* libFuzzer harness: the run parameters (core/params.h) read, checked and echoed, on arbitrary
 * bytes. */
#include "core/params.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hmd_params p;
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w"))) {
        abort();
    }
    hmd_params_defaults(&p);
    if (hmd_params_read(&p, fuzz_input_file(data, size, ".mdp")) == 0 &&
        hmd_params_check(&p, 6.0) == 0) {
        hmd_params_write(&p, sink);
    }
    return 0;
}
