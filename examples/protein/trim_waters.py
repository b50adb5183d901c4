#!/usr/bin/env python3
"""Remove a given number of water molecules from a solvated .gro, deterministically.

    python3 trim_waters.py in.gro out.gro NREMOVE

The waters removed are those whose oxygen has the closest contact with any atom of another
molecule (periodic, orthorhombic box): the most crowded waters that `gmx solvate` left, often
across the box faces. Ties are broken by position in the file. Standard library only.
Prints the number of SOL molecules left (for the topology's [ molecules ] line).
"""

import math
import sys


def read_gro(path):
    with open(path) as f:
        lines = f.read().splitlines()
    natoms = int(lines[1])
    atoms = lines[2:2 + natoms]
    box = [float(v) for v in lines[2 + natoms].split()[:3]]
    return lines[0], atoms, box


def main():
    src, dst, nremove = sys.argv[1], sys.argv[2], int(sys.argv[3])
    title, atoms, box = read_gro(src)
    if len(box) != 3:
        sys.exit("trim_waters.py: orthorhombic box expected")
    xyz = [(float(l[20:28]), float(l[28:36]), float(l[36:44])) for l in atoms]
    # cell grid for a 0.4 nm contact search
    rmax = 0.4
    nc = [max(1, int(b / rmax)) for b in box]
    cells = {}
    for i, (x, y, z) in enumerate(xyz):
        c = tuple(int((v % b) / b * n) % n for v, b, n in zip((x, y, z), box, nc))
        cells.setdefault(c, []).append(i)
    ow = [i for i, l in enumerate(atoms) if l[5:10].strip() == "SOL" and l[10:15].strip() == "OW"]
    closest = []
    for i in ow:
        x = xyz[i]
        c0 = tuple(int((v % b) / b * n) % n for v, b, n in zip(x, box, nc))
        best = rmax
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for dz in (-1, 0, 1):
                    c = ((c0[0] + dx) % nc[0], (c0[1] + dy) % nc[1], (c0[2] + dz) % nc[2])
                    for j in cells.get(c, ()):
                        if i <= j <= i + 2:  # the water's own atoms (OW, HW1, HW2)
                            continue
                        d2 = 0.0
                        for k in range(3):
                            d = xyz[j][k] - x[k]
                            d -= box[k] * round(d / box[k])
                            d2 += d * d
                        if d2 < best * best:
                            best = math.sqrt(d2)
        closest.append((best, i))
    closest.sort()
    drop = set()
    for dmin, i in closest[:nremove]:
        drop.update((i, i + 1, i + 2))
        print(f"removed the water at atom {i + 1}: closest contact {dmin:.4f} nm", file=sys.stderr)
    kept = [l for i, l in enumerate(atoms) if i not in drop]
    with open(dst, "w") as f:
        f.write(title + "\n")
        f.write(f"{len(kept):5d}\n")
        for l in kept:
            f.write(l + "\n")
        f.write(f"{box[0]:10.5f}{box[1]:10.5f}{box[2]:10.5f}\n")
    print(len(ow) - nremove)


if __name__ == "__main__":
    main()
