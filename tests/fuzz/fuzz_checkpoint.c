/* libFuzzer harness: hmd_checkpoint_read (io/checkpoint.h) on arbitrary bytes. */
#include "fuzz_common.h"
#include "io/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hmd_checkpoint c;
    if (hmd_checkpoint_read(fuzz_input_file(data, size, ".cpt"), &c) == 0) {
        hmd_checkpoint_free(&c);
    }
    return 0;
}
