#!/usr/bin/env python3
"""Summary of bench/gpu_single/run_bench.sh: halomd's MD steps against DeePMD-kit's eval and
network times on the same GPU, the ratios and the issue's targets, as one JSON record (date,
commit, hardware, command, figures) and a table on stdout.

    python3 bench/gpu_single/summarize.py OUT_DIR RECORD.json
"""
import datetime
import glob
import json
import os
import subprocess
import sys

# halomd case -> the DeePMD-kit case it is compared with
PAIRS = {
    "water_double": "deepmd_water_water_12288.json",
    "water_mixed": "deepmd_water_water_12288.json",
    "water_compressed": "deepmd_water_water_12288.json",
    "water_compressed_mixed": "deepmd_water_water_12288.json",
    "small_double": "deepmd_water_water_1536.json",
    "small_mixed": "deepmd_water_water_1536.json",
    "small_compressed": "deepmd_water_water_1536.json",
    "small_compressed_mixed": "deepmd_water_water_1536.json",
    "dpa1_protein": "deepmd_protein_dpa1_1p6m_protein.json",
    "dpa1_protein_mixed": "deepmd_protein_dpa1_1p6m_protein.json",
    "dpa1_water_1536": "deepmd_protein_dpa1_1p6m_water_1536.json",
    "dpa1_water_1536_mixed": "deepmd_protein_dpa1_1p6m_water_1536.json",
}


def best(halomd, prefix, key, pick=max):
    """The best `key` over the cases whose name starts with prefix (0 when none)."""
    values = [h[key] for c, h in halomd.items() if c.startswith(prefix)]
    return pick(values) if values else 0


def load(path):
    with open(path) as f:
        return json.load(f)


def halomd_case(path):
    p = load(path)
    n, steps = p["system"]["natoms"], p["system"]["nsteps"]
    wall = p["performance"]["wall_s"]
    return {"natoms": n, "steps": steps, "step_s": wall / steps,
            "atom_steps_per_s": p["performance"]["atom_steps_per_s"],
            "steps_per_s": p["performance"]["steps_per_s"],
            "device_bytes_per_atom": p.get("backend", {}).get("device_bytes_per_atom"),
            "neighbor_builds": p["system"]["neighbor_builds"],
            "commit": p["build"]["commit"]}


def main(out, record):
    halomd = {os.path.basename(f)[7:-5]: halomd_case(f)
              for f in sorted(glob.glob(os.path.join(out, "halomd_*.json")))}
    deepmd = {os.path.basename(f): load(f)
              for f in sorted(glob.glob(os.path.join(out, "deepmd_*.json")))}
    ratios = {}
    for case, ref in PAIRS.items():
        if case in halomd and ref in deepmd:
            d, h = deepmd[ref], halomd[case]
            ratios[case] = {"vs": ref[:-5],
                            "network_s": d["network_s_median"],
                            "eval_s": d.get("eval_s_median"),
                            "halomd_step_s": h["step_s"],
                            "x_network": d["network_s_median"] / h["step_s"],
                            "x_eval": (d["eval_s_median"] / h["step_s"]
                                       if d.get("eval_s_median") else None)}
    sweep = {k: v for k, v in halomd.items() if k.startswith("sweep_")}
    small = [h["step_s"] * 2000 / h["natoms"] for c, h in halomd.items() if c.startswith("small_")]
    targets = {
        "x3_network": {c: r["x_network"] >= 3 for c, r in ratios.items()},
        # compressed water at any size: the 12,288-atom cases and the sweep (double and mixed)
        "compressed_5e6": max(best(halomd, "water_compressed", "atom_steps_per_s"),
                              best(halomd, "sweep_", "atom_steps_per_s")) >= 5e6,
        "dpa1_64_steps_per_s": best(halomd, "dpa1_protein", "steps_per_s") >= 64,
        "step_100us_near_2000_atoms": min(small, default=1) <= 100e-6,
        "largest_compressed_atoms": max((v["natoms"] for v in sweep.values()), default=0),
    }
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    # the node's copy of .git may lag the working tree: COMMIT, when given, names what was copied
    commit = os.environ.get("COMMIT") or (next(iter(halomd.values()))["commit"] if halomd
                                          else "unknown")
    rec = {"benchmark": "gpu_single", "date": datetime.date.today().isoformat(),
           "commit": commit, "hardware": gpu, "command": "bash bench/gpu_single/run_bench.sh",
           "halomd": halomd, "deepmd": deepmd, "ratios": ratios, "targets": targets}
    with open(record, "w") as f:
        json.dump(rec, f, indent=1)
    print(f"{'case':20s} {'atoms':>8s} {'ms/step':>9s} {'atom-steps/s':>13s} {'B/atom':>8s}"
          f" {'DeePMD net ms':>13s} {'x net':>6s} {'x eval':>6s}")
    for c, h in halomd.items():
        r = ratios.get(c, {})
        print(f"{c:20s} {h['natoms']:8d} {1e3 * h['step_s']:9.3f} {h['atom_steps_per_s']:13.4g}"
              f" {h['device_bytes_per_atom'] or 0:8.0f}"
              f" {1e3 * r['network_s'] if r else float('nan'):13.3f}"
              f" {r.get('x_network') or float('nan'):6.2f} {r.get('x_eval') or float('nan'):6.2f}")
    print("targets:", json.dumps(targets))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
