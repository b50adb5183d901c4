/* halomd: molecular dynamics with Deep Potential models. See README.md and docs/. */
#include <stdio.h>

#include "app/cli.h"
#include "comm/comm.h"
#include "core/error.h"

int main(int argc, char **argv)
{
    hmd_comm_init(&argc, &argv);
    int status = hmd_cli_main(argc, argv);
    if (status != HMD_OK) {
        /* every rank has the same status; rank 0 speaks for all (an error found only on
         * another rank leaves rank 0 without the message, but with its class) */
        if (hmd_comm_rank() == 0 && hmd_error_msg()[0]) {
            fprintf(stderr, "halomd: error: %s\n", hmd_error_msg());
        } else if (hmd_comm_rank() == 0) {
            fprintf(stderr, "halomd: error (%s) on another rank\n", hmd_status_name(status));
        }
    }
    hmd_comm_finalize();
    return hmd_status_exit_code(status);
}
