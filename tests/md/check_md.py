#!/usr/bin/env python3
"""End-to-end MD checks of `halomd run` (standard library only).

Usage: check_md.py TEST HALOMD DATA WORKDIR   (CPU backend; tests/gpu has the GPU's checks)
  nve_dt      NVE water: the conserved energy stays within a bound, and halving dt cuts its
              fluctuation about 4x (velocity Verlet is second order).
  nve_dt_dpa1        the same with a DPA-1 model (se_atten_v2).
  nve_dt_compressed  the same with the se_e2_a model tabulated (model-compress = yes).
  compress_check     compress-check-frequency reports table inputs beyond the fine part.
  vrescale    ideal gas under v-rescale: mean temperature within statistical error of ref-t,
              kinetic-energy variance that of the canonical ensemble.
  langevin    the same under the Langevin thermostat.
  eval_step0  `halomd eval` and step 0 of `halomd run` give identical forces and energy.
  seeds       the same seeds give bit-identical trajectories; another ld-seed does not.
  continuation  a run continued from a checkpoint (-cpi) repeats the uninterrupted run bit for
              bit (v-rescale with nstlist 10; Langevin, centre-of-mass removal and the list
              updated when needed, continued at a step that is not a list step; the trained
              water model with nstlist 0 under both thermostats); periodic checkpoints of -cpt
              continue as well, -maxh stops cleanly with a checkpoint; a run stopped by SIGTERM
              writes its outputs and a checkpoint, and continuing from it does too.
"""
import csv
import json
import math
import os
import statistics
import signal
import struct
import subprocess
import sys
import time

KB = 8.617333262e-5  # eV/K


def run(halomd, workdir, name, args):
    os.makedirs(workdir, exist_ok=True)
    cmd = [halomd, "run", "-backend", "cpu", "-deffnm", name] + args
    res = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    with open(os.path.join(workdir, name + ".energy.csv")) as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def sets(**params):
    out = []
    for key, value in params.items():
        out += ["-set", f"{key.replace('_', '-')}={value}"]
    return out


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    return cond


def nve(halomd, data, workdir, model, extra=()):
    """Water (96 atoms, an untrained model, stiff: small steps), 0.02 ps at dt and dt/2: the
    conserved energy fluctuates below 1e-6 eV/atom and as dt^2 (velocity Verlet)."""
    common = ["-m", f"{data}/models/{model}", "-c", f"{data}/structures/water_96_small.xyz",
              *extra]
    spread = {}
    for dt in (0.0002, 0.0001):
        rows = run(halomd, workdir, f"nve{dt}", common + sets(
            dt=dt, nsteps=round(0.02 / dt), gen_vel="yes", gen_temp=300, gen_seed=11,
            nstenergy=5, nstcalcenergy=5, nstlog=50))
        e = [r["conserved_eV"] for r in rows]
        spread[dt] = statistics.pstdev(e)
        print(f"{model} dt {dt} ps: conserved energy std {spread[dt]:.3e} eV, "
              f"max-min {max(e) - min(e):.3e} eV over {len(e)} samples")
    ratio = spread[0.0002] / spread[0.0001]
    ok = check(spread[0.0001] < 1e-7 * 96 * 10, "conserved-energy std below 1e-6 eV/atom at 0.1 fs")
    ok &= check(3.0 < ratio < 6.0, f"halving dt cuts the fluctuation {ratio:.2f}x (expected ~4)")
    return ok


def nve_dt(halomd, data, workdir):
    return nve(halomd, data, workdir, "se_e2_a_water_one_side.dp")


def nve_dt_dpa1(halomd, data, workdir):
    """DPA-1 (se_atten_v2: strip, smooth, two attention layers)."""
    return nve(halomd, data, workdir, "se_atten_v2_small.dp")


def nve_dt_compressed(halomd, data, workdir):
    """se_e2_a with tabulated embedding nets (C2 piecewise quintics)."""
    return nve(halomd, data, workdir, "se_e2_a_water_one_side.dp",
               ["-set", "model-compress=yes"])


def compress_check(halomd, data, workdir):
    """compress-check-frequency: tables made for a min_nbor_dist of 2 Å see the O-H bonds
    (about 1 Å) beyond their fine part, at the checked steps only, and nothing beyond their
    end; with the model's own min_nbor_dist (0.99 Å) nothing is reported."""
    common = ["-m", f"{data}/models/se_e2_a_water_one_side.dp",
              "-c", f"{data}/structures/water_96_small.xyz"]
    run(halomd, workdir, "near", common + sets(
        nsteps=4, dt=0.0002, model_compress="yes", compress_min_nbor_dist=2.0,
        compress_check_frequency=2))
    lines = [l for l in open(os.path.join(workdir, "near.log")) if "compressed tables:" in l]
    steps = [int(l.split(":")[0].split()[1]) for l in lines]
    ok = check(steps == [2, 4], f"overflow reported at steps {steps} (expected [2, 4])")
    ok &= check(all(" 128 neighbour inputs beyond the fine part" in l and " 0 beyond the table"
                    in l for l in lines),
                "128 O-H inputs (32 waters x 2 bonds, from both ends) counted, none extrapolated")
    run(halomd, workdir, "own", common + sets(
        nsteps=4, dt=0.0002, model_compress="yes", compress_check_frequency=1))
    quiet = not any("compressed tables:" in l for l in open(os.path.join(workdir, "own.log")))
    ok &= check(quiet, "with the model's own min_nbor_dist nothing is reported")
    return ok


def thermostat(halomd, data, workdir, kind):
    """Ideal gas (zero forces), 96 atoms, 6000 steps of 1 fs, tau-t 0.05 ps."""
    ref = 300.0
    rows = run(halomd, workdir, kind, [
        "-m", f"{data}/derived/ideal_gas.dp", "-c", f"{data}/structures/water_96_small.xyz"
    ] + sets(dt=0.001, nsteps=6000, tcoupl=kind, ref_t=ref, tau_t=0.05, gen_vel="yes",
             gen_temp=200, gen_seed=3, ld_seed=17, nstenergy=50, nstcalcenergy=50,
             nstlog=1000))
    temps = [r["temp_K"] for r in rows[20:]]  # skip 1 ps of equilibration
    ndof = 3 * 96 - 3
    mean, n = statistics.fmean(temps), len(temps)
    # samples 50 fs apart with tau-t 50 fs are close to independent; allow 4 sigma
    sigma_mean = ref * math.sqrt(2.0 / ndof) / math.sqrt(n)
    rel_var = statistics.pvariance(temps) / ref ** 2
    ok = check(abs(mean - ref) < 4 * sigma_mean,
               f"{kind}: mean T {mean:.2f} K, ref 300 K, 4 sigma = {4 * sigma_mean:.2f} K")
    ok &= check(0.6 < rel_var / (2.0 / ndof) < 1.5,
                f"{kind}: var(T)/T^2 = {rel_var:.4f}, canonical 2/Nf = {2.0 / ndof:.4f}")
    return ok


def read_xyz_last(path):
    with open(path) as f:
        lines = f.read().splitlines()
    frames, k = [], 0
    while k < len(lines):
        n = int(lines[k])
        frames.append((lines[k + 1], lines[k + 2:k + 2 + n]))
        k += 2 + n
    return frames[-1]


def eval_step0(halomd, data, workdir):
    model, conf = f"{data}/models/se_e2_a_water_one_side.dp", f"{data}/structures/water_192_ortho.xyz"
    os.makedirs(workdir, exist_ok=True)
    out = os.path.join(workdir, "eval.json")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run([halomd, "eval", "-backend", "cpu", "-m", model, "-c", conf, "-o", out], check=True,
                   capture_output=True)
    frame = json.load(open(out))["frames"][0]
    run(halomd, workdir, "step0", ["-m", model, "-c", conf, "-nsteps", "0"])
    header, atoms = read_xyz_last(os.path.join(workdir, "step0.xyz"))
    forces = [[float(v) for v in line.split()[4:7]] for line in atoms]
    energy = float(header.split("energy=")[1].split()[0])
    ok = check(forces == frame["force"], "forces identical to the last bit")
    ok &= check(energy == frame["energy"], f"energy identical ({energy!r})")
    return ok


def seeds(halomd, data, workdir):
    args = ["-m", f"{data}/models/se_e2_a_water_one_side.dp",
            "-c", f"{data}/structures/water_96_small.xyz"] + sets(
        dt=0.0002, nsteps=20, tcoupl="langevin", ref_t=300, tau_t=0.1, gen_vel="yes",
        gen_seed=5, nstenergy=5, nstcalcenergy=5)
    a = run(halomd, workdir, "a", args + sets(ld_seed=1))
    b = run(halomd, workdir, "b", args + sets(ld_seed=1))
    c = run(halomd, workdir, "c", args + sets(ld_seed=2))
    ok = check(a == b, "same seeds: identical energy files")
    ok &= check(a[-1]["ke_eV"] != c[-1]["ke_eV"], "another ld-seed: a different trajectory")
    return ok


def cpt_step(path):
    with open(path, "rb") as f:
        return struct.unpack_from("<q", f.read(64), 56)[0]  # the header's step (io/checkpoint.h)


def continuation(halomd, data, workdir):
    base = ["-m", f"{data}/models/se_e2_a_water_one_side.dp",
            "-c", f"{data}/structures/water_96_small.xyz"] + sets(
        gen_vel="yes", gen_seed=5, ref_t=300, tau_t=0.05, ld_seed=3, nstenergy=1,
        nstcalcenergy=1)
    cases = {  # name: (settings, step of the checkpoint)
        "vrescale": (sets(dt=0.0005, tcoupl="v-rescale", nstlist=10), 20),
        "langevin": (sets(dt=0.0005, tcoupl="langevin", nstlist=0, verlet_buffer=0.3,
                          comm_mode="linear", nstcomm=7), 23),
    }
    ok = True
    for name, (extra, split) in cases.items():
        whole = run(halomd, workdir, name, base + extra + ["-nsteps", "40"])
        run(halomd, workdir, name + "_1", base + extra + ["-nsteps", str(split)])
        rest = run(halomd, workdir, name + "_2",
                   base + extra + ["-nsteps", "40", "-cpi", name + "_1.cpt"])
        ok &= check(rest == whole[split:], f"{name}: continued at step {split}, steps "
                    f"{split}-40 identical to the uninterrupted run ({len(rest)} rows)")
    # the trained water model, the list updated when needed (nstlist = 0) and continued at a
    # step that is not a list step: the checkpoint's list positions give the same rebuilds
    trained = ["-m", f"{data}/../../examples/water/water_trained.dp",
               "-c", f"{data}/../../examples/water/water_192.gro"] + sets(
        gen_vel="yes", gen_seed=5, gen_temp=600, ref_t=300, ld_seed=3, nstenergy=1,
        nstcalcenergy=1, verlet_buffer=0.2, dt=0.001)
    for tc, split in (("v-rescale", 13), ("langevin", 17)):
        name = "trained_" + tc
        whole = run(halomd, workdir, name, trained + sets(tcoupl=tc) + ["-nsteps", "30"])
        run(halomd, workdir, name + "_1", trained + sets(tcoupl=tc) + ["-nsteps", str(split)])
        rest = run(halomd, workdir, name + "_2", trained + sets(tcoupl=tc) + [
            "-nsteps", "30", "-cpi", name + "_1.cpt"])
        ok &= check(rest == whole[split:], f"trained water, {tc}, nstlist 0: continued at "
                    f"step {split} (not a list step), identical to the uninterrupted run")
    # -cpt 0: a checkpoint every 10 steps, the previous one kept; continuing from it repeats
    # the run. -maxh: a clean stop with a checkpoint.
    extra = sets(tcoupl="v-rescale", nstlist=10, dt=0.0005)
    whole = run(halomd, workdir, "cpt", base + extra + ["-nsteps", "25", "-cpt", "0"])
    steps = [cpt_step(os.path.join(workdir, f)) for f in ("cpt.cpt", "cpt_prev.cpt")]
    ok &= check(steps == [25, 20], f"-cpt 0: cpt.cpt at step {steps[0]}, cpt_prev.cpt at "
                f"{steps[1]}")
    rest = run(halomd, workdir, "cpt_2", base + extra + ["-nsteps", "25", "-cpi", "cpt_prev.cpt"])
    ok &= check(rest == whole[20:], "continued from the periodic checkpoint of step 20: "
                "identical")
    # a checkpoint continued with another model is refused, naming both (the model's hash)
    other = [f"{data}/models/se_e2_a_water_two_side.dp" if a == base[1] else a for a in base]
    res = subprocess.run([halomd, "run", "-backend", "cpu", "-deffnm", "other", *other, *extra,
                          "-nsteps", "25", "-cpi", "cpt_prev.cpt"], cwd=workdir,
                         capture_output=True, text=True)
    ok &= check(res.returncode != 0 and "another model" in res.stderr,
                f"-cpi with another model: exit {res.returncode}, "
                f"{res.stderr.strip().splitlines()[-1] if res.stderr.strip() else 'no message'}")
    res = subprocess.run([halomd, "run", "-backend", "cpu", "-deffnm", "maxh", *base, *extra,
                          "-nsteps", "1000", "-maxh", "1e-9"], cwd=workdir, capture_output=True,
                         text=True)
    step = cpt_step(os.path.join(workdir, "maxh.cpt"))
    ok &= check(res.returncode == 0 and "stopped at 0.99 x -maxh" in res.stderr and step == 0,
                f"-maxh: exit {res.returncode}, stopped with a checkpoint at step {step}")
    # stopped by SIGTERM once a few steps are written: it ends after a step that is a multiple
    # of 10, with a checkpoint there; continuing from it reaches the uninterrupted run's numbers
    extra = sets(tcoupl="v-rescale", nstlist=10, dt=0.0002)  # 120 steps stay stable
    whole = run(halomd, workdir, "long", base + extra + ["-nsteps", "120"])
    for old in os.listdir(workdir):  # a csv of an earlier test run would signal too early
        if old.startswith(("stopped.", "#stopped.")):
            os.remove(os.path.join(workdir, old))
    cmd = [halomd, "run", "-backend", "cpu", "-deffnm", "stopped"] + base + extra + [
        "-nsteps", "100000"]
    proc = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    csv_path = os.path.join(workdir, "stopped.energy.csv")
    deadline = time.time() + 60
    while time.time() < deadline and proc.poll() is None:
        if os.path.exists(csv_path) and sum(1 for _ in open(csv_path)) > 12:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    step = cpt_step(os.path.join(workdir, "stopped.cpt"))
    ok &= check(proc.returncode == 0 and "stopped by signal 15" in err and step % 10 == 0,
                f"SIGTERM: exit {proc.returncode}, checkpoint at step {step}")
    if step < 120:
        rest = run(halomd, workdir, "resumed", base + extra + ["-nsteps", "120", "-cpi",
                                                               "stopped.cpt"])
        ok &= check(rest == whole[step:], f"continued from the stopped run's step {step}: "
                    f"identical to the uninterrupted run")
    return ok


TESTS = {"nve_dt": nve_dt, "nve_dt_dpa1": nve_dt_dpa1, "nve_dt_compressed": nve_dt_compressed,
         "compress_check": compress_check,
         "vrescale": lambda h, d, w: thermostat(h, d, w, "v-rescale"),
         "langevin": lambda h, d, w: thermostat(h, d, w, "langevin"),
         "eval_step0": eval_step0, "seeds": seeds, "continuation": continuation}


def main(argv):
    if len(argv) != 5 or argv[1] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    return 0 if TESTS[argv[1]](argv[2], argv[3], argv[4]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
