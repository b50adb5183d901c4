/* halomd: molecular dynamics with Deep Potential models. See README.md and docs/. */
#include <stdio.h>

#include "app/cli.h"
#include "core/error.h"

int main(int argc, char **argv)
{
    int status = hmd_cli_main(argc, argv);
    if (status != HMD_OK) {
        fprintf(stderr, "halomd: error: %s\n", hmd_error_msg());
    }
    return hmd_status_exit_code(status);
}
