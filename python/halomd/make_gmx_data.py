#!/usr/bin/env python3
"""Labelled training data from an independent engine (GROMACS), in DeePMD-kit's format.

    python python/halomd/make_gmx_data.py                  # regenerate examples/data/{water_192,
                                                           # water_192_hot, protein_fragments,
                                                           # protein_fragments_hot, protein_15668}
                                                           # (about 5 min on one core)
    python python/halomd/make_gmx_data.py --only water     # one set (water|water_hot|fragments|
                                                           # fragments_hot|protein)
    python python/halomd/make_gmx_data.py --check-units    # the unit checks (see below)
    python python/halomd/make_gmx_data.py --out DIR        # write elsewhere (e.g. to compare)

Configurations are sampled by classical NVT MD in GROMACS with the halomd-ref model
(AMBER99SB-ILDN + flexible TIP3P, reaction-field with conducting boundary and Lennard-Jones with
force switch, both cut off at 0.6 nm, no PME, no constraints, dt 0.5 fs; see gmx_tools.py), and
labelled with that model's potential energy and forces by `gmx mdrun -rerun` of the sampled
frames (the full-precision .trr written during sampling):

- water_192: 64 molecules (192 atoms) at 1 g/cm3, cut from the equilibrated cell
  examples/water/water_1536.gro and relaxed (make_water.py); 5 ps NVT at 300 K, then 200
  frames 0.5 ps apart (100 ps).
- water_192_hot/t450, water_192_hot/t600: the same box from the same relaxed start; 5 ps NVT
  at 450 K (600 K), then 100 frames 0.25 ps apart (25 ps). Hotter water: closer O-O contacts,
  longer bonds, wider angles, larger forces, so that a model sees more of the repulsive walls.
- protein_fragments/<name>: pieces of the solvated protein of examples/protein (PDB 1A8O,
  residues 151-220 after the build's minimisation and NPT): 23 windows of three residues
  (151-153, 154-156, ..., 217-219) plus 218-220 (the C terminus), each capped with ACE and
  NME built from the backbone atoms of the neighbouring residues (C-alpha -> methyl carbon) where
  the window is not at a chain end, and one fragment with the disulfide (197-199 + 217-219,
  capped, linked Cys198-Cys218): 25 fragments. Hydrogens by pdb2gmx; each fragment in a
  rectangular box 0.4 nm wider than it on each side (at least 1.5 nm), TIP3P water from
  spc216.gro, Na+ or Cl- to neutralise (genion, fixed seed); steepest descent, 5 ps NVT at
  300 K, then 4 frames 1 ps apart (100 frames in all).
- protein_fragments_hot/<name>: the same 25 systems (same atoms: genion's seed does not depend
  on the temperature), from the same minimised structure 5 ps NVT at 450 K, then 2 frames 1 ps
  apart (50 frames in all).
- protein_15668: the whole system of examples/protein (flexible water, no constraints):
  steepest descent, 5 ps NVT at 300 K, 2 frames 2 ps apart; held-out test frames.

The sets and their temperatures, frame counts and seeds are the tables WATER_SETS and
FRAGMENT_SETS below; the 300 K sets are the same arrays, bit for bit, as before the
temperature became a parameter.

DeePMD-kit format, one system per folder: type.raw, type_map.raw, set.000/{coord,box,force}.npy
as float32 (GROMACS is mixed precision: its coordinates and forces are float32 numbers; the
conversion to A and eV/A rounds once more, relative 6e-8) and energy.npy as float64.
Units: A, eV, eV/A. Conversions (gmx_tools.py): length nm * 10; energy kJ/mol / 96.48533212331
(= e N_A / 1000, the exact SI 2019 constants GROMACS uses); force (kJ/mol/nm) / 964.8533212331.

--check-units checks them end to end: (1) a Na+ Cl- pair at 0.30 and 0.40 nm computed by hand
in eV from the force-field parameters (Coulomb with reaction-field, Lennard-Jones; the
force-switch shift cancels in the difference) against GROMACS's energies and forces converted;
(2) on frame 0 of water_192, central finite differences of GROMACS energies (converted to eV)
along the converted force direction against the converted forces; (3) the .trr reader against
MDAnalysis when installed.

Needs numpy and Debian's GROMACS; run with the DeePMD-kit environment's python or Debian's
python3 + python3-numpy. Deterministic: fixed seeds, single-threaded mdrun with -reprod.
"""

import argparse
import collections
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "water"))

import numpy as np  # noqa: E402

from halomd import gmx_tools as gt  # noqa: E402

WATER_TYPE_MAP = ["O", "H"]
PROTEIN_TYPE_MAP = ["H", "C", "N", "O", "S", "Na", "Cl"]
SEED_FRAG = 2200  # + fragment index: genion, and the MD of the 300 K set
SEED_PROTEIN = 15668
PROTEIN_FRAMES = 2
PROTEIN_TEMPERATURE = 300.0  # K

# One sampling run: the system folder under --out, NVT temperature (K), equilibration steps,
# frames, steps between frames (dt 0.5 fs), seed of gen-vel and of the thermostat noise (for
# fragments: plus the fragment index).
Run = collections.namedtuple("Run", "system temperature equil_steps frames stride seed")

# The --only choices that sample the 64-molecule water box, and their runs.
WATER_SETS = {
    "water": [Run("water_192", 300.0, 10000, 200, 1000, 192)],
    # hotter and more compressed local structure (same density): the repulsive walls
    "water_hot": [Run("water_192_hot/t450", 450.0, 10000, 100, 500, 192450),
                  Run("water_192_hot/t600", 600.0, 10000, 100, 500, 192600)],
}
# The --only choices that sample the 25 protein fragments (the same molecules, ions and water
# in each: genion's seed is SEED_FRAG + index whatever the run).
FRAGMENT_SETS = {
    "fragments": Run("protein_fragments", 300.0, 10000, 4, 2000, SEED_FRAG),
    "fragments_hot": Run("protein_fragments_hot", 450.0, 10000, 2, 2000, 4500),
}
SETS = ("water", "water_hot", "fragments", "fragments_hot", "protein")  # default: all, in order

MDP_EM = """integrator              = steep
emtol                   = 200.0
emstep                  = 0.001
nsteps                  = 2000
"""

MDP_NVT = """integrator              = md
dt                      = 0.0005       ; ps (flexible bonds, no constraints)
nsteps                  = {nsteps}
nstcalcenergy           = 100
nstenergy               = 1000
nstlog                  = 10000
nstxout                 = {nstxout}    ; full-precision frames for the labels
nstvout                 = 0
nstfout                 = 0
tcoupl                  = v-rescale
tc-grps                 = System
tau-t                   = 0.1
ref-t                   = {temp}
pcoupl                  = no
gen-vel                 = {gen_vel}
gen-temp                = {temp}
gen-seed                = {seed}
ld-seed                 = {ld_seed}       ; v-rescale noise (default -1: random)
continuation            = {cont}
"""

MDP_LABEL = """integrator              = md     ; with mdrun -rerun: energies and forces of each frame
nsteps                  = 0
nstcalcenergy           = 1
nstenergy               = 1
nstxout                 = 1
nstfout                 = 1
tcoupl                  = no
pcoupl                  = no
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def sample_and_label(gmx, conf, top, tag, temperature, equil_steps, nframes, stride, seed,
                     small_box=False):
    """EM, NVT equilibration, NVT sampling (a frame every stride steps), rerun labelling.

    temperature: K, of the velocities drawn for the equilibration and of both thermostats.

    Returns (x A (nf,n,3), box A (nf,3,3), energy eV (nf,), force eV/A (nf,n,3)), float64."""
    write(gmx.path("em.mdp"), gt.mdp_text(f"{tag}: steepest descent", MDP_EM, small_box))
    gmx.grompp("em.mdp", conf, top, "em.tpr")
    gmx.mdrun("em")
    write(gmx.path("eq.mdp"), gt.mdp_text(
        f"{tag}: NVT equilibration, {temperature:g} K", MDP_NVT.format(
            nsteps=equil_steps, nstxout=0, temp=temperature, gen_vel="yes", seed=seed,
            ld_seed=seed, cont="no"), small_box))
    gmx.grompp("eq.mdp", "em.gro", top, "eq.tpr")
    gmx.mdrun("eq")
    write(gmx.path("sample.mdp"), gt.mdp_text(
        f"{tag}: NVT sampling, {temperature:g} K", MDP_NVT.format(
            nsteps=nframes * stride, nstxout=stride, temp=temperature, gen_vel="no", seed=seed,
            ld_seed=seed + 50000, cont="yes"), small_box))
    gmx.grompp("sample.mdp", "eq.gro", top, "sample.tpr", extra=["-t", "eq.cpt"])
    gmx.mdrun("sample")
    write(gmx.path("label.mdp"), gt.mdp_text(f"{tag}: labels (mdrun -rerun)", MDP_LABEL,
                                             small_box))
    gmx.grompp("label.mdp", "eq.gro", top, "label.tpr")
    gmx.mdrun("label", extra=["-rerun", "sample.trr"])
    sampled = gt.read_trr(gmx.path("sample.trr"))[1:]  # frame 0 is the end of equilibration
    labelled = gt.read_trr(gmx.path("label.trr"))
    t, epot = gt.read_energy(gmx, "label.edr", "Potential")
    by_time = {round(fr["time"], 6): fr for fr in labelled if "f" in fr}
    xs, boxes, es, fs = [], [], [], []
    for fr in sampled:
        lab = by_time[round(fr["time"], 6)]
        k = int(np.argmin(abs(t - fr["time"])))
        if abs(t[k] - fr["time"]) > 1e-6 or ("x" in lab and not np.array_equal(lab["x"], fr["x"])):
            raise RuntimeError(f"{tag}: rerun frame at t={fr['time']} does not match")
        xs.append(fr["x"].astype(np.float64) * gt.NM_TO_A)
        boxes.append(fr["box"].astype(np.float64) * gt.NM_TO_A)
        es.append(epot[k] * gt.KJMOL_TO_EV)
        fs.append(lab["f"].astype(np.float64) * gt.KJMOLNM_TO_EVA)
    if len(xs) != nframes:
        raise RuntimeError(f"{tag}: {len(xs)} frames, {nframes} expected")
    return np.array(xs), np.array(boxes), np.array(es), np.array(fs)


def write_deepmd(folder, types, type_map, x, box, energy, force):
    """DeePMD-kit npy system: set.000 with coord/box/force float32, energy float64."""
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(os.path.join(folder, "set.000"))
    write(os.path.join(folder, "type.raw"), "".join(f"{t}\n" for t in types))
    write(os.path.join(folder, "type_map.raw"), "".join(f"{n}\n" for n in type_map))
    nf = len(x)
    s = os.path.join(folder, "set.000")
    np.save(os.path.join(s, "coord.npy"), x.reshape(nf, -1).astype(np.float32))
    np.save(os.path.join(s, "box.npy"), box.reshape(nf, 9).astype(np.float32))
    np.save(os.path.join(s, "energy.npy"), energy.astype(np.float64))
    np.save(os.path.join(s, "force.npy"), force.reshape(nf, -1).astype(np.float32))


def element(resname, name):
    if resname in ("NA", "CL"):
        return {"NA": "Na", "CL": "Cl"}[resname]
    e = name.lstrip("0123456789")[0]
    if e not in "HCNOS":
        raise ValueError(f"no element for atom {name} of {resname}")
    return e


# ---------------------------------------------------------------------------- water

def water_start(work, log=print):
    """The 64-molecule box at 1 g/cm3 that every water run starts from: (start.gro, water.top)
    paths. Cut from the equilibrated cell examples/water/water_1536.gro and relaxed (steepest
    descent + 10 ps NVT at 300 K, make_water.py)."""
    import make_water as mw  # examples/water/make_water.py

    _, _, x, box = gt.read_gro(os.path.join(ROOT, "examples", "water", "water_1536.gro"))
    mol, box = mw.make_box(mw.molecules(x, box), box[:3], 64, work=os.path.join(work, "cut"),
                           log=log)
    gmx = gt.Gmx(os.path.join(work, "start"))
    gt.write_gro(gmx.path("start.gro"), "64 TIP3P", mw.water_atoms(64), mol.reshape(-1, 3), box)
    write(gmx.path("water.top"), gt.water_top(64))
    return gmx.path("start.gro"), gmx.path("water.top")


def min_oo_distance(x, box, types):
    """Smallest O-O distance (A) over frames x (nf,n,3) A in orthorhombic boxes (nf,3,3) A."""
    o = x[:, np.asarray(types) == WATER_TYPE_MAP.index("O")]
    d = o[:, :, None, :] - o[:, None, :, :]
    edge = np.diagonal(box, axis1=1, axis2=2)[:, None, None, :]
    d -= edge * np.round(d / edge)
    r = np.sqrt((d ** 2).sum(-1))
    r[:, np.arange(o.shape[1]), np.arange(o.shape[1])] = np.inf
    return r.min()


def make_water(outdir, work, runs, start, log=print):
    """The water runs (WATER_SETS) from start = water_start(...)."""
    for top in sorted({run.system.split("/")[0] for run in runs}):
        shutil.rmtree(os.path.join(outdir, top), ignore_errors=True)
    for run in runs:
        gmx = gt.Gmx(os.path.join(work, run.system.replace("/", "_")))
        shutil.copy(start[0], gmx.path("start.gro"))
        shutil.copy(start[1], gmx.path("water.top"))
        # 192 atoms, edge 1.2418 nm: half the edge is barely above the 0.6 nm cut-off, so the
        # pair list is exact (rebuilt every step, no buffer).
        x, b, e, f = sample_and_label(gmx, "start.gro", "water.top", run.system, run.temperature,
                                      run.equil_steps, run.frames, run.stride, run.seed,
                                      small_box=True)
        _, atoms, _, _ = gt.read_gro(gmx.path("start.gro"))
        types = [WATER_TYPE_MAP.index(element(r, n)) for _, r, n in atoms]
        write_deepmd(os.path.join(outdir, run.system), types, WATER_TYPE_MAP, x, b, e, f)
        log(f"{run.system}: {len(x)} frames at {run.temperature:g} K, E/atom "
            f"{e.mean() / x.shape[1]:.5f} eV (std {(e / x.shape[1]).std():.5f}), "
            f"|F| rms {np.sqrt((f ** 2).mean()):.4f} eV/A, "
            f"smallest O-O {min_oo_distance(x, b, types):.3f} A")


# ---------------------------------------------------------------------------- protein pieces

def protein_residues(gro):
    """Ordered residues of the protein in a .gro: [(resnr, resname, [(name, x nm)])]."""
    _, atoms, x, _ = gt.read_gro(gro)
    res = []
    for (resnr, resname, name), xi in zip(atoms, x):
        if resname in ("SOL", "NA", "CL"):
            continue
        if not res or res[-1][0] != resnr:
            res.append((resnr, resname, []))
        res[-1][2].append((name, xi))
    return res


def pdb_line(serial, name, resname, chain, resnr, x_nm):
    nm = f" {name:<3s}" if len(name) < 4 else name
    a = x_nm * 10.0
    return (f"ATOM  {serial:5d} {nm:4s} {resname:>3s} {chain}{resnr:4d}    "
            f"{a[0]:8.3f}{a[1]:8.3f}{a[2]:8.3f}  1.00  0.00\n")


def fragment_pdb(res, windows):
    """PDB text of capped windows [(first, last) resnr], one chain each, heavy atoms only."""
    byn = {r[0]: r for r in res}
    first, last = res[0][0], res[-1][0]
    lines, serial = [], 0
    for chain, (a, b) in zip("ABCD", windows):
        if a > first:  # ACE from residue a-1: CA -> CH3, C, O
            atoms = dict(byn[a - 1][2])
            for nm, src in (("CH3", "CA"), ("C", "C"), ("O", "O")):
                serial += 1
                lines.append(pdb_line(serial, nm, "ACE", chain, a - 1, atoms[src]))
        for r in range(a, b + 1):
            resnr, resname, atoms = byn[r]
            resname = {"CYX": "CYS", "HIE": "HIS", "HID": "HIS", "HIP": "HIS"}.get(resname, resname)
            for nm, xi in atoms:
                if nm.startswith("H"):
                    continue
                serial += 1
                lines.append(pdb_line(serial, nm, resname, chain, resnr, xi))
        if b < last:  # NME from residue b+1: N, CA -> CH3
            atoms = dict(byn[b + 1][2])
            for nm, src in (("N", "N"), ("CH3", "CA")):
                serial += 1
                lines.append(pdb_line(serial, nm, "NME", chain, b + 1, atoms[src]))
        lines.append("TER\n")
    return "".join(lines) + "END\n"


def fragments(res):
    """[(name, windows)]: 3-residue windows, the C terminus, the disulfide pair."""
    first, last = res[0][0], res[-1][0]
    out = []
    for a in range(first, last - 1, 3):
        b = min(a + 2, last)
        if b - a == 2:
            out.append((f"res{a}-{b}", [(a, b)]))
    if out[-1][1][0][1] != last:
        out.append((f"res{last - 2}-{last}", [(last - 2, last)]))
    out.append(("res197-199+217-219_ss", [(197, 199), (217, 219)]))
    return out


def topology_charge(gmx_dir):
    """Net charge of the [ atoms ] of every .top/.itp pdb2gmx wrote (protein only)."""
    q = 0.0
    for fn in sorted(os.listdir(gmx_dir)):
        if not (fn.endswith(".itp") and fn.startswith("topol")) and fn != "topol.top":
            continue
        section = None
        for line in open(os.path.join(gmx_dir, fn)):
            s = line.split(";")[0].strip()
            if s.startswith("["):
                section = s.strip("[] ")
            elif s and section == "atoms" and not s.startswith("#"):
                q += float(s.split()[6])
    return int(round(q))


def make_fragment(res, name, windows, index, run, outdir, work, log=print):
    """Builds fragment number index (the same molecule, water and ions for every run), samples
    it as run says (FRAGMENT_SETS), writes <out>/<run.system>/<name>."""
    gmx = gt.Gmx(os.path.join(work, name))
    write(gmx.path("frag.pdb"), fragment_pdb(res, windows))
    extra = ["-merge", "all"] if len(windows) > 1 else []
    gmx(["pdb2gmx", "-f", "frag.pdb", "-o", "frag.gro", "-p", "topol.top", "-i", "posre.itp",
         "-ff", "amber99sb-ildn", "-water", "tip3p", "-ignh"] + extra, "pdb2gmx")
    if len(windows) > 1 and "Linking CYS" not in open(gmx.path("pdb2gmx.log")).read():
        raise RuntimeError(f"{name}: pdb2gmx made no disulfide")
    _, _, x, _ = gt.read_gro(gmx.path("frag.gro"))
    ext = x.max(0) - x.min(0)
    box = np.maximum(np.round(ext + 0.8, 3), 1.5)
    gmx(["editconf", "-f", "frag.gro", "-o", "box.gro", "-c", "-box"] + [f"{v:.3f}" for v in box],
        "editconf")
    gmx(["solvate", "-cp", "box.gro", "-cs", "spc216.gro", "-o", "solv.gro", "-p", "topol.top"],
        "solvate")
    q = topology_charge(gmx.workdir)
    write(gmx.path("ions.mdp"), gt.mdp_text("for genion", "integrator = steep\nnsteps = 0\n"))
    gmx.grompp("ions.mdp", "solv.gro", "topol.top", "ions.tpr", maxwarn=1)
    if q:
        gmx(["genion", "-s", "ions.tpr", "-o", "ions.gro", "-p", "topol.top", "-pname", "NA",
             "-nname", "CL", "-np", str(max(-q, 0)), "-nn", str(max(q, 0)),
             "-seed", str(SEED_FRAG + index)], "genion", stdin="SOL\n")
    else:
        shutil.copy(gmx.path("solv.gro"), gmx.path("ions.gro"))
    x, b, e, f = sample_and_label(gmx, "ions.gro", "topol.top", name, run.temperature,
                                  run.equil_steps, run.frames, run.stride, run.seed + index)
    _, atoms, _, _ = gt.read_gro(gmx.path("ions.gro"))
    types = [PROTEIN_TYPE_MAP.index(element(r, n)) for _, r, n in atoms]
    write_deepmd(os.path.join(outdir, run.system, name), types, PROTEIN_TYPE_MAP, x, b, e, f)
    nprot = sum(1 for _, r, _ in atoms if r not in ("SOL", "NA", "CL"))
    log(f"{name}: {len(atoms)} atoms ({nprot} peptide, charge {q:+d}, "
        f"{sum(1 for _, r, _ in atoms if r in ('NA', 'CL'))} ions), box "
        f"{b[0, 0, 0]:.2f} x {b[0, 1, 1]:.2f} x {b[0, 2, 2]:.2f} A, {len(x)} frames at "
        f"{run.temperature:g} K")
    return e / len(atoms), f


def make_fragments(outdir, work, run, log=print):
    res = protein_residues(os.path.join(ROOT, "examples", "protein", "protein.gro"))
    frs = fragments(res)
    shutil.rmtree(os.path.join(outdir, run.system), ignore_errors=True)
    e_atom, f_sq, n_f = [], 0.0, 0
    for i, (name, windows) in enumerate(frs):
        e, f = make_fragment(res, name, windows, i, run, outdir, work, log=log)
        e_atom.append(e)
        f_sq, n_f = f_sq + (f ** 2).sum(), n_f + f.size
    e_atom = np.concatenate(e_atom)
    log(f"{run.system}: {len(frs)} fragments, {len(e_atom)} frames at {run.temperature:g} K, "
        f"E/atom {e_atom.mean():.5f} eV (std {e_atom.std():.5f}), "
        f"|F| rms {np.sqrt(f_sq / n_f):.4f} eV/A")


def make_protein(outdir, work, log=print):
    """A few frames of the whole solvated protein (examples/protein), as held-out test data."""
    gmx = gt.Gmx(work)
    for fn in ("protein.gro", "topol.top", "posre.itp"):
        shutil.copy(os.path.join(ROOT, "examples", "protein", fn), gmx.path(fn))
    x, b, e, f = sample_and_label(gmx, "protein.gro", "topol.top", "protein_15668",
                                  PROTEIN_TEMPERATURE, 10000, PROTEIN_FRAMES, 4000, SEED_PROTEIN)
    _, atoms, _, _ = gt.read_gro(gmx.path("protein.gro"))
    types = [PROTEIN_TYPE_MAP.index(element(r, n)) for _, r, n in atoms]
    write_deepmd(os.path.join(outdir, "protein_15668"), types, PROTEIN_TYPE_MAP, x, b, e, f)
    log(f"protein_15668: {len(atoms)} atoms, {len(x)} frames 2 ps apart after 5 ps NVT, "
        f"|F| rms {np.sqrt((f ** 2).mean()):.4f} eV/A")


# ---------------------------------------------------------------------------- unit checks

def ff_param(key, col):
    """Column col of atom type key in the force field's ffnonbonded.itp (5: sigma nm, 6: eps)."""
    path = "/usr/share/gromacs/top/amber99sb-ildn.ff/ffnonbonded.itp"
    for line in open(path):
        s = line.split(";")[0].split()
        if s and s[0] == key:
            return float(s[col])
    raise KeyError(key)


def check_units(outdir, work):
    """Prints the three checks of the module docstring; returns False on a failure."""
    ok = True
    # (1) Na+ Cl- pair, by hand in eV/A against GROMACS converted.
    gmx = gt.Gmx(os.path.join(work, "pair"))
    write(gmx.path("pair.top"), '#include "amber99sb-ildn.ff/forcefield.itp"\n'
          '#include "amber99sb-ildn.ff/ions.itp"\n\n[ system ]\nNaCl\n\n'
          "[ molecules ]\nNA 1\nCL 1\n")
    write(gmx.path("pair.mdp"), gt.mdp_text("NaCl pair", MDP_LABEL))
    res = {}
    for r in (0.30, 0.40):
        write(gmx.path(f"pair{r}.gro"), "NaCl\n2\n"
              f"    1NA      NA    1   1.000   1.000   1.000\n"
              f"    2CL      CL    2{1.0 + r:8.3f}   1.000   1.000\n"
              "   3.00000   3.00000   3.00000\n")
        gmx.grompp("pair.mdp", f"pair{r}.gro", "pair.top", f"pair{r}.tpr", maxwarn=1)  # FLEXIBLE unused
        gmx.mdrun(f"pair{r}", extra=["-rerun", f"pair{r}.gro"])
        _, e = gt.read_energy(gmx, f"pair{r}.edr", "Potential")
        f = gt.read_trr(gmx.path(f"pair{r}.trr"))[0]["f"]
        res[r] = (e[0] * gt.KJMOL_TO_EV, f.astype(np.float64) * gt.KJMOLNM_TO_EVA)
    # by hand, in eV and A: Coulomb constant e^2/(4 pi eps0) in eV A from SI constants
    eps0 = 8.8541878128e-12
    ke = gt.ELEMENTARY_CHARGE / (4 * np.pi * eps0) * 1e10  # eV A per e^2
    rc = 6.0
    krf, crf = 1 / (2 * rc ** 3), 3 / (2 * rc)
    sig = 0.5 * (ff_param("Na", 5) + ff_param("Cl", 5)) * 10  # A (Lorentz)
    eps = np.sqrt(ff_param("Na", 6) * ff_param("Cl", 6)) * 1000 / (gt.ELEMENTARY_CHARGE * gt.AVOGADRO)  # eV (Berthelot)

    def v(r):  # r in A; force-switch shift constant omitted (cancels in differences)
        return -ke * (1 / r + krf * r * r - crf) + 4 * eps * ((sig / r) ** 12 - (sig / r) ** 6)

    def fr(r):  # -dV/dr on Cl along +x
        return -ke * (1 / r ** 2 - 2 * krf * r) + 4 * eps * (12 * sig ** 12 / r ** 13 - 6 * sig ** 6 / r ** 7)

    de_hand = v(4.0) - v(3.0)
    de_gmx = res[0.40][0] - res[0.30][0]
    rel = abs(de_gmx - de_hand) / abs(de_hand)
    print(f"(1) NaCl pair: E(4 A) - E(3 A) by hand {de_hand:.6f} eV, GROMACS {de_gmx:.6f} eV "
          f"(rel. diff {rel:.1e})")
    ok &= rel < 1e-5
    for r in (0.30, 0.40):
        fh, fg = fr(r * 10), res[r][1][1, 0]
        print(f"    force on Cl at {r * 10:.0f} A: by hand {fh:.6f} eV/A, GROMACS {fg:.6f} eV/A")
        ok &= abs(fh - fg) < 1e-5 * max(1.0, abs(fh))
    # (2) finite differences on frame 0 of water_192 (energies eV vs forces eV/A)
    folder = os.path.join(outdir, "water_192")
    x = np.load(os.path.join(folder, "set.000", "coord.npy"))[0].astype(np.float64).reshape(-1, 3)
    f = np.load(os.path.join(folder, "set.000", "force.npy"))[0].astype(np.float64).reshape(-1, 3)
    box = np.load(os.path.join(folder, "set.000", "box.npy"))[0].astype(np.float64).reshape(3, 3)
    d = f / np.linalg.norm(f)
    h = 2e-3  # A
    gmx = gt.Gmx(os.path.join(work, "fd"))
    write(gmx.path("water.top"), gt.water_top(64))
    write(gmx.path("label.mdp"), gt.mdp_text("finite differences", MDP_LABEL, small_box=True))
    es = {}
    for sgn in (1, -1):
        xx = (x + sgn * h * d) / gt.NM_TO_A
        lines = [f"{i // 3 + 1:5d}SOL  {('OW', 'HW1', 'HW2')[i % 3]:>5s}{i + 1:5d}"
                 f"{p[0]:12.7f}{p[1]:12.7f}{p[2]:12.7f}\n" for i, p in enumerate(xx)]
        write(gmx.path(f"fd{sgn}.gro"), "fd\n%5d\n" % len(xx) + "".join(lines)
              + "".join(f"{v / gt.NM_TO_A:10.5f}" for v in np.diag(box)) + "\n")
        gmx.grompp("label.mdp", f"fd{sgn}.gro", "water.top", f"fd{sgn}.tpr")
        gmx.mdrun(f"fd{sgn}", extra=["-rerun", f"fd{sgn}.gro"])
        es[sgn] = gt.read_energy(gmx, f"fd{sgn}.edr", "Potential")[1][0] * gt.KJMOL_TO_EV
    slope = (es[1] - es[-1]) / (2 * h)
    proj = -(f * d).sum()
    rel = abs(slope - proj) / abs(proj)
    print(f"(2) water_192 frame 0: dE/ds by finite differences {slope:.5f} eV/A, "
          f"-F.d {proj:.5f} eV/A (rel. diff {rel:.1e})")
    ok &= rel < 1e-3
    # (3) .trr reader against MDAnalysis
    try:
        import warnings

        warnings.simplefilter("ignore")  # MDAnalysis: no topology to guess types and masses from
        import MDAnalysis as mda
    except ImportError:
        print("(3) MDAnalysis not installed: .trr reader not cross-checked")
        return ok
    trr = os.path.join(work, "fd", "fd1.trr")
    u = mda.Universe(trr)
    ours = gt.read_trr(trr)[0]
    ts = u.trajectory[0]
    dx = np.abs(ts.positions / 10.0 - ours["x"]).max()  # MDAnalysis: A
    df = np.abs(ts.forces - ours["f"] / 10.0).max()  # MDAnalysis: kJ/mol/A
    print(f"(3) .trr reader vs MDAnalysis {mda.__version__}: max |dx| {dx:.1e} nm, "
          f"max |df| {df:.1e} kJ/mol/A")
    ok &= dx < 1e-6 and df < 1e-3
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "examples", "data"))
    ap.add_argument("--only", choices=SETS, help="one set (default: all)")
    ap.add_argument("--check-units", action="store_true")
    ap.add_argument("--keep", help="working folder to keep (GROMACS inputs, logs)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or tmp
        if args.check_units:
            sys.exit(0 if check_units(args.out, work) else 1)
        os.makedirs(args.out, exist_ok=True)
        # the labelling parameters, for rerunning the labels in GROMACS
        write(os.path.join(args.out, "label.mdp"),
              gt.mdp_text("labels of protein_fragments and protein_15668 (gmx mdrun -rerun)",
                          MDP_LABEL))
        write(os.path.join(args.out, "label_water_192.mdp"),
              gt.mdp_text("labels of water_192 (gmx mdrun -rerun; box 1.24 nm: exact pair list)",
                          MDP_LABEL, small_box=True))
        start = None  # the water box, made once for all water runs
        for name in (args.only,) if args.only else SETS:
            if name in WATER_SETS:
                start = start or water_start(os.path.join(work, "water"))
                make_water(args.out, os.path.join(work, "water"), WATER_SETS[name], start)
            elif name in FRAGMENT_SETS:
                make_fragments(args.out, os.path.join(work, name), FRAGMENT_SETS[name])
            else:
                make_protein(args.out, os.path.join(work, "protein"))


if __name__ == "__main__":
    main()
