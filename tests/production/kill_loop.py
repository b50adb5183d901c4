"""kill -9 during checkpoint writes, at random moments: what is left must always read.

Usage: kill_loop.py CPT_TOOL WORKDIR [ROUNDS] [NATOMS]

Each round starts `cpt_tool write`, which writes checkpoint after checkpoint (each a few MB,
so most of its time is spent writing), kills it with SIGKILL after a random delay, and checks
that md.cpt reads, that every number in it is the one of its step, that the steps never go
back, and that md_prev.cpt, when there, reads and is older. The seed is printed; exit 1 on the
first failure.
"""
import os
import random
import signal
import subprocess
import sys
import time


def check(tool, path):
    r = subprocess.run([tool, "check", path], capture_output=True, text=True)
    return (int(r.stdout) if r.returncode == 0 else None), r.stderr.strip()


def main(argv):
    tool, work = argv[1], argv[2]
    rounds = int(argv[3]) if len(argv) > 3 else 60
    natoms = argv[4] if len(argv) > 4 else "40000"
    seed = int(os.environ.get("HMD_KILL_SEED", time.time_ns() % 100000))
    rng = random.Random(seed)
    os.makedirs(work, exist_ok=True)
    cpt, prev = os.path.join(work, "md.cpt"), os.path.join(work, "md_prev.cpt")
    for old in os.listdir(work):
        os.remove(os.path.join(work, old))
    print(f"seed {seed}, {rounds} rounds of {natoms} atoms")
    last, killed_in_write = 0, 0
    for k in range(rounds):
        proc = subprocess.Popen([tool, "write", cpt, natoms])
        time.sleep(rng.uniform(0.0, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if os.path.exists(cpt + ".tmp"):
            killed_in_write += 1
        if not os.path.exists(cpt):
            if last == 0:
                continue  # killed before its first checkpoint was complete
            print(f"round {k}: md.cpt is gone (last step {last})")
            return 1
        step, err = check(tool, cpt)
        if step is None or step < last:
            print(f"round {k}: md.cpt does not read or went back (last step {last}): {err}")
            return 1
        if os.path.exists(prev):
            pstep, perr = check(tool, prev)
            if pstep is None or pstep > step:  # equal: killed between link and rename
                print(f"round {k}: md_prev.cpt at {pstep} beside md.cpt at {step}: {perr}")
                return 1
        last = step
    print(f"{rounds} kills, {killed_in_write} of them inside a write (a .tmp left); "
          f"md.cpt always read, last at step {last}")
    if last == 0 or killed_in_write < rounds // 4:
        print("too few checkpoints or kills inside writes to mean anything")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
