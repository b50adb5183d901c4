#!/usr/bin/env python3
"""Split DeePMD-kit npy systems into training and validation frames (the last frames held out).

    python python/halomd/split_deepmd_data.py examples/data/water_192 --valid 20 \\
        --train-out W/data/water_192_train --valid-out W/data/water_192_valid
    python python/halomd/split_deepmd_data.py examples/data/protein_fragments --valid 1 \\
        --train-out W/data/protein_train --valid-out W/data/protein_valid

SRC is one system (a folder with type.raw) or a folder of systems (each written under the
output folders by name). Of each system's set.000 the last VALID frames go to --valid-out, the
others to --train-out; arrays are copied as they are (dtype kept). Used for the trained models
of examples/MODELS.md. Needs numpy.
"""

import argparse
import os
import shutil

import numpy as np


def split(src, train, valid, nvalid):
    n = np.load(os.path.join(src, "set.000", "energy.npy")).shape[0]
    if not 0 < nvalid < n:
        raise SystemExit(f"{src}: {n} frames, cannot hold out {nvalid}")
    for out, sl in ((train, slice(0, n - nvalid)), (valid, slice(n - nvalid, n))):
        os.makedirs(os.path.join(out, "set.000"), exist_ok=True)
        for f in ("type.raw", "type_map.raw"):
            shutil.copy(os.path.join(src, f), out)
        for f in sorted(os.listdir(os.path.join(src, "set.000"))):
            a = np.load(os.path.join(src, "set.000", f))
            np.save(os.path.join(out, "set.000", f), a[sl])
    print(f"{src}: frames 0-{n - nvalid - 1} -> {train}, {n - nvalid}-{n - 1} -> {valid}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src")
    ap.add_argument("--valid", type=int, required=True, help="frames held out per system")
    ap.add_argument("--train-out", required=True)
    ap.add_argument("--valid-out", required=True)
    a = ap.parse_args()
    if os.path.isfile(os.path.join(a.src, "type.raw")):
        split(a.src, a.train_out, a.valid_out, a.valid)
    else:
        for name in sorted(os.listdir(a.src)):
            if os.path.isfile(os.path.join(a.src, name, "type.raw")):
                split(os.path.join(a.src, name), os.path.join(a.train_out, name),
                      os.path.join(a.valid_out, name), a.valid)


if __name__ == "__main__":
    main()
