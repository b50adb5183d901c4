#!/usr/bin/env python3
"""Label frames of a halomd run with the reference model (GROMACS), as new training data.

    python python/halomd/relabel_frames.py --traj nvt.xyz --template examples/water/water_192.gro \\
        --top examples/water/water_192.top --out examples/data/water_192_relabel/run1 \\
        --every 20 --skip 10 --pair O O --window 2.0 2.4

The second step of the usual Deep Potential training loop (DP-GEN's exploration and labelling):
a model run visits configurations its training data never showed, and where it goes wrong
there (water molecules falling into O-O contacts the reference model forbids) the fix is to
label such configurations with the reference and train again. This script takes the frames of
a halomd trajectory (extended XYZ, as `halomd run` writes it: positions in Å, Lattice in Å; the
atoms in the order of --template), keeps every --every-th frame after --skip, and with
--pair A B --window LO HI only those whose closest A-B distance (minimum image) lies in
[LO, HI] Å (the onset of a collapse rather than its depth, whose energies are hundreds of eV),
then computes their energies and forces with the halomd-ref classical model
(`gmx mdrun -rerun`, python/halomd/gmx_tools.py and make_gmx_data.py's labelling settings) and
writes a DeePMD-kit system (make_gmx_data.write_deepmd: type.raw, type_map.raw,
set.000/{coord,box,energy,force}.npy). With --max-epot E only the frames whose reference energy
per atom is at most E eV are written: where no single pair marks the failure (a protein model
whose bonds and contacts all drift), the reference energy itself tells the onset from the
depth. The coordinates stored are the ones GROMACS labelled (its single-precision copy). Needs
numpy and Debian's GROMACS.
"""

import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import numpy as np  # noqa: E402

from halomd import gmx_tools as gt  # noqa: E402
from halomd import make_gmx_data as mgd  # noqa: E402


def read_xyz(path):
    """Frames of an extended XYZ file: list of (species list, x Å (n,3), cell Å (3,3))."""
    frames = []
    with open(path) as f:
        lines = f.read().splitlines()
    k = 0
    while k < len(lines) and lines[k].strip():
        n = int(lines[k])
        comment = lines[k + 1]
        if 'Lattice="' not in comment:
            raise SystemExit(f"{path}:{k + 2}: frame without a Lattice (a periodic run is needed)")
        cell = np.array([float(v) for v in comment.split('Lattice="')[1].split('"')[0].split()])
        rows = [lines[k + 2 + i].split() for i in range(n)]
        frames.append(([r[0] for r in rows], np.array([[float(v) for v in r[1:4]] for r in rows]),
                       cell.reshape(3, 3)))
        k += 2 + n
    return frames


def closest_pair(x, cell, species, a, b):
    """Smallest minimum-image distance between atoms of species a and b (Å)."""
    inv = np.linalg.inv(cell)
    ia = [i for i, s in enumerate(species) if s == a]
    ib = [i for i, s in enumerate(species) if s == b]
    best = np.inf
    for i in ia:
        d = x[ib] - x[i]
        d -= np.round(d @ inv) @ cell
        r = np.sqrt((d * d).sum(axis=1))
        if a == b:
            r = r[np.array(ib) != i]
        best = min(best, r.min())
    return best


def write_frames_gro(path, atoms, frames):
    """Multi-frame .gro with 6 decimals (nm): GROMACS reads the precision from the layout."""
    with open(path, "w") as f:
        for t, (x, cell) in enumerate(frames):
            c = cell / gt.NM_TO_A  # GROMACS order: v1(x) v2(y) v3(z) v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)
            box = [c[0, 0], c[1, 1], c[2, 2], c[0, 1], c[0, 2], c[1, 0], c[1, 2], c[2, 0], c[2, 1]]
            f.write(gt.gro_frame_text(f"relabel t= {float(t):.1f}", atoms, x / gt.NM_TO_A, box,
                                      decimals=6))


def label(frames, template, top, work):
    """(x Å, box Å, energy eV, force eV/Å) of `frames` [(x, cell)] by mdrun -rerun."""
    _, atoms, _, _ = gt.read_gro(template)
    gmx = gt.Gmx(work)
    write_frames_gro(gmx.path("frames.gro"), atoms, frames)
    # the exact pair list of the small training boxes (gmx_tools.mdp_text), right for any box
    mgd.write(gmx.path("label.mdp"), gt.mdp_text("relabel: labels (mdrun -rerun)", mgd.MDP_LABEL,
                                                 small_box=True))
    gmx.grompp("label.mdp", os.path.abspath(template), os.path.abspath(top), "label.tpr")
    gmx.mdrun("label", extra=["-rerun", "frames.gro"])
    labelled = [fr for fr in gt.read_trr(gmx.path("label.trr")) if "f" in fr]
    _, epot = gt.read_energy(gmx, "label.edr", "Potential")
    if len(labelled) != len(frames) or len(epot) != len(frames):
        raise SystemExit(f"{work}: GROMACS labelled {len(labelled)} frames with {len(epot)} "
                         f"energies, {len(frames)} were given")
    x = np.array([fr["x"] for fr in labelled], dtype=np.float64) * gt.NM_TO_A
    box = np.array([fr["box"] for fr in labelled], dtype=np.float64) * gt.NM_TO_A
    force = np.array([fr["f"] for fr in labelled], dtype=np.float64) * gt.KJMOLNM_TO_EVA
    return x, box, np.asarray(epot) * gt.KJMOL_TO_EV, force


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traj", required=True, help="halomd extended XYZ trajectory")
    ap.add_argument("--template", required=True, help=".gro with the atom names, same order")
    ap.add_argument("--top", required=True, help="GROMACS topology of the reference model")
    ap.add_argument("--out", required=True, help="DeePMD-kit system folder to write")
    ap.add_argument("--type-map", nargs="+", default=mgd.WATER_TYPE_MAP)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--skip", type=int, default=0, help="frames to leave out at the start")
    ap.add_argument("--pair", nargs=2, metavar=("A", "B"))
    ap.add_argument("--window", nargs=2, type=float, metavar=("LO", "HI"))
    ap.add_argument("--max-epot", type=float, metavar="E",
                    help="keep frames whose reference energy per atom is at most E eV")
    ap.add_argument("--work", help="GROMACS scratch folder (default: a temporary one)")
    args = ap.parse_args()
    if (args.pair is None) != (args.window is None):
        ap.error("--pair and --window go together")
    traj = read_xyz(args.traj)
    chosen = []
    for species, x, cell in traj[args.skip::args.every]:
        if args.pair:
            r = closest_pair(x, cell, species, *args.pair)
            if not args.window[0] <= r <= args.window[1]:
                continue
        chosen.append((species, x, cell))
    if not chosen:
        raise SystemExit(f"{args.traj}: no frame selected out of {len(traj)}")
    species = chosen[0][0]
    unknown = sorted(set(species) - set(args.type_map))
    if unknown:
        raise SystemExit(f"{args.traj}: species {unknown} not in --type-map {args.type_map}")
    with tempfile.TemporaryDirectory() as tmp:
        x, box, energy, force = label([(x, c) for _, x, c in chosen], args.template, args.top,
                                      args.work or tmp)
    n = len(chosen[0][0])
    if args.max_epot is not None:
        keep = energy / n <= args.max_epot
        if not keep.any():
            raise SystemExit(f"{args.traj}: no labelled frame at or below {args.max_epot} eV/atom "
                             f"(lowest {energy.min() / n:.5f})")
        x, box, energy, force = x[keep], box[keep], energy[keep], force[keep]
    mgd.write_deepmd(args.out, [args.type_map.index(s) for s in species], args.type_map, x, box,
                     energy, force)
    print(f"{args.out}: {len(energy)} of {len(traj)} frames; energy per atom "
          f"{energy.mean() / n:.5f} +- {energy.std() / n:.5f} eV, force RMS "
          f"{np.sqrt((force ** 2).mean()):.3f} eV/A, max |F| {np.abs(force).max():.2f} eV/A")


if __name__ == "__main__":
    main()
