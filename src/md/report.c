#include "md/report.h"

#include <jansson.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "hmd_buildinfo.h"
#include "io/json_file.h"

void hmd_thermo_avg_add(struct hmd_thermo_avg *avg, const struct hmd_thermo *t)
{
    avg->n++;
    avg->temp += t->temp;
    avg->pe += t->pe;
    avg->ke += t->ke;
    avg->etot += t->etot;
    avg->press += t->press;
}

void hmd_report_thermo_header(FILE *out)
{
    fprintf(out, "%12s %10s %10s %18s %14s %18s %18s %12s %12s\n", "Step", "Time(ps)", "Temp(K)",
            "PotEng(eV)", "KinEng(eV)", "TotEng(eV)", "Conserved(eV)", "Press(bar)", "Volume(A3)");
}

void hmd_report_thermo_line(FILE *out, const struct hmd_thermo *t)
{
    fprintf(out, "%12lld %10.4f %10.3f %18.8f %14.8f %18.8f %18.8f %12.2f %12.3f\n",
            (long long)t->step, t->time, t->temp, t->pe, t->ke, t->etot, t->conserved, t->press,
            t->vol);
    fflush(out);
}

void hmd_report_terms(FILE *out, int nterms, const char *const *names, const double *value,
                      double pe, double press)
{
    const char *n[HMD_REPORT_MAX_TERMS + 2];
    double v[HMD_REPORT_MAX_TERMS + 2];
    int count = 0;
    for (int t = 0; t < nterms && count < HMD_REPORT_MAX_TERMS; t++, count++) {
        n[count] = names[t];
        v[count] = value[t];
    }
    n[count] = "Potential";
    v[count++] = pe;
    if (!isnan(press)) {
        n[count] = "Pressure (bar)";
        v[count++] = press;
    }
    fprintf(out, "   Energies (eV)\n");
    for (int row = 0; row < count; row += 5) {
        for (int k = row; k < count && k < row + 5; k++) {
            fprintf(out, "%15s", n[k]);
        }
        fputc('\n', out);
        for (int k = row; k < count && k < row + 5; k++) {
            fprintf(out, "%15.6e", v[k]);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
    fflush(out);
}

/* ns/day, steps/s and friends from wall time; zero when nothing ran. */
struct rates {
    double ns_per_day, hours_per_ns, steps_per_s, atom_steps_per_s, us_per_step_atom;
};

static struct rates rates_of(const struct hmd_perf *perf)
{
    struct rates r = {0};
    if (perf->wall > 0 && perf->nsteps > 0) {
        r.steps_per_s = (double)perf->nsteps / perf->wall;
        r.ns_per_day = (double)perf->nsteps * perf->dt * 1e-3 / (perf->wall / 86400.0);
        r.hours_per_ns = 24.0 / r.ns_per_day;
        r.atom_steps_per_s = r.steps_per_s * perf->natoms;
        r.us_per_step_atom = 1e6 / r.atom_steps_per_s;
    }
    return r;
}

void hmd_report_final(FILE *out, const struct hmd_perf *perf, const struct hmd_thermo_avg *avg)
{
    if (avg->n > 0) {
        const double n = (double)avg->n;
        fprintf(out, "\nAverages over %ld energy evaluations:\n", avg->n);
        fprintf(out,
                "  Temp %.3f K   PotEng %.8f eV   KinEng %.8f eV   TotEng %.8f eV   "
                "Press %.2f bar\n",
                avg->temp / n, avg->pe / n, avg->ke / n, avg->etot / n, avg->press / n);
    }
    const struct rates r = rates_of(perf);
    fprintf(out,
            "\nLoop time of %.6g s for %lld steps with %d atoms on %d rank%s x %d thread%s (%ld "
            "neighbour-list builds)\n",
            perf->wall, (long long)perf->nsteps, perf->natoms, perf->nranks,
            perf->nranks == 1 ? "" : "s", perf->nthreads, perf->nthreads == 1 ? "" : "s",
            perf->nbuilds);
    if (perf->nranks > 1) {
        fprintf(out,
                "Domain decomposition %d x %d x %d (%s), force imbalance avg %.1f%% max %.1f%%, "
                "%.3g s lost, boundaries moved %ld times\n",
                perf->grid[0], perf->grid[1], perf->grid[2],
                perf->replicated ? "replicated" : "halo", 100.0 * perf->imbalance_avg,
                100.0 * perf->imbalance_max, perf->imbalance_lost, perf->dlb_moves);
    }
    fprintf(out, "Atoms per rank: home avg %.0f max %.0f, ghosts avg %.0f max %.0f\n",
            perf->home_avg, perf->home_max, perf->ghost_avg, perf->ghost_max);
    if (perf->sel_steps > 0) {
        fprintf(out,
                "Neighbours beyond sel: in %lld %s (first at step %lld), at most %ld left out of "
                "the descriptors: the model saw fewer neighbours than there were\n",
                (long long)perf->sel_steps,
                perf->sel_every_step ? "evaluations"
                                     : "output steps (the GPU's count is read there)",
                (long long)perf->sel_first_step, perf->sel_max_dropped);
    }
    if (perf->device_bytes > 0) {
        fprintf(out,
                "GPU memory %.1f MiB, %.0f bytes per atom (the whole step on the GPU: "
                "Force is the device's time for the steps, integration and the force "
                "providers, and the halo where Halo does not show it; Neighbour list is the "
                "list steps' own work)\n",
                perf->device_bytes / 1048576.0, perf->device_bytes / perf->natoms);
        if (perf->nranks > 1) {
            fprintf(out, "GPU memory of the rank that holds the most: %.1f MiB\n",
                    perf->device_bytes_rank_max / 1048576.0);
        }
    }
    if (perf->list_steps > 0) {
        const struct hmd_perf_list_ms *l = &perf->list_ms;
        fprintf(out,
                "List steps (%ld), ms each, the most over ranks: first half and positions to the "
                "host %.3f, migration and ghosts %.3f, upload %.3f, halo set-up %.3f, providers' "
                "lists %.3f, forces and the step's end %.3f (the device's forces %.3f); the "
                "slowest %.3f (step %lld)\n",
                perf->list_steps, l->to_host, l->host, l->upload, l->halo, l->prepare, l->rest,
                l->device_forces, l->slowest, l->slowest_step);
    }
    if (perf->halo_forwards > 0) {
        fprintf(out,
                "Halo per step on the device clock, min / avg / max over ranks (us): forward "
                "%.1f / %.1f / %.1f, reverse %.1f / %.1f / %.1f",
                perf->halo_forward_us[0], perf->halo_forward_us[1], perf->halo_forward_us[2],
                perf->halo_reverse_us[0], perf->halo_reverse_us[1], perf->halo_reverse_us[2]);
        if (perf->halo_waits) {
            const double *wf = perf->halo_wait_forward_us, *wr = perf->halo_wait_reverse_us;
            fprintf(out,
                    "; of which waiting for other ranks: forward %.1f / %.1f / %.1f, reverse "
                    "%.1f / %.1f / %.1f",
                    wf[0], wf[1], wf[2], wr[0], wr[1], wr[2]);
        }
        fprintf(out, " (Halo below; Force is the rest of the device's steps)\n");
    }
    fprintf(out, "\n%-16s %12s %12s %12s %10s %8s\n", "Section", "min (s)", "avg (s)", "max (s)",
            "calls", "%total");
    fprintf(out, "--------------------------------------------------------------------------\n");
    double sum = 0.0;
    for (int p = 0; p < HMD_TIMER_NPHASES; p++) {
        sum += perf->phase_avg[p];
        fprintf(out, "%-16s %12.6g %12.6g %12.6g %10ld %7.2f%%\n", hmd_timer_name(p),
                perf->phase_min[p], perf->phase_avg[p], perf->phase_max[p], perf->timers.calls[p],
                perf->wall > 0 ? 100.0 * perf->phase_avg[p] / perf->wall : 0.0);
    }
    double other = perf->wall - sum;
    fprintf(out, "%-16s %12s %12.6g %12s %10s %7.2f%%\n", "Other", "", other > 0 ? other : 0.0, "",
            "", perf->wall > 0 ? 100.0 * (other > 0 ? other : 0.0) / perf->wall : 0.0);
    fprintf(out, "\n%-12s %12s %12s %12s %16s %16s\n", "", "(ns/day)", "(hour/ns)", "(steps/s)",
            "(atom-steps/s)", "(us/step/atom)");
    fprintf(out, "%-12s %12.4g %12.4g %12.4g %16.4g %16.4g\n", "Performance:", r.ns_per_day,
            r.hours_per_ns, r.steps_per_s, r.atom_steps_per_s, r.us_per_step_atom);
    fflush(out);
}

void hmd_report_host(char *host, size_t host_len, char *cpu, size_t cpu_len)
{
    if (gethostname(host, host_len) != 0) {
        snprintf(host, host_len, "unknown");
    }
    host[host_len - 1] = '\0';
    snprintf(cpu, cpu_len, "unknown");
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (!fp) {
        return;
    }
    char line[512];
    while (fgets(line, sizeof line, fp)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                snprintf(cpu, cpu_len, "%s", colon + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(fp);
}

/* The effective parameters as a JSON object, parsed back from hmd_params_write's text. */
static json_t *params_json(const struct hmd_params *p)
{
    json_t *obj = json_object();
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        return obj;
    }
    hmd_params_write(p, mem);
    fclose(mem);
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (line[0] == ';' || !eq) {
            continue;
        }
        char *semi = strchr(eq, ';');
        if (semi) {
            *semi = '\0';
        }
        *eq = '\0';
        char key[128], value[4096];
        if (sscanf(line, " %127s", key) != 1) {
            continue;
        }
        value[0] = '\0';
        sscanf(eq + 1, " %4095[^\n]", value);
        size_t n = strlen(value);
        while (n && value[n - 1] == ' ') {
            value[--n] = '\0';
        }
        json_object_set_new(obj, key, json_string(value));
    }
    free(buf);
    return obj;
}

int hmd_report_perf_json(const char *path, const struct hmd_params *p, const char *conf,
                         const char *model, const struct hmd_perf *perf,
                         const struct hmd_thermo *last)
{
    char host[256], cpu[256], date[64], note[512];
    hmd_report_host(host, sizeof host, cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", localtime(&now));
    const struct rates r = rates_of(perf);
    json_t *phases = json_object();
    for (int ph = 0; ph < HMD_TIMER_NPHASES; ph++) {
        json_object_set_new(phases, hmd_timer_name(ph),
                            json_pack("{s:f, s:f, s:f, s:f, s:I}", "seconds", perf->phase_avg[ph],
                                      "min", perf->phase_min[ph], "avg", perf->phase_avg[ph], "max",
                                      perf->phase_max[ph], "calls",
                                      (json_int_t)perf->timers.calls[ph]));
    }
    json_t *dd = json_pack(
        "{s:i, s:[i,i,i], s:s, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
        "s:f}",
        "ranks", perf->nranks, "grid", perf->grid[0], perf->grid[1], perf->grid[2], "mode",
        perf->replicated ? "replicated" : "halo", "dlb_intervals", (json_int_t)perf->dlb_intervals,
        "dlb_moves", (json_int_t)perf->dlb_moves, "imbalance_avg", perf->imbalance_avg,
        "imbalance_max", perf->imbalance_max, "imbalance_last", perf->imbalance_last,
        "imbalance_lost_s", perf->imbalance_lost, "home_avg", perf->home_avg, "home_max",
        perf->home_max, "ghost_avg", perf->ghost_avg, "ghost_max", perf->ghost_max);
    json_t *root = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:s}, s:{s:s, s:s, s:i}, s:s, s:s, s:o, "
        "s:{s:i, s:I, s:f, s:I}, s:{s:f, s:f, s:f, s:f, s:f, s:f}, s:o, s:{s:f, s:f, s:f}}",
        "schema", "halomd-perf-1", "date", date, "build", "version", HMD_VERSION, "commit",
        HMD_GIT_COMMIT, "type", HMD_BUILD_TYPE, "options", HMD_BUILD_FEATURES, "compiler",
        HMD_COMPILER, "host", "name", host, "cpu", cpu, "threads", perf->nthreads, "structure",
        conf, "model", model, "parameters", params_json(p), "system", "natoms", perf->natoms,
        "nsteps", (json_int_t)perf->nsteps, "dt_ps", perf->dt, "neighbor_builds",
        (json_int_t)perf->nbuilds, "performance", "wall_s", perf->wall, "ns_per_day", r.ns_per_day,
        "hours_per_ns", r.hours_per_ns, "steps_per_s", r.steps_per_s, "atom_steps_per_s",
        r.atom_steps_per_s, "us_per_step_atom", r.us_per_step_atom, "phases", phases, "final",
        "temp_K", last->temp, "pe_eV", last->pe, "conserved_eV", last->conserved);
    if (!root) {
        json_decref(dd);
        return hmd_error_set(HMD_ESOFTWARE, "cannot build the run record %s", path);
    }
    json_object_set_new(root, "decomposition", dd);
    if (perf->model_hash[0]) {
        json_object_set_new(root, "model_hash_xxh3_128", json_string(perf->model_hash));
    }
    json_object_set_new(root, "neighbors_beyond_sel",
                        json_pack("{s:s, s:I, s:I, s:I}", "checked",
                                  perf->sel_every_step ? "every evaluation" : "output steps",
                                  "evaluations", (json_int_t)perf->sel_steps, "first_step",
                                  (json_int_t)perf->sel_first_step, "max_left_out",
                                  (json_int_t)perf->sel_max_dropped));
    json_object_set_new(root, "backend",
                        json_pack("{s:s, s:f, s:f, s:f}", "name",
                                  perf->backend ? perf->backend : "", "device_bytes",
                                  perf->device_bytes, "device_bytes_per_atom",
                                  perf->natoms > 0 ? perf->device_bytes / perf->natoms : 0.0,
                                  "device_bytes_rank_max", perf->device_bytes_rank_max));
    if (perf->list_steps > 0) {
        const struct hmd_perf_list_ms *l = &perf->list_ms;
        json_object_set_new(root, "list_steps",
                            json_pack("{s:I, s:{s:f, s:f, s:f, s:f, s:f, s:f, s:f}, s:{s:f, s:I}}",
                                      "count", (json_int_t)perf->list_steps, "ms_each", "to_host",
                                      l->to_host, "migration_and_ghosts", l->host, "upload",
                                      l->upload, "halo_setup", l->halo, "providers_prepare",
                                      l->prepare, "forces_and_end", l->rest, "device_forces",
                                      l->device_forces, "slowest", "ms", l->slowest, "step",
                                      (json_int_t)l->slowest_step));
    }
    if (perf->halo_forwards > 0) {
        json_t *h = json_object();
        const char *names[] = {"forward", "reverse", "forward_wait", "reverse_wait"};
        const double *v[] = {perf->halo_forward_us, perf->halo_reverse_us,
                             perf->halo_wait_forward_us, perf->halo_wait_reverse_us};
        for (int k = 0; k < (perf->halo_waits ? 4 : 2); k++) {
            json_object_set_new(
                h, names[k],
                json_pack("{s:f, s:f, s:f}", "min", v[k][0], "avg", v[k][1], "max", v[k][2]));
        }
        json_object_set_new(h, "steps", json_integer((json_int_t)perf->halo_forwards));
        json_object_set_new(root, "halo_us_per_step", h);
    }
    const int rc = hmd_json_write_file(path, root, JSON_INDENT(2) | JSON_REAL_PRECISION(12), note,
                                       sizeof note);
    json_decref(root);
    return rc;
}
