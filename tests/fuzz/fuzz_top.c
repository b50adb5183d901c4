/* libFuzzer harness: a GROMACS topology (io/topology.h, with its preprocessor io/top_cpp.h) read
 * on arbitrary bytes. No force-field folders are searched (GMXLIB and the installed share folder
 * off): an #include resolves only next to the input, which is the input itself (an #include of
 * its own name must end as "nests deeper", not as a stack overflow). [ molecules ] counts are
 * checked against the structure's atoms before the system is made. */
#include <string.h>

#include "fuzz_common.h"
#include "io/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* as halomd reads it: after a structure (here of 100,000 atoms) */
    const struct hmd_top_cpp_options opt = {"-DFLEXIBLE -DPOSRES", "", "", 100000, "structure"};
    struct hmd_topology top;
    memset(&top, 0, sizeof top);
    hmd_topology_read(&top, fuzz_input_file(data, size, ".top"), &opt);
    hmd_topology_free(&top);
    return 0;
}
