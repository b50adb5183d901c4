/* libFuzzer harness: hmd_xyz_read (io/structure.h) on arbitrary bytes. */
#include "fuzz_common.h"
#include "io/structure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct hmd_frame *frames = NULL;
    int nframes = 0;
    if (hmd_xyz_read(fuzz_input_file(data, size, ".xyz"), &frames, &nframes) == 0) {
        hmd_frames_free(frames, nframes);
    }
    return 0;
}
