#!/usr/bin/env python3
"""Does `halomd eval` of a converted model agree with DeePMD-kit on a frame of a data set?

    /root/dpenv/bin/python python/halomd/check_model_eval.py --pth model.pth --dp model.dp \\
        --system examples/data/water_192 --frame 199 --halomd build/halomd

Writes the frame as extended XYZ, evaluates it with DeePMD-kit's PyTorch model (`DeepPot`, the
frozen .pth) and with `halomd eval` on the converted .dp, and prints the energy difference and
the largest force and virial differences, plus both models' errors against the data's labels.
Needs DeePMD-kit (the /root/dpenv environment) and a built halomd.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pth", required=True, help="frozen DeePMD-kit model (.pth)")
    ap.add_argument("--dp", required=True, help="the same model converted to .dp")
    ap.add_argument("--system", required=True, help="DeePMD-kit npy system folder")
    ap.add_argument("--frame", type=int, default=0)
    ap.add_argument("--halomd", default="build/halomd")
    a = ap.parse_args()

    s = a.system
    tmap = open(os.path.join(s, "type_map.raw")).read().split()
    types = np.loadtxt(os.path.join(s, "type.raw"), dtype=int, ndmin=1)
    x = np.load(os.path.join(s, "set.000/coord.npy"))[a.frame].astype(np.float64).reshape(-1, 3)
    box = np.load(os.path.join(s, "set.000/box.npy"))[a.frame].astype(np.float64).reshape(3, 3)
    e_ref = float(np.load(os.path.join(s, "set.000/energy.npy"))[a.frame])
    f_ref = np.load(os.path.join(s, "set.000/force.npy"))[a.frame].astype(np.float64).reshape(-1, 3)
    n = len(types)

    from deepmd.infer import DeepPot
    dp = DeepPot(a.pth)
    mmap = dp.get_type_map()
    atype = np.array([mmap.index(tmap[t]) for t in types])
    e, f, v = dp.eval(x[None], box.reshape(1, 9), atype, atomic=False)[:3]
    e_dp, f_dp, v_dp = float(np.ravel(e)[0]), f.reshape(-1, 3), v.reshape(3, 3)

    with tempfile.TemporaryDirectory() as tmp:
        xyz = os.path.join(tmp, "frame.xyz")
        with open(xyz, "w") as fh:
            fh.write(f"{n}\n")
            fh.write('Lattice="' + " ".join(f"{b:.17g}" for b in box.ravel())
                     + '" Properties=species:S:1:pos:R:3 pbc="T T T"\n')
            for t, xi in zip(types, x):
                fh.write(f"{tmap[t]} {xi[0]:.17g} {xi[1]:.17g} {xi[2]:.17g}\n")
        out = os.path.join(tmp, "out.json")
        subprocess.run([a.halomd, "eval", "-m", a.dp, "-c", xyz, "-o", out], check=True,
                       stdout=subprocess.DEVNULL)
        fr = json.load(open(out))["frames"][0]
    e_h, f_h, v_h = fr["energy"], np.array(fr["force"]), np.array(fr["virial"])
    res = {
        "system": s, "frame": a.frame, "natoms": n,
        "energy_deepmd_eV": e_dp, "energy_halomd_eV": e_h,
        "energy_abs_diff_eV": abs(e_h - e_dp),
        "energy_rel_diff": abs(e_h - e_dp) / abs(e_dp),
        "force_max_abs_diff_eV_per_A": float(np.abs(f_h - f_dp).max()),
        "force_max_abs_eV_per_A": float(np.abs(f_dp).max()),
        "virial_max_abs_diff_eV": float(np.abs(v_h - v_dp).max()),
        "label_energy_error_per_atom_eV": (e_dp - e_ref) / n,
        "label_force_rmse_eV_per_A": float(np.sqrt(((f_dp - f_ref) ** 2).mean())),
    }
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    sys.exit(main())
