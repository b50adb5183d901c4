/* Command line: `halomd run|eval|info [options]`, GROMACS-style single-dash long options parsed
 * with getopt_long_only (so -deffnm and --deffnm are the same; unique prefixes are accepted). */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/params.h"
#include "hmd_buildinfo.h"
#include "dd/collect.h"
#include "comm/comm.h"
#include "io/backup.h"
#include "io/eval_json.h"
#include "io/model_dp.h"
#include "io/structure.h"
#include "md/backend.h"
#include "md/forces.h"
#include "md/model_setup.h"
#include "md/run.h"
#include "md/system.h"

enum { MAX_SET = 64 };

struct cli {
    const char *mdp, *conf, *model, *deffnm, *out, *backend, *cpi;
    int dd[3];
    const char *set[MAX_SET];
    int nset;
    long long nsteps;
    bool have_nsteps, verbose;
};

static const char usage_text[] =
    "usage: halomd <command> [options]\n"
    "\n"
    "commands:\n"
    "  run    molecular dynamics\n"
    "           halomd run -f md.mdp -c conf -m model.dp [-deffnm md] [-nsteps N] [-v]\n"
    "                      [-set key=value]... [-cpi md.cpt]\n"
    "  eval   single-point energy, forces and virial of every frame (like dp test)\n"
    "           halomd eval -m model.dp -c conf [-o out.json] [-f params] [-set key=value]...\n"
    "  info   summary of a model\n"
    "           halomd info -m model.dp\n"
    "\n"
    "options:\n"
    "  -f FILE        run parameters (.mdp-style key = value; see docs/parameters.md)\n"
    "  -c FILE        structure: .gro, .pdb, .xyz (extended XYZ), LAMMPS data\n"
    "  -m FILE        DeePMD-kit model (.dp, from `dp convert-backend model.pth model.dp`)\n"
    "  -deffnm NAME   base name of the output files (default md)\n"
    "  -nsteps N      number of steps (overrides the parameter file)\n"
    "  -set KEY=VAL   override one run parameter (repeatable)\n"
    "  -backend NAME  compute backend: auto (cuda when usable, else cpu), cpu, cuda\n"
    "  -o FILE        eval output (JSON; default: standard output)\n"
    "  -dd NX NY NZ   domain grid for mpirun (default: chosen to minimise the halo)\n"
    "  -cpi FILE      run: continue from a checkpoint (<deffnm>.cpt of an earlier run) up to\n"
    "                 step nsteps\n"
    "  -v             progress on stderr\n"
    "  -h, -help      this help\n"
    "  -version       version, git commit and build options\n"
    "\n"
    "Existing output files are backed up as #name.N#, never overwritten.\n"
    "Exit codes follow sysexits.h: 64 usage, 65 bad input data, 66 missing input, 69 "
    "unsupported,\n70 internal error, 73 cannot create output, 74 I/O error, 78 bad parameter.\n";

static void print_version(void)
{
    printf("halomd %s (commit %s)\nbuild: %s, %s\noptions: %s\nbackends: %s\n", HMD_VERSION,
           HMD_GIT_COMMIT, HMD_BUILD_TYPE, HMD_COMPILER, HMD_BUILD_FEATURES, hmd_backend_list());
}

static int parse(int argc, char **argv, struct cli *cli)
{
    enum { OPT_DEFFNM = 256, OPT_NSTEPS, OPT_SET, OPT_VERSION, OPT_BACKEND, OPT_DD, OPT_CPI };
    static const struct option options[] = {
        {"f", required_argument, NULL, 'f'},
        {"c", required_argument, NULL, 'c'},
        {"m", required_argument, NULL, 'm'},
        {"o", required_argument, NULL, 'o'},
        {"v", no_argument, NULL, 'v'},
        {"h", no_argument, NULL, 'h'},
        {"help", no_argument, NULL, 'h'},
        {"deffnm", required_argument, NULL, OPT_DEFFNM},
        {"nsteps", required_argument, NULL, OPT_NSTEPS},
        {"set", required_argument, NULL, OPT_SET},
        {"backend", required_argument, NULL, OPT_BACKEND},
        {"dd", required_argument, NULL, OPT_DD},
        {"cpi", required_argument, NULL, OPT_CPI},
        {"version", no_argument, NULL, OPT_VERSION},
        {NULL, 0, NULL, 0},
    };
    opterr = 0;
    optind = 2; /* argv[1] is the command */
    int opt;
    /* no short options: "-frobnicate" must not read as "-f robnicate" */
    while ((opt = getopt_long_only(argc, argv, ":", options, NULL)) != -1) {
        switch (opt) {
        case 'f':
            cli->mdp = optarg;
            break;
        case 'c':
            cli->conf = optarg;
            break;
        case 'm':
            cli->model = optarg;
            break;
        case 'o':
            cli->out = optarg;
            break;
        case 'v':
            cli->verbose = true;
            break;
        case 'h':
            fputs(usage_text, stdout);
            exit(0);
        case OPT_DEFFNM:
            cli->deffnm = optarg;
            break;
        case OPT_BACKEND:
            cli->backend = optarg;
            break;
        case OPT_CPI:
            cli->cpi = optarg;
            break;
        case OPT_VERSION:
            print_version();
            exit(0);
        case OPT_NSTEPS: {
            char *end;
            cli->nsteps = strtoll(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || cli->nsteps < -1) {
                return hmd_error_set(HMD_EUSAGE, "-nsteps %s: expected an integer >= -1", optarg);
            }
            cli->have_nsteps = true;
            break;
        }
        case OPT_DD: {
            /* three integers: this one and the next two arguments */
            const char *words[3] = {optarg, optind < argc ? argv[optind] : "",
                                    optind + 1 < argc ? argv[optind + 1] : ""};
            for (int k = 0; k < 3; k++) {
                char *end;
                long v = strtol(words[k], &end, 10);
                if (!*words[k] || *end || v < 1 || v > 1024) {
                    return hmd_error_set(HMD_EUSAGE,
                                         "-dd needs three positive integers (NX NY NZ)");
                }
                cli->dd[k] = (int)v;
            }
            optind += 2;
            break;
        }
        case OPT_SET:
            if (cli->nset == MAX_SET) {
                return hmd_error_set(HMD_EUSAGE, "more than %d -set options", MAX_SET);
            }
            cli->set[cli->nset++] = optarg;
            break;
        case ':':
            return hmd_error_set(HMD_EUSAGE, "option %s needs a value (see halomd -h)",
                                 argv[optind - 1]);
        default:
            return hmd_error_set(HMD_EUSAGE, "unknown or ambiguous option %s (see halomd -h)",
                                 argv[optind - 1]);
        }
    }
    if (optind < argc) {
        return hmd_error_set(HMD_EUSAGE, "unexpected argument '%s' (see halomd -h)", argv[optind]);
    }
    return HMD_OK;
}

static int require(const char *value, const char *option, const char *command)
{
    if (!value) {
        return hmd_error_set(HMD_EUSAGE, "halomd %s needs %s (see halomd -h)", command, option);
    }
    return HMD_OK;
}

static int cmd_info(const struct cli *cli)
{
    struct hmd_dp_model model = {0};
    int rc = require(cli->model, "-m model.dp", "info");
    if (!rc) {
        rc = hmd_model_read_dp(cli->model, &model);
    }
    if (!rc) {
        printf("model           %s\n", cli->model);
        hmd_model_print_summary(&model, stdout, "");
    }
    hmd_model_free(&model);
    return rc;
}

/* Energy, forces and virial of frame `index` (from 1; significant on rank 0), in its atom order,
 * with a warning when neighbours were left out of the descriptors (beyond sel).
 * The neighbour list has the default skin of a run, so eval and step 0 of `halomd run` do the
 * same arithmetic. Collective; rank 0 adds the results to doc. */
static int eval_frame(const struct cli *cli, const struct hmd_params *p,
                      const struct hmd_dp_model *model, const struct hmd_frame *frame, int index,
                      struct hmd_eval_json *doc)
{
    struct hmd_system sys;
    struct hmd_forces fs = {0};
    const double rlist = p->rlist;
    double *force = NULL, *energy = NULL;
    int rc = hmd_system_load(&sys, frame, cli->conf, model, cli->dd, rlist);
    if (!rc) {
        char backend[512];
        const struct hmd_backend_request req = {.name = p->backend,
                                                .precision = p->precision,
                                                .resident = false,
                                                .model = model,
                                                .type0 = sys.type0};
        rc = hmd_forces_init(&fs, &sys.dd, p->verlet_buffer, sys.natoms);
        rc = hmd_comm_agree(rc ? rc : hmd_backend_setup(&fs, &req, backend, sizeof backend));
    }
    if (!rc) {
        rc = hmd_forces_rebuild(&fs, &sys.atoms, &sys.box);
    }
    if (!rc) {
        rc = hmd_forces_compute(&fs, &sys.atoms, &sys.box, true);
    }
    if (!rc && hmd_comm_rank() == 0) {
        force = malloc(sizeof(double) * 3 * (sys.natoms + 1));
        energy = malloc(sizeof(double) * (sys.natoms + 1));
        rc = force && energy ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    rc = hmd_comm_agree(rc);
    if (!rc) {
        rc = hmd_collect_gather(sys.atoms.id, sys.atoms.f, sys.atoms.nlocal, 3, force, sys.natoms);
    }
    if (!rc) {
        rc = hmd_collect_gather(sys.atoms.id, fs.atom_energy, sys.atoms.nlocal, 1, energy,
                                sys.natoms);
    }
    if (!rc && hmd_comm_rank() == 0 && fs.dropped > 0) {
        fprintf(stderr,
                "halomd: warning: %s frame %d: %ld neighbours within rcut are beyond the model's "
                "sel and left out of the descriptors (as DeePMD-kit does): the model sees fewer "
                "neighbours than there are\n",
                cli->conf, index, fs.dropped);
    }
    if (!rc && hmd_comm_rank() == 0) {
        struct hmd_eval_frame_result res = {
            .natoms = sys.natoms,
            .energy = fs.energy,
            .atom_energy = energy,
            .force = force,
            .virial = fs.virial,
        };
        rc = hmd_eval_json_add(doc, &res);
    }
    free(force);
    free(energy);
    hmd_forces_free(&fs);
    hmd_system_free(&sys);
    return hmd_comm_agree(rc);
}

/* Writes the eval document (rank 0), backing up an existing file. */
static int write_eval(const struct cli *cli, const struct hmd_eval_json *doc)
{
    if (!cli->out) {
        return hmd_eval_json_write(doc, stdout, "standard output");
    }
    FILE *fp;
    char note[512];
    int rc = hmd_output_open(cli->out, &fp, note, sizeof note);
    if (rc) {
        return rc;
    }
    if (note[0]) {
        fprintf(stderr, "%s\n", note);
    }
    rc = hmd_eval_json_write(doc, fp, cli->out);
    if (fclose(fp) && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", cli->out);
    }
    return rc;
}

/* Run parameters of eval: defaults, then -f, then -set, checked against the model cut-off
 * later; only the model and neighbour-list keys matter to an evaluation. */
static int eval_parameters(const struct cli *cli, struct hmd_params *p)
{
    hmd_params_defaults(p);
    int rc = cli->mdp ? hmd_params_read(p, cli->mdp) : HMD_OK;
    for (int k = 0; k < cli->nset && !rc; k++) {
        rc = hmd_params_set(p, cli->set[k]);
    }
    return rc;
}

static int cmd_eval(const struct cli *cli)
{
    struct hmd_dp_model model = {0};
    struct hmd_params p;
    struct hmd_frame *frames = NULL;
    struct hmd_eval_json *doc = NULL;
    const bool root = hmd_comm_rank() == 0;
    int nframes = 0;
    int rc = require(cli->model, "-m model.dp", "eval");
    if (!rc) {
        rc = require(cli->conf, "-c structure", "eval");
    }
    if (!rc) {
        rc = eval_parameters(cli, &p);
    }
    if (!rc && cli->backend) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "backend=%s", cli->backend);
        rc = hmd_params_set(&p, assignment);
    }
    if (!rc) {
        rc = hmd_comm_agree(hmd_model_setup(cli->model, &p, &model));
    }
    if (!rc) {
        rc = hmd_params_check(&p, model.rcut);
    }
    if (!rc) {
        rc = hmd_comm_agree(root ? hmd_structure_read(cli->conf, &frames, &nframes) : HMD_OK);
    }
    if (rc) {
        goto out;
    }
    hmd_comm_bcast(&nframes, sizeof nframes, 0);
    if (root) {
        const char *names[64];
        for (int t = 0; t < model.ntypes && t < 64; t++) {
            names[t] = model.type_map[t];
        }
        doc = hmd_eval_json_create(cli->model, cli->conf, names, model.ntypes);
        rc = doc ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    rc = hmd_comm_agree(rc);
    for (int f = 0; f < nframes && !rc; f++) {
        rc = eval_frame(cli, &p, &model, root ? &frames[f] : NULL, f + 1, doc);
        if (rc && nframes > 1 && hmd_error_msg()[0]) {
            hmd_error_prefix(rc, "frame %d: ", f + 1);
        }
    }
    /* outputs are touched only once every input has been read and evaluated */
    if (!rc) {
        rc = hmd_comm_agree(root ? write_eval(cli, doc) : HMD_OK);
    }
out:
    hmd_eval_json_destroy(&doc);
    hmd_frames_free(frames, nframes);
    hmd_model_free(&model);
    return rc;
}

static int cmd_run(const struct cli *cli, int argc, char **argv)
{
    char cmdline[4096] = "";
    size_t len = 0;
    for (int k = 0; k < argc && len < sizeof cmdline; k++) {
        len += (size_t)snprintf(cmdline + len, sizeof cmdline - len, "%s%s", k ? " " : "", argv[k]);
    }
    struct hmd_run_options opt = {
        .mdp = cli->mdp,
        .conf = cli->conf,
        .model = cli->model,
        .deffnm = cli->deffnm ? cli->deffnm : "md",
        .nsteps = cli->nsteps,
        .have_nsteps = cli->have_nsteps,
        .verbose = cli->verbose,
        .set = cli->set,
        .nset = cli->nset,
        .backend = cli->backend,
        .dd = {cli->dd[0], cli->dd[1], cli->dd[2]},
        .cpi = cli->cpi,
        .cmdline = cmdline,
    };
    int rc = require(cli->conf, "-c structure", "run");
    return rc ? rc : hmd_run(&opt);
}

int hmd_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return hmd_error_set(HMD_EUSAGE, "no command given");
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "-help") || !strcmp(cmd, "--help")) {
        fputs(usage_text, stdout);
        return HMD_OK;
    }
    if (!strcmp(cmd, "-version") || !strcmp(cmd, "--version")) {
        print_version();
        return HMD_OK;
    }
    struct cli cli = {0};
    int rc = parse(argc, argv, &cli);
    if (rc) {
        return rc;
    }
    if (!strcmp(cmd, "run")) {
        return cmd_run(&cli, argc, argv);
    }
    if (!strcmp(cmd, "eval")) {
        return cmd_eval(&cli);
    }
    if (!strcmp(cmd, "info")) {
        return cmd_info(&cli);
    }
    return hmd_error_set(HMD_EUSAGE, "unknown command '%s'; commands: run, eval, info", cmd);
}
