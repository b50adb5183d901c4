"""Write the test inputs that are not DeePMD-kit goldens:

- tests/data/bad/: malformed inputs for the command-line error tests. Model files are derived
  from tests/data/models/deeppot.dp (DeePMD-kit's test model) by damaging one thing each (the
  refused descriptors and spin model come from make_golden.py). Text files are written as they
  are below.
- tests/data/derived/ideal_gas.dp: deeppot.dp with its fitting nets' last layers zeroed, so the
  energy is a constant and every force is zero: an ideal gas, on which a thermostat must sample
  the canonical kinetic-energy distribution exactly.
- tests/data/derived/se_e2_a_wide.dp: models/se_e2_a_small_tanh.dp with a third embedding layer
  of 200 outputs (random weights, seeded, DeePMD-kit's initial scales) and its fitting nets' first
  layers widened to the 800-wide descriptor: an embedding wider than one pass of 128 outputs of
  the GPU's compressed kernels, and not a multiple of 32, for the GPU twin test (CPU against
  GPU, so no golden).
- tests/data/derived/water_192_compressed.xyz: tests/data/structures/water_192_ortho.xyz with
  positions and cell scaled by 0.8 (twice the density), so that atoms have more neighbours
  within 6 Å than sel [46, 92] allows: up to 68 O and 126 H. Counted independently (numpy,
  all pairs over the periodic images, DeePMD-kit's rule: the nearest 138, then the nearest
  sel[t] of each type), the descriptors leave out 7,165 neighbours in all.

Usage: python python/halomd/make_test_inputs.py   (needs h5py and numpy)
"""
import copy
import itertools
import json
import os
import shutil
import sys

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(ROOT, "tests", "data")
BAD = os.path.join(DATA, "bad")

TEXT_FILES = {
    "not_hdf5.dp": "this is not an HDF5 file\n",
    # a checkpoint of format 1 (JSON), which halomd now refuses with its own message
    "checkpoint_broken.cpt": '{"schema":"halomd-cpt-1","step":5,\n"dt_ps":\n',
    "model.pth": "PK\x03\x04 a TorchScript archive would start like this\n",
    # input that cannot hurt (issue 29): counts no file of this size can hold, refused before
    # any allocation; two atoms at one place; a coordinate that is no position; a PDB cut
    # inside a record
    "huge_count.gro": "huge\n1000000000\n    1SOL     OW    1   0.126   0.165   0.150\n",
    "huge_count.xyz": "1000000000\nProperties=species:S:1:pos:R:3\nO 0 0 0\n",
    "huge_count.data": ("LAMMPS\n\n1000000000 atoms\n1 atom types\n0 10 xlo xhi\n0 10 ylo yhi\n"
                        "0 10 zlo zhi\n\nAtoms # atomic\n\n1 1 0 0 0\n"),
    "overlap.xyz": ('4\nLattice="10 0 0 0 10 0 0 0 10" Properties=species:S:1:pos:R:3 '
                    'pbc="T T T"\nO 1 1 1\nH 1.9 1 1\nO 5 5 5\nO 11.02 1 1\n'),
    "absurd.xyz": "2\nProperties=species:S:1:pos:R:3\nO 1 1 1\nH 1e30 1 1\n",
    "truncated.pdb": ("CRYST1   13.000   13.000   13.000  90.00  90.00  90.00 P 1           1\n"
                      "ATOM      1  OW  SOL     1       2.300   6.280   1.130  1.00  0.00           O\n"
                      "ATOM      2 HW1  SOL     1       2.900   6.280   1.130  1.00  0."),
    # declares 6 atoms, holds 4
    "truncated.gro": (
        "truncated water\n    6\n"
        "    1SOL     OW    1   0.126   0.165   0.150\n"
        "    1SOL    HW1    2   0.190   0.094   0.127\n"
        "    1SOL    HW2    3   0.177   0.247   0.140\n"
        "    2SOL     OW    4   0.526   0.465   0.450\n"
    ),
    # sodium is not in an O/H model's type map
    "unknown_element.xyz": (
        "4\nLattice=\"12 0 0 0 12 0 0 0 12\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n"
        "O 1.0 1.0 1.0\nH 1.9 1.2 1.0\nH 0.8 1.9 1.1\nNa 6.0 6.0 6.0\n"
    ),
    # a 0.5 Angstrom thick cell: far too thin for a 6 Angstrom cut-off
    "tiny_box.gro": (
        "tiny box\n    3\n"
        "    1SOL     OW    1   0.010   0.165   0.150\n"
        "    1SOL    HW1    2   0.020   0.094   0.127\n"
        "    1SOL    HW2    3   0.030   0.247   0.140\n"
        "   0.05000   1.20000   1.20000\n"
    ),
    # the third cell vector lies in the plane of the first two
    "flat_cell.xyz": (
        "3\nLattice=\"10 0 0 0 10 0 5 5 0\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n"
        "O 1.0 1.0 1.0\nH 1.9 1.2 1.0\nH 0.8 1.9 1.1\n"
    ),
    "unknown_key.mdp": "dt = 0.0005\nnstep = 100\n",
    "repeated_key.mdp": "dt = 0.0005\nnsteps = 10\ndt = 0.001\n",
    "bad_value.mdp": "dt = -0.001\n",
    "tcoupl_without_ref_t.mdp": "tcoupl = v-rescale\ntau-t = 0.1\n",
}


def damaged_models():
    src = os.path.join(DATA, "models", "deeppot.dp")
    corrupt = os.path.join(BAD, "corrupt_json.dp")
    shutil.copyfile(src, corrupt)
    with h5py.File(corrupt, "r+") as f:
        text = f.attrs["json"]
        f.attrs["json"] = text[: len(text) // 2]  # cut in the middle of the tree
    missing = os.path.join(BAD, "missing_dataset.dp")
    shutil.copyfile(src, missing)
    with h5py.File(missing, "r+") as f:
        tree = json.loads(f.attrs["json"])
        path = tree["model"]["descriptor"]["embeddings"]["networks"][1]["layers"][0][
            "@variables"]["w"]
        del f[path]
    print("damaged models written; removed", path, "from missing_dataset.dp")
    nan = os.path.join(BAD, "nan_weight.dp")
    shutil.copyfile(src, nan)
    with h5py.File(nan, "r+") as f:
        tree = json.loads(f.attrs["json"])
        path = tree["model"]["fitting"]["nets"]["networks"][0]["layers"][0]["@variables"]["w"]
        w = f[path][()]
        w.flat[3] = float("nan")
        f[path][...] = w
    print("nan_weight.dp: a NaN in", path)


def ideal_gas_model():
    out = os.path.join(DATA, "derived", "ideal_gas.dp")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    shutil.copyfile(os.path.join(DATA, "models", "deeppot.dp"), out)
    with h5py.File(out, "r+") as f:
        tree = json.loads(f.attrs["json"])
        for net in tree["model"]["fitting"]["nets"]["networks"]:
            last = net["layers"][-1]["@variables"]
            for key in ("w", "b"):
                f[last[key]][...] = 0.0
    print("ideal_gas.dp written")


def wide_embedding_model(width=200):
    import numpy as np
    rng = np.random.default_rng(20261201)
    out = os.path.join(DATA, "derived", "se_e2_a_wide.dp")
    shutil.copyfile(os.path.join(DATA, "models", "se_e2_a_small_tanh.dp"), out)
    with h5py.File(out, "r+") as f:
        tree = json.loads(f.attrs["json"])
        made = itertools.count()

        def variable(array):
            name = f"/variable_wide_{next(made):04d}"
            f.create_dataset(name, data=array)
            return name

        desc = tree["model"]["descriptor"]
        desc["neuron"] = desc["neuron"] + [width]
        for net in desc["embeddings"]["networks"]:
            net["neuron"] = desc["neuron"]
            layer = copy.deepcopy(net["layers"][-1])
            n_in = f[layer["@variables"]["w"]].shape[1]
            layer["@variables"] = {
                "w": variable(rng.normal(0, 1 / np.sqrt(n_in + width), (n_in, width))),
                "b": variable(rng.normal(0, 1, width)), "idt": None}
            net["layers"].append(layer)
        dim = width * desc["axis_neuron"]
        fitting = tree["model"]["fitting"]
        fitting["dim_descrpt"] = dim
        for net in fitting["nets"]["networks"]:
            net["in_dim"] = dim
            first = net["layers"][0]["@variables"]
            n_out = f[first["w"]].shape[1]
            del f[first["w"]]
            first["w"] = variable(rng.normal(0, 1 / np.sqrt(dim + n_out), (dim, n_out)))
        f.attrs["json"] = json.dumps(tree)
    print("se_e2_a_wide.dp written")


def compressed_water():
    src = os.path.join(DATA, "structures", "water_192_ortho.xyz")
    out = os.path.join(DATA, "derived", "water_192_compressed.xyz")
    with open(src) as f:
        lines = f.read().splitlines()
    n = int(lines[0])
    head, tail = lines[1].split('Lattice="')
    cell, rest = tail.split('"', 1)
    scaled = " ".join(f"{0.8 * float(v):.10g}" for v in cell.split())
    body = [lines[0], f'{head}Lattice="{scaled}"{rest}']
    for line in lines[2:2 + n]:
        name, *xyz = line.split()
        body.append(f"{name:2s} " + " ".join(f"{0.8 * float(v):16.10f}" for v in xyz[:3]))
    with open(out, "w") as f:
        f.write("\n".join(body) + "\n")
    print("water_192_compressed.xyz written")


def main():
    os.makedirs(BAD, exist_ok=True)
    for name, text in TEXT_FILES.items():
        with open(os.path.join(BAD, name), "w") as f:
            f.write(text)
    damaged_models()
    ideal_gas_model()
    wide_embedding_model()
    compressed_water()
    return 0


if __name__ == "__main__":
    sys.exit(main())
