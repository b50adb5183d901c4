#!/bin/bash
# Latency of the classical force field (issue 28): `halomd run -p` on one GPU against GROMACS on
# the node's CPUs, for the flexible TIP3P water boxes and the solvated protein, all with the
# halomd-ref model (AMBER99SB-ILDN + flexible TIP3P, reaction field with epsilon-rf = infinity,
# force-switched Lennard-Jones 5-6 A, no constraints, no PME; python/halomd/gmx_tools.py).
#
# From the repository root, on the GPU node (no network needed):
#   bash bench/classical/run.sh                 # every case
#   CASES="water_1536 protein" bash bench/classical/run.sh
# Env: HALOMD (build-gpu/halomd, else build/halomd), GMX (gmx; absent: recorded and skipped;
#      when .gpudeps/gmx.tar.xz is there (bench/classical/fetch_gromacs.sh) and GMX is unset,
#      it is unpacked into .gpudeps/gmx/ and its gmx used through a wrapper that sets GMXLIB
#      and LD_LIBRARY_PATH for gmx alone),
#      NSTEPS (halomd steps, 5000), GMX_NSTEPS (2000), GMX_NT (OpenMP threads of gmx mdrun,
#      all the node's cores), BACKEND (cuda), OUT (a scratch folder, kept), PY (python3),
#      CASES (water_1536 water_12288 water_24576 water_41472 water_98304 protein),
#      MDP_EXTRA (lines added to halomd's mdp, e.g. "nstlist = 10"), RESULT (the JSON's path),
#      HALOMD_COMMIT (the commit recorded, else this tree's git HEAD).
# Writes bench/results/classical_<date>_<commit>.json (or RESULT): date, commit, hardware (GPU, CPU, cores),
# and per case the command lines, whole-step time (us/step), ns/day and atom-steps/s of each
# program, and step 0's potential energy of both (a check that they ran the same system).
#
# The boxes beyond the committed ones (1,536 and 12,288 atoms) are copies of the committed
# 512-molecule cell (water_1536.gro) side by side, made by examples/water/replicate_cell.py (the
# standard library only, as make_water.py -n does for whole numbers of cells): 24,576 atoms
# = 4x2x2 cells (not a cube), 41,472 = 3x3x3, 98,304 = 4x4x4. Target (issue 28): <= 100 us per
# step up to 24,000 atoms on one GPU.
#
# GROMACS timing is `gmx grompp` + `gmx mdrun -nsteps N -ntmpi 1` (not -rerun, which does not
# time a step), with its log's Performance line; Debian's GROMACS has no CUDA, so it runs on the
# CPUs. dt = 0.5 fs for both (flexible water).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
PY=${PY:-python3}
NSTEPS=${NSTEPS:-5000}
GMX_NSTEPS=${GMX_NSTEPS:-2000}
if [ -z "${GMX:-}" ] && [ -f .gpudeps/gmx.tar.xz ]; then
  # Debian's GROMACS brought along (bench/classical/fetch_gromacs.sh)
  mkdir -p .gpudeps/gmx
  [ -x .gpudeps/gmx/bin/gmx ] || tar -C .gpudeps/gmx -xJf .gpudeps/gmx.tar.xz
  G=$ROOT/.gpudeps/gmx
  # (OMP_NUM_THREADS left out: mdrun refuses one that differs from -ntomp)
  printf '#!/bin/bash\nexec env -u OMP_NUM_THREADS GMXLIB=%s/top LD_LIBRARY_PATH=%s/lib:${LD_LIBRARY_PATH:-} %s/bin/gmx "$@"\n' \
    "$G" "$G" "$G" > "$G/gmx.sh"
  chmod +x "$G/gmx.sh"
  GMX=$G/gmx.sh
fi
GMX=${GMX:-gmx}
GMX_NT=${GMX_NT:-$(nproc --all)} # (nproc alone follows OMP_NUM_THREADS)
BACKEND=${BACKEND:-cuda}
OUT=${OUT:-$ROOT/out/bench_classical}
CASES=${CASES:-"water_1536 water_12288 water_24576 water_41472 water_98304 protein"}
if [ -z "${HALOMD:-}" ]; then
  for h in build-gpu/halomd build/halomd; do [ -x "$h" ] && HALOMD=$ROOT/$h && break; done
fi
[ -x "${HALOMD:-}" ] || { echo "no halomd binary: build it or set HALOMD"; exit 1; }
mkdir -p "$OUT" bench/results
DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [ -n "${HALOMD_COMMIT:-}" ]; then
  COMMIT=$HALOMD_COMMIT # the build's, where this tree's git is not the build's (a copied tree)
else
  COMMIT=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
  git diff --quiet 2>/dev/null || COMMIT=$COMMIT-dirty
fi

# the halomd-ref model's settings, halomd's units (Å) and GROMACS's (nm)
cat > "$OUT/halomd.mdp" <<MDP
; halomd-ref model (bench/classical/run.sh)
define           = -DFLEXIBLE
coulombtype      = reaction-field
coulomb-modifier = potential-shift
epsilon-rf       = 0
rcoulomb         = 6
vdwtype          = cut-off
vdw-modifier     = force-switch
rvdw-switch      = 5
rvdw             = 6
dt               = 0.0005
tcoupl           = no
gen-vel          = no
nstenergy        = 1000
nstlog           = 1000
nstxout          = 0
${MDP_EXTRA:-}
MDP
cat > "$OUT/gmx.mdp" <<MDP
; halomd-ref model (bench/classical/run.sh)
define                  = -DFLEXIBLE
constraints             = none
cutoff-scheme           = Verlet
pbc                     = xyz
coulombtype             = Reaction-Field
epsilon-rf              = 0
epsilon-r               = 1
rcoulomb                = 0.6
coulomb-modifier        = Potential-shift
vdwtype                 = Cut-off
vdw-modifier            = Force-switch
rvdw-switch             = 0.5
rvdw                    = 0.6
DispCorr                = no
nstlist                 = 10
integrator              = md
dt                      = 0.0005
tcoupl                  = no
pcoupl                  = no
gen-vel                 = no
nstcalcenergy           = 100
nstenergy               = 1000
nstlog                  = 1000
nstxout                 = 0
nstvout                 = 0
nstfout                 = 0
MDP

# conf and top of a case into $conf $top (made under $OUT when not committed)
case_files() {
  case $1 in
    protein) conf=examples/protein/protein.gro top=examples/protein/topol.top ;;
    water_1536|water_12288) conf=examples/water/$1.gro top=examples/water/$1.top ;;
    water_*)
      local natoms=${1#water_}
      conf=$OUT/$1.gro top=$OUT/$1.top
      [ -f "$conf" ] || $PY examples/water/replicate_cell.py "$natoms" "$conf" "$top" || return 1
      ;;
    *) echo "unknown case $1"; return 1 ;;
  esac
  return 0
}

GMX_OK=0 GMX_WHY=""
if command -v "$GMX" > /dev/null 2>&1; then
  GMX_OK=1
  GMX_VERSION=$("$GMX" --version 2>/dev/null | grep -m1 "GROMACS version" | sed 's/.*version: *//')
else
  GMX_WHY="$GMX not found on this node"
  GMX_VERSION=""
fi

rows=()
for c in $CASES; do
  echo "== $c"
  case_files "$c" || continue
  [[ $conf = /* ]] || conf=$ROOT/$conf
  [[ $top = /* ]] || top=$ROOT/$top
  hcmd=("$HALOMD" run -f "$OUT/halomd.mdp" -c "$conf" -p "$top" -backend "$BACKEND"
        -nsteps "$NSTEPS" -deffnm "$OUT/halomd_$c")
  "${hcmd[@]}" > "$OUT/halomd_$c.out" 2>&1
  hrc=$?
  [ $hrc -eq 0 ] || echo "   halomd exit $hrc: $(tail -1 "$OUT/halomd_$c.out")"
  grc=-1
  gcmd=""
  if [ $GMX_OK -eq 1 ]; then
    gdir=$OUT/gmx_$c
    mkdir -p "$gdir"
    ( cd "$gdir" &&
      "$GMX" grompp -f "$OUT/gmx.mdp" -c "$conf" -p "$top" -o bench.tpr -maxwarn 1 \
        > grompp.log 2>&1 &&
      "$GMX" mdrun -s bench.tpr -deffnm bench -nsteps "$GMX_NSTEPS" -ntmpi 1 -ntomp "$GMX_NT" \
        -pin on -notunepme > mdrun.out 2>&1 )
    grc=$?
    gcmd="$GMX grompp -f gmx.mdp -c $conf -p $top -o bench.tpr -maxwarn 1 && $GMX mdrun -s bench.tpr -deffnm bench -nsteps $GMX_NSTEPS -ntmpi 1 -ntomp $GMX_NT -pin on -notunepme"
    [ $grc -eq 0 ] || echo "   gmx exit $grc (see $gdir/grompp.log, mdrun.out)"
  fi
  rows+=("$c|$conf|$hrc|${hcmd[*]}|$grc|$gcmd")
done

RESULT=${RESULT:-bench/results/classical_$(date -u +%Y-%m-%d)_${COMMIT}.json}
$PY - "$RESULT" "$OUT" "$DATE" "$COMMIT" "$NSTEPS" "$GMX_NSTEPS" "$GMX_NT" "$GMX_OK" \
  "$GMX_WHY" "$GMX_VERSION" "${rows[@]}" <<'EOF'
import json, os, re, subprocess, sys

result, out, date, commit, nsteps, gmx_nsteps, gmx_nt, gmx_ok, gmx_why, gmx_version = sys.argv[1:11]
rows = sys.argv[11:]
KJ = 1e3 / (6.02214076e23 * 1.602176634e-19)  # kJ/mol in eV


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return ""


def halomd_figures(c):
    path = os.path.join(out, f"halomd_{c}.perf.json")
    if not os.path.exists(path):
        return None
    d = json.load(open(path))
    p = d["performance"]
    csv = os.path.join(out, f"halomd_{c}.energy.csv")
    pe0 = None
    if os.path.exists(csv):
        lines = open(csv).read().split("\n")
        head = lines[0].split(",")
        pe0 = float(lines[1].split(",")[head.index("pe_eV")])
    return {"us_per_step": 1e6 / p["steps_per_s"] if p["steps_per_s"] else None,
            "ns_per_day": p["ns_per_day"], "atom_steps_per_s": p["atom_steps_per_s"],
            "wall_s": p["wall_s"], "natoms": d["system"]["natoms"],
            "neighbor_builds": d["system"]["neighbor_builds"], "backend": d.get("backend"),
            "phases": d.get("phases"), "list_steps": d.get("list_steps"),
            "step0_potential_eV": pe0}


def gmx_figures(c, natoms):
    log = os.path.join(out, f"gmx_{c}", "bench.log")
    if not os.path.exists(log):
        return None
    text = open(log).read()
    perf = re.search(r"Performance:\s+([\d.]+)\s+([\d.]+)", text)
    wall = re.search(r"Time:\s+([\d.]+)\s+([\d.]+)", text)
    pot = re.search(r"Potential\s.*?\n\s*(.*)\n", text)
    fig = {"ns_per_day": float(perf.group(1)) if perf else None,
           "wall_s": float(wall.group(2)) if wall else None}
    if fig["wall_s"]:
        steps = int(gmx_nsteps)
        fig["us_per_step"] = fig["wall_s"] / steps * 1e6
        fig["atom_steps_per_s"] = natoms * steps / fig["wall_s"] if natoms else None
    try:
        fig["step0_potential_eV"] = step0_potential(text)
    except (ValueError, AttributeError, IndexError):
        fig["step0_potential_eV"] = None
    return fig


def step0_potential(text):
    """Step 0's potential from the log's first energies block (kJ/mol -> eV), or None."""
    m = re.search(r"Step\s+Time\s*\n\s*0\s+[\d.]+\s*\n\s*\n\s*Energies \(kJ/mol\)\n(.*?)\n\n", text, re.S)
    if m:
        block = m.group(1).split("\n")
        for k in range(0, len(block) - 1, 2):
            names = re.findall(r".{15}", block[k].rstrip().rjust(15 * ((len(block[k].rstrip()) + 14) // 15)))
            vals = block[k + 1].split()
            for n, v in zip(names, vals):
                if n.strip() == "Potential":
                    return float(v) * KJ
    return None


cases = []
for row in rows:
    c, conf, hrc, hcmd, grc, gcmd = row.split("|", 5)
    h = halomd_figures(c) if hrc == "0" else None
    entry = {"case": c, "structure": conf,
             "halomd": {"command": hcmd, "exit": int(hrc), "figures": h}}
    if gmx_ok == "1":
        g = gmx_figures(c, h["natoms"] if h else None) if grc == "0" else None
        entry["gromacs"] = {"command": gcmd, "exit": int(grc), "figures": g}
    else:
        entry["gromacs"] = {"skipped": gmx_why}
    cases.append(entry)

doc = {
    "schema": "halomd-bench-classical-1",
    "date": date,
    "commit": commit,
    "hardware": {
        "gpu": sh("nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "host": os.uname().nodename,
    },
    "settings": {"model": "halomd-ref (AMBER99SB-ILDN, flexible TIP3P, RF eps_rf=inf, "
                          "force-switch LJ 5-6 A)",
                 "dt_ps": 0.0005, "halomd_nsteps": int(nsteps), "gromacs_nsteps": int(gmx_nsteps),
                 "gromacs_threads": int(gmx_nt), "gromacs_version": gmx_version or None},
    "target": "<= 100 us per step for <= 24,000 atoms on one GPU",
    "cases": cases,
}
with open(result, "w") as f:
    json.dump(doc, f, indent=1)
print(f"\n{'case':14s} {'atoms':>7s} {'halomd us/step':>15s} {'ns/day':>9s} {'gmx us/step':>12s} {'ns/day':>9s}")
for e in cases:
    h = e["halomd"]["figures"] or {}
    g = (e["gromacs"].get("figures") or {}) if "figures" in e["gromacs"] else {}
    fmt = lambda v, f: (f % v) if isinstance(v, (int, float)) else "-"
    print(f"{e['case']:14s} {fmt(h.get('natoms'), '%7d'):>7s} {fmt(h.get('us_per_step'), '%.1f'):>15s} "
          f"{fmt(h.get('ns_per_day'), '%.1f'):>9s} {fmt(g.get('us_per_step'), '%.1f'):>12s} "
          f"{fmt(g.get('ns_per_day'), '%.1f'):>9s}")
print(f"wrote {result}")
EOF
