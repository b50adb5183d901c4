/* Energy minimisation as a run (integrator = steep or fire): the structure's positions are
 * minimised by md/minimize.c against the single-point evaluator (md/evaluator.h), the path of
 * `halomd eval`, on the CPU or the GPU and on any number of ranks; <deffnm>.log gets the
 * progress and the result, <deffnm>.gro the minimised structure.
 *
 * Every rank runs the minimiser on the same replicated positions: the evaluator spreads each
 * configuration over the ranks, rank 0 receives the forces and broadcasts them, so every rank
 * makes the same moves. Each force call sets the system up anew (decomposition, borders, list):
 * simple and right whatever the moves, at a cost that is small next to the model's. */
#include "md/run_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"
#include "core/error.h"
#include "dd/collect.h"
#include "hmd_buildinfo.h"
#include "io/backup.h"
#include "io/gro_write.h"
#include "md/minimize.h"

struct em {
    struct md *md;
    struct hmd_evaluator ev;
    const struct hmd_frame *start; /* rank 0: the structure's first frame */
    double *x;                     /* rank 0: positions handed to the evaluator */
    FILE *log;                     /* rank 0 */
    int64_t calls;
};

bool md_minimizing(const struct hmd_params *p)
{
    return !strcmp(p->integrator, "steep") || !strcmp(p->integrator, "fire");
}

/* hmd_em_force_fn over the evaluator: forces and energy on every rank. Collective. */
static int em_force(void *ctx, int n, const double *x, double *f, double *energy)
{
    struct em *em = ctx;
    const bool root = hmd_comm_rank() == 0;
    struct hmd_frame frame;
    if (root) {
        memcpy(em->x, x, sizeof(double) * 3 * (size_t)n);
        frame = *em->start;
        frame.x = em->x;
        frame.v = NULL;
    }
    struct hmd_eval_result res;
    int rc = hmd_evaluator_eval(&em->ev, root ? &frame : NULL, em->md->opt->conf, &res);
    rc = hmd_comm_agree(rc);
    if (rc) {
        return hmd_error_prefix(rc, "force evaluation %" PRId64 ": ", em->calls + 1);
    }
    if (root) {
        memcpy(f, res.force, sizeof(double) * 3 * (size_t)n);
        *energy = res.energy;
    }
    hmd_comm_bcast(f, sizeof(double) * 3 * (size_t)n, 0);
    hmd_comm_bcast(energy, sizeof *energy, 0);
    if (root && em->log && em->calls % 100 == 0) {
        fprintf(em->log, "force evaluation %6" PRId64 "   energy %.10f eV\n", em->calls + 1,
                *energy);
        fflush(em->log);
    }
    em->calls++;
    return HMD_OK;
}

/* The masses of the atoms by id on every rank (FIRE's dynamics), as the evaluator's system set
 * them up (the file's, or the standard atomic weights). Collective; after one evaluation. */
static int gather_masses(struct em *em, double *mass, int n)
{
    const struct hmd_atoms *a = &em->ev.sys.atoms;
    int rc = hmd_collect_gather(a->id, a->mass, a->nlocal, 1, mass, n);
    rc = hmd_comm_agree(rc);
    if (!rc) {
        hmd_comm_bcast(mass, sizeof(double) * (size_t)n, 0);
    }
    return rc;
}

/* Rank 0: the log's header; inputs have all been read. */
static int open_log(struct em *em, const struct hmd_em_opts *o)
{
    struct md *md = em->md;
    char path[HMD_MD_NAME_MAX], note[HMD_MD_NAME_MAX];
    md_output_path(md, ".log", path, sizeof path);
    int rc = hmd_output_open(path, &em->log, note, sizeof note);
    if (rc) {
        return rc;
    }
    if (note[0]) {
        fprintf(stderr, "halomd: %s\n", note);
    }
    fprintf(em->log, "halomd %s (commit %s), energy minimisation\n", HMD_VERSION, HMD_GIT_COMMIT);
    if (md->opt->cmdline) {
        fprintf(em->log, "command: %s\n", md->opt->cmdline);
    }
    fprintf(em->log,
            "integrator %s, emtol %g eV/Å, emstep %g %s, nsteps %" PRId64 "\n"
            "model %s, structure %s (%d atoms), backend %s\n\n",
            md->p.integrator, o->emtol, o->emstep, strcmp(md->p.integrator, "fire") ? "Å" : "ps",
            o->nsteps, md->model_path, md->opt->conf, em->start->natoms, em->ev.backend);
    return HMD_OK;
}

/* Rank 0: the result in the log and on stdout, as GROMACS words it, and <deffnm>.gro. */
static int write_result(struct em *em, const struct hmd_em_result *r, const double *x)
{
    struct md *md = em->md;
    const char *name = strcmp(md->p.integrator, "fire") ? "Steepest descents" : "FIRE";
    char line[512], path[HMD_MD_NAME_MAX], note[HMD_MD_NAME_MAX];
    if (r->converged) {
        snprintf(line, sizeof line, "%s converged to Fmax < %g eV/Å in %" PRId64 " steps", name,
                 md->p.emtol, r->steps);
    } else {
        snprintf(line, sizeof line,
                 "%s did not converge to Fmax < %g eV/Å in %" PRId64 " steps (raise nsteps, "
                 "or emtol when the model's precision is reached)",
                 name, md->p.emtol, r->steps);
    }
    for (int k = 0; k < 2; k++) {
        FILE *o = k ? stdout : em->log;
        fprintf(o,
                "\n%s\nforce evaluations %" PRId64 "\npotential energy  %.10f eV\n"
                "maximum force     %.6g eV/Å on atom %d (1-based)\n",
                line, r->evaluations, r->energy, r->fmax, r->fmax_atom + 1);
    }
    const struct hmd_frame *f0 = em->start;
    md_output_path(md, ".gro", path, sizeof path);
    int rc = hmd_gro_write(path, f0->title[0] ? f0->title : "halomd minimised", f0->natoms,
                           f0->name, f0->resname, f0->resnr, x, NULL, f0->has_box ? &f0->box : NULL,
                           r->steps, 0.0, note, sizeof note);
    if (!rc && note[0]) {
        fprintf(em->log, "%s\n", note);
    }
    if (!rc && !r->converged) {
        fprintf(stderr, "halomd: note: %s\n", line);
    }
    return rc;
}

/* Reads the structure (rank 0) and opens the model; the positions to minimise into *x on every
 * rank. Collective. */
static int em_inputs(struct em *em, struct hmd_frame **frames, int *nframes, double **x, int *n)
{
    struct md *md = em->md;
    const bool root = hmd_comm_rank() == 0;
    int rc = hmd_comm_agree(root ? hmd_structure_read(md->opt->conf, frames, nframes) : HMD_OK);
    if (!rc) {
        rc = hmd_evaluator_open(&em->ev, md->model_path, &md->p, md->opt->dd);
    }
    if (rc) {
        return rc;
    }
    *n = root ? (*frames)[0].natoms : 0;
    hmd_comm_bcast(n, sizeof *n, 0);
    *x = malloc(sizeof(double) * 3 * ((size_t)*n + 1));
    em->x = malloc(sizeof(double) * 3 * ((size_t)*n + 1));
    rc = hmd_comm_agree(*x && em->x ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory"));
    if (!rc && root) {
        em->start = &(*frames)[0];
        memcpy(*x, em->start->x, sizeof(double) * 3 * (size_t)*n);
    }
    if (!rc) {
        hmd_comm_bcast(*x, sizeof(double) * 3 * (size_t)*n, 0);
    }
    return rc;
}

int md_minimize(struct md *md)
{
    struct em em = {.md = md};
    struct hmd_frame *frames = NULL;
    int nframes = 0, n = 0;
    double *x = NULL, *mass = NULL;
    const bool root = hmd_comm_rank() == 0, fire = !strcmp(md->p.integrator, "fire");
    struct hmd_em_opts o = {.emtol = md->p.emtol, .emstep = md->p.emstep, .nsteps = md->p.nsteps};
    if (fire && !hmd_params_origin(&md->p, "emstep").file) {
        o.emstep = 0.0002; /* the default 0.1 is steep's, in Å; FIRE's largest step is 10 x
                              this, stable for O-H bonds */
    }
    int rc = em_inputs(&em, &frames, &nframes, &x, &n);
    if (!rc && fire) {
        mass = malloc(sizeof(double) * ((size_t)n + 1));
        double e;
        double *f = malloc(sizeof(double) * 3 * ((size_t)n + 1));
        rc = hmd_comm_agree(mass && f ? HMD_OK : hmd_error_set(HMD_ENOMEM, "out of memory"));
        rc = rc ? rc : em_force(&em, n, x, f, &e);
        rc = rc ? rc : gather_masses(&em, mass, n);
        free(f);
    }
    /* outputs only once the inputs have been read and evaluated */
    if (!rc) {
        rc = hmd_comm_agree(root ? open_log(&em, &o) : HMD_OK);
    }
    struct hmd_em_result r;
    if (!rc) {
        rc = fire ? hmd_em_fire(n, x, mass, em_force, &em, &o, &r)
                  : hmd_em_steep(n, x, em_force, &em, &o, &r);
    }
    if (!rc) {
        rc = hmd_comm_agree(root ? write_result(&em, &r, x) : HMD_OK);
    }
    if (rc && em.log) {
        fprintf(em.log, "\nhalomd: error: %s\n", hmd_error_msg());
    }
    if (em.log && fclose(em.log) && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s.log", md->opt->deffnm);
    }
    hmd_evaluator_close(&em.ev);
    hmd_frames_free(frames, nframes);
    free(em.x);
    free(x);
    free(mass);
    return rc;
}
