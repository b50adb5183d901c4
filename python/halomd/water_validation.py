#!/usr/bin/env python3
"""Physics checks of halomd with the trained water model against GROMACS (issue 6, item 5).

The same water box is run with the classical model the Deep Potential was trained on
("halomd-ref" flexible TIP3P with conducting reaction-field and switched Lennard-Jones, 6 A
cut-offs; python/halomd/gmx_tools.py) in GROMACS, and with halomd and the trained se_e2_a model
(examples/water/water_trained.dp). Compared: the O-O and O-H radial distribution functions of
NVT runs at 300 K, and the energy drift of NVE runs.

    P=python/halomd/water_validation.py
    python $P gmx-nvt --conf examples/water/water_192.gro --ps 25 --work W/gmx_nvt192
    python $P gmx-nve --conf examples/water/water_192.gro --ps 20 --work W/gmx_nve
    python $P halomd-mdp --nvt --ps 20 > W/nvt.mdp     # then halomd run (docs/validation)
    python $P halomd-mdp --nve --ps 5 > W/nve.mdp
    python $P analyse --gmx-nvt W/gmx_nvt192 --halomd-nvt W/nvt.xyz --gmx-nve W/gmx_nve \\
        --halomd-nve W/nve.energy.csv --nve-natoms 192 --skip-ps 5 --out docs/validation

Needs numpy, matplotlib (for the figures) and Debian's GROMACS (`gmx`, and `gmx_d` for the
double-precision NVE run). GROMACS runs are single-threaded (`-nt 1`), under nice.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

try:  # halomd-mdp needs the standard library only (GPU nodes may have no numpy)
    import numpy as np
    from halomd import gmx_tools as gt
except ImportError:
    np = gt = None

TEMPERATURE = 300.0
DT = 0.0005  # ps, both engines (flexible water, as the labelled data)
NSTX = 100   # frames every 0.05 ps
SEED = 300

MDP_MD = """integrator              = md
dt                      = {dt}
nsteps                  = {nsteps}
nstcalcenergy           = 10
nstenergy               = 10
nstlog                  = 10000
nstxout                 = {nstx}
nstvout                 = 0
nstfout                 = 0
tcoupl                  = {tcoupl}
tc-grps                 = System
tau-t                   = 0.1
ref-t                   = {temp}
pcoupl                  = no
gen-vel                 = yes
gen-temp                = {temp}
gen-seed                = {seed}
ld-seed                 = {seed}
comm-mode               = linear
"""


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def top_for(conf, work):
    """A topology for a water .gro (number of molecules from the atom count)."""
    _, atoms, _, _ = gt.read_gro(conf)
    top = os.path.join(work, "water.top")
    write(top, gt.water_top(len(atoms) // 3))
    return top


def small_box(conf):
    """Half the box edge below the 0.6 nm cut-off plus a 0.1 nm buffer: exact pair list."""
    _, _, _, box = gt.read_gro(conf)
    return min(box[:3]) / 2 < 0.7


def gmx_md(conf, ps, work, nve, gmx_bin):
    os.makedirs(work, exist_ok=True)
    gmx = gt.Gmx(work, gmx=gmx_bin)
    top = top_for(conf, work)
    name = "nve" if nve else "nvt"
    body = MDP_MD.format(dt=DT, nsteps=int(round(ps / DT)), nstx=NSTX, temp=TEMPERATURE,
                         seed=SEED, tcoupl="no" if nve else "v-rescale")
    if nve and not small_box(conf):
        # NVE: buffer from the tolerance needs a reference temperature; an explicit list instead
        body += "verlet-buffer-tolerance = -1\nrlist                   = 0.8\n"
    write(gmx.path(name + ".mdp"), gt.mdp_text(
        f"water validation: {'NVE' if nve else 'NVT 300 K'} ({gmx_bin})", body, small_box(conf)))
    gmx.grompp(name + ".mdp", os.path.abspath(conf), top, name + ".tpr")
    gmx.mdrun(name)
    t, etot = gt.read_energy(gmx, name + ".edr", "Total-Energy")
    np.savetxt(gmx.path(name + "_etot.txt"), np.c_[t, etot * gt.KJMOL_TO_EV],
               header="time_ps etot_eV")
    t, temp = gt.read_energy(gmx, name + ".edr", "Temperature")
    print(f"{name}: {len(t)} energy rows over {t[-1]:.3f} ps, mean T {temp.mean():.1f} K")


def halomd_mdp(ps, nve):
    lines = ["; water validation with halomd (python/halomd/water_validation.py)",
             "integrator     = md-vv",
             f"dt             = {DT}",
             f"nsteps         = {int(round(ps / DT))}",
             "gen-vel        = yes",
             f"gen-temp       = {TEMPERATURE:g}",
             f"gen-seed       = {SEED}",
             "nstcalcenergy  = 10",
             "nstenergy      = 10",
             "nstlog         = 1000",
             f"nstxout        = {NSTX}"]
    if nve:
        lines += ["tcoupl         = no"]
    else:
        lines += ["tcoupl         = v-rescale", "tau-t          = 0.1",
                  f"ref-t          = {TEMPERATURE:g}", f"ld-seed        = {SEED + 1}"]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- trajectories

def read_extxyz(path):
    """Frames of halomd's extended XYZ: (time ps, species list, pos A (n,3), box A (3,3))."""
    frames = []
    with open(path) as f:
        while True:
            line = f.readline()
            if not line.strip():
                break
            n = int(line)
            head = f.readline()
            lat = np.array(re.search(r'Lattice="([^"]*)"', head).group(1).split(), float)
            tm = re.search(r'\b[Tt]ime=([-0-9.eE+]+)', head)
            props = re.search(r'Properties=(\S+)', head).group(1).split(":")
            col, ipos = 0, None
            for k in range(0, len(props), 3):
                if props[k] == "pos":
                    ipos = col
                col += int(props[k + 2])
            rows = [f.readline().split() for _ in range(n)]
            if not rows or len(rows[-1]) < ipos + 3:
                break  # a last frame cut short (run stopped while writing)
            species = [r[0] for r in rows]
            pos = np.array([[float(v) for v in r[ipos:ipos + 3]] for r in rows])
            frames.append((float(tm.group(1)) if tm else None, species, pos, lat.reshape(3, 3)))
    return frames


def gmx_frames(work):
    """NVT frames of a GROMACS run: (time ps, species, pos A, box A)."""
    _, atoms, _, _ = gt.read_gro(os.path.join(work, "nvt.gro"))
    species = ["O" if a[2].startswith("O") else "H" for a in atoms]
    return [(fr["time"], species, fr["x"].astype(float) * gt.NM_TO_A,
             fr["box"].astype(float) * gt.NM_TO_A)
            for fr in gt.read_trr(os.path.join(work, "nvt.trr")) if "x" in fr]


def rdf(frames, a, b, rmax, dr):
    """g_ab(r) over frames (orthorhombic boxes, minimum image); all a-b pairs, i != j."""
    edges = np.arange(0.0, rmax + dr / 2, dr)
    hist = np.zeros(len(edges) - 1)
    norm = 0.0
    for _, species, pos, box in frames:
        L = np.diag(box)
        if np.abs(box - np.diag(L)).max() > 1e-6:
            raise SystemExit("rdf: orthorhombic boxes only")
        sp = np.array(species)
        xa, xb = pos[sp == a], pos[sp == b]
        for i0 in range(0, len(xa), 128):
            d = xa[i0:i0 + 128, None, :] - xb[None, :, :]
            d -= L * np.round(d / L)
            r = np.sqrt((d * d).sum(-1)).ravel()
            hist += np.histogram(r[(r > 1e-8) & (r < rmax)], bins=edges)[0]
        na, nb = len(xa), len(xb) - (1 if a == b else 0)
        norm += na * nb / np.prod(L)
    shell = 4.0 / 3.0 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    return 0.5 * (edges[1:] + edges[:-1]), hist / (shell * norm)


def drift(t, e, natoms):
    """Linear fit of the total energy: slope in eV per atom per ns, and RMS about the fit."""
    p = np.polyfit(t, e, 1)
    return p[0] * 1000.0 / natoms, float(np.std(e - np.polyval(p, t)) / natoms)


def analyse(a):
    out = a.out
    os.makedirs(out, exist_ok=True)
    res = {}
    hal = [f for f in read_extxyz(a.halomd_nvt) if f[0] is not None and f[0] >= a.skip_ps - 1e-9]
    gmx = [f for f in gmx_frames(a.gmx_nvt) if f[0] >= a.skip_ps - 1e-9]
    L = min(np.diag(hal[0][3]).min(), np.diag(gmx[0][3]).min())
    rmax = min(a.rmax, L / 2)
    res["nvt"] = {"halomd_frames": len(hal), "halomd_ps": [hal[0][0], hal[-1][0]],
                  "gromacs_frames": len(gmx), "gromacs_ps": [gmx[0][0], gmx[-1][0]],
                  "natoms": len(hal[0][1]), "rmax_A": rmax, "dr_A": a.dr}
    curves = {}
    for pair in (("O", "O"), ("O", "H")):
        key = pair[0] + "-" + pair[1]
        r, gh = rdf(hal, *pair, rmax, a.dr)
        _, gg = rdf(gmx, *pair, rmax, a.dr)
        # noise reference: GROMACS halves against each other
        h = len(gmx) // 2
        _, g1 = rdf(gmx[:h], *pair, rmax, a.dr)
        _, g2 = rdf(gmx[h:], *pair, rmax, a.dr)
        d = np.abs(gh - gg)
        inter = r > 1.3  # O-H: beyond the intramolecular O-H peak
        res["nvt"][key] = {
            "max_abs_dev": float(d.max()), "at_r_A": float(r[d.argmax()]),
            "max_abs_dev_r_gt_1.3A": float(d[inter].max()),
            "at_r_A_gt_1.3A": float(r[inter][d[inter].argmax()]),
            "gromacs_halves_max_abs_diff": float(np.abs(g1 - g2).max()),
            "gromacs_halves_max_abs_diff_r_gt_1.3A": float(np.abs(g1 - g2)[inter].max()),
            "highest_peak_r_gt_1.3A_halomd": [float(r[np.where(inter, gh, 0).argmax()]),
                                              float(gh[inter].max())],
            "highest_peak_r_gt_1.3A_gromacs": [float(r[np.where(inter, gg, 0).argmax()]),
                                               float(gg[inter].max())]}
        curves[key] = (r, gh, gg)
        np.savetxt(os.path.join(out, f"rdf_{pair[0]}{pair[1]}.txt"), np.c_[r, gh, gg],
                   header="r_A g_halomd g_gromacs", fmt="%.5f")
    # closest O-O contacts, and the potential energy along both NVT runs
    for name, frs in (("halomd", hal), ("gromacs", gmx)):
        mins = []
        for _, species, pos, box in frs:
            xo = pos[np.array(species) == "O"]
            L = np.diag(box)
            d = xo[:, None, :] - xo[None, :, :]
            d -= L * np.round(d / L)
            r2 = (d * d).sum(-1)
            np.fill_diagonal(r2, np.inf)
            mins.append((np.sqrt(r2.min()), int((r2 < 2.2 ** 2).sum() // 2)))
        res["nvt"][name + "_min_OO_A"] = float(min(m[0] for m in mins))
        res["nvt"][name + "_OO_pairs_below_2.2A_mean"] = float(np.mean([m[1] for m in mins]))
    nvt_csv = np.genfromtxt(os.path.join(os.path.dirname(a.halomd_nvt),
                                         os.path.basename(a.halomd_nvt)[:-4] + ".energy.csv"),
                            delimiter=",", names=True)
    epot_g = os.path.join(a.gmx_nvt, "nvt_epot.txt")
    if not os.path.exists(epot_g):
        t, ep = gt.read_energy(gt.Gmx(a.gmx_nvt), "nvt.edr", "Potential")
        np.savetxt(epot_g, np.c_[t, ep * gt.KJMOL_TO_EV], header="time_ps epot_eV")
    eg_nvt = np.loadtxt(epot_g)
    nat = res["nvt"]["natoms"]
    for name, t, ep in (("halomd", nvt_csv["time_ps"], nvt_csv["pe_eV"]),
                        ("gromacs", eg_nvt[:, 0], eg_nvt[:, 1])):
        sel = t >= a.skip_ps
        res["nvt"][name + "_epot_eV_per_atom"] = {
            "start": float(ep[0] / nat), "mean_after_skip": float(ep[sel].mean() / nat)}
        if name == "halomd":
            res["nvt"]["halomd_mean_T_K"] = float(nvt_csv["temp_K"][sel].mean())
    # NVE
    csv = np.genfromtxt(a.halomd_nve, delimiter=",", names=True)
    n_nve = a.nve_natoms
    th, eh = csv["time_ps"], csv["etot_eV"]
    gt_e = np.loadtxt(os.path.join(a.gmx_nve, "nve_etot.txt"))
    tg, eg = gt_e[:, 0], gt_e[:, 1]
    res["nve"] = {}
    for name, t, e in (("halomd", th, eh), ("gromacs", tg, eg)):
        s, rms = drift(t, e, n_nve)
        res["nve"][name] = {"ps": float(t[-1] - t[0]), "rows": len(t),
                            "drift_eV_per_atom_per_ns": float(s),
                            "rms_about_fit_eV_per_atom": rms,
                            "mean_T_K": None}
    if "temp_K" in csv.dtype.names:
        res["nve"]["halomd"]["mean_T_K"] = float(csv["temp_K"].mean())
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(json.dumps(res, indent=1))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no figures")
        return
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key in zip(axs, ("O-O", "O-H")):
        r, gh, gg = curves[key]
        ax.plot(r, gg, "k-", lw=1.5, label="GROMACS, classical (halomd-ref TIP3P)")
        ax.plot(r, gh, "r--", lw=1.2, label="halomd, trained se_e2_a")
        ax.set_xlabel("r (Å)")
        ax.set_ylabel(f"g$_{{{key}}}$(r)")
        dv = res["nvt"][key]
        ax.set_title(f"{key}: max |Δg| {dv['max_abs_dev_r_gt_1.3A' if key == 'O-H' else 'max_abs_dev']:.3f}"
                     + (" (r > 1.3 Å)" if key == "O-H" else ""))
        if key == "O-H":
            ax.set_ylim(0, 2.0)
        ax.legend(fontsize=8)
    fig.suptitle(f"water, {res['nvt']['natoms']} atoms, NVT 300 K")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "water_rdf.png"), dpi=120)
    fig, axs = plt.subplots(1, 2, figsize=(11, 4))
    ax = axs[1]
    for name, t, ep, c in (("halomd + trained se_e2_a", nvt_csv["time_ps"], nvt_csv["pe_eV"], "r"),
                           ("GROMACS, classical", eg_nvt[:, 0], eg_nvt[:, 1], "k")):
        ax.plot(t, ep / nat, c, lw=0.8, label=name)
    ax.set_xlabel("t (ps)")
    ax.set_ylabel("potential energy (eV/atom)")
    ax.set_title(f"NVT 300 K, {nat} atoms: potential energy")
    ax.legend(fontsize=8)
    ax = axs[0]
    for name, t, e, c in (("halomd + trained model", th, eh, "r"),
                          ("GROMACS (double), classical", tg, eg, "k")):
        ax.plot(t - t[0], (e - e[0]) / n_nve * 1000, c, lw=0.8,
                label=f"{name}: drift {drift(t, e, n_nve)[0]:.2e} eV/atom/ns")
    ax.set_xlabel("t (ps)")
    ax.set_ylabel("E_tot - E_tot(0) (meV/atom)")
    ax.set_title(f"NVE water, {n_nve} atoms, dt {DT * 1000:g} fs: total energy")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "water_energy.png"), dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("gmx-nvt", "gmx-nve"):
        p = sub.add_parser(name)
        p.add_argument("--conf", required=True, help="water .gro (nm)")
        p.add_argument("--ps", type=float, required=True)
        p.add_argument("--work", required=True)
        p.add_argument("--gmx", default="gmx_d" if name == "gmx-nve" else "gmx")
    p = sub.add_parser("halomd-mdp")
    p.add_argument("--ps", type=float, required=True)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--nvt", action="store_true")
    g.add_argument("--nve", action="store_true")
    p = sub.add_parser("analyse")
    p.add_argument("--gmx-nvt", required=True, help="work folder of gmx-nvt")
    p.add_argument("--halomd-nvt", required=True, help="extended XYZ of the halomd NVT run")
    p.add_argument("--gmx-nve", required=True, help="work folder of gmx-nve")
    p.add_argument("--halomd-nve", required=True, help="energy CSV of the halomd NVE run")
    p.add_argument("--nve-natoms", type=int, required=True)
    p.add_argument("--skip-ps", type=float, default=0.5, help="equilibration left out")
    p.add_argument("--rmax", type=float, default=8.0)
    p.add_argument("--dr", type=float, default=0.02)
    p.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.cmd in ("gmx-nvt", "gmx-nve"):
        gmx_md(a.conf, a.ps, a.work, a.cmd == "gmx-nve", a.gmx)
    elif a.cmd == "halomd-mdp":
        sys.stdout.write(halomd_mdp(a.ps, a.nve))
    else:
        analyse(a)


if __name__ == "__main__":
    main()
