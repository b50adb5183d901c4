#!/usr/bin/env python3
"""GROMACS .gro -> LAMMPS data file (atom_style atomic, units metal) for pair_style deepmd.

    python3 bench/multi_gpu/gro2lmp.py CONF.gro OUT.data --type-map O H

LAMMPS type i (1-based) is the i-th name of --type-map (the model's type_map, as
`halomd info -m MODEL.dp` prints it), so the input's `pair_coeff * * O H` maps the types to
the model one to one. Elements come from the atom and residue names by halomd's rule
(src/core/elements.c, hmd_element_guess: OW -> O, HW1 -> H, CA in a protein -> C, residue NA
atom NA -> Na, CL- -> Cl), masses from halomd's standard weights, so LAMMPS and halomd see the
same atoms. Positions nm -> Å, velocities (when the .gro has them) nm/ps -> Å/ps; the box line
(3 values, or 9 for a triclinic cell: v1x v2y v3z v1y v1z v2x v2z v3x v3y) becomes
`0 lx xlo xhi`, ... and `xy xz yz`. Numbers are written with repr (every double exactly as computed here); atoms keep their
order (id = position in the file);
read_data wraps periodic coordinates into the box. Only the first frame is converted.
"""
import argparse
import sys

# Standard weights (g/mol), the values of halomd's src/core/elements.c.
MASS = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "F": 18.998, "Na": 22.990,
        "Mg": 24.305, "P": 30.974, "S": 32.06, "Cl": 35.45, "K": 39.098, "Ca": 40.078,
        "Li": 6.94, "Zn": 65.38, "Br": 79.904, "I": 126.90}
SYMBOLS = ("H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn "
           "Ga Ge As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba").split()
# CHARMM's three-letter ion names, the same for residue and atom.
CHARMM_IONS = {"LIT": "Li", "SOD": "Na", "POT": "K", "CLA": "Cl", "CAL": "Ca", "RUB": "Rb",
               "CES": "Cs", "BAR": "Ba", "ZN2": "Zn"}


def _symbol(name):
    """The element symbol spelled by `name` in any case, or None."""
    for s in SYMBOLS:
        if s.lower() == name.lower():
            return s
    return None


def _strip_charge(s):
    """(s without an ion charge suffix "+", "-", "2+", "+2", whether there was one)."""
    end = len(s)
    while end > 0 and s[end - 1].isdigit():
        end -= 1
    if end == 0 or s[end - 1] not in "+-":
        return s, False
    end -= 1
    while end > 0 and s[end - 1].isdigit():
        end -= 1
    return (s[:end], True) if end > 0 else (s, False)


def element(atom_name, res_name):
    """The element of a .gro atom, by halomd's hmd_element_guess; None when there is none."""
    name, charged = _strip_charge(atom_name.strip())
    if not name:
        return None
    sym = _symbol(name)
    if sym and charged:
        return sym
    res = _strip_charge(res_name.strip())[0]
    ion_residue = res.lower() == name.lower()
    if ion_residue and name.upper() in CHARMM_IONS:
        return CHARMM_IONS[name.upper()]
    if sym and len(name) == 2 and (ion_residue or (name[0].isupper() and name[1].islower())):
        return sym
    p = name.lstrip("0123456789")
    return _symbol(p[0]) if p and p[0].isalpha() else None


def read_gro(path):
    """(elements, positions in Å, velocities in Å/ps or None, box in Å as 3 or 9 values)."""
    with open(path) as f:
        f.readline()
        n = int(f.readline())
        lines = [f.readline() for _ in range(n)]
        box = [10.0 * float(v) for v in f.readline().split()]
    if len(lines[-1].rstrip("\n")) < 44 or len(box) not in (3, 9):
        sys.exit(f"{path}: not a .gro frame of {n} atoms")
    # Precision from the decimal points of the first x (GROMACS writes %8.3f by default).
    first = lines[0]
    dot = first.index(".", 20)
    dot2 = first.index(".", dot + 1)
    w = dot2 - dot  # field width
    els, pos, vel = [], [], []
    for i, ln in enumerate(lines):
        el = element(ln[10:15], ln[5:10])
        if el is None:
            sys.exit(f"{path}: line {i + 3}: no element for atom name {ln[10:15].strip()!r}")
        els.append(el)
        pos.append([10.0 * float(ln[20 + k * w:20 + (k + 1) * w]) for k in range(3)])
        tail = ln[20 + 3 * w:].split()
        if len(tail) >= 3:
            vel.append([10.0 * float(v) for v in tail[:3]])
    return els, pos, (vel if len(vel) == n else None), box


def write_data(path, els, pos, vel, box, type_map, title):
    """Writes the LAMMPS data file; every element must be in type_map."""
    tid = {e: i + 1 for i, e in enumerate(type_map)}
    missing = sorted(set(els) - set(tid))
    if missing:
        sys.exit(f"elements {missing} are not in the type map {type_map}")
    if len(box) == 3:
        box = box + [0.0] * 6
    lx, ly, lz, _, _, xy, _, xz, yz = box
    with open(path, "w") as f:
        f.write(f"{title} (gro2lmp.py, units metal)\n\n{len(els)} atoms\n"
                f"{len(type_map)} atom types\n\n")
        f.write(f"0 {lx!r} xlo xhi\n0 {ly!r} ylo yhi\n0 {lz!r} zlo zhi\n")
        if xy or xz or yz:
            f.write(f"{xy!r} {xz!r} {yz!r} xy xz yz\n")
        f.write("\nMasses\n\n")
        for i, e in enumerate(type_map):
            f.write(f"{i + 1} {MASS.get(e, 1.0)} # {e}\n")
        f.write("\nAtoms # atomic\n\n")
        for i, (e, x) in enumerate(zip(els, pos)):
            f.write(f"{i + 1} {tid[e]} {x[0]!r} {x[1]!r} {x[2]!r}\n")
        if vel:
            f.write("\nVelocities\n\n")
            for i, v in enumerate(vel):
                f.write(f"{i + 1} {v[0]!r} {v[1]!r} {v[2]!r}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gro")
    ap.add_argument("data")
    ap.add_argument("--type-map", nargs="+", required=True,
                    help="the model's type_map, e.g. O H (commas also accepted)")
    a = ap.parse_args()
    tmap = [t for s in a.type_map for t in s.split(",") if t]
    els, pos, vel, box = read_gro(a.gro)
    write_data(a.data, els, pos, vel, box, tmap, a.gro.rsplit("/", 1)[-1])


if __name__ == "__main__":
    main()
