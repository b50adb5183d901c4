#!/usr/bin/env python3
"""How much of DPA-1's per-centre attention work the live neighbours need, in a .gro box.

Counts each atom's neighbours within rcut (minimum image, at most sel; no exclusions), then
prints the work of the attention products (a centre's matrices are m x m, m its slots) as a
fraction of nlocal * sel^2, for centres grouped in chunks of equal size, each chunk's products
over its most live slots rounded up to a multiple of 8: in atom order, and after sorting the
centres by their count. This sizes the "centres grouped by live count" design in
docs/performance.md before any GPU time is spent on it.

Usage: python3 bench/gpu_single/live_counts.py BOX.gro [rcut_A sel] (needs numpy)
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from halomd.gmx_tools import NM_TO_A, read_gro  # noqa: E402


def live_counts(x, box, rcut, sel):
    """Neighbours within rcut of each atom, at most sel."""
    counts = np.zeros(len(x), int)
    for i0 in range(0, len(x), 512):
        d = x[None, :, :] - x[i0:i0 + 512, None, :]
        d -= box * np.round(d / box)
        counts[i0:i0 + 512] = ((d ** 2).sum(-1) <= rcut * rcut).sum(1) - 1
    return np.minimum(counts, sel)


def chunked_work(live, order, chunk, sel, align=8):
    """Work of chunks of `chunk` centres taken in `order`, as a fraction of all slots."""
    work = 0
    for s in range(0, len(order), chunk):
        part = order[s:s + chunk]
        m = -(-live[part].max() // align) * align
        work += len(part) * m * m
    return work / (len(live) * sel * sel)


def main(argv):
    if len(argv) not in (2, 4):
        print(__doc__, file=sys.stderr)
        return 2
    rcut, sel = (float(argv[2]), int(argv[3])) if len(argv) == 4 else (6.0, 120)
    _, _, x, box = read_gro(argv[1])
    x, box = NM_TO_A * x, NM_TO_A * box[:3]  # orthorhombic
    live = live_counts(x, box, rcut, sel)
    n = len(live)
    print(f"{n} atoms, rcut {rcut} Å, sel {sel}: live mean {live.mean():.1f}, "
          f"min {live.min()}, max {live.max()}")
    print(f"each centre over its own live slots: {(live.astype(float) ** 2).sum() / (n * sel * sel):.3f}")
    print(f"{'chunk':>7s} {'atom order':>11s} {'sorted':>8s}")
    for chunk in sorted({n, 1536, 768, 384, 192, 96, 48}, reverse=True):
        if chunk <= n:
            print(f"{chunk:7d} {chunked_work(live, np.arange(n), chunk, sel):11.3f} "
                  f"{chunked_work(live, np.argsort(-live, kind='stable'), chunk, sel):8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
