#!/usr/bin/env python3
"""Load every DeePMD-kit system under a folder with DeePMD-kit's own reader and print shapes.

    /root/dpenv/bin/python python/halomd/check_deepmd_data.py [examples/data]

For each system (a folder with type.raw): deepmd.utils.data.DeepmdData with the data set's
type map, energy and force registered as `dp train` / `dp test` do, then get_test() and
get_batch(); prints natoms, frames, the shapes and value ranges it returns (A, eV, eV/A), and
checks them against the .npy files. With dpdata installed, also loads each with
dpdata.LabeledSystem(fmt="deepmd/npy"). Exit status 1 on any mismatch.
"""

import os
import sys

import numpy as np

from deepmd.utils.data import DeepmdData


def systems(root):
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        if "type.raw" in filenames:
            yield dirpath


def check(path):
    type_map = open(os.path.join(path, "type_map.raw")).read().split()
    d = DeepmdData(path, set_prefix="set", shuffle_test=False, type_map=type_map)
    d.add("energy", 1, atomic=False, must=True, high_prec=True)
    d.add("force", 3, atomic=True, must=True, high_prec=False)
    test = d.get_test()
    nat = d.get_natoms()
    nf = test["coord"].shape[0]
    batch = d.get_batch(min(4, nf))
    raw = {k: np.load(os.path.join(path, "set.000", k + ".npy")) for k in ("coord", "force", "energy", "box")}
    # DeepmdData sorts atoms by type (sort_atoms=True): compare sorted by type
    types = np.loadtxt(os.path.join(path, "type.raw"), dtype=int, ndmin=1)
    idx = np.argsort(types, kind="stable")
    ok = (np.allclose(test["coord"].reshape(nf, -1, 3), raw["coord"].reshape(nf, -1, 3)[:, idx], rtol=0, atol=1e-5)
          and np.allclose(test["force"].reshape(nf, -1, 3), raw["force"].reshape(nf, -1, 3)[:, idx], rtol=0, atol=1e-6)
          and np.allclose(test["energy"].ravel(), raw["energy"]))
    e = test["energy"].ravel()
    print(f"{os.path.relpath(path)}: type_map {d.get_type_map()}, natoms {nat}, frames {nf}; "
          f"coord {test['coord'].shape} {test['coord'].dtype}, box {test['box'].shape}, "
          f"energy {test['energy'].shape} [{e.min():.4f}, {e.max():.4f}] eV "
          f"({e.mean() / nat:.5f} eV/atom), force {test['force'].shape} "
          f"max |F| {np.abs(test['force']).max():.3f} eV/A; batch coord {batch['coord'].shape}"
          f"{'' if ok else '  MISMATCH'}")
    try:
        import dpdata
    except ImportError:
        return ok
    s = dpdata.LabeledSystem(path, fmt="deepmd/npy")
    print(f"    dpdata: {s}")
    return ok


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "data")
    found = list(systems(root))
    results = [check(p) for p in found]
    print(f"{len(found)} systems, {sum(results)} loaded and matched")
    sys.exit(0 if found and all(results) else 1)


if __name__ == "__main__":
    main()
