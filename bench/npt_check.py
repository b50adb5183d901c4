#!/usr/bin/env python3
"""Long NPT checks of pcoupl = c-rescale that a ctest cannot afford (standard library only).

Usage: bench/npt_check.py HALOMD MODEL CONF [NSTEPS] [--json PATH] [-- extra halomd run arguments]
  Runs NSTEPS (default 200000) of C-rescale NPT at 300 K and 1 bar (v-rescale thermostat,
  tau-p 2 ps, compressibility 4.5e-5 1/bar, nstpcouple 10), discards the first fifth, and
  reports:
    - the average pressure and its error from block averages (20 blocks): |<P> - ref-p| should
      be within 2-3 errors;
    - the average volume and its error (20 blocks);
    - the compressibility from the volume fluctuations, <dV^2> / (kT <V>), with its error from
      5 blocks (each block's own fluctuation), to compare with the model's (for water models
      close to 4.5e-5 1/bar when the model is; the barostat's compressibility sets only the
      coupling strength, not the answer);
    - the drift of the conserved quantity per atom and ns.
  A table on stdout; with --json, the same numbers as JSON in PATH (and "-" for stdout). Extra
  arguments go to `halomd run` (e.g. -- -backend cuda -set model-compress=yes).
  Exit status 1 when the pressure is more than 3 errors from ref-p, 2 when the run fails.
"""
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

KB_BAR_A3 = 1.380649e-23 * 1e30 / 1e5  # k_B in bar Å^3 / K
REF_P, REF_T, KAPPA_IN = 1.0, 300.0, 4.5e-5


def block_error(values, nb):
    """Standard error of the mean from nb block averages."""
    size = len(values) // nb
    blocks = [statistics.fmean(values[k * size:(k + 1) * size]) for k in range(nb)]
    return statistics.stdev(blocks) / math.sqrt(nb)


def compressibility(vol):
    return statistics.pvariance(vol) / (KB_BAR_A3 * REF_T * statistics.fmean(vol))


def natoms_of(conf):
    with open(conf) as f:
        if conf.endswith(".gro"):
            f.readline()
        return int(f.readline())


def parse(argv):
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    json_path = None
    if "--json" in argv:
        k = argv.index("--json")
        if k + 1 >= len(argv):
            return None
        json_path = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    if len(argv) not in (4, 5):
        return None
    nsteps = int(argv[4]) if len(argv) == 5 else 200000
    return argv[1], argv[2], argv[3], nsteps, json_path, extra


def main(argv):
    args = parse(argv)
    if args is None:
        print(__doc__, file=sys.stderr)
        return 2
    halomd, model, conf, nsteps, json_path, extra = args
    work = tempfile.mkdtemp(prefix="npt_check_")
    sets = ["tcoupl=v-rescale", f"ref-t={REF_T:g}", "tau-t=0.1", "gen-vel=yes",
            f"gen-temp={REF_T:g}", "pcoupl=c-rescale", "tau-p=2", f"ref-p={REF_P:g}",
            f"compressibility={KAPPA_IN:g}", "nstpcouple=10", "nstenergy=10",
            "nstcalcenergy=10", "nstlog=10000"]
    cmd = [halomd, "run", "-m", os.path.abspath(model), "-c", os.path.abspath(conf), "-nsteps",
           str(nsteps), "-deffnm", "npt"]
    for kv in sets:
        cmd += ["-set", kv]
    t0 = time.time()
    with open(os.path.join(work, "npt.stderr"), "w") as err:
        res = subprocess.run(cmd + extra, cwd=work, stdout=subprocess.DEVNULL, stderr=err)
    wall = time.time() - t0
    if res.returncode != 0:
        with open(os.path.join(work, "npt.stderr")) as err:
            print(f"{' '.join(cmd + extra)}: exit {res.returncode}\n{err.read()[-2000:]}",
                  file=sys.stderr)
        return 2
    with open(os.path.join(work, "npt.energy.csv")) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    rows = rows[len(rows) // 5:]
    press = [r["press_bar"] for r in rows]
    vol = [r["vol_A3"] for r in rows]
    kappa = compressibility(vol)
    size = len(vol) // 5
    kappas = [compressibility(vol[k * size:(k + 1) * size]) for k in range(5)]
    kappa_err = statistics.stdev(kappas) / math.sqrt(5)
    t_ns = (rows[-1]["time_ps"] - rows[0]["time_ps"]) * 1e-3
    drift = (rows[-1]["conserved_eV"] - rows[0]["conserved_eV"]) / natoms_of(conf) / t_ns
    out = {"steps": nsteps, "samples": len(rows), "wall_s": round(wall, 1),
           "command": " ".join(cmd + extra),
           "ref_p_bar": REF_P, "mean_pressure_bar": statistics.fmean(press),
           "pressure_error_bar": block_error(press, 20),
           "mean_volume_A3": statistics.fmean(vol), "volume_error_A3": block_error(vol, 20),
           "volume_std_A3": statistics.pstdev(vol),
           "compressibility_per_bar": kappa, "compressibility_error_per_bar": kappa_err,
           "compressibility_coupling_per_bar": KAPPA_IN,
           "conserved_drift_eV_per_atom_ns": drift, "workdir": work}
    out["pressure_within_3_errors"] = abs(out["mean_pressure_bar"] - REF_P) <= \
        3 * out["pressure_error_bar"]
    print(f"{'steps':<28}{nsteps} ({len(rows)} samples after the first fifth, {wall:.0f} s)")
    print(f"{'<P> - ref-p':<28}{out['mean_pressure_bar'] - REF_P:+.1f} +- "
          f"{out['pressure_error_bar']:.1f} bar")
    print(f"{'<V>':<28}{out['mean_volume_A3']:.1f} +- {out['volume_error_A3']:.1f} Å^3 "
          f"(std {out['volume_std_A3']:.1f})")
    print(f"{'compressibility':<28}{kappa:.3e} +- {kappa_err:.1e} 1/bar (coupling {KAPPA_IN:g})")
    print(f"{'conserved drift':<28}{drift:.3e} eV/atom/ns")
    if json_path == "-":
        print(json.dumps(out, indent=1))
    elif json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if out["pressure_within_3_errors"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
