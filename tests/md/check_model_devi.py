#!/usr/bin/env python3
"""Model deviation on the fly (`halomd run -m a.dp b.dp ...`) against `halomd eval -m` over the
run's own trajectory (standard library only).

Usage: check_model_devi.py NRANKS HALOMD DATA WORKDIR [MPIEXEC]
  A short NVE run of 96 waters (288 atoms) with 3 models (absolute deviations) and one with 2 models
  (relative, relative_v, per-atom), trajectory frames at model-devi-freq: every row of the
  run's <deffnm>.model_devi.out equals that of `halomd eval -m` on <deffnm>.xyz within 1e-10
  relative (the file holds 7 significant digits, so this asks for the same printed numbers),
  the steps are those of the frames, and a model with another cut-off and types is refused with a message.
  NRANKS > 1 runs both commands under MPIEXEC.
"""
import os
import subprocess
import sys


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    return cond


def command(nranks, mpiexec, args):
    if nranks > 1:
        return [mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", str(nranks)] + args
    return args


def run(cmd, cwd, expect=0):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    res = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if res.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)}: exit {res.returncode}, expected {expect}\n"
                         f"{res.stdout}\n{res.stderr}")
    return res


def rows(path):
    with open(path) as f:
        return [[float(x) for x in line.split()] for line in f if not line.startswith("#")]


def close(a, b, tol=1e-10):
    return len(a) == len(b) and all(
        len(r) == len(s) and all(abs(x - y) <= tol * max(abs(x), abs(y), 1e-300)
                                 for x, y in zip(r, s)) for r, s in zip(a, b))


def main(argv):
    if len(argv) not in (5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    nranks, halomd, data, work = int(argv[1]), argv[2], argv[3], argv[4]
    mpiexec = argv[5] if len(argv) == 6 else None
    os.makedirs(work, exist_ok=True)
    for old in os.listdir(work):
        os.remove(os.path.join(work, old))
    models = [f"{data}/models/se_e2_a_water_one_side.dp",
              f"{data}/models/se_e2_a_water_two_side.dp",
              f"{data}/../../examples/water/water_trained.dp"]
    conf = f"{data}/structures/water_96_small.xyz"
    common = ["-backend", "cpu", "-set", "model-devi-freq=4", "-set", "nstxout=4", "-set",
              "dt=0.0002", "-set", "gen-vel=yes", "-set", "gen-seed=7", "-set", "gen-temp=300"]
    cases = {"absolute": (models, []),
             "relative": (models[:2], ["-set", "model-devi-relative=0.5", "-set",
                                       "model-devi-relative-v=0.2", "-set",
                                       "model-devi-atomic=yes"])}
    ok = True
    for name, (ms, extra) in cases.items():
        run(command(nranks, mpiexec, [halomd, "run", "-m", *ms, "-c", conf, "-nsteps", "16",
                                      "-deffnm", name, *common, *extra]), work)
        run(command(nranks, mpiexec, [halomd, "eval", "-m", *ms, "-c", f"{name}.xyz",
                                      "-deffnm", f"eval_{name}", *common, *extra]), work)
        got = rows(os.path.join(work, f"{name}.model_devi.out"))
        want = rows(os.path.join(work, f"eval_{name}.model_devi.out"))
        steps = [int(r[0]) for r in got]
        with open(conf) as f:
            natoms = int(f.readline())
        ncol = 8 + (natoms if extra else 0)
        ok &= check(steps == [0, 4, 8, 12, 16] and all(len(r) == ncol for r in got),
                    f"{name}, {nranks} rank(s): rows at steps {steps}, {ncol} columns")
        ok &= check(close(got, want), f"{name}, {nranks} rank(s): run's model_devi.out equals "
                    f"eval -m over its trajectory")
    res = run(command(nranks, mpiexec, [halomd, "run", "-m", models[0],
                                        f"{data}/models/se_e2_a_small_3types.dp", "-c", conf, "-nsteps", "2",
                                        "-deffnm", "refused", *common]), work, expect=65)
    ok &= check("se_e2_a_small_3types.dp" in res.stderr and not os.path.exists(
        os.path.join(work, "refused.log")), "a model of other types is refused before any "
                f"output: {res.stderr.strip().splitlines()[-1]}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
