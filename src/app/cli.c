/* Command line: `halomd run|eval|info [options]`, GROMACS-style single-dash long options parsed
 * with getopt_long_only (so -deffnm and --deffnm are the same; unique prefixes are accepted). */
#include "app/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/params.h"
#include "hmd_buildinfo.h"
#include "dd/collect.h"
#include "comm/comm.h"
#include "api/eval_data.h"
#include "md/evaluator.h"
#include "io/backup.h"
#include "io/eval_json.h"
#include "io/json_file.h"
#include "io/model_dp.h"
#include "io/structure.h"
#include "md/backend.h"
#include "md/model_setup.h"
#include "md/run.h"

enum { MAX_SET = 64, MAX_MODELS = 16 };

struct cli {
    const char *mdp, *conf, *model, *deffnm, *out, *backend, *cpi, *data, *top, *index;
    const char *models[MAX_MODELS]; /* -m a.dp [b.dp ...]; model is models[0] */
    int nmodels;
    int dd[3];
    const char *set[MAX_SET];
    int nset;
    long long nsteps;
    bool have_nsteps, verbose;
    double cpt, maxh; /* -cpt minutes (default 15), -maxh hours (default -1: none) */
};

static const char usage_text[] =
    "usage: halomd <command> [options]\n"
    "\n"
    "commands:\n"
    "  run    molecular dynamics\n"
    "           halomd run -f md.mdp -c conf -m model.dp [-deffnm md] [-nsteps N] [-v]\n"
    "                      [-set key=value]... [-cpi md.cpt] [-cpt MIN] [-maxh H]\n"
    "           halomd run -f md.mdp -c conf.gro -p topol.top        classical force field\n"
    "           halomd run -f md.mdp -c conf.gro -p topol.top -m model.dp [-n index.ndx]\n"
    "                  hybrid ML/MM: the model on nnp-group, the topology on the rest\n"
    "  eval   single-point energy, forces and virial of every frame (like dp test)\n"
    "           halomd eval -m model.dp -c conf [-o out.json] [-f params] [-set key=value]...\n"
    "           halomd eval -m model.dp -s data [-o errors.json]   errors against DeePMD-kit\n"
    "                  labelled data, as dp test reports them\n"
    "           halomd eval -m a.dp b.dp ... -c conf | -s data [-deffnm NAME] [-o devi.json]\n"
    "                  model deviation of every frame into model_devi.out (NAME.model_devi.out),\n"
    "                  as dp model-devi\n"
    "  info   summary of a model\n"
    "           halomd info -m model.dp\n"
    "\n"
    "options:\n"
    "  -f FILE        run parameters (.mdp-style key = value; see docs/parameters.md)\n"
    "  -c FILE        structure: .gro, .pdb, .xyz (extended XYZ), LAMMPS data\n"
    "  -m FILE...     DeePMD-kit model (.dp, from `dp convert-backend model.pth model.dp`);\n"
    "                 several models: run and eval write their model deviation\n"
    "                 (<deffnm>.model_devi.out; run: the first drives, every model-devi-freq)\n"
    "  -p FILE        run: GROMACS topology (.top with its #includes): the classical force\n"
    "                 field (-m optional); with -m and nnp-group, hybrid ML/MM\n"
    "  -n FILE        run: GROMACS index file (.ndx) whose group nnp-group names\n"
    "  -s DIR         eval: DeePMD-kit data (type.raw, set.*/coord.npy, ...), every system\n"
    "                 under DIR\n"
    "  -deffnm NAME   base name of the output files (default md)\n"
    "  -nsteps N      number of steps (overrides the parameter file)\n"
    "  -set KEY=VAL   override one run parameter (repeatable)\n"
    "  -backend NAME  compute backend: auto (cuda when usable, else cpu), cpu, cuda\n"
    "  -o FILE        eval output (JSON; default: standard output)\n"
    "  -dd NX NY NZ   domain grid for mpirun (default: chosen to minimise the halo)\n"
    "  -cpi FILE      run: continue from a checkpoint (<deffnm>.cpt of an earlier run) up to\n"
    "                 step nsteps\n"
    "  -cpt MIN       run: minutes of wall time between checkpoints (default 15; 0: at every\n"
    "                 10th step; -1: only the final one), as GROMACS's mdrun -cpt\n"
    "  -maxh H        run: stop cleanly, with a checkpoint, at the first step after 0.99 x H\n"
    "                 hours (default -1: no limit)\n"
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
    enum {
        OPT_DEFFNM = 256,
        OPT_NSTEPS,
        OPT_SET,
        OPT_VERSION,
        OPT_BACKEND,
        OPT_DD,
        OPT_CPI,
        OPT_CPT,
        OPT_MAXH
    };
    static const struct option options[] = {
        {"f", required_argument, NULL, 'f'},
        {"c", required_argument, NULL, 'c'},
        {"m", required_argument, NULL, 'm'},
        {"p", required_argument, NULL, 'p'},
        {"n", required_argument, NULL, 'n'},
        {"s", required_argument, NULL, 's'},
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
        {"cpt", required_argument, NULL, OPT_CPT},
        {"maxh", required_argument, NULL, OPT_MAXH},
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
            /* this argument and the following ones up to the next option */
            cli->nmodels = 0;
            for (const char *m = optarg; m;) {
                if (cli->nmodels == MAX_MODELS) {
                    return hmd_error_set(HMD_EUSAGE, "more than %d models after -m", MAX_MODELS);
                }
                cli->models[cli->nmodels++] = m;
                m = optind < argc && argv[optind][0] != '-' ? argv[optind++] : NULL;
            }
            cli->model = cli->models[0];
            break;
        case 's':
            cli->data = optarg;
            break;
        case 'p':
            cli->top = optarg;
            break;
        case 'n':
            cli->index = optarg;
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
        case OPT_CPT:
        case OPT_MAXH: {
            char *end;
            const double value = strtod(optarg, &end);
            if (*optarg == '\0' || *end != '\0' || !isfinite(value)) {
                return hmd_error_set(HMD_EUSAGE, "-%s %s: expected a number",
                                     opt == OPT_CPT ? "cpt" : "maxh", optarg);
            }
            *(opt == OPT_CPT ? &cli->cpt : &cli->maxh) = value;
            break;
        }
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

/* Warns on stderr (rank 0) when the descriptors left neighbours out (beyond sel). */
static void warn_dropped(const char *path, int index, long dropped)
{
    if (hmd_comm_rank() == 0 && dropped > 0) {
        fprintf(stderr,
                "halomd: warning: %s frame %d: %ld neighbours within rcut are beyond the model's "
                "sel and left out of the descriptors (as DeePMD-kit does): the model sees fewer "
                "neighbours than there are\n",
                path, index, dropped);
    }
}

/* Writes the eval document (rank 0), backing up an existing file. */
static int write_eval(const struct cli *cli, const struct hmd_eval_json *doc)
{
    if (!cli->out) {
        return hmd_eval_json_write(doc, stdout, "standard output");
    }
    FILE *fp;
    int rc = hmd_output_create(cli->out, &fp);
    if (rc) {
        return rc;
    }
    rc = hmd_eval_json_write(doc, fp, cli->out);
    if (fclose(fp) && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", cli->out);
    }
    return rc;
}

/* Writes a JSON record to -o (rank 0), when one is asked for. */
static int write_record(const struct cli *cli, const json_t *doc)
{
    if (!cli->out || hmd_comm_rank() != 0) {
        return HMD_OK;
    }
    char note[512];
    int rc = hmd_json_write_file(cli->out, doc, JSON_INDENT(1) | JSON_REAL_PRECISION(17), note,
                                 sizeof note);
    if (!rc && note[0]) {
        fprintf(stderr, "%s\n", note);
    }
    return rc;
}

/* Run parameters of eval: defaults, then -f, then -set, then -backend, checked against the
 * model cut-off when it is opened; only the model, neighbour-list and model-deviation keys
 * matter to an evaluation. */
static int eval_parameters(const struct cli *cli, struct hmd_params *p)
{
    hmd_params_defaults(p);
    int rc = cli->mdp ? hmd_params_read(p, cli->mdp) : HMD_OK;
    for (int k = 0; k < cli->nset && !rc; k++) {
        rc = hmd_params_set(p, cli->set[k]);
    }
    if (!rc && cli->backend) {
        char assignment[64];
        snprintf(assignment, sizeof assignment, "backend=%s", cli->backend);
        rc = hmd_params_set(p, assignment);
    }
    return rc;
}

/* halomd eval -m model.dp -c conf: every frame into the JSON document. */
static int eval_frames(const struct cli *cli, struct hmd_evaluator *ev)
{
    struct hmd_frame *frames = NULL;
    struct hmd_eval_json *doc = NULL;
    const bool root = hmd_comm_rank() == 0;
    int nframes = 0;
    int rc = hmd_comm_agree(root ? hmd_structure_read(cli->conf, &frames, &nframes) : HMD_OK);
    if (rc) {
        return rc;
    }
    hmd_comm_bcast(&nframes, sizeof nframes, 0);
    if (root) {
        const char *names[64];
        for (int t = 0; t < ev->model.ntypes && t < 64; t++) {
            names[t] = ev->model.type_map[t];
        }
        doc = hmd_eval_json_create(cli->model, cli->conf, names, ev->model.ntypes);
        rc = doc ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory");
    }
    rc = hmd_comm_agree(rc);
    for (int f = 0; f < nframes && !rc; f++) {
        struct hmd_eval_result res;
        rc = hmd_evaluator_eval(ev, root ? &frames[f] : NULL, cli->conf, &res);
        if (rc && nframes > 1 && hmd_error_msg()[0]) {
            hmd_error_prefix(rc, "frame %d: ", f + 1);
        }
        if (!rc) {
            warn_dropped(cli->conf, f + 1, res.dropped);
        }
        if (!rc && root) {
            struct hmd_eval_frame_result out = {
                .natoms = res.natoms,
                .energy = res.energy,
                .atom_energy = res.atom_energy,
                .force = res.force,
                .virial = res.virial,
            };
            rc = hmd_eval_json_add(doc, &out);
        }
        rc = hmd_comm_agree(rc);
    }
    /* outputs are touched only once every input has been read and evaluated */
    if (!rc) {
        rc = hmd_comm_agree(root ? write_eval(cli, doc) : HMD_OK);
    }
    hmd_eval_json_destroy(&doc);
    hmd_frames_free(frames, nframes);
    return rc;
}

/* halomd eval -m model.dp -s data: dp test's report on stdout, its record in -o. */
static int eval_test(const struct cli *cli, struct hmd_evaluator *ev)
{
    json_t *doc = NULL;
    int rc = hmd_eval_test(ev, cli->model, cli->data, stdout, &doc);
    if (!rc) {
        rc = hmd_comm_agree(write_record(cli, doc));
    }
    json_decref(doc);
    return rc;
}

/* halomd eval -m a.dp b.dp ...: the model deviation of every frame. */
static int eval_devi(const struct cli *cli, const struct hmd_params *p)
{
    struct hmd_evaluator ev[MAX_MODELS];
    memset(ev, 0, sizeof ev);
    int rc = HMD_OK;
    for (int k = 0; k < cli->nmodels && !rc; k++) {
        rc = hmd_evaluator_open(&ev[k], cli->models[k], p, cli->dd);
    }
    char out[HMD_PATH_MAX];
    if (cli->deffnm) {
        snprintf(out, sizeof out, "%s.model_devi.out", cli->deffnm);
    } else {
        snprintf(out, sizeof out, "model_devi.out");
    }
    json_t *doc = NULL;
    if (!rc) {
        const struct hmd_eval_devi_options o = {
            .nmodels = cli->nmodels,
            .models = ev,
            .model_paths = cli->models,
            .conf = cli->conf,
            .root = cli->data,
            .freq = ev[0].params.model_devi_freq,
            .relative = ev[0].params.model_devi_relative,
            .relative_v = ev[0].params.model_devi_relative_v,
            .atomic = ev[0].params.model_devi_atomic,
            .out = out,
        };
        rc = hmd_eval_devi(&o, &doc);
    }
    if (!rc) {
        rc = hmd_comm_agree(write_record(cli, doc));
    }
    if (!rc && hmd_comm_rank() == 0) {
        printf("model deviation of %d models written to %s\n", cli->nmodels, out);
    }
    json_decref(doc);
    for (int k = 0; k < cli->nmodels; k++) {
        hmd_evaluator_close(&ev[k]);
    }
    return rc;
}

static int cmd_eval(const struct cli *cli)
{
    struct hmd_params p;
    int rc = require(cli->model, "-m model.dp", "eval");
    if (!rc && !cli->conf == !cli->data) {
        rc = hmd_error_set(HMD_EUSAGE, "halomd eval needs either -c structure or -s data "
                                       "(see halomd -h)");
    }
    if (!rc) {
        rc = eval_parameters(cli, &p);
    }
    if (rc) {
        return rc;
    }
    if (cli->nmodels > 1) {
        return eval_devi(cli, &p);
    }
    struct hmd_evaluator ev;
    rc = hmd_evaluator_open(&ev, cli->model, &p, cli->dd);
    if (!rc) {
        rc = cli->data ? eval_test(cli, &ev) : eval_frames(cli, &ev);
    }
    hmd_evaluator_close(&ev);
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
        .top = cli->top,
        .index = cli->index,
        .models = cli->models,
        .nmodels = cli->nmodels,
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
        .cpt_minutes = cli->cpt,
        .maxh = cli->maxh,
    };
    const int rc = require(cli->conf, "-c structure", "run");
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
    struct cli cli = {.cpt = 15.0, .maxh = -1.0};
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
