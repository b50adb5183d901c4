#!/usr/bin/env python3
"""Goldens of halomd's classical force field (tests/data/ff/), computed by GROMACS itself.

    python3 python/halomd/make_ff_golden.py --update   write tests/data/ff/{golden,charmm_peptide,
                                                       sink1,sink3} (about 1 min on one core)
    python3 python/halomd/make_ff_golden.py            regenerate in a temporary folder and compare
                                                       with the committed files (exit 1 on a
                                                       difference beyond 1e-12 relative)
    python3 python/halomd/make_ff_golden.py --only protein_15668_ref   one case (see CASES)

Needs Debian's GROMACS 2022 in double precision (`gmx_d`, package gromacs) and numpy (Debian's
python3-numpy: run it with /usr/bin/python3). Every mdrun is single-threaded with -reprod.

For each case (CASES: a structure, a GROMACS topology, -D defines and the nonbonded settings),
three gmx_d runs on the same tpr settings:

1. `mdrun -rerun` of the structure: every energy term (`gmx_d energy -dp`, 15 digits).
2. Forces: `mdrun` of two steps with dt = 1e-20 ps from the structure (zero velocities), forces
   of step 1 from the .trr (double). The positions do not change: the displacement, below 1e-36
   nm, is lost in rounding. Step 1 is a step without energies, where GROMACS computes the 1-4
   pairs analytically; at energy steps and in -rerun it interpolates them from cubic-spline
   tables (2000 points per nm), which moves pair forces by up to 2e-8 of the largest force
   (protein) and the LJ-14 energy by 2e-9. The rerun's deviation is recorded in provenance.
3. The virial (Vir-XX ... Vir-ZZ, GROMACS's -1/2 sum r (x) F): `mdrun` of 0 steps, its energy
   step (1-4 pairs tabulated there: 4e-10 of the virial for the protein).

From `gmx_d dump` of the tpr: the interaction counts and the excluded pairs of the system, which
the test compares with halomd's topology reader.

Forces are stored for every atom of systems up to 1,000 atoms; for larger ones for every atom that
is not water and every k-th water molecule (about 600 atoms; every 50th for the protein), with
three projections sum_i,c w_kic F_ic over all atoms (w_kic = cos(0.7 i + 1.3 c + 2.1 k), i
0-based) and the sum of |w F| (their scale). Forces are rounded to 1e-11 of the largest force
(absolute), far below the tolerance.

The systems halomd already has are used as they are: examples/water (water_192, water_1536),
tests/data/structures/water_192_ortho.gro, examples/protein. Made here:
- charmm_peptide: residues 154-156 of examples/protein/protein.gro capped with ACE and CT3
  (N-methylamide; the capping as make_gmx_data.py's fragments), `gmx_d pdb2gmx -ff charmm27
  -water tip3p -ignh -nocmap` (termini None), a cubic box 0.5 nm wider than the peptide,
  `gmx_d solvate` (spc216.gro), 100 steps of steepest descent: CHARMM27 with Urey-Bradley angles,
  type-9 and type-2 dihedrals, [ pairtypes ], fudge 1.0, flexible CHARMM TIP3P.
- sink1, sink3: small topologies written here (SINK1, SINK3) that use what the force fields above
  do not: combination rules 1 and 3, gen-pairs = no, [ nonbond_params ], explicit parameters on
  interaction lines, two-atom dihedral types, wildcards where a more specific type must win,
  replaced types, macros, #ifdef/#else/#undef, a relative #include, [ exclusions ], nrexcl 2;
  20 molecules of a 9-atom molecule and 3 ion pairs placed by `gmx_d insert-molecules` (seeded)
  in a 2 nm box.
"""

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import namedtuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

SCHEMA = "halomd-ff-golden-1"
TOLERANCE = {"energy": 1e-8, "force": 1e-8, "virial": 1e-8,
             "definition": "energy: |a-b|/|b| per term; force: max|a-b|/max|b| over the atoms "
                           "stored; projections: |a-b|/scale; virial: max|a-b|/max|b|"}
FULL_FORCES_MAX = 1000  # atoms: forces of every atom up to this size
SUBSET_ATOMS = 600      # else about this many: every atom that is not water, every k-th water
NPROJ = 3

# The halomd-ref model of gmx_tools.py and the variations the goldens cover. Lengths in nm.
REF = dict(coulombtype="reaction-field", epsilon_rf=0, rcoulomb=0.6, coulomb_modifier="potential-shift",
           vdw_modifier="force-switch", rvdw_switch=0.5, rvdw=0.6)
Case = namedtuple("Case", "name structure topology define settings description")


def settings(**over):
    s = dict(REF)
    s.update(over)
    return s


CASES = [
    Case("water_192_ref", "examples/water/water_192.gro", "examples/water/water_192.top",
         "-DFLEXIBLE", settings(), "64 flexible TIP3P waters, the halomd-ref model (reaction "
         "field, epsilon-rf infinity; force-switched Lennard-Jones 5-6 A)"),
    Case("water_192_rf78_potential_switch", "examples/water/water_192.gro",
         "examples/water/water_192.top", "-DFLEXIBLE",
         settings(epsilon_rf=78, vdw_modifier="potential-switch", rvdw_switch=0.45),
         "reaction field epsilon-rf 78, potential-switched Lennard-Jones 4.5-6 A"),
    Case("water_192_cutoff_shift", "examples/water/water_192.gro", "examples/water/water_192.top",
         "-DFLEXIBLE", settings(coulombtype="cut-off", vdw_modifier="potential-shift", rvdw_switch=0),
         "plain cut-off Coulomb and Lennard-Jones, both potential-shifted"),
    Case("water_192_cutoff_none", "examples/water/water_192.gro", "examples/water/water_192.top",
         "-DFLEXIBLE", settings(coulombtype="cut-off", coulomb_modifier="none", vdw_modifier="none",
                                rvdw_switch=0),
         "plain cut-off Coulomb and Lennard-Jones without modifiers"),
    Case("water_192_ortho_rf78", "tests/data/structures/water_192_ortho.gro",
         "examples/water/water_192.top", "-DFLEXIBLE",
         settings(epsilon_rf=78, rcoulomb=0.55, rvdw=0.55, rvdw_switch=0.45),
         "SPC water coordinates in an orthorhombic 1.19 x 1.25 x 1.30 nm cell as flexible TIP3P, "
         "reaction field epsilon-rf 78, force-switch 4.5-5.5 A"),
    Case("water_1536_rf", "examples/water/water_1536.gro", "examples/water/water_1536.top",
         "-DFLEXIBLE", settings(rcoulomb=0.9, rvdw=0.9, rvdw_switch=0.8),
         "512 flexible TIP3P waters, reaction field (infinity) 9 A, force-switch 8-9 A"),
    Case("protein_15668_ref", "examples/protein/protein.gro", "examples/protein/topol.top",
         "-DFLEXIBLE", settings(), "the solvated protein of examples/protein (AMBER99SB-ILDN, "
         "flexible TIP3P, ions), the halomd-ref model"),
    Case("charmm_peptide_rf78", "tests/data/ff/charmm_peptide/conf.gro",
         "tests/data/ff/charmm_peptide/topol.top", "-DFLEXIBLE -DCHARMM_TIP3P",
         settings(epsilon_rf=78, rcoulomb=0.9, rvdw=0.9, rvdw_switch=0.7),
         "a solvated CHARMM27 tripeptide (Urey-Bradley, type-2 impropers, [ pairtypes ]), "
         "reaction field epsilon-rf 78 9 A, force-switch 7-9 A"),
    Case("sink1_cutoff", "tests/data/ff/sink1/conf.gro", "tests/data/ff/sink1/topol.top", "",
         settings(coulombtype="cut-off", vdw_modifier="potential-shift", rcoulomb=0.9, rvdw=0.9,
                  rvdw_switch=0),
         "combination rule 1, generated pairs, [ nonbond_params ] and [ pairtypes ] overrides; "
         "cut-off Coulomb and Lennard-Jones, potential-shifted, 9 A"),
    Case("sink3_rf_potential_switch", "tests/data/ff/sink3/conf.gro",
         "tests/data/ff/sink3/topol.top", "-DALT -DKPAIR=0.4",
         settings(epsilon_rf=40, rcoulomb=0.9, rvdw=0.9, vdw_modifier="potential-switch",
                  rvdw_switch=0.7),
         "combination rule 3, gen-pairs no, Urey-Bradley and two-atom dihedral types, -D "
         "defines; reaction field epsilon-rf 40, potential-switch 7-9 A"),
]

TERM_NAMES = ("Bond", "Angle", "U-B", "Proper Dih.", "Improper Dih.", "Per. Imp. Dih.", "LJ-14")


def mdp_text(s, define, extra):
    """The GROMACS parameters of a case (nm) plus run lines."""
    lines = [f"define                  = {define}",
             "constraints             = none",
             "cutoff-scheme           = Verlet",
             "pbc                     = xyz",
             f"coulombtype             = {s['coulombtype']}",
             f"coulomb-modifier        = {s['coulomb_modifier']}",
             f"epsilon-rf              = {s['epsilon_rf']}",
             "epsilon-r               = 1",
             f"rcoulomb                = {s['rcoulomb']}",
             "vdwtype                 = cut-off",
             f"vdw-modifier            = {s['vdw_modifier']}",
             f"rvdw-switch             = {s['rvdw_switch']}",
             f"rvdw                    = {s['rvdw']}",
             "DispCorr                = no",
             "nstlist                 = 1",
             "verlet-buffer-tolerance = -1",
             f"rlist                   = {max(s['rcoulomb'], s['rvdw'])}",
             "tcoupl                  = no",
             "pcoupl                  = no",
             "gen-vel                 = no"]
    return "\n".join(lines + list(extra)) + "\n"


def halomd_params(s, define):
    """The same settings as halomd -set values (lengths in A)."""
    p = {"coulombtype": s["coulombtype"], "coulomb-modifier": s["coulomb_modifier"],
         "epsilon-rf": f"{s['epsilon_rf']:g}", "rcoulomb": f"{10 * s['rcoulomb']:g}",
         "vdw-modifier": s["vdw_modifier"], "rvdw": f"{10 * s['rvdw']:g}",
         "rvdw-switch": f"{10 * s['rvdw_switch']:g}"}
    if define:
        p["define"] = define
    return p


# ------------------------------------------------------------------------ GROMACS output parsing

def dump_counts(text):
    """Interactions per GROMACS function name, atoms and excluded pairs of a `gmx dump -s`."""
    lines = text.split("\n")
    moltypes, cur, func = {}, None, None
    nral = {"Bond": 2, "Angle": 3, "U-B": 3, "Proper Dih.": 4, "Improper Dih.": 4,
            "Per. Imp. Dih.": 4, "LJ-14": 2}
    for i, l in enumerate(lines):
        m = re.match(r"^   moltype \((\d+)\):", l)
        if m:
            cur = moltypes.setdefault(int(m.group(1)), {"excl": 0, "lists": 0})
            continue
        if cur is None:
            continue
        m = re.match(r"^      ([A-Za-z][^:]*):$", l)
        if m:
            func = m.group(1)
            continue
        m = re.match(r"^         nr: (\d+)", l)
        if m and func in nral:
            cur[func] = int(m.group(1)) // (nral[func] + 1)
        m = re.match(r"^         numLists=(\d+)", l)
        if m and func == "excls":
            cur["lists"] = int(m.group(1))
        m = re.match(r"^         numElements=(\d+)", l)
        if m and func == "excls":
            cur["excl"] = int(m.group(1)) - cur["lists"]  # GROMACS lists each atom with itself
    counts = {k: 0 for k in nral}
    counts["natoms"] = counts["excluded pairs"] = 0
    for m in re.finditer(r"molblock \(\d+\):\s+moltype\s+= (\d+) \"[^\"]*\"\s+#molecules\s+= (\d+)",
                         text):
        mt, nmol = moltypes[int(m.group(1))], int(m.group(2))
        for k in nral:
            counts[k] += nmol * mt.get(k, 0)
        counts["natoms"] += nmol * mt["lists"]
        counts["excluded pairs"] += nmol * mt["excl"]
    return counts


def edr_energies(gmx, edr, terms):
    """{term: kJ/mol} at the first frame of an .edr, full precision (gmx energy -dp)."""
    sel = "".join(f"{i + 1}\n" for i in range(len(terms))) + "\n"
    xvg = os.path.splitext(edr)[0] + "_all.xvg"
    gmx(["energy", "-f", edr, "-o", xvg, "-dp"], "energy_" + os.path.basename(edr), stdin=sel)
    legends = [l.split('"')[1] for l in open(gmx.path(xvg)) if re.match(r"@ s\d+ legend", l)]
    row = next(l.split() for l in open(gmx.path(xvg)) if l.strip() and l[0] not in "#@")
    return dict(zip(legends, (float(v) for v in row[1:])))


def edr_terms(gmx, edr):
    """The names of the energy terms of an .edr, in its order (gmx dump -e)."""
    out = subprocess.run([gmx.gmx, "dump", "-e", gmx.path(edr)], capture_output=True, text=True,
                         check=True).stdout
    names = []
    for l in out.split("\n"):
        m = re.match(r"^\s+\d+\s+(.*\S)\s+\(([^()]*)\)\s*$", l)
        if m:
            names.append(m.group(1))
        elif names and not l.strip():
            break
    return names


# ------------------------------------------------------------------------ the systems made here

def nerf(a, b, c, bond, angle, torsion):
    """Position of d bonded to c, with angle b-c-d and torsion a-b-c-d (degrees)."""
    import numpy as np
    a, b, c = (np.asarray(v, float) for v in (a, b, c))
    bc = c - b
    bc /= np.linalg.norm(bc)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.cross(n, bc)
    th, ph = math.radians(angle), math.radians(torsion)
    d2 = np.array([-bond * math.cos(th), bond * math.sin(th) * math.cos(ph),
                   bond * math.sin(th) * math.sin(ph)])
    return c + d2[0] * bc + d2[1] * m + d2[2] * n


def lig_gro(names, resname):
    """One molecule of the sinks' 9-atom molecule (nm), as .gro text in a 1 nm box."""
    import numpy as np
    from halomd import gmx_tools as gt
    x = [np.zeros(3), np.array([0.1526, 0, 0])]
    x.append(x[1] + 0.141 * np.array([-math.cos(math.radians(109.5)),
                                       math.sin(math.radians(109.5)), 0]))
    x.append(nerf(x[0], x[1], x[2], 0.141, 112.0, 178.0))
    x.append(nerf(x[1], x[2], x[3], 0.1526, 109.0, 65.0))
    x.append(nerf(x[2], x[1], x[0], 0.109, 110.0, 60.0))
    x.append(nerf(x[2], x[1], x[0], 0.109, 110.0, -62.0))
    x.append(nerf(x[2], x[3], x[4], 0.109, 110.0, 58.0))
    x.append(nerf(x[2], x[3], x[4], 0.109, 110.0, -61.0))
    x = np.array(x) + 0.4
    return gt.gro_frame_text("sink molecule", [(1, resname, n) for n in names], x,
                             np.array([1.0, 1.0, 1.0]))


SINK_NAMES = ["CA", "CB", "OG", "CD", "CE", "HA1", "HA2", "HE1", "HE2"]
SINK_CHARGES = [-0.18, 0.12, -0.40, 0.16, 0.02, 0.06, 0.06, 0.08, 0.08]
SINK_GROUPS = [1, 1, 2, 2, 3, 1, 1, 3, 3]


def sink_atoms(types, masses=None):
    """The [ atoms ] of the sinks' molecule with atom types `types` (and masses where given)."""
    lines = ["[ atoms ]"]
    for k, (t, name, q, cg) in enumerate(zip(types, SINK_NAMES, SINK_CHARGES, SINK_GROUPS)):
        m = (masses or {}).get(k)
        lines.append(f"{k + 1} {t} 1 LIG {name} {cg} {q:.2f}" + (f" {m}" if m else ""))
    return "\n".join(lines) + "\n"

SINK1 = {"topol.top": """\
; halomd test topology (python/halomd/make_ff_golden.py): combination rule 1 (c6, c12),
; generated pairs scaled by fudgeLJ, [ nonbond_params ] and [ pairtypes ] overrides, bonded
; types by bond type (wildcards where a specific type must win, a type-9 block, a replaced
; angle type), explicit parameters, a macro in a dihedral line, [ exclusions ], a relative include
#define TORSION_2 0.0 2.5 2
[ defaults ]
; nbfunc comb-rule gen-pairs fudgeLJ fudgeQQ
1 1 yes 0.5 0.8333

[ atomtypes ]
; name bond_type at.num mass charge ptype c6 c12
C1 CT 6 12.011 0.0 A 2.3e-3 3.3e-6
C2 CT 6 12.011 0.0 A 2.0e-3 2.6e-6
OS OS 8 15.999 0.0 A 2.2e-3 1.6e-6
HC HC 1 1.008 0.0 A 9.0e-5 1.1e-8
NA NA 11 22.99 1.0 A 1.0e-4 2.0e-7
CL CL 17 35.45 -1.0 A 1.3e-2 5.0e-5

[ nonbond_params ]
C1 OS 1 2.6e-3 2.1e-6
NA CL 1 4.0e-3 1.2e-5

[ pairtypes ]
C1 HC 1 1.1e-4 4.0e-8

#include "bonded.itp"

[ moleculetype ]
LIG 3

{atoms}
[ bonds ]
1 2 1
2 3 1
3 4 1
4 5 1
1 6 1
1 7 1
5 8 1
5 9 1 0.1095 290000.0

[ pairs ]
1 4 1
2 5 1 1.5e-3 2.0e-6
6 3 1
7 3 1
3 8 1
3 9 1
1 8 1

[ angles ]
2 1 6 1
2 1 7 1
6 1 7 1
1 2 3 1
2 3 4 1
3 4 5 1
4 5 8 1
4 5 9 1
8 5 9 1 109.5 300.0

[ dihedrals ]
6 1 2 3 9
7 1 2 3 9
1 2 3 4 9
2 3 4 5 1 TORSION_2
3 4 5 8 9
3 4 5 9 9
8 4 5 9 4
5 4 8 9 2 35.0 100.0

[ exclusions ]
1 8
6 9

[ moleculetype ]
NA 1
[ atoms ]
1 NA 1 NA NA 1

[ moleculetype ]
CL 1
[ atoms ]
1 CL 1 CL CL 1

[ system ]
sink1: halomd classical force field test

[ molecules ]
LIG 20
NA 3
CL 3
""".replace("{atoms}", sink_atoms(["C1", "C2", "OS", "C2", "C1", "HC", "HC", "HC", "HC"])),
         "bonded.itp": """\
; bonded types of sink1 (halomd test data)
[ bondtypes ]
CT CT 1 0.1526 259000.0
CT OS 1 0.1410 267000.0
CT HC 1 0.1090 284000.0

[ angletypes ]
CT CT HC 1 109.5 292.0
HC CT HC 1 109.5 276.0
CT CT OS 1 109.5 420.0
CT OS CT 1 109.5 500.0
; a later line for the same types replaces the earlier one (grompp warns)
HC CT CT 1 110.7 313.0

[ dihedraltypes ]
; i j k l func phase kd pn
X  CT CT X  9 0.0 0.6 3
HC CT CT OS 9 0.0 0.65 3
HC CT CT OS 9 0.0 0.25 1
CT CT OS CT 9 0.0 1.6 3
CT CT OS CT 9 180.0 0.4 2
X  X  CT HC 4 180.0 4.6 2
CT OS CT HC 4 180.0 9.9 2
"""}

SINK3 = {"topol.top": """\
; halomd test topology (python/halomd/make_ff_golden.py): combination rule 3 (sigma, epsilon,
; geometric), gen-pairs = no with [ pairtypes ] for every pair, Urey-Bradley angles by type and
; explicit, two-atom dihedral types (propers: the middle atoms; impropers: the outer ones),
; nrexcl 2, -D defines with values, #ifdef / #else / #undef
#define TMP
#undef TMP
#ifdef TMP
[ this section is never read ]
#endif
[ defaults ]
1 3 no 0.5 0.5

[ atomtypes ]
; name bond_type mass charge ptype sigma epsilon (no atomic number column)
opls_1 CT 12.011 0.0 A 0.350 0.276
opls_2 CT 12.011 0.0 A 0.355 0.293
opls_3 OS 15.999 0.0 A 0.290 0.586
opls_4 HC 1.008 0.0 A 0.250 0.126
opls_5 NA 22.99 1.0 A 0.333 0.0116
opls_6 CL 35.45 -1.0 A 0.440 0.418

[ pairtypes ]
; sigma epsilon of the 1-4 pairs (gen-pairs = no: every pair used is listed)
opls_1 opls_2 1 0.352 0.142
opls_2 opls_3 1 0.321 0.201
opls_3 opls_4 1 0.269 0.136
opls_4 opls_2 1 0.298 KPAIR
opls_1 opls_3 1 0.318 0.200

#ifdef ALT
#define PHI_OS 180.0
#else
#define PHI_OS 0.0
#endif

[ bondtypes ]
CT CT 1 0.1529 224262.4
CT OS 1 0.1410 267776.0
CT HC 1 0.1090 284512.0

[ angletypes ]
CT CT HC 5 110.7 313.8 0.2179 5000.0
HC CT HC 5 107.8 276.1 0.1802 4000.0
CT CT OS 1 109.5 418.4
CT OS CT 1 109.5 502.1

[ dihedraltypes ]
; two-atom forms: a proper (1) names its middle atoms, an improper (2) its outer ones
CT CT 1 0.0 3.0 3
CT OS 1 PHI_OS 1.5 2
CT HC 2 10.0 80.0

[ moleculetype ]
LIG 2

{atoms}
[ bonds ]
1 2 1
2 3 1
3 4 1 0.1430 250000.0
4 5 1
1 6 1
1 7 1
5 8 1
5 9 1

[ pairs ]
1 4 1
2 5 1
6 3 1
7 3 1
3 8 1
3 9 1 0.27 0.15

[ angles ]
2 1 6 5
2 1 7 5
6 1 7 5
1 2 3 1
2 3 4 1
3 4 5 1
4 5 8 5
4 5 9 5 111.0 320.0 0.22 4500.0
8 5 9 5

[ dihedrals ]
6 1 2 3 1
7 1 2 3 1
1 2 3 4 1
2 3 4 5 1
3 4 5 8 1
3 4 5 9 9 0.0 0.8 1
3 4 5 9 9 180.0 0.3 2
5 4 8 9 2
1 6 7 2 2 5.0 60.0

[ moleculetype ]
NA 1
[ atoms ]
1 opls_5 1 NA NA 1

[ moleculetype ]
CL 1
[ atoms ]
1 opls_6 1 CL CL 1

[ system ]
sink3: halomd classical force field test

[ molecules ]
LIG 20
NA 3
CL 3
""".replace("{atoms}", sink_atoms(["opls_1", "opls_2", "opls_3", "opls_2", "opls_1", "opls_4",
                                   "opls_4", "opls_4", "opls_4"], {4: "12.011", 8: "1.00794"}))}


def write_files(folder, files):
    os.makedirs(folder, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as f:
            f.write(text)


def build_sink(gmx, out, files, seed):
    """A sink system: the topology files and 20 molecules plus 3 ion pairs in a 2 nm box."""
    write_files(out, files)
    write_files(gmx.workdir, {"lig.gro": lig_gro(SINK_NAMES, "LIG"),
                              "na.gro": "NA\n1\n    1NA      NA    1   0.500   0.500   0.500\n"
                                        "   1.00000   1.00000   1.00000\n",
                              "cl.gro": "CL\n1\n    1CL      CL    1   0.500   0.500   0.500\n"
                                        "   1.00000   1.00000   1.00000\n"})
    gmx(["insert-molecules", "-ci", "lig.gro", "-nmol", "20", "-box", "2.0", "2.0", "2.0",
         "-seed", str(seed), "-o", "a.gro"], "insert_lig")
    gmx(["insert-molecules", "-f", "a.gro", "-ci", "na.gro", "-nmol", "3", "-seed",
         str(seed + 1), "-o", "b.gro"], "insert_na")
    gmx(["insert-molecules", "-f", "b.gro", "-ci", "cl.gro", "-nmol", "3", "-seed",
         str(seed + 2), "-o", "conf.gro"], "insert_cl")
    n = int(open(gmx.path("conf.gro")).read().split("\n")[1])
    if n != 20 * 9 + 6:
        raise RuntimeError(f"insert-molecules placed {n} atoms, {20 * 9 + 6} wanted")
    shutil.copy(gmx.path("conf.gro"), os.path.join(out, "conf.gro"))


def strip_pdb2gmx_header(text):
    """pdb2gmx's topology without the header lines naming the user, host, date and folders."""
    drop = ("By user", "On host", "At date", "Created by", "Executable", "Data prefix",
            "Working dir", "Command line", "gmx pdb2gmx -f", "Force field was read from")
    return "\n".join(l for l in text.split("\n")
                     if not (l.startswith(";") and l[1:].strip().startswith(drop)))


def build_charmm_peptide(gmx, out):
    import make_gmx_data as mgd
    res = mgd.protein_residues(os.path.join(ROOT, "examples", "protein", "protein.gro"))
    pdb = mgd.fragment_pdb(res, [(154, 156)]).replace("NME", "CT3")
    write_files(gmx.workdir, {"frag.pdb": pdb})
    gmx(["pdb2gmx", "-f", "frag.pdb", "-o", "frag.gro", "-p", "topol.top", "-i", "posre.itp",
         "-ff", "charmm27", "-water", "tip3p", "-ignh", "-nocmap", "-ter"], "pdb2gmx",
        stdin="3\n5\n")
    log = open(gmx.path("pdb2gmx.log")).read()
    if "Start terminus ACE-153: None" not in log or "End terminus CT3-157: None" not in log:
        raise RuntimeError("pdb2gmx did not take termini None for the caps; see pdb2gmx.log")
    gmx(["editconf", "-f", "frag.gro", "-o", "box.gro", "-c", "-d", "0.5", "-bt", "cubic"],
        "editconf")
    gmx(["solvate", "-cp", "box.gro", "-cs", "spc216.gro", "-o", "solv.gro", "-p", "topol.top"],
        "solvate")
    s = settings(epsilon_rf=78, rcoulomb=0.9, rvdw=0.9, rvdw_switch=0.7)
    write_files(gmx.workdir, {"em.mdp": mdp_text(s, "-DFLEXIBLE -DCHARMM_TIP3P", [
        "integrator = steep", "nsteps = 100", "emstep = 0.001"])})
    gmx.grompp("em.mdp", "solv.gro", "topol.top", "em.tpr", maxwarn=1)
    gmx.mdrun("em")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "topol.top"), "w") as f:
        f.write(strip_pdb2gmx_header(open(gmx.path("topol.top")).read()))
    shutil.copy(gmx.path("em.gro"), os.path.join(out, "conf.gro"))


# ------------------------------------------------------------------------ one case

def rounded_forces(f, fmax):
    digits = max(0, 11 - int(math.floor(math.log10(fmax))) - 1)
    return [[round(float(v), digits) for v in row] for row in f]


def run_case(case, root, work, gmx_name, log=print):
    import numpy as np
    from halomd import gmx_tools as gt
    gmx = gt.Gmx(os.path.join(work, case.name), gmx=gmx_name)
    top_dir = os.path.dirname(os.path.join(root, case.topology))
    for fn in os.listdir(top_dir):  # the topology and what it includes from its folder
        if fn.endswith((".top", ".itp")):
            shutil.copy(os.path.join(top_dir, fn), gmx.path(fn))
    top = os.path.basename(case.topology)
    shutil.copy(os.path.join(root, case.structure), gmx.path("conf.gro"))
    s = case.settings
    write_files(gmx.workdir, {
        "rerun.mdp": mdp_text(s, case.define, ["integrator = md", "nsteps = 0", "nstfout = 1",
                                               "nstcalcenergy = 1", "nstenergy = 1"]),
        "forces.mdp": mdp_text(s, case.define, ["integrator = md", "nsteps = 2", "dt = 1e-20",
                                                "nstcalcenergy = 0", "nstenergy = 0",
                                                "nstlog = 0", "nstxout = 1", "nstfout = 1"]),
    })
    gmx.grompp("rerun.mdp", "conf.gro", top, "rerun.tpr", maxwarn=5)
    gmx.grompp("forces.mdp", "conf.gro", top, "forces.tpr", maxwarn=5)
    gmx.mdrun("rerun", extra=["-rerun", "conf.gro"])
    gmx(["mdrun", "-nt", "1", "-ntmpi", "1", "-ntomp", "1", "-reprod", "-s", "rerun.tpr",
         "-deffnm", "virial"], "mdrun_virial", nice=True)
    gmx.mdrun("forces")
    terms = edr_terms(gmx, "rerun.edr")
    energies = edr_energies(gmx, "rerun.edr", terms)
    step0 = edr_energies(gmx, "virial.edr", edr_terms(gmx, "virial.edr"))
    for k in terms:  # the same energies from the rerun and from a step
        if abs(step0[k] - energies[k]) > 1e-12 * max(1.0, abs(energies[k])):
            raise RuntimeError(f"{case.name}: {k} {step0[k]} (step) != {energies[k]} (rerun)")
    virial = [step0[f"Vir-{a}{b}"] for a in "XYZ" for b in "XYZ"]
    frames = gt.read_trr(gmx.path("forces.trr"))
    step1 = next(fr for fr in frames if fr["step"] == 1)
    _, atoms, _, _ = gt.read_gro(gmx.path("conf.gro"))
    f = step1["f"].astype(np.float64)
    rerun_f = gt.read_trr(gmx.path("rerun.trr"))[0]["f"]
    fmax = float(np.abs(f).max())
    n = len(f)
    counts = dump_counts(subprocess.run([gmx_name, "dump", "-s", gmx.path("rerun.tpr")],
                                        capture_output=True, text=True, check=True).stdout)
    if counts["natoms"] != n:
        raise RuntimeError(f"{case.name}: dump has {counts['natoms']} atoms, the trr {n}")
    if n <= FULL_FORCES_MAX:
        idx = None
        stored = f
    else:
        water = [i for i, a in enumerate(atoms) if a[1] == "SOL"]
        other = n - len(water)
        stride = 50 if other >= SUBSET_ATOMS else max(1, math.ceil(len(water) /
                                                                   (SUBSET_ATOMS - other)))
        keep = [i for i, a in enumerate(atoms)
                if a[1] != "SOL" or ((i - water[0]) // 3) % stride == 0]
        idx = keep
        stored = f[keep]
    i = np.arange(n)[:, None]
    c = np.arange(3)[None, :]
    proj = []
    for k in range(NPROJ):
        w = np.cos(0.7 * i + 1.3 * c + 2.1 * k)
        proj.append({"value": float((w * f).sum()), "scale": float(np.abs(w * f).sum())})
    ver = subprocess.run([gmx_name, "--version"], capture_output=True, text=True).stdout
    ver = next((l.split(":", 1)[1].strip() for l in ver.split("\n") if "GROMACS version" in l),
               "unknown")
    golden = {
        "schema": SCHEMA,
        "name": case.name,
        "description": case.description,
        "structure": case.structure,
        "topology": case.topology,
        "halomd_params": halomd_params(s, case.define),
        "units": {"energy": "kJ/mol", "force": "kJ/mol/nm",
                  "virial": "kJ/mol, GROMACS's Xi = -1/2 sum_i x_i (x) F_i (halomd's W = -2 Xi^T)"},
        "tolerance": TOLERANCE,
        "counts": counts,
        "energies": {k: energies[k] for k in terms},
        "virial": virial,
        "forces": {"atoms": idx, "max_abs": fmax, "values": rounded_forces(stored, fmax)},
        "force_projections": {"weights": "w[k][i][c] = cos(0.7 i + 1.3 c + 2.1 k)",
                              "projections": proj},
        "provenance": {
            "tool": f"GROMACS {ver} ({gmx_name}, double precision)",
            "date": datetime.date.today().isoformat(),
            "command": "python3 python/halomd/make_ff_golden.py --update",
            "gromacs_mdp": mdp_text(s, case.define, []),
            "energies_from": "gmx_d mdrun -rerun of the structure; gmx_d energy -dp",
            "forces_from": "step 1 of gmx_d mdrun, 2 steps of dt = 1e-20 ps (positions "
                           "unchanged; no energies at that step, 1-4 pairs not tabulated)",
            "virial_from": "gmx_d mdrun of 0 steps (an energy step)",
            "rerun_force_deviation": float(np.abs(rerun_f - f).max() / fmax),
        },
    }
    log(f"{case.name}: {n} atoms, {len(terms)} terms, forces of "
        f"{n if idx is None else len(idx)} atoms stored, max|F| {fmax:.1f} kJ/mol/nm, rerun "
        f"forces off by {golden['provenance']['rerun_force_deviation']:.1e}")
    return golden


# ------------------------------------------------------------------------ generation and check

def generate(root, work, gmx_name, only=None, log=print):
    """Writes the made systems and the goldens under root/tests/data/ff; returns the files."""
    from halomd import gmx_tools as gt
    ff = os.path.join(root, "tests", "data", "ff")
    written = []
    if not only or any(c.startswith("charmm") for c in only):
        build_charmm_peptide(gt.Gmx(os.path.join(work, "charmm_build"), gmx=gmx_name),
                             os.path.join(ff, "charmm_peptide"))
        written += ["charmm_peptide/topol.top", "charmm_peptide/conf.gro"]
    if not only or any(c.startswith("sink1") for c in only):
        build_sink(gt.Gmx(os.path.join(work, "sink1_build"), gmx=gmx_name),
                   os.path.join(ff, "sink1"), SINK1, 2026)
        written += ["sink1/topol.top", "sink1/bonded.itp", "sink1/conf.gro"]
    if not only or any(c.startswith("sink3") for c in only):
        build_sink(gt.Gmx(os.path.join(work, "sink3_build"), gmx=gmx_name),
                   os.path.join(ff, "sink3"), SINK3, 2027)
        written += ["sink3/topol.top", "sink3/conf.gro"]
    os.makedirs(os.path.join(ff, "golden"), exist_ok=True)
    for case in CASES:
        if only and case.name not in only:
            continue
        g = run_case(case, root, work, gmx_name, log=log)
        path = os.path.join(ff, "golden", case.name + ".json")
        with open(path, "w") as f:
            f.write(golden_text(g))
        written.append("golden/" + case.name + ".json")
    return written


def golden_text(g):
    """JSON with one line per list of numbers (a force row, the atom indices)."""
    text = json.dumps(g, indent=1)
    flat = re.compile(r"\[\s*((?:-?[0-9][0-9.e+-]*,\s*)*-?[0-9][0-9.e+-]*)\s*\]")
    return flat.sub(lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]",
                    text) + "\n"


def compare(new, old):
    """Differences between a regenerated golden and the committed one (list of messages)."""
    msgs = []
    for k in ("schema", "structure", "topology", "halomd_params", "counts", "tolerance"):
        if new.get(k) != old.get(k):
            msgs.append(f"{k} differs")
    for k, v in old["energies"].items():
        w = new["energies"].get(k)
        if w is None or abs(w - v) > 1e-12 * max(1.0, abs(v)):
            msgs.append(f"energy {k}: {w} != {v}")
    fo, fn = old["forces"]["values"], new["forces"]["values"]
    scale = old["forces"]["max_abs"]
    if len(fo) != len(fn) or any(abs(a - b) > 1e-11 * scale for ro, rn in zip(fo, fn)
                                 for a, b in zip(ro, rn)):
        msgs.append("forces differ")
    if any(abs(a - b) > 1e-12 * max(1.0, abs(b)) for a, b in zip(new["virial"], old["virial"])):
        msgs.append("virial differs")
    return msgs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--update", action="store_true", help="write the files into the repository")
    ap.add_argument("--only", nargs="*", help="case names (and the systems they need)")
    ap.add_argument("--gmx", default=os.environ.get("GMX_D", "gmx_d"))
    ap.add_argument("--keep", help="keep the GROMACS work folder here")
    args = ap.parse_args()
    if shutil.which(args.gmx) is None:
        raise SystemExit(f"{args.gmx} not found: apt-get install gromacs (Debian's package has "
                         "gmx_d, GROMACS in double precision)")
    work = args.keep or tempfile.mkdtemp(prefix="halomd_ff_golden_")
    try:
        if args.update:
            files = generate(ROOT, work, args.gmx, args.only)
            print(f"wrote {len(files)} files under tests/data/ff")
            return 0
        tmp_root = os.path.join(work, "tree")
        for case in CASES:  # the repository's own systems (the made ones are made again)
            for rel in (case.structure, case.topology):
                if rel.startswith("tests/data/ff/"):
                    continue
                src = os.path.dirname(os.path.join(ROOT, rel))
                dst = os.path.dirname(os.path.join(tmp_root, rel))
                os.makedirs(dst, exist_ok=True)
                for fn in os.listdir(src):
                    if fn.endswith((".top", ".itp")) or fn == os.path.basename(rel):
                        shutil.copy(os.path.join(src, fn), dst)
        files = generate(tmp_root, work, args.gmx, args.only)
        bad = 0
        for rel in files:
            a = os.path.join(tmp_root, "tests", "data", "ff", rel)
            b = os.path.join(ROOT, "tests", "data", "ff", rel)
            if not os.path.exists(b):
                print(f"{rel}: not committed")
                bad += 1
            elif rel.endswith(".json"):
                msgs = compare(json.load(open(a)), json.load(open(b)))
                for m in msgs:
                    print(f"{rel}: {m}")
                bad += bool(msgs)
            elif open(a).read() != open(b).read():
                print(f"{rel}: differs")
                bad += 1
        print("ok: the committed files are what GROMACS gives" if not bad else f"{bad} differ")
        return 1 if bad else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
