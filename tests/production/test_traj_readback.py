"""The trajectory writers read back by other programs (tests/production/traj_tool.c).

Usage: test_traj_readback.py TRAJ_TOOL WORKDIR PYDEPS

traj_tool writes three frames of a known system (formulas in traj_tool.c, repeated in
expected() below) as extended XYZ, H5MD and XTC. Read back:
  - md.xyz by ASE: positions, cell and forces exactly; get_velocities() equal to the velocities
    within 1e-7 (ASE's default constants are CODATA 2014, halomd's 2018);
  - H5MD by h5py (exact doubles, steps, times, ids, species, units) and by MDAnalysis's
    H5MDReader (positions in float32, cell, velocities, forces in kJ/mol/Å);
  - XTC by MDAnalysis's XTCReader: positions within half a precision step, cell, step and
    time, and the precision stored in each frame header.
Two runs: XTC of group Water at precision 1000 with H5MD of System, and XTC of System at
precision 100 with H5MD of "@O NA". Exit 1 on the first failed check.
"""
import os
import struct
import subprocess
import sys
import warnings

import numpy as np

N = 30
FAILED = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILED.append(what)
    return ok


def expected(f):
    i = np.arange(N)[:, None]
    d = np.arange(3)[None, :]
    x = np.fmod(1.37 * i + 2.11 * d + 0.5 * f, 15) + 1.0 / 12
    v = (i - 0.5 * d + f) / 7.0
    force = (i + d - f) / 3.0
    h = np.array([[20.0 + f, 0, 0], [2, 19, 0], [-1, 1.5, 18]])
    return x, v, force, h


def dimensions(h):
    a, b, c = (np.linalg.norm(r) for r in h)
    ang = lambda u, w: np.degrees(np.arccos(np.dot(u, w) / np.linalg.norm(u) / np.linalg.norm(w)))
    return np.array([a, b, c, ang(h[1], h[2]), ang(h[0], h[2]), ang(h[0], h[1])])


def check_xyz(path):
    import ase.io
    import ase.units
    frames = ase.io.read(path, index=":")
    check(len(frames) == 3, f"ASE reads 3 frames of {os.path.basename(path)}")
    for f, atoms in enumerate(frames):
        x, v, force, h = expected(f)
        check(np.array_equal(atoms.get_positions(), x), f"xyz frame {f}: ASE positions exact")
        check(np.array_equal(np.array(atoms.get_cell()), h), f"xyz frame {f}: ASE cell exact")
        check(np.array_equal(atoms.get_forces(), force), f"xyz frame {f}: ASE forces exact")
        v_ase = atoms.get_velocities() * 1000 * ase.units.fs  # Å/ps
        err = np.max(np.abs(v_ase - v)) / np.max(np.abs(v))
        check(err < 1e-7, f"xyz frame {f}: ASE get_velocities() = the velocities (rel. {err:.1e})")


def check_h5md(path, ids):
    import h5py
    n = len(ids)
    with h5py.File(path, "r") as h5:
        check(list(h5["h5md"].attrs["version"]) == [1, 1], "h5md: version 1.1")
        g = h5["particles/all"]
        check(np.array_equal(g["id"][()], ids), f"h5md: ids of the {n} atoms of the group")
        z = np.where(np.array(ids) >= 24, 11, np.where(np.array(ids) % 3 == 0, 8, 1))
        check(np.array_equal(g["species"][()], z), "h5md: species are atomic numbers")
        check(list(g["box"].attrs["boundary"]) == ["periodic"] * 3,
              "h5md: boundary periodic")
        units = {"position": "Angstrom", "velocity": "Angstrom ps-1",
                 "force": "kJ mol-1 Angstrom-1"}
        for name, unit in units.items():
            u = g[name]["value"].attrs["unit"]
            check((u.decode() if isinstance(u, bytes) else u) == unit, f"h5md: {name} in {unit}")
            check(list(g[name]["step"][()]) == [0, 10, 20], f"h5md: {name} steps 0, 10, 20")
            check(np.array_equal(g[name]["time"][()], [0, 0.005, 0.01]), f"h5md: {name} times")
        for f in range(3):
            x, v, force, h = expected(f)
            check(np.array_equal(g["position/value"][f], x[ids]), f"h5md frame {f}: x exact")
            check(np.array_equal(g["velocity/value"][f], v[ids]), f"h5md frame {f}: v exact")
            check(np.allclose(g["force/value"][f], force[ids] * 96.48533212331002, rtol=1e-15),
                  f"h5md frame {f}: forces in kJ/mol/Å")
            check(np.array_equal(g["box/edges/value"][f], h), f"h5md frame {f}: cell exact")
    from MDAnalysis.coordinates.H5MD import H5MDReader
    reader = H5MDReader(path, convert_units=True)
    check(reader.n_frames == 3 and reader.n_atoms == n, f"MDAnalysis reads 3 frames of {n}")
    for f, ts in enumerate(reader):
        x, v, force, h = expected(f)
        check(np.allclose(ts.positions, x[ids], rtol=0, atol=1e-5), f"MDAnalysis h5md {f}: x")
        check(np.allclose(ts.velocities, v[ids], rtol=0, atol=1e-5), f"MDAnalysis h5md {f}: v")
        check(np.allclose(ts.forces, force[ids] * 96.48533212331002, rtol=1e-6, atol=1e-4),
              f"MDAnalysis h5md {f}: forces")
        check(np.allclose(ts.dimensions, dimensions(h), atol=1e-4), f"MDAnalysis h5md {f}: cell")
        check(ts.data["step"] == 10 * f and abs(ts.time - 0.005 * f) < 1e-12,
              f"MDAnalysis h5md {f}: step and time")
    reader.close()


def xtc_precisions(path):
    """The precision float of every frame header (natoms > 9: after magic, natoms, step, time,
    box[9] and natoms again)."""
    data = open(path, "rb").read()
    out, at = [], 0
    while at < len(data):
        natoms = struct.unpack_from(">i", data, at + 4)[0]
        out.append(struct.unpack_from(">f", data, at + 56)[0])
        nbytes = struct.unpack_from(">i", data, at + 88)[0]  # compressed bytes, then padding
        at += 92 + (nbytes + 3) // 4 * 4
        assert natoms > 9
    return out


def check_xtc(path, ids, precision):
    from MDAnalysis.coordinates.XTC import XTCReader
    reader = XTCReader(path)
    n = len(ids)
    check(reader.n_frames == 3 and reader.n_atoms == n, f"MDAnalysis reads 3 XTC frames of {n}")
    tol = 0.5 * 10.0 / precision + 1e-4  # half a step (Å) and float rounding
    worst = 0.0
    for f, ts in enumerate(reader):
        x, v, force, h = expected(f)
        err = np.max(np.abs(ts.positions - x[ids]))
        worst = max(worst, err)
        check(err <= tol, f"xtc frame {f}: positions within {tol:.4f} Å (max {err:.4f})")
        check(np.allclose(ts.dimensions, dimensions(h), atol=1e-3), f"xtc frame {f}: cell")
        check(ts.data["step"] == 10 * f and abs(ts.time - 0.005 * f) < 1e-6,
              f"xtc frame {f}: step and time")
    reader.close()
    check(xtc_precisions(path) == [precision] * 3, f"xtc: precision {precision} in every frame")
    check(worst > 0.05 * tol, f"xtc: the positions are rounded as precision {precision} says")


def run(tool, work, precision, xtc_groups, h5md_groups, xtc_ids, h5md_ids):
    os.makedirs(work, exist_ok=True)
    for old in os.listdir(work):
        os.remove(os.path.join(work, old))
    r = subprocess.run([tool, work, str(precision), xtc_groups, h5md_groups],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, f"traj_tool {precision} '{xtc_groups}' '{h5md_groups}'"):
        print(r.stderr)
        return
    check_xyz(os.path.join(work, "t.xyz"))
    check_h5md(os.path.join(work, "t.h5md"), h5md_ids)
    check_xtc(os.path.join(work, "t.xtc"), xtc_ids, precision)


def main(argv):
    tool, work, pydeps = argv[1], argv[2], argv[3]
    warnings.simplefilter("ignore")
    if "HALOMD_CHEMFILES" not in os.environ:
        lib = os.path.join(pydeps, "chemfiles", "libchemfiles.so")
        if not os.path.exists(lib):
            print(f"FAIL  {lib} is missing: `make deps` installs chemfiles (PyPI) there")
            return 1
        os.environ["HALOMD_CHEMFILES"] = lib
    water = list(range(24))
    everything = list(range(N))
    o_and_na = [i for i in everything if i % 3 == 0 and i < 24] + list(range(24, 30))
    run(tool, os.path.join(work, "a"), 1000, "Water", "System", water, everything)
    run(tool, os.path.join(work, "b"), 100, "System", "@O NA", everything, o_and_na)
    print(f"{len(FAILED)} failed" if FAILED else "all passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
