#!/usr/bin/env python3
"""GPU checks of halomd (label gpu): the CUDA backend against DeePMD-kit's goldens and against
the CPU reference on fresh random configurations, and energy conservation of MD on the GPU.

Usage: check_gpu.py TEST HALOMD DATA WORKDIR
  goldens  every golden (se_e2_a, DPA-1, networks and compressed) with `-backend cuda`,
           within the golden's tolerance.
  twin     fresh random water-like configurations (seed printed; HMD_TWIN_SEED to repeat) in
           triclinic cells, each model evaluated by both backends: energies, atom energies,
           forces and virial within 1e-10 relative (max|a-b| / max|b|); se_e2_a models also
           in chunks of 7 centres (HALOMD_GPU_CHUNK_ROWS), and networks in the per-centre
           kernels as well as over all slots (HALOMD_SE_SLOTS=0), the embedding over all slots
           on the FP64 tensor cores and layer by layer (HALOMD_GPU_DMMA=0); a 200-wide
           embedding (derived/se_e2_a_wide.dp) also compressed in mixed precision, within
           the mixed bound (1e-5) of the CPU's double.
  dense    water at twice the density: both backends leave out the same neighbours beyond sel
           (the count in eval's warning) and agree within 1e-10.
  nve      NVE water on the GPU: the conserved energy stays within 1e-6 eV/atom and its
           fluctuation falls about 4x when dt halves.
  mdtwin   the same short runs with both backends (NVE with list updates when needed,
           v-rescale with nstlist, Langevin with centre-of-mass removal, the compressed model,
           DPA-1, se_e2_a in chunks of 10 centres and in the per-centre kernels):
           energies of every step within 1e-9 relative, the same number of list builds, the
           same final positions.
  reproducible  the same GPU run twice (se_e2_a networks in double and mixed precision,
           compressed, DPA-1; list updates, a thermostat): identical energy files and
           trajectories, byte for byte (no order of the GPU's threads may show in the results).
  phases   the performance table of a GPU run whose steps are mostly the model's evaluation
           (1.67M DPA-1, 192 atoms, a list every 10 steps, output every 15): Force holds the
           device's time (most of the wall time, one call a step), Neighbour list and Output
           only their own work, and the phases add up to the wall time (within 1%).
  mixed    every golden (se_e2_a and DPA-1) with precision = mixed within MIXED_BOUND of
           DeePMD-kit (table in WORKDIR/mixed_errors.json), se_e2_a networks over all slots
           and in the per-centre kernels, DPA-1's input projection in 3xTF32 and as an SGEMM,
           and NVE in mixed precision (se_e2_a networks and compressed, DPA-1) within
           MIXED_NVE_BOUND.
Exits 77 (CTest: skipped) when no CUDA device is visible. Standard library only.
"""
import json
import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
from compare_eval import compare, relative_error  # noqa: E402

SKIP = 77
# evaluations of the goldens run this many at a time (separate processes sharing the GPU)
PARALLEL = min(8, os.cpu_count() or 1)


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def need_device(halomd, data):
    res = sh([halomd, "eval", "-backend", "cuda", "-m", f"{data}/models/deeppot.dp",
              "-c", f"{data}/structures/deeppot_case1.xyz", "-o", os.devnull])
    if res.returncode != 0:
        print(f"skipped: {res.stderr.strip()}")
        sys.exit(SKIP)


def evaluate(halomd, backend, model, conf, out, extra=(), env=None):
    if os.path.exists(out):
        os.remove(out)
    res = sh([halomd, "eval", "-backend", backend, "-m", model, "-c", conf, "-o", out, *extra],
             env={**os.environ, **env} if env else None)
    if res.returncode != 0:
        raise SystemExit(f"halomd eval -backend {backend} {model} {conf}: {res.stderr}")
    with open(out) as f:
        return json.load(f)


def in_parallel(fn, items):
    """fn(item) for every item, PARALLEL at a time (fn runs halomd); the results in order, and
    the first exception raised again."""
    with ThreadPoolExecutor(PARALLEL) as pool:
        return list(pool.map(fn, items))


def golden_runs(data):
    """(golden file name, golden, how, model, extra args) of every evaluation the goldens ask
    for: the model as built and, for compressed goldens, DeePMD-kit's compressed file too."""
    folder = os.path.join(data, "golden")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as f:
            golden = json.load(f)
        comp = golden.get("compression")
        if not comp:
            yield name, golden, "built", golden["model"], []
            continue
        yield name, golden, "built", golden["model"], [
            "-set", "model-compress=yes", "-set", f"compress-stride={comp['stride0']}",
            "-set", f"compress-extrapolate={comp['extrapolate']}"]
        if comp.get("compressed_model"):
            yield name, golden, "file", comp["compressed_model"], []


def goldens(halomd, data, work):
    runs = list(golden_runs(data))
    outs = in_parallel(lambda k: evaluate(halomd, "cuda", f"{data}/{runs[k][3]}",
                                          f"{data}/{runs[k][1]['structure']}",
                                          os.path.join(work, f"gpu_{k}.json"), runs[k][4]),
                       range(len(runs)))
    ok = True
    for (name, golden, how, model, extra), out in zip(runs, outs):
        failures, report = compare(out, golden)
        worst = max(float(line.split("rel err")[1].split()[0]) for line in report)
        print(f"{'ok  ' if not failures else 'FAIL'} {name} ({how}): worst {worst:.2e}")
        for line in failures:
            print("     ", line)
        ok &= not failures
    return ok


# precision = mixed runs the se_e2_a embedding (layers or tables) and DPA-1's network
# (embedding and attention) in fp32 (unit roundoff 6e-8; DPA-1's input projection in 3xTF32,
# about 2^-21), everything else in double. Its documented bound (docs/performance.md): every
# quantity within 1e-5 of max|DeePMD-kit| (max|a-b| / max|b|, as the goldens), the conserved
# energy of NVE within 1e-6 eV/atom (standard deviation over the run), as in double.
MIXED_BOUND = 1e-5
MIXED_NVE_BOUND = 1e-6
QUANTITIES = ("energy", "atom_energy", "force", "virial")


def descriptor_of(halomd, model):
    """The descriptor line of `halomd info` (se_e2_a, dpa1, se_atten, se_atten_v2)."""
    res = sh([halomd, "info", "-m", model])
    for line in res.stdout.splitlines():
        if line.split()[:1] == ["descriptor"]:
            return line.split()[1]
    raise SystemExit(f"halomd info -m {model}: no descriptor line: {res.stdout}{res.stderr}")


def mixed_paths(kind, extra):
    """The GPU paths a golden is evaluated through in mixed precision: se_e2_a networks over all
    slots (the default) and in the per-centre kernels (compressed models have one path); DPA-1's
    input projection in 3xTF32 (the default) and as an SGEMM."""
    if kind == "se_e2_a":
        if "model-compress=yes" in extra:
            return [("compressed", None)]
        return [("slots", None), ("per-centre", {"HALOMD_SE_SLOTS": "0"})]
    return [("3xtf32", None), ("sgemm", {"HALOMD_GPU_TF32X3": "0"})]


def mixed(halomd, data, work):
    ok = True
    table, kinds, cases = [], {}, []
    for name, golden, how, model, extra in golden_runs(data):
        if model not in kinds:
            kinds[model] = descriptor_of(halomd, f"{data}/{model}")
        cases += [(name, golden, how, model, extra, path, env)
                  for path, env in mixed_paths(kinds[model], extra)]
    outs = in_parallel(lambda k: evaluate(halomd, "cuda", f"{data}/{cases[k][3]}",
                                          f"{data}/{cases[k][1]['structure']}",
                                          os.path.join(work, f"gpu_{k}.json"),
                                          [*cases[k][4], "-set", "precision=mixed"], cases[k][6]),
                       range(len(cases)))
    for (name, golden, how, model, extra, path, env), got in zip(cases, outs):
        errs = {q: max(relative_error(a[q], b[q]) for a, b in zip(got["frames"], golden["frames"]))
                for q in QUANTITIES}
        good = all(e <= MIXED_BOUND for e in errs.values())
        ok &= good
        table.append({"golden": name, "model": how, "descriptor": kinds[model], "path": path,
                      "errors": errs})
        print(f"{'ok  ' if good else 'FAIL'} {name} ({how}, {path}): "
              + ", ".join(f"{q} {e:.1e}" for q, e in errs.items()))
    ran = {r["descriptor"] for r in table}
    if "se_e2_a" not in ran or not ran - {"se_e2_a"}:
        print(f"FAIL: goldens of se_e2_a and of DPA-1 must both run; ran {sorted(ran)}")
        ok = False
    # NVE as the double-precision test `nve` (20 fs at dt 0.2 fs: the random-weight model
    # drives this box apart after about 25 fs, in double as well), mixed against double
    nve_rows = []
    for label, model, extra in (("networks", "se_e2_a_water_one_side.dp", []),
                                ("compressed", "se_e2_a_water_one_side.dp",
                                 ["-set", "model-compress=yes"]),
                                ("DPA-1", "se_atten_v2_small.dp", [])):
        std = {}
        for precision in ("double", "mixed"):
            name = f"nve_{precision}_{label}"
            res = sh([halomd, "run", "-backend", "cuda", "-deffnm", name,
                      "-m", f"{data}/models/{model}", "-c", f"{data}/structures/water_96_small.xyz", "-nsteps", "100", *extra,
                      "-set", f"precision={precision}", "-set", "dt=0.0002", "-set", "gen-vel=yes",
                      "-set", "gen-temp=300", "-set", "gen-seed=11", "-set", "nstenergy=5",
                      "-set", "nstcalcenergy=5", "-set", "nstlog=100"], cwd=work)
            if res.returncode != 0:
                raise SystemExit(res.stderr)
            e = read_csv(os.path.join(work, name + ".energy.csv"))["conserved_eV"]
            std[precision] = statistics.pstdev(e) / 96
        good = std["mixed"] < MIXED_NVE_BOUND
        ok &= good
        nve_rows.append({"model": label, "conserved_std_eV_per_atom": std})
        print(f"{'ok  ' if good else 'FAIL'} NVE {label}, 20 fs: conserved energy std mixed "
              f"{std['mixed']:.2e} eV/atom (< {MIXED_NVE_BOUND:.0e}), double {std['double']:.2e}")
    worst = {}
    for kind in sorted(ran):
        rows = [r for r in table if r["descriptor"] == kind]
        worst[kind] = {q: max(r["errors"][q] for r in rows) for q in QUANTITIES}
        print(f"worst over the {kind} goldens: "
              + ", ".join(f"{q} {e:.1e}" for q, e in worst[kind].items()))
    with open(os.path.join(work, "mixed_errors.json"), "w") as f:
        json.dump({"bound": MIXED_BOUND, "nve_bound_eV_per_atom": MIXED_NVE_BOUND,
                   "worst": worst, "goldens": table, "nve": nve_rows}, f, indent=1)
    return ok


def water_xyz(path, rng, nside, cell):
    """O on a jittered grid of the (triclinic) cell, two H about 1 Å from each O, every H at
    least 0.5 Å from the atoms placed before it (halomd refuses overlapping atoms)."""
    lines = []
    for m in range(nside ** 3):
        s = [((m // nside ** k) % nside + 0.5 + 0.3 * (rng.random() - 0.5)) / nside
             for k in range(3)]
        o = [sum(s[k] * cell[k][d] for k in range(3)) for d in range(3)]
        lines.append(("O", o))
        for _ in range(2):
            while True:
                u = [rng.gauss(0, 1) for _ in range(3)]
                n = sum(v * v for v in u) ** 0.5
                h = [o[d] + 0.98 * u[d] / n for d in range(3)]
                if all(sum((h[d] - p[d]) ** 2 for d in range(3)) >= 0.25 for _, p in lines):
                    break
            lines.append(("H", h))
    lattice = " ".join(f"{v:.10f}" for row in cell for v in row)
    with open(path, "w") as f:
        f.write(f"{len(lines)}\nLattice=\"{lattice}\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n")
        for el, p in lines:
            f.write(f"{el} {p[0]:.12f} {p[1]:.12f} {p[2]:.12f}\n")


def twin(halomd, data, work):
    seed = int(os.environ.get("HMD_TWIN_SEED", time.time_ns() % 2 ** 31))
    print(f"random seed {seed} (HMD_TWIN_SEED={seed} repeats this run)")
    rng = random.Random(seed)
    models = [("se_e2_a_water_one_side.dp", []), ("se_e2_a_water_two_side.dp", []),
              ("se_e2_a_small_gelu_excl.dp", []), ("se_e2_a_water_one_side.dp",
                                                   ["-set", "model-compress=yes"]),
              ("dpa1_water.dp", []), ("dpa1_small_strip_smooth_temp.dp", []),
              ("dpa1_small_wide.dp", []),
              ("se_atten_v2_small.dp", []), ("dpa1_small_tebd2_excl.dp", []),
              ("compressed_coarse_dpa1_small_strip_l0.dp", []),
              # an embedding of 200 outputs: two passes of the compressed kernels, the second
              # not full (derived/, from make_test_inputs.py)
              ("../derived/se_e2_a_wide.dp", []),
              ("../derived/se_e2_a_wide.dp", ["-set", "model-compress=yes"])]
    # se_e2_a in chunks of 7 centres (HALOMD_GPU_CHUNK_ROWS), so small systems take the path
    # that systems beyond 32,768 atoms take
    chunked = [("se_e2_a_water_one_side.dp", []), ("se_e2_a_small_3types.dp", []),
               ("se_e2_a_water_one_side.dp", ["-set", "model-compress=yes"])]
    # se_e2_a networks in double go over all slots, the embedding in one kernel on the FP64
    # tensor cores by default; HALOMD_GPU_DMMA=0 runs it layer by layer (DGEMMs), and
    # HALOMD_SE_SLOTS=0 keeps the networks in the per-centre descriptor kernels, whole and in
    # chunks
    per_centre, layers = {"HALOMD_SE_SLOTS": "0"}, {"HALOMD_GPU_DMMA": "0"}
    slots = [("se_e2_a_water_one_side.dp", per_centre),
             ("se_e2_a_water_two_side.dp", per_centre),
             ("se_e2_a_small_gelu_excl.dp", per_centre),
             ("se_e2_a_small_3types.dp", dict(per_centre, HALOMD_GPU_CHUNK_ROWS="7")),
             ("se_e2_a_water_two_side.dp", layers), ("se_e2_a_small_gelu_excl.dp", layers),
             ("se_e2_a_small_3types.dp", dict(layers, HALOMD_GPU_CHUNK_ROWS="7"))]
    runs = [(m, e, None) for m, e in models] + [(m, e, {"HALOMD_GPU_CHUNK_ROWS": "7"})
                                                for m, e in chunked]
    runs += [(m, [], env) for m, env in slots]
    # compressed kernels split small systems' slots over 4 warps per centre; large systems take
    # one warp per centre, and 2 is in between (HALOMD_GPU_SLOT_WARPS)
    runs += [(m, ["-set", "model-compress=yes"], {"HALOMD_GPU_SLOT_WARPS": w})
             for m in ("se_e2_a_water_one_side.dp", "../derived/se_e2_a_wide.dp")
             for w in ("1", "2")]
    # the two passes of the compressed kernels with the table in fp32, within the mixed bound
    runs += [("../derived/se_e2_a_wide.dp",
              ["-set", "model-compress=yes", "-set", "precision=mixed"], None)]
    ok = True
    for k in range(3):
        a = 9.0 + 4 * rng.random()
        cell = [[a, 0, 0], [rng.uniform(-2, 2), a, 0], [rng.uniform(-2, 2), rng.uniform(-2, 2), a]]
        conf = os.path.join(work, f"random{k}.xyz")
        water_xyz(conf, rng, 3 + k, cell)
        for model, extra, env in runs:
            # the CPU computes in double: a mixed run's reference is the double evaluation
            cpu_extra = [x for opt in zip(extra[::2], extra[1::2])
                         if opt[1] != "precision=mixed" for x in opt]
            ref = evaluate(halomd, "cpu", f"{data}/models/{model}", conf,
                           os.path.join(work, "cpu.json"), cpu_extra)["frames"][0]
            gpu = evaluate(halomd, "cuda", f"{data}/models/{model}", conf,
                           os.path.join(work, "gpu.json"), extra, env)["frames"][0]
            errs = {q: relative_error(gpu[q], ref[q])
                    for q in ("energy", "atom_energy", "force", "virial")}
            bound = MIXED_BOUND if "precision=mixed" in extra else 1e-10
            good = all(e <= bound for e in errs.values())
            ok &= good
            print(f"{'ok  ' if good else 'FAIL'} config {k} ({ref['natoms'] if 'natoms' in ref else ''}"
                  f" atoms) {model} {' '.join(extra)}{' ' + str(env) if env else ''}: "
                  + ", ".join(f"{q} {e:.1e}" for q, e in errs.items()))
    return ok


def dense(halomd, data, work):
    """Water at twice the density (more neighbours than sel): both backends leave out the same
    neighbours (the count in the warning) and agree within 1e-10."""
    conf = f"{data}/derived/water_192_compressed.xyz"
    ok = True
    for model in ("se_e2_a_water_one_side.dp", "dpa1_water.dp"):
        runs = {}
        for backend in ("cpu", "cuda"):
            out = os.path.join(work, f"dense_{backend}.json")
            if os.path.exists(out):
                os.remove(out)
            res = sh([halomd, "eval", "-backend", backend, "-m", f"{data}/models/{model}",
                      "-c", conf, "-o", out])
            if res.returncode != 0:
                raise SystemExit(f"{model} {backend}: {res.stderr}")
            words = res.stderr.split("frame 1: ")
            left_out = int(words[1].split()[0]) if len(words) > 1 else 0
            with open(out) as f:
                runs[backend] = (left_out, json.load(f)["frames"][0])
        (n_cpu, ref), (n_gpu, gpu) = runs["cpu"], runs["cuda"]
        errs = {q: relative_error(gpu[q], ref[q]) for q in ("energy", "atom_energy", "force",
                                                            "virial")}
        good = n_cpu > 0 and n_cpu == n_gpu and all(e <= 1e-10 for e in errs.values())
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} dense water {model}: left out cpu {n_cpu} gpu "
              f"{n_gpu}, " + ", ".join(f"{q} {e:.1e}" for q, e in errs.items()))
    return ok


def nve(halomd, data, work):
    spread = {}
    for dt in (0.0002, 0.0001):
        name = f"nve{dt}"
        res = sh([halomd, "run", "-backend", "cuda", "-deffnm", name,
                  "-m", f"{data}/models/se_e2_a_water_one_side.dp",
                  "-c", f"{data}/structures/water_96_small.xyz",
                  "-nsteps", str(round(0.02 / dt)), "-set", f"dt={dt}", "-set", "gen-vel=yes",
                  "-set", "gen-temp=300", "-set", "gen-seed=11", "-set", "nstenergy=5",
                  "-set", "nstcalcenergy=5", "-set", "nstlog=50"], cwd=work)
        if res.returncode != 0:
            raise SystemExit(res.stderr)
        with open(os.path.join(work, name + ".energy.csv")) as f:
            header = f.readline().strip().split(",")
            col = header.index("conserved_eV")
            e = [float(line.split(",")[col]) for line in f]
        spread[dt] = statistics.pstdev(e)
        print(f"dt {dt} ps: conserved energy std {spread[dt]:.3e} eV over {len(e)} samples")
    ratio = spread[0.0002] / spread[0.0001]
    ok = spread[0.0001] < 1e-6 * 96
    ok &= 3.0 < ratio < 6.0
    print(f"{'ok  ' if ok else 'FAIL'} std {spread[0.0001]:.2e} eV (< {1e-6 * 96:.1e}), "
          f"dt ratio {ratio:.2f} (3..6)")
    return ok


def read_csv(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        rows = [[float(v) for v in line.split(",")] for line in f]
    return {h: [r[k] for r in rows] for k, h in enumerate(header)}


def run_md(halomd, backend, name, model, conf, settings, work, env=None):
    cmd = [halomd, "run", "-backend", backend, "-deffnm", name, "-m", model, "-c", conf,
           "-nsteps", "60"]
    for kv in settings:
        cmd += ["-set", kv]
    res = sh(cmd, cwd=work, env={**os.environ, **env} if env else None)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {res.stderr}")
    with open(os.path.join(work, name + ".perf.json")) as f:
        builds = json.load(f)["system"]["neighbor_builds"]
    return read_csv(os.path.join(work, name + ".energy.csv")), builds


def mdtwin(halomd, data, work):
    common = ["dt=0.0005", "gen-vel=yes", "gen-temp=300", "gen-seed=5", "nstenergy=1",
              "nstcalcenergy=1", "nstlog=20", "nstxout=30", "nstvout=30", "nstfout=30"]
    water = f"{data}/models/se_e2_a_water_one_side.dp"
    cases = {  # name: (model, settings[, environment of the GPU run])
        "nve_auto_list": (water, ["verlet-buffer=0.3", "nstlist=0"]),
        "vrescale_nstlist": (water, ["verlet-buffer=1", "nstlist=5", "tcoupl=v-rescale",
                                     "tau-t=0.01", "ref-t=350", "ld-seed=3"]),
        "langevin_com": (water, ["verlet-buffer=0.4", "tcoupl=langevin", "tau-t=0.02",
                                 "ref-t=250", "ld-seed=9", "comm-mode=linear", "nstcomm=7"]),
        "compressed": (water, ["verlet-buffer=0.3", "model-compress=yes"]),
        "dpa1": (f"{data}/models/se_atten_v2_small.dp", ["verlet-buffer=0.3"]),
        "dpa1_no_switches": (f"{data}/models/se_atten_v2_small.dp", ["verlet-buffer=0.3"],
                             {"HALOMD_GPU_SWITCHES": "0"}),
        "chunked": (water, ["verlet-buffer=0.3", "tcoupl=v-rescale", "tau-t=0.05", "ref-t=300",
                            "ld-seed=4"], {"HALOMD_GPU_CHUNK_ROWS": "10"}),
        "per_centre": (water, ["verlet-buffer=0.3", "tcoupl=v-rescale", "tau-t=0.05",
                               "ref-t=300", "ld-seed=4"], {"HALOMD_SE_SLOTS": "0"}),
    }
    conf = f"{data}/structures/water_96_small.xyz"
    ok = True
    for name, (m, settings, *env) in cases.items():
        cpu, nb_cpu = run_md(halomd, "cpu", name + "_cpu", m, conf, common + settings, work)
        gpu, nb_gpu = run_md(halomd, "cuda", name + "_gpu", m, conf, common + settings, work,
                             env[0] if env else None)
        errs = {q: relative_error(gpu[q], cpu[q]) for q in ("pe_eV", "ke_eV", "conserved_eV")}
        good = all(e <= 1e-9 for e in errs.values()) and nb_cpu == nb_gpu
        good &= len(cpu["step"]) == len(gpu["step"])
        ok &= good
        print(f"{'ok  ' if good else 'FAIL'} {name}: list builds cpu {nb_cpu} gpu {nb_gpu}, "
              + ", ".join(f"{q} {e:.1e}" for q, e in errs.items()))
    return ok


def reproducible(halomd, data, work):
    common = ["dt=0.0005", "gen-vel=yes", "gen-temp=300", "gen-seed=5", "nstenergy=1",
              "nstcalcenergy=1", "nstlog=0", "nstxout=10", "nstvout=10", "nstfout=10",
              "verlet-buffer=0.3", "tcoupl=v-rescale", "tau-t=0.05", "ref-t=300", "ld-seed=4"]
    water = f"{data}/models/se_e2_a_water_one_side.dp"
    cases = {"networks": (water, []), "mixed": (water, ["precision=mixed"]),
             "compressed": (water, ["model-compress=yes"]),
             "dpa1": (f"{data}/models/se_atten_v2_small.dp", [])}
    conf = f"{data}/structures/water_96_small.xyz"
    ok = True
    for name, (m, settings) in cases.items():
        files = []
        for k in range(2):
            run_md(halomd, "cuda", f"repro_{name}_{k}", m, conf, common + settings, work)
            files.append([open(os.path.join(work, f"repro_{name}_{k}{ext}"), "rb").read()
                          for ext in (".energy.csv", ".xyz")])
        same = files[0] == files[1]
        ok &= same
        print(f"{'ok  ' if same else 'FAIL'} {name}: two runs "
              f"{'identical' if same else 'differ'} (energy file and trajectory, "
              f"{len(files[0][1])} bytes)")
    return ok


def phases(halomd, data, work):
    cmd = [halomd, "run", "-backend", "cuda", "-deffnm", "phases",
           "-m", f"{data}/models/dpa1_1p6m_fp32.dp", "-c", f"{data}/structures/water_192_ortho.gro",
           "-nsteps", "60", "-set", "dt=0.0005", "-set", "nstlist=10", "-set", "verlet-buffer=1",
           "-set", "nstenergy=15", "-set", "nstcalcenergy=5", "-set", "nstlog=15"]
    res = sh(cmd, cwd=work)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {res.stderr}")
    with open(os.path.join(work, "phases.perf.json")) as f:
        perf = json.load(f)
    wall = perf["performance"]["wall_s"]
    t = {name: p["seconds"] for name, p in perf["phases"].items()}
    force, nbr, out = t["Force"], t["Neighbour list"], t["Output"]
    calls = perf["phases"]["Force"]["calls"]
    ok = force > 0.7 * wall and nbr < force / 5 and out < force / 5
    ok &= sum(t.values()) <= 1.01 * wall and calls == perf["system"]["nsteps"]
    print(f"{'ok  ' if ok else 'FAIL'} wall {wall:.3f} s: Force {force:.3f} s ({calls} calls, "
          f"> 0.7 of the wall), Neighbour list {nbr:.4f} s and Output {out:.4f} s (< Force / 5), "
          f"all phases {sum(t.values()):.3f} s (<= 1.01 wall)")
    return ok


TESTS = {"goldens": goldens, "twin": twin, "dense": dense, "nve": nve, "mdtwin": mdtwin,
         "phases": phases, "mixed": mixed, "reproducible": reproducible}


def main(argv):
    if len(argv) != 5 or argv[1] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    halomd, data, work = argv[2], argv[3], argv[4]
    os.makedirs(work, exist_ok=True)
    need_device(halomd, data)
    return 0 if TESTS[argv[1]](halomd, data, work) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
