"""bench/multi_gpu/gro2lmp.py: .gro -> LAMMPS data file for pair_style deepmd (units metal).

The expected values are GROMACS's and LAMMPS's conventions (nm -> Å, nm/ps -> Å/ps, the .gro box
line's order v1x v2y v3z v1y v1z v2x v2z v3x v3y, LAMMPS's xy xz yz, types in the order of the
model's type map) and the element names of docs/formats.md, not the converter's own output."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "bench", "multi_gpu", "gro2lmp.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import gro2lmp  # noqa: E402

# Triclinic, with velocities; residue NA atom NA is a sodium ion, CA in a protein is a carbon.
GRO = """tiny test
    5
    1SOL     OW    1   0.126   1.624   1.679  0.1000 -0.2000  0.3000
    1SOL    HW1    2   0.190   1.661   1.747 -0.4000  0.5000  0.6000
    2ALA     CA    3   0.500   0.250   1.000  0.0000  0.0000  0.0000
    3NA      NA    4   1.000   1.000   1.000  0.0000  0.0000  0.0000
    4CL     CL-    5   0.300   0.300   0.300  0.0000  0.0000  0.0000
   1.86206   1.86206   1.86206   0.00000   0.00000   0.20000   0.00000   0.30000   0.40000
"""


def section(lines, name):
    i = next(k for k, ln in enumerate(lines) if ln.split("#")[0].strip() == name)
    out = []
    for ln in lines[i + 2:]:
        if not ln.strip():
            break
        out.append(ln.split("#")[0].split())
    return out


def test_elements_as_docs_say():
    assert gro2lmp.element("OW", "SOL") == "O"
    assert gro2lmp.element("HW1", "SOL") == "H"
    assert gro2lmp.element("CA", "ALA") == "C"
    assert gro2lmp.element("NA", "NA") == "Na"
    assert gro2lmp.element("CL-", "CL") == "Cl"
    assert gro2lmp.element("1HB", "ALA") == "H"
    assert gro2lmp.element("SOD", "SOD") == "Na"
    assert gro2lmp.element("Cl", "LIG") == "Cl"
    assert gro2lmp.element("NZ", "LYS") == "N"


def test_data_file(tmp_path):
    gro = tmp_path / "t.gro"
    gro.write_text(GRO)
    data = tmp_path / "t.data"
    subprocess.run([sys.executable, SCRIPT, str(gro), str(data), "--type-map",
                    "H", "C", "N", "O", "Na", "Cl"], check=True)
    lines = data.read_text().splitlines()
    assert "5 atoms" in lines and "6 atom types" in lines
    assert "0 18.6206 xlo xhi" in lines and "0 18.6206 zlo zhi" in lines
    xy, xz, yz = next(ln for ln in lines if ln.endswith("xy xz yz")).split()[:3]
    assert (float(xy), float(xz), float(yz)) == pytest.approx((2.0, 3.0, 4.0), abs=1e-12)
    masses = section(lines, "Masses")
    assert [m[0] for m in masses] == ["1", "2", "3", "4", "5", "6"]
    assert float(masses[3][1]) == 15.999 and data.read_text().count("# Na") == 1
    atoms = section(lines, "Atoms")
    assert [a[1] for a in atoms] == ["4", "1", "2", "5", "6"]  # O H C Na Cl in type-map order
    assert [float(v) for v in atoms[0][2:]] == pytest.approx([1.26, 16.24, 16.79], abs=1e-12)
    vel = section(lines, "Velocities")
    assert [float(v) for v in vel[1][1:]] == pytest.approx([-4.0, 5.0, 6.0], abs=1e-12)


def test_element_outside_type_map(tmp_path):
    gro = tmp_path / "t.gro"
    gro.write_text(GRO)
    res = subprocess.run([sys.executable, SCRIPT, str(gro), str(tmp_path / "t.data"),
                          "--type-map", "O", "H"], capture_output=True, text=True)
    assert res.returncode != 0 and "not in the type map" in res.stderr
