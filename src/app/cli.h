/* Command line: `halomd run|eval|info` with GROMACS-style single-dash long options. */
#ifndef HMD_APP_CLI_H
#define HMD_APP_CLI_H

/* Parses argv and runs the chosen command. Returns a status (enum hmd_status). */
int hmd_cli_main(int argc, char **argv);

#endif /* HMD_APP_CLI_H */
