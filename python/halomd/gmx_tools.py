"""GROMACS helpers for halomd's reference systems and labelled data (issue 6).

Used by examples/water/make_water.py and python/halomd/make_gmx_data.py. Needs numpy and
Debian's GROMACS (`gmx`, 2022.5, mixed precision). Every mdrun here is single-threaded
(`-nt 1 -ntmpi 1 -ntomp 1 -reprod`) and run under `nice -n 19`: the same binary on the same
inputs gives the same output.

The reference classical model ("halomd-ref"): AMBER99SB-ILDN with *flexible* TIP3P (the FLEXIBLE
branch of the force field's tip3p.itp: O-H bonds and H-O-H angle harmonic, no SETTLE), no
constraints anywhere (halomd's Deep Potential MD has none, so the learned model must see the
bond vibrations), and short-range interactions only:

    coulombtype = Reaction-Field, epsilon-rf = 0 (conducting surroundings), rcoulomb = 0.6 nm,
    coulomb-modifier = Potential-shift (for reaction-field with the Verlet scheme the potential
    is always shifted to zero at the cut-off: c_rf = 3/(2 rc));
    vdwtype = Cut-off, vdw-modifier = Force-switch, rvdw-switch = 0.5 nm, rvdw = 0.6 nm;
    DispCorr = no; no PME.

With epsilon-rf = infinity (0 in GROMACS) k_rf = 1/(2 rc^3), so the pair potential
q_i q_j/(4 pi eps0) (1/r + k_rf r^2 - c_rf) and its force q_i q_j/(4 pi eps0) (1/r^2 - r/rc^3)
both go to zero at rc = 6 A: the energy is a smooth (C1) sum of terms of range 6 A, which a
Deep Potential with a 6 A cut-off can represent exactly in principle. A finite epsilon-rf (e.g.
78) leaves a force step at rc. The Lennard-Jones force is switched to zero between 5 and 6 A
(Force-switch), so it too is continuous. No dispersion correction: it is a volume-dependent
constant that a local model cannot learn.
"""

import os
import shutil
import struct
import subprocess

import numpy as np

# CODATA 2018 / SI 2019 exact values, the ones GROMACS 2022 uses (units.h).
ELEMENTARY_CHARGE = 1.602176634e-19  # C
AVOGADRO = 6.02214076e23  # 1/mol
KJ_PER_MOL_PER_EV = ELEMENTARY_CHARGE * AVOGADRO / 1000.0  # 96.48533212331002
KJMOL_TO_EV = 1.0 / KJ_PER_MOL_PER_EV  # energy: kJ/mol -> eV
NM_TO_A = 10.0  # length: nm -> Angstrom
KJMOLNM_TO_EVA = KJMOL_TO_EV / NM_TO_A  # force: kJ/mol/nm -> eV/Angstrom
AMU_PER_NM3_PER_G_CM3 = AVOGADRO * 1e-21  # 1 g/cm^3 = 602.214076 u/nm^3

# Masses of the force field (amber99sb-ildn.ff), u: TIP3P OW 16.00, HW 1.008.
TIP3P_MASS = 16.00 + 2 * 1.008

REF_MODEL_MDP = """\
; ---- halomd-ref classical model: short-range only, no PME (see python/halomd/gmx_tools.py)
define                  = -DFLEXIBLE   ; flexible TIP3P (bonds + angle, no SETTLE)
constraints             = none
cutoff-scheme           = Verlet
pbc                     = xyz
coulombtype             = Reaction-Field
epsilon-rf              = 0            ; 0 = infinity: conducting surroundings
epsilon-r               = 1
rcoulomb                = 0.6          ; nm
coulomb-modifier        = Potential-shift
vdwtype                 = Cut-off
vdw-modifier            = Force-switch
rvdw-switch             = 0.5          ; nm
rvdw                    = 0.6          ; nm
DispCorr                = no
"""


def mdp_text(title, body, small_box=False):
    """An .mdp file: title comment, the reference model block, then run-specific lines.

    small_box: for boxes whose half edge is barely above the 0.6 nm cut-off (192-atom water,
    edge 1.24 nm): exact pair list every step (nstlist 1, rlist = cut-off, no buffer).
    """
    text = "; " + title + "\n" + REF_MODEL_MDP
    if small_box:
        text += ("nstlist                 = 1\n"
                 "verlet-buffer-tolerance = -1\n"
                 "rlist                   = 0.6\n")
    else:
        text += "nstlist                 = 10\n"
    return text + "; ---- run\n" + body


class Gmx:
    """Runs GROMACS commands in a working folder, logging each to <name>.log there."""

    def __init__(self, workdir, gmx=None, verbose=True):
        self.workdir = workdir
        self.gmx = gmx or os.environ.get("GMX", "gmx")
        self.verbose = verbose
        os.makedirs(workdir, exist_ok=True)
        if shutil.which(self.gmx) is None:
            raise SystemExit(f"GROMACS not found ({self.gmx}): apt-get install gromacs")

    def __call__(self, args, log, stdin=None, nice=False):
        env = dict(os.environ, OMP_NUM_THREADS="1", GMX_MAXBACKUP="-1")
        cmd = ([self.gmx] if not nice else ["nice", "-n", "19", self.gmx]) + list(args)
        with open(os.path.join(self.workdir, log + ".log"), "w") as f:
            res = subprocess.run(cmd, cwd=self.workdir, env=env, input=stdin, text=True,
                                 stdout=f, stderr=subprocess.STDOUT)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed (exit {res.returncode}); "
                               f"see {os.path.join(self.workdir, log + '.log')}")

    def grompp(self, mdp, conf, top, tpr, maxwarn=0, extra=()):
        self(["grompp", "-f", mdp, "-c", conf, "-p", top, "-o", tpr, "-po", tpr + ".mdout.mdp",
              "-maxwarn", str(maxwarn)] + list(extra), "grompp_" + os.path.splitext(tpr)[0])

    def mdrun(self, deffnm, extra=()):
        self(["mdrun", "-nt", "1", "-ntmpi", "1", "-ntomp", "1", "-reprod", "-deffnm", deffnm]
             + list(extra), "mdrun_" + deffnm, nice=True)

    def path(self, name):
        return os.path.join(self.workdir, name)


# ---------------------------------------------------------------------------- .gro files

def read_gro(path):
    """(title, atoms, x nm (n,3), box nm (3,) or (9,)); atoms = list of (resnr, resname, name)."""
    with open(path) as f:
        lines = f.read().splitlines()
    n = int(lines[1])
    atoms, x = [], np.empty((n, 3))
    for i, l in enumerate(lines[2:2 + n]):
        atoms.append((int(l[0:5]), l[5:10].strip(), l[10:15].strip()))
        x[i] = (float(l[20:28]), float(l[28:36]), float(l[36:44]))
    box = np.array([float(v) for v in lines[2 + n].split()])
    return lines[0], atoms, x, box


def gro_frame_text(title, atoms, x, box, decimals=3):
    """One .gro frame: coordinates (nm) with `decimals` places in fields decimals + 5 wide (3:
    GROMACS's %8.3f; GROMACS reads a higher precision from the layout), the box (its 3 or 9
    values, nm) with two places more; residue and atom numbers wrap at 1e5."""
    w, bw = decimals + 5, decimals + 7
    lines = [title, f"{len(atoms):5d}"]
    for i, ((resnr, resname, name), xi) in enumerate(zip(atoms, x)):
        lines.append(f"{resnr % 100000:5d}{resname:<5s}{name:>5s}{(i + 1) % 100000:5d}"
                     f"{xi[0]:{w}.{decimals}f}{xi[1]:{w}.{decimals}f}{xi[2]:{w}.{decimals}f}")
    lines.append("".join(f"{b:{bw}.{decimals + 2}f}" for b in box))
    return "\n".join(lines) + "\n"


def write_gro(path, title, atoms, x, box):
    """Coordinates only, %8.3f nm (GROMACS precision); residue and atom numbers wrap at 1e5."""
    with open(path, "w") as f:
        f.write(gro_frame_text(title, atoms, x, box))


# ---------------------------------------------------------------------------- .trr files

def read_trr(path):
    """Frames of a GROMACS .trr (XDR, big-endian), as dicts with step, time (ps), box (3,3) nm,
    x nm, v nm/ps, f kJ/mol/nm (each (natoms,3), present when written), in the file's own
    precision (float32 for mixed-precision GROMACS)."""
    with open(path, "rb") as fh:
        data = fh.read()
    off = 0
    frames = []

    def ints(n):
        nonlocal off
        v = struct.unpack_from(">%di" % n, data, off)
        off += 4 * n
        return v

    while off < len(data):
        magic, _slen, nchar = ints(3)
        if magic != 1993:
            raise ValueError(f"{path}: not a .trr frame at byte {off - 12}")
        off += (nchar + 3) // 4 * 4  # "GMX_trn_file", padded to 4 bytes
        (ir, e, box, vir, pres, top, sym, xs, vs, fs, natoms, step, _nre) = ints(13)
        size = next(s for s in (box // 9 if box else 0, vir // 9 if vir else 0,
                                xs // (3 * natoms) if xs else 0, vs // (3 * natoms) if vs else 0,
                                fs // (3 * natoms) if fs else 0) if s)
        dt = np.dtype(">f4") if size == 4 else np.dtype(">f8")

        def arr(nbytes, shape):
            nonlocal off
            a = np.frombuffer(data, dt, nbytes // size, off).reshape(shape).astype(dt.newbyteorder("="))
            off += nbytes
            return a

        t, _lam = arr(2 * size, (2,))
        frame = {"step": step, "time": float(t), "natoms": natoms}
        off += ir + e  # never written by mdrun
        if box:
            frame["box"] = arr(box, (3, 3))
        if vir:
            arr(vir, (3, 3))
        if pres:
            arr(pres, (3, 3))
        off += top + sym
        if xs:
            frame["x"] = arr(xs, (natoms, 3))
        if vs:
            frame["v"] = arr(vs, (natoms, 3))
        if fs:
            frame["f"] = arr(fs, (natoms, 3))
        frames.append(frame)
    return frames


def read_energy(gmx, edr, term="Potential"):
    """(time ps, value kJ/mol) arrays of one energy term, via `gmx energy -dp` (full precision)."""
    xvg = os.path.splitext(edr)[0] + "_" + term.lower() + ".xvg"
    gmx(["energy", "-f", edr, "-o", xvg, "-dp"], "energy_" + os.path.splitext(edr)[0],
        stdin=term + "\n\n")
    rows = [l.split() for l in open(gmx.path(xvg)) if l.strip() and l[0] not in "#@"]
    a = np.array(rows, dtype=float)
    return a[:, 0], a[:, 1]


# ---------------------------------------------------------------------------- topologies

def water_top(nmol, title="flexible TIP3P water"):
    """Topology text for nmol TIP3P waters with AMBER99SB-ILDN (flexible with -DFLEXIBLE)."""
    return (f"; {title} (halomd)\n"
            '#include "amber99sb-ildn.ff/forcefield.itp"\n'
            '#include "amber99sb-ildn.ff/tip3p.itp"\n\n'
            "[ system ]\n"
            f"{title}\n\n"
            "[ molecules ]\n"
            f"SOL {nmol}\n")
