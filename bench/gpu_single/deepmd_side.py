#!/usr/bin/env python3
"""DeePMD-kit (PyTorch backend) side of the single-GPU benchmark.

For one model (.dp, or an already converted .pth) and one structure (.gro), time on the GPU
(CPU when there is none), after warm-up, the median of repeated calls of:

  (a) eval:    deepmd.infer.DeepPot(model.pth).eval(coords, cells, atype), as users call it
               (neighbour list built inside, by vesin's cell list when vesin.torch is
               importable -- nlist_backend='auto' -- else by DeePMD-kit's dense builder);
  (b) network: model.forward_lower(extended_coord, extended_atype, nlist, mapping,
               do_atomic_virial=False) on the same TorchScript model, with the extended
               coordinates/types, mapping and neighbour list built once beforehand by
               deepmd.pt.utils.nlist.extend_input_and_build_neighbor_list (as
               forward_common does). Energy + extended forces + virial: the network's
               forward and backward alone.

The energies of (a) and (b) are compared (and the forces, after folding the extended forces
of (b) back onto local atoms through `mapping`); a mismatch is reported and makes the exit
status 2. torch.cuda.synchronize() brackets each timed call.

Model conversion: a .dp model is converted once to .pth (TorchScript; what
`dp convert-backend model.dp model.pth` does) with
deepmd.entrypoints.convert_backend.convert_backend, in-process; the .pth is cached next to
--pth (default: <json dir or /tmp>/<model stem>.pth) and reused when newer than the .dp.

Usage (on the node: PYTHONPATH=$PWD/.gpudeps/py python3 bench/gpu_single/deepmd_side.py ...):
  deepmd_side.py --model examples/water/water.dp --conf examples/water/water_12288.gro \
      [--repeats 20] [--warmup 5] [--nlist-backend auto] [--json OUT.json]

Units: .gro coordinates and box in nm are converted to Angstrom; DeePMD energies are in eV,
forces in eV/A. The JSON also gives the energy in kJ/mol (1 eV = 96.485332 kJ/mol) for a
direct comparison with halomd.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

EV_TO_KJMOL = 96.48533212331


def read_gro(path):
    """Return (atom names, coordinates in Angstrom (n,3), cell rows in Angstrom (3,3))."""
    with open(path) as f:
        lines = f.read().splitlines()
    n = int(lines[1])
    names = []
    x = np.empty((n, 3))
    for i, l in enumerate(lines[2 : 2 + n]):
        names.append(l[10:15].strip())
        x[i] = (float(l[20:28]), float(l[28:36]), float(l[36:44]))
    b = [float(v) for v in lines[2 + n].split()]
    cell = np.zeros((3, 3))
    cell[0, 0], cell[1, 1], cell[2, 2] = b[0], b[1], b[2]
    if len(b) == 9:  # v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)
        cell[0, 1], cell[0, 2], cell[1, 0], cell[1, 2], cell[2, 0], cell[2, 1] = b[3:9]
    return names, x * 10.0, cell * 10.0


def map_types(names, type_map):
    """Atom name -> model type index: the full name, else its leading letters as an element
    symbol (two letters, then one), e.g. OW -> O, HW1 -> H, CL -> Cl."""
    tm = {t: i for i, t in enumerate(type_map)}
    cache = {}
    out = np.empty(len(names), dtype=np.int64)
    for i, nm in enumerate(names):
        if nm not in cache:
            letters = "".join(c for c in nm if c.isalpha())
            cand = [nm, letters[:2].capitalize(), letters[:1].upper()]
            t = next((tm[c] for c in cand if c in tm), None)
            if t is None:
                raise SystemExit(f"atom name {nm!r} matches no type of the model {type_map}")
            cache[nm] = t
        out[i] = cache[nm]
    return out


def ensure_pth(model, pth):
    if model.endswith(".pth"):
        return model, 0.0
    if os.path.exists(pth) and os.path.getmtime(pth) >= os.path.getmtime(model):
        return pth, 0.0
    from deepmd.entrypoints.convert_backend import convert_backend

    t0 = time.perf_counter()
    os.makedirs(os.path.dirname(os.path.abspath(pth)), exist_ok=True)
    convert_backend(INPUT=model, OUTPUT=pth)
    return pth, time.perf_counter() - t0


def timed(fn, repeats, warmup, sync):
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    out = None
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return ts, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help=".dp (converted once) or .pth")
    ap.add_argument("--conf", required=True, help=".gro structure")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--pth", help="where the converted .pth is cached")
    ap.add_argument(
        "--nlist-backend",
        default="auto",
        choices=["auto", "vesin", "nv", "native"],
        help="DeepPot's neighbour-list builder for (a) (default auto: vesin if importable)",
    )
    ap.add_argument("--skip-eval", action="store_true", help="time only (b)")
    ap.add_argument("--rtol", type=float, default=1e-8, help="energy agreement (a) vs (b)")
    args = ap.parse_args()

    import torch

    import deepmd
    from deepmd.infer import DeepPot
    from deepmd.pt.utils import env as dpenv
    from deepmd.pt.utils.nlist import extend_input_and_build_neighbor_list

    dev = dpenv.DEVICE
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    devname = torch.cuda.get_device_name(dev) if cuda else f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"

    pth = args.pth or os.path.join(
        os.path.dirname(os.path.abspath(args.json)) if args.json else "/tmp",
        os.path.splitext(os.path.basename(args.model))[0] + ".pth",
    )
    pth, convert_s = ensure_pth(args.model, pth)

    t0 = time.perf_counter()
    dp = DeepPot(pth, nlist_backend=args.nlist_backend)
    load_s = time.perf_counter() - t0
    de = dp.deep_eval
    model = de.dp.model["Default"]
    type_map = dp.get_type_map()
    rcut = model.get_rcut()
    sel = list(model.get_sel())
    builder = getattr(de, "_nlist_builder", None)
    nlist_used = type(builder).__name__ if builder is not None else "native (dense, in forward)"

    names, x, cell = read_gro(args.conf)
    atype = map_types(names, type_map)
    natoms = len(atype)
    coords = x.reshape(1, -1)
    cells = cell.reshape(1, 9)

    res = {
        "model": os.path.abspath(args.model),
        "pth": os.path.abspath(pth),
        "conf": os.path.abspath(args.conf),
        "natoms": natoms,
        "type_map": type_map,
        "rcut": rcut,
        "sel": sel,
        "device": devname,
        "torch": torch.__version__,
        "deepmd": deepmd.__version__,
        "python": platform.python_version(),
        "customized_op": bool(getattr(__import__("deepmd.pt", fromlist=["x"]), "ENABLE_CUSTOMIZED_OP", False)),
        "nlist_backend_eval": nlist_used,
        "repeats": args.repeats,
        "warmup": args.warmup,
        "convert_s": round(convert_s, 3),
        "load_s": round(load_s, 3),
    }

    # ---- (a) DeepPot.eval -------------------------------------------------------------------
    e_a = f_a = None
    if not args.skip_eval:
        ts, out = timed(lambda: dp.eval(coords, cells, atype), args.repeats, args.warmup, sync)
        e_a = float(np.asarray(out[0]).reshape(-1)[0])
        f_a = np.asarray(out[1]).reshape(natoms, 3)
        v_a = np.asarray(out[2]).reshape(9)
        res["eval_s_median"] = statistics.median(ts)
        res["eval_s_min"] = min(ts)
        res["eval_atom_steps_per_s"] = natoms / res["eval_s_median"]
        res["energy_eval_eV"] = e_a
        res["virial_eval_eV"] = v_a.tolist()

    # ---- (b) forward_lower with a prebuilt neighbour list ------------------------------------
    prec = dpenv.GLOBAL_PT_FLOAT_PRECISION  # what DeepPot feeds the model
    with torch.no_grad():
        c_t = torch.tensor(coords, dtype=prec, device=dev)
        b_t = torch.tensor(cells, dtype=prec, device=dev)
        a_t = torch.tensor(atype.reshape(1, -1), dtype=torch.long, device=dev)
        sync()
        t0 = time.perf_counter()
        ext_coord, ext_atype, mapping, nlist = extend_input_and_build_neighbor_list(
            c_t, a_t, rcut, sel, mixed_types=True, box=b_t
        )
        sync()
        res["nlist_build_once_s"] = time.perf_counter() - t0
    ext_coord = ext_coord.view(1, -1, 3)
    res["nall"] = int(ext_atype.shape[1])

    def lower():
        return model.forward_lower(ext_coord, ext_atype, nlist, mapping, do_atomic_virial=False)

    ts, out = timed(lower, args.repeats, args.warmup, sync)
    e_b = float(out["energy"].detach().reshape(-1)[0].cpu())
    fext = out["extended_force"].detach().reshape(1, -1, 3)
    f_b = torch.zeros((1, natoms, 3), dtype=fext.dtype, device=fext.device)
    f_b.scatter_add_(1, mapping.unsqueeze(-1).expand(-1, -1, 3), fext)
    f_b = f_b.reshape(natoms, 3).cpu().numpy()
    res["network_s_median"] = statistics.median(ts)
    res["network_s_min"] = min(ts)
    res["network_atom_steps_per_s"] = natoms / res["network_s_median"]
    res["energy_network_eV"] = e_b
    res["virial_network_eV"] = out["virial"].detach().reshape(9).cpu().tolist()

    # ---- checks ------------------------------------------------------------------------------
    ok = True
    if e_a is not None:
        de_rel = abs(e_a - e_b) / max(abs(e_a), 1e-12)
        df = float(np.max(np.abs(f_a - f_b)))
        res["energy_rel_diff_eval_vs_network"] = de_rel
        res["force_max_abs_diff_eval_vs_network"] = df
        ok = de_rel <= args.rtol and df <= 1e-6 * max(1.0, float(np.max(np.abs(f_a))))
    res["energy"] = e_a if e_a is not None else e_b
    res["energy_kJmol"] = res["energy"] * EV_TO_KJMOL
    res["check_ok"] = ok

    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    print(
        f"deepmd {res['deepmd']} torch {res['torch']} on {devname}; model {os.path.basename(args.model)} "
        f"conf {os.path.basename(args.conf)} natoms {natoms} nall {res['nall']}"
    )
    if e_a is not None:
        print(
            f"  (a) DeepPot.eval [{nlist_used}]: median {res['eval_s_median']*1e3:.3f} ms "
            f"({res['eval_atom_steps_per_s']:.4g} atom-steps/s)  E = {e_a:.10f} eV"
        )
    print(
        f"  (b) forward_lower (prebuilt nlist, nall {res['nall']}): median {res['network_s_median']*1e3:.3f} ms "
        f"({res['network_atom_steps_per_s']:.4g} atom-steps/s)  E = {e_b:.10f} eV"
    )
    if e_a is not None:
        print(
            f"  check (a) vs (b): |dE|/|E| = {res['energy_rel_diff_eval_vs_network']:.2e}, "
            f"max|dF| = {res['force_max_abs_diff_eval_vs_network']:.2e} eV/A -> {'ok' if ok else 'MISMATCH'}"
        )
    print(f"  E = {res['energy_kJmol']:.6f} kJ/mol")
    sys.exit(0 if ok else 2)


if __name__ == "__main__":
    main()
