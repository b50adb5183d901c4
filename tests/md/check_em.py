#!/usr/bin/env python3
"""Energy minimisation (`integrator = steep` and `fire`) on the demo water (standard library
only).

Usage: check_em.py HALOMD DATA WORKDIR
  192 atoms of water, every coordinate moved by up to 0.05 Å (a fixed seed), minimised with
  the trained demo model (examples/water/water_trained.dp) by steepest descent and by FIRE:
  both converge to Fmax < emtol = 0.25 eV/Å within nsteps, end far below the start's energy
  (evaluated by `halomd eval`), and write the minimised structure <deffnm>.gro; a bad emtol is
  refused with a message naming the key.
"""
import json
import os
import random
import re
import subprocess
import sys


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    return cond


def perturbed(src, dst, amount, seed):
    lines = open(src).read().splitlines()
    n = int(lines[0])
    rng = random.Random(seed)
    out = lines[:2]
    for line in lines[2:2 + n]:
        p = line.split()
        moved = [f"{float(v) + rng.uniform(-amount, amount):.10f}" for v in p[1:4]]
        out.append(" ".join([p[0]] + moved + p[4:]))
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    halomd, data, work = argv[1:]
    os.makedirs(work, exist_ok=True)
    model = f"{data}/../../examples/water/water_trained.dp"
    conf = os.path.join(work, "perturbed.xyz")
    perturbed(f"{data}/structures/water_192_ortho.xyz", conf, 0.05, 1)
    res = subprocess.run([halomd, "eval", "-backend", "cpu", "-m", model, "-c", conf],
                         capture_output=True, text=True, check=True)
    e0 = json.loads(res.stdout)["frames"][0]["energy"]
    ok = True
    for integrator in ("steep", "fire"):
        gro = os.path.join(work, integrator + ".gro")
        if os.path.exists(gro):
            os.remove(gro)
        res = subprocess.run([halomd, "run", "-backend", "cpu", "-m", model, "-c", conf,
                              "-deffnm", integrator, "-set", f"integrator={integrator}",
                              "-set", "emtol=0.25", "-set", "nsteps=1000"], cwd=work,
                             capture_output=True, text=True)
        energy = re.search(r"potential energy +(\S+) eV", res.stdout)
        fmax = re.search(r"maximum force +(\S+) eV", res.stdout)
        converged = res.returncode == 0 and "converged to Fmax < 0.25" in res.stdout
        ok &= check(converged and energy and float(energy.group(1)) < e0 - 20.0 and fmax and
                    float(fmax.group(1)) < 0.25 and os.path.exists(gro),
                    f"{integrator}: exit {res.returncode}, "
                    f"{res.stdout.strip().splitlines()[0] if res.stdout.strip() else res.stderr}"
                    f", energy {energy.group(1) if energy else '?'} eV from {e0:.4f} eV")
    res = subprocess.run([halomd, "run", "-m", model, "-c", conf, "-deffnm", "bad", "-set",
                          "integrator=steep", "-set", "emtol=-1"], cwd=work,
                         capture_output=True, text=True)
    ok &= check(res.returncode == 78 and "emtol" in res.stderr,
                f"emtol = -1: exit {res.returncode}, {res.stderr.strip()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
