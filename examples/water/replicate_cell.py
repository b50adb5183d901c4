#!/usr/bin/env python3
"""Water boxes of whole numbers of the committed 512-molecule cell, with the standard library only.

    python3 examples/water/replicate_cell.py NATOMS OUT.gro [OUT.top]

NATOMS is 1,536 (1x1x1 cells), 12,288 (2x2x2), 24,576 (4x2x2), 41,472 (3x3x3) or 98,304 (4x4x4):
copies of examples/water/water_1536.gro side by side, as `make_water.py -n` makes them for whole
numbers of cells (pure replication, periodic), for the GPU nodes' Python, which has no numpy.
The .top, when asked for, is the GROMACS topology of the same molecules (AMBER99SB-ILDN TIP3P).
"""

import os
import sys

CELLS = {1536: (1, 1, 1), 12288: (2, 2, 2), 24576: (4, 2, 2), 41472: (3, 3, 3), 98304: (4, 4, 4)}
CELL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "water_1536.gro")


def main(argv):
    if len(argv) not in (3, 4) or not argv[1].isdigit():
        sys.exit(__doc__.strip().split("\n\n")[1])
    natoms, conf = int(argv[1]), argv[2]
    reps = CELLS.get(natoms)
    if not reps:
        sys.exit(f"replicate_cell.py: no whole number of 1,536-atom cells gives {natoms} atoms "
                 f"(one of {', '.join(str(n) for n in CELLS)})")
    lines = open(CELL).read().split("\n")
    n = int(lines[1])
    atoms = lines[2:2 + n]
    box = [float(v) for v in lines[2 + n].split()[:3]]
    out, k = [], 0
    for a in range(reps[0]):
        for b in range(reps[1]):
            for c in range(reps[2]):
                for line in atoms:
                    x = [float(line[20 + 8 * d:28 + 8 * d]) + s * box[d]
                         for d, s in enumerate((a, b, c))]
                    res = (k // 3) % 100000 + 1
                    out.append("%5d%-5s%5s%5d%8.3f%8.3f%8.3f" % (
                        res, line[5:10].strip(), line[10:15].strip(), (k % 99999) + 1, *x))
                    k += 1
    with open(conf, "w") as f:
        f.write(f"TIP3P water, {k // 3} molecules ({reps[0]}x{reps[1]}x{reps[2]} cells)\n{k}\n")
        f.write("\n".join(out) + "\n")
        f.write("%10.5f%10.5f%10.5f\n" % (box[0] * reps[0], box[1] * reps[1], box[2] * reps[2]))
    if len(argv) == 4:
        with open(argv[3], "w") as f:
            f.write('#include "amber99sb-ildn.ff/forcefield.itp"\n'
                    '#include "amber99sb-ildn.ff/tip3p.itp"\n')
            f.write(f"\n[ system ]\nTIP3P water, {k // 3} molecules\n\n[ molecules ]\nSOL {k // 3}\n")


if __name__ == "__main__":
    main(sys.argv)
