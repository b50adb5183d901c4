#!/usr/bin/env python3
"""Long NPT checks of pcoupl = c-rescale that a ctest cannot afford (standard library only).

Usage: bench/npt_check.py HALOMD MODEL CONF [NSTEPS] [-- extra halomd run arguments]
  Runs NSTEPS (default 200000) of C-rescale NPT at 300 K and 1 bar (v-rescale thermostat,
  tau-p 2 ps, compressibility 4.5e-5 1/bar, nstpcouple 10), discards the first fifth, and
  reports as JSON on stdout:
    - the average pressure and its error from block averages (20 blocks): |<P> - ref-p| should
      be within 2-3 errors;
    - the compressibility from the volume fluctuations, <dV^2> / (kT <V>), to compare with
      the model's (for water models close to 4.5e-5 1/bar when the model is);
    - the drift of the conserved quantity per atom and ns.
  Exit status 1 when the pressure is more than 3 errors from ref-p.
"""
import csv
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

KB_BAR_A3 = 1.380649e-23 * 1e30 / 1e5  # k_B in bar Å^3 / K


def main(argv):
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    halomd, model, conf = argv[1:4]
    nsteps = int(argv[4]) if len(argv) == 5 else 200000
    work = tempfile.mkdtemp(prefix="npt_check_")
    sets = ["tcoupl=v-rescale", "ref-t=300", "tau-t=0.1", "gen-vel=yes", "gen-temp=300",
            "pcoupl=c-rescale", "tau-p=2", "ref-p=1", "compressibility=4.5e-5",
            "nstpcouple=10", "nstenergy=10", "nstcalcenergy=10", "nstlog=10000"]
    cmd = [halomd, "run", "-m", model, "-c", conf, "-nsteps", str(nsteps), "-deffnm", "npt"]
    for kv in sets:
        cmd += ["-set", kv]
    subprocess.run(cmd + extra, cwd=work, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(work, "npt.energy.csv")) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    rows = rows[len(rows) // 5:]
    press = [r["press_bar"] for r in rows]
    vol = [r["vol_A3"] for r in rows]
    nb = 20
    size = len(press) // nb
    blocks = [statistics.fmean(press[k * size:(k + 1) * size]) for k in range(nb)]
    err = statistics.stdev(blocks) / math.sqrt(nb)
    mean_v = statistics.fmean(vol)
    kappa = statistics.pvariance(vol) / (KB_BAR_A3 * 300.0 * mean_v)
    t_ns = (rows[-1]["time_ps"] - rows[0]["time_ps"]) * 1e-3
    natoms = None
    with open(conf) as f:
        if conf.endswith(".gro"):
            f.readline()
            natoms = int(f.readline())
        else:
            natoms = int(f.readline())
    drift = (rows[-1]["conserved_eV"] - rows[0]["conserved_eV"]) / natoms / t_ns
    out = {"steps": nsteps, "mean_pressure_bar": statistics.fmean(press),
           "pressure_error_bar": err, "ref_p_bar": 1.0, "mean_volume_A3": mean_v,
           "compressibility_per_bar": kappa, "conserved_drift_eV_per_atom_ns": drift,
           "workdir": work}
    print(json.dumps(out, indent=1))
    return 0 if abs(out["mean_pressure_bar"] - 1.0) <= 3 * err else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
