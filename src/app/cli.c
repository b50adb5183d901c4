#include "app/cli.h"

#include "core/error.h"

int hmd_cli_main(int argc, char **argv)
{
    return HMD_OK;
}
