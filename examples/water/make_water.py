#!/usr/bin/env python3
"""Equilibrated TIP3P water boxes for halomd, from one equilibrated cell of 512 molecules.

    python3 examples/water/make_water.py                 # regenerate water_1536.gro (+ .top) and
                                                         # water_12288.gro (+ .top) here
    python3 examples/water/make_water.py --check         # regenerate in a temporary folder and
                                                         # compare with the committed files
    python3 examples/water/make_water.py -n 4096 -o box.gro   # any number of molecules, from
                                                         # the committed cell water_1536.gro

Cell (regeneration, GROMACS, about 2 min on one core): 512 molecules from the equilibrated SPC
box of GROMACS (`gmx solvate -cs spc216.gro`, deterministic) in a cube, the most crowded surplus
molecules removed, box set to exactly 1 g/cm3; then with the halomd-ref model (flexible TIP3P
of AMBER99SB-ILDN, reaction-field and Lennard-Jones cut off at 0.6 nm; see
python/halomd/gmx_tools.py): steepest descent, 20 ps NPT (300 K, 1 bar, v-rescale + C-rescale,
dt 0.5 fs), every molecule moved rigidly to bring the box back to exactly 1 g/cm3, then 20 ps
NVT at 300 K. The last frame is the cell.

Any size: a whole number of cells per direction is pure replication (periodic, as equilibrated as
the cell): 512 * nx * ny * nz molecules, e.g. 4096 = 2x2x2 (water_12288.gro). Any other count
is cut from a replica: a cube of exactly 1 g/cm3 for N molecules, filled with the N molecules
of the replica nearest its corner (smallest max(x, y, z) of the oxygen), then, unless
--no-relax, relaxed with GROMACS (steepest descent + 10 ps NVT at 300 K) to heal the cut faces.

Needs numpy (Debian's python3-numpy or the DeePMD-kit environment) and, for the cell and the
relaxation, Debian's GROMACS (`gmx`). Single-threaded, fixed seeds: reproducible with the same
GROMACS binary.
"""

import argparse
import filecmp
import math
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402

from halomd import gmx_tools as gt  # noqa: E402

CELL_NMOL = 512
DENSITY = 1.0  # g/cm^3
TEMPERATURE = 300.0  # K
SEED_NPT, SEED_NVT, SEED_RELAX = 1536, 1537, 1538
TITLE = "TIP3P (flexible) water, {n} molecules, 300 K, 1 g/cm3 (halomd examples/water)"


def edge_for(nmol, density=DENSITY):
    """Edge (nm) of the cube holding nmol TIP3P molecules at density (g/cm^3)."""
    return (nmol * gt.TIP3P_MASS / (density * gt.AMU_PER_NM3_PER_G_CM3)) ** (1.0 / 3.0)


# ---------------------------------------------------------------------------- molecule helpers

def molecules(x, box):
    """(n, 3, 3) array of whole molecules (O, H1, H2), H unwrapped next to their O."""
    m = x.reshape(-1, 3, 3).copy()
    L = np.asarray(box[:3])
    m[:, 1:] -= L * np.round((m[:, 1:] - m[:, :1]) / L)
    return m


def water_atoms(nmol):
    return [(i + 1, "SOL", name) for i in range(nmol) for name in ("OW", "HW1", "HW2")]


def closest_contacts(mol, box):
    """Per molecule: smallest O-O distance to another molecule (minimum image), nm."""
    o = mol[:, 0]
    L = np.asarray(box[:3])
    d = o[:, None, :] - o[None, :, :]
    d -= L * np.round(d / L)
    r = np.sqrt((d * d).sum(-1))
    np.fill_diagonal(r, np.inf)
    return r.min(1)


def trim(mol, box, nkeep):
    """Keep nkeep molecules, dropping the most crowded (closest O-O contact; ties by index)."""
    nrm = len(mol) - nkeep
    if nrm <= 0:
        return mol
    order = np.lexsort((np.arange(len(mol)), closest_contacts(mol, box)))
    drop = np.sort(order[:nrm])
    return np.delete(mol, drop, axis=0)


def rescale(mol, box, new_edge):
    """Move molecules rigidly (oxygen positions scaled) into a cube of edge new_edge."""
    s = np.asarray(new_edge) / np.asarray(box[:3])
    return mol + (mol[:, :1] * (s - 1.0)), np.full(3, new_edge)


def replicate(mol, box, reps):
    nx, ny, nz = reps
    L = np.asarray(box[:3])
    shifts = np.array([(i, j, k) for i in range(nx) for j in range(ny) for k in range(nz)]) * L
    out = (mol[None, :, :, :] + shifts[:, None, None, :]).reshape(-1, 3, 3)
    return out, L * np.array(reps)


def cut(mol, box, nmol):
    """nmol molecules in a cube of 1 g/cm3, taken from replicas of (mol, box) nearest the corner."""
    edge = edge_for(nmol)
    reps = [max(1, math.ceil(edge * 1.2 / b)) for b in box[:3]]
    big, bigbox = replicate(mol, box, reps)
    o = big[:, 0] - bigbox * np.floor(big[:, 0] / bigbox)
    big = big + (o - big[:, 0])[:, None, :]  # wrap molecules by their oxygen
    depth = o.max(1)
    take = np.sort(np.lexsort((np.arange(len(big)), depth))[:nmol])
    sel = big[take]
    shift = np.floor(sel[:, 0] / edge) * edge  # wrap into the new cube by the oxygen
    return sel - shift[:, None, :], np.full(3, edge)


# ---------------------------------------------------------------------------- GROMACS stages

MDP_EM = """integrator              = steep
emtol                   = 100.0
emstep                  = 0.001
nsteps                  = 2000
nstenergy               = 100
"""

MDP_MD = """integrator              = md
dt                      = 0.0005       ; ps (flexible O-H bonds)
nsteps                  = {nsteps}
nstcalcenergy           = 100
nstenergy               = 1000
nstlog                  = 10000
tcoupl                  = v-rescale
tc-grps                 = System
tau-t                   = 0.1
ref-t                   = {temp}
{pcoupl}gen-vel                 = yes
gen-temp                = {temp}
gen-seed                = {seed}
ld-seed                 = {seed}       ; v-rescale and C-rescale noise (default -1: random)
"""

MDP_NPT = """pcoupl                  = C-rescale
pcoupltype              = isotropic
tau-p                   = 1.0
ref-p                   = 1.0
compressibility         = 4.5e-5
"""


def run_md(gmx, name, conf, top, title, nsteps, seed, npt=False, small_box=False):
    mdp = gt.mdp_text(title, MDP_MD.format(nsteps=nsteps, temp=TEMPERATURE, seed=seed,
                                           pcoupl=MDP_NPT if npt else "pcoupl                  = no\n"),
                      small_box=small_box)
    with open(gmx.path(name + ".mdp"), "w") as f:
        f.write(mdp)
    gmx.grompp(name + ".mdp", conf, top, name + ".tpr")
    gmx.mdrun(name)


def run_em(gmx, name, conf, top, small_box=False):
    with open(gmx.path(name + ".mdp"), "w") as f:
        f.write(gt.mdp_text("steepest descent, halomd-ref model", MDP_EM, small_box=small_box))
    gmx.grompp(name + ".mdp", conf, top, name + ".tpr")
    gmx.mdrun(name)


def write_top(path, nmol):
    with open(path, "w") as f:
        f.write(gt.water_top(nmol, f"TIP3P water, {nmol} molecules; -DFLEXIBLE for flexible"))


def equilibrate_cell(work, log=print):
    """The equilibrated cell of CELL_NMOL molecules: (mol (n,3,3) nm, box (3,) nm)."""
    gmx = gt.Gmx(work)
    edge = edge_for(CELL_NMOL)
    # Smallest cube (0.01 nm steps from the 1 g/cm3 edge) where solvate keeps >= 512 molecules.
    for k in range(50):
        b = round(edge + 0.01 * k, 3)
        gmx(["solvate", "-cs", "spc216.gro", "-o", "solv.gro", "-box", str(b), str(b), str(b)],
            "solvate")
        _, atoms, x, box = gt.read_gro(gmx.path("solv.gro"))
        if len(atoms) >= 3 * CELL_NMOL:
            break
    log(f"solvate: {len(atoms) // 3} molecules in a {b} nm cube")
    mol = trim(molecules(x, box), box, CELL_NMOL)
    mol, box = rescale(mol, box, edge)
    gt.write_gro(gmx.path("start.gro"), "start", water_atoms(CELL_NMOL), mol.reshape(-1, 3), box)
    write_top(gmx.path("water.top"), CELL_NMOL)
    run_em(gmx, "em", "start.gro", "water.top")
    run_md(gmx, "npt", "em.gro", "water.top", "NPT 20 ps, 300 K, 1 bar, halomd-ref model",
           40000, SEED_NPT, npt=True)
    _, dens = gt.read_energy(gmx, "npt.edr", "Density")
    _, _, x, box = gt.read_gro(gmx.path("npt.gro"))
    rho = CELL_NMOL * gt.TIP3P_MASS / (box[0] ** 3 * gt.AMU_PER_NM3_PER_G_CM3)
    log(f"NPT: mean density {dens[len(dens) // 2:].mean() / 1000:.4f} g/cm3 over the last 10 ps;"
        f" last frame {box[0]:.4f} nm = {rho:.4f} g/cm3, rescaled to {edge:.5f} nm (1 g/cm3)")
    mol, box = rescale(molecules(x, box), box, edge)
    gt.write_gro(gmx.path("nvt_start.gro"), "nvt start", water_atoms(CELL_NMOL), mol.reshape(-1, 3), box)
    run_md(gmx, "nvt", "nvt_start.gro", "water.top", "NVT 20 ps, 300 K, halomd-ref model",
           40000, SEED_NVT)
    t, temp = gt.read_energy(gmx, "nvt.edr", "Temperature")
    log(f"NVT: mean temperature {temp[len(temp) // 2:].mean():.1f} K over the last 10 ps")
    _, _, x, box = gt.read_gro(gmx.path("nvt.gro"))
    return molecules(x, box), box[:3]


def relax(mol, box, work, log=print):
    """Steepest descent + 10 ps NVT at 300 K of a cut box (halomd-ref model)."""
    gmx = gt.Gmx(work)
    n = len(mol)
    small = min(box) < 2 * 0.65
    gt.write_gro(gmx.path("cut.gro"), "cut", water_atoms(n), mol.reshape(-1, 3), box)
    write_top(gmx.path("water.top"), n)
    run_em(gmx, "relax_em", "cut.gro", "water.top", small_box=small)
    run_md(gmx, "relax_nvt", "relax_em.gro", "water.top", "NVT 10 ps, 300 K, halomd-ref model",
           20000, SEED_RELAX, small_box=small)
    _, _, x, box = gt.read_gro(gmx.path("relax_nvt.gro"))
    log(f"relaxed: steepest descent + 10 ps NVT ({n} molecules, edge {box[0]:.4f} nm)")
    return molecules(x, box), box[:3]


def write_box(path, mol, box, top=True):
    n = len(mol)
    gt.write_gro(path, TITLE.format(n=n), water_atoms(n), mol.reshape(-1, 3), box)
    if top:
        write_top(os.path.splitext(path)[0] + ".top", n)


def make_box(cell_mol, cell_box, nmol, work=None, do_relax=True, log=print):
    """nmol molecules: replication when nmol = 512 nx ny nz (near-cubic factors), else a cut."""
    ncell = len(cell_mol)
    if nmol % ncell == 0:
        k = nmol // ncell
        best = min(((a, b, k // (a * b)) for a in range(1, k + 1) if k % a == 0
                    for b in range(1, k // a + 1) if (k // a) % b == 0),
                   key=lambda r: (max(r) - min(r), r))
        mol, box = replicate(cell_mol, cell_box, best)
        log(f"{nmol} molecules: {best[0]}x{best[1]}x{best[2]} replicas of the cell")
        return mol, box
    mol, box = cut(cell_mol, cell_box, nmol)
    log(f"{nmol} molecules: cut from replicas of the cell, cube {box[0]:.5f} nm (1 g/cm3)")
    if do_relax:
        with tempfile.TemporaryDirectory() as tmp:
            mol, box = relax(mol, box, work or tmp, log=log)
    return mol, box


def regenerate(outdir, work):
    mol, box = equilibrate_cell(os.path.join(work, "cell"))
    write_box(os.path.join(outdir, "water_1536.gro"), mol, box)
    big, bigbox = make_box(mol, box, 4096)
    write_box(os.path.join(outdir, "water_12288.gro"), big, bigbox)
    print(f"wrote {outdir}/water_1536.gro, water_12288.gro (+ .top)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--nmol", type=int, help="number of molecules of the box to make")
    ap.add_argument("-o", "--output", help="output .gro (a .top is written beside it)")
    ap.add_argument("--cell", default=os.path.join(HERE, "water_1536.gro"),
                    help="equilibrated cell to replicate (default: water_1536.gro)")
    ap.add_argument("--no-relax", action="store_true", help="no GROMACS relaxation of a cut box")
    ap.add_argument("--check", action="store_true",
                    help="regenerate in a temporary folder and compare with the committed files")
    ap.add_argument("--keep", help="working folder to keep (GROMACS inputs, logs)")
    args = ap.parse_args()
    if args.nmol:
        if not args.output:
            ap.error("-n needs -o")
        _, _, x, box = gt.read_gro(args.cell)
        mol, box = make_box(molecules(x, box), box[:3], args.nmol, work=args.keep,
                            do_relax=not args.no_relax)
        write_box(args.output, mol, box)
        print(f"wrote {args.output} ({3 * len(mol)} atoms, box {box[0]:.5f} x {box[1]:.5f} x "
              f"{box[2]:.5f} nm)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or tmp
        if not args.check:
            regenerate(HERE, work)
            return
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        regenerate(out, work)
        bad = [f for f in ("water_1536.gro", "water_1536.top", "water_12288.gro", "water_12288.top")
               if not filecmp.cmp(os.path.join(out, f), os.path.join(HERE, f), shallow=False)]
        print("check: " + ("differs: " + ", ".join(bad) if bad else "identical"))
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
