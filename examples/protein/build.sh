#!/usr/bin/env bash
# Regenerates the solvated protein system of examples/protein from scratch (about 4 min, one core):
#   protein.gro  topol.top  posre.itp        (see README.md)
#
#   bash examples/protein/build.sh            # writes into examples/protein/
#   OUT=/some/dir bash examples/protein/build.sh   # writes there instead (to compare)
#
# Needs Debian's GROMACS (`gmx`, package gromacs; made with 2022.5), python3 (standard library)
# and apt-get (the source structure comes from the Debian package python-biopython-doc, fetched
# with `apt-get download` unless it is installed). No other network access. Deterministic:
# fixed box, fixed water-removal rule, genion -seed, single-threaded minimisation.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here}
gmx=${GMX:-gmx}
run="nice -n 19"
export OMP_NUM_THREADS=1
export GMX_MAXBACKUP=-1

target_atoms=15668   # the solvated protein of arXiv 2604.07276
box_edge=5.451       # nm, cubic; chosen so that gmx solvate leaves a few waters more than needed
n_na=3               # neutralise (protein charge -1) and hit the target count exactly:
n_cl=2               # 3 Na+ and 2 Cl- (one Na+ for the protein, then 2 NaCl)
src_pkg=python-biopython-doc
src_path=/usr/share/doc/python-biopython-doc/Tests/PDB/1A8O.pdb.gz
src_sha256=2928bb4a4680a104be0d7555cd7e7f36bd6731531f476cb7eb7209ccfa7ebadb   # of the uncompressed file

work=$(mktemp -d)
chmod 755 "$work"   # apt-get download runs as _apt where it can
trap 'rm -rf "$work"' EXIT
cd "$work"

# 1. Source structure: PDB entry 1A8O (HIV-1 capsid C-terminal domain, residues 151-220,
#    X-ray), a test file of Biopython shipped by Debian in python-biopython-doc.
if [ -f "$src_path" ]; then
    cp "$src_path" 1A8O.pdb.gz
else
    apt-get download "$src_pkg" 2>&1 | { grep -v -e "^Get:" -e "^Fetched" -e "unsandboxed" >&2 || true; }
    dpkg-deb -x ./"$src_pkg"_*.deb pkg
    cp pkg"$src_path" 1A8O.pdb.gz
fi
zcat 1A8O.pdb.gz > 1A8O.pdb
echo "$src_sha256  1A8O.pdb" | sha256sum -c --quiet - \
    || { echo "build.sh: 1A8O.pdb differs from the file this example was made from" >&2; exit 1; }

# 2. Protein only: drop crystal waters; selenomethionine (MSE, an artefact of the
#    crystallography) becomes methionine (SE -> SD). No alternate locations, no gaps; one
#    disulfide (Cys198-Cys218), linked by pdb2gmx from specbond.dat.
awk '
/^(ATOM|HETATM)/ && substr($0, 18, 3) != "HOH" {
    l = $0
    if (substr(l, 18, 3) == "MSE") {
        l = "ATOM  " substr(l, 7, 11) "MET" substr(l, 21)
        if (substr(l, 13, 4) == "SE  ") l = substr(l, 1, 12) " SD " substr(l, 17, 60) " S"
    }
    print l
}
END { print "TER"; print "END" }' 1A8O.pdb > protein.pdb

# 3. Topology: AMBER99SB-ILDN, TIP3P; hydrogens rebuilt by pdb2gmx; charged termini (NH3+, COO-).
$gmx pdb2gmx -f protein.pdb -o protein.gro -p topol.top -i posre.itp \
    -ff amber99sb-ildn -water tip3p -ignh > pdb2gmx.log 2>&1
n_prot=$(sed -n 2p protein.gro | tr -d ' ')

# 4. Cubic box, protein centred, filled with water.
$gmx editconf -f protein.gro -o box.gro -c -box $box_edge $box_edge $box_edge > editconf.log 2>&1
$gmx solvate -cp box.gro -cs spc216.gro -o solv.gro -p topol.top > solvate.log 2>&1
n_solv=$(awk 'NR > 2 && substr($0, 11, 5) == "   OW"' solv.gro | wc -l)

# 5. Remove the few surplus waters (the most crowded ones, see trim_waters.py) so that after
#    genion (each ion replaces one water) the system has exactly target_atoms atoms.
n_ions=$((n_na + n_cl))
rest=$((target_atoms - n_prot - n_ions))
if [ $((rest % 3)) -ne 0 ]; then
    echo "build.sh: $target_atoms atoms cannot be reached with $n_prot protein atoms and $n_ions ions" >&2
    exit 1
fi
n_keep=$((rest / 3 + n_ions))
n_remove=$((n_solv - n_keep))
if [ $n_remove -lt 0 ] || [ $n_remove -gt 30 ]; then
    echo "build.sh: solvate gave $n_solv waters, $n_keep wanted: change box_edge" >&2
    exit 1
fi
n_sol=$(python3 "$here/trim_waters.py" solv.gro trimmed.gro $n_remove 2> trim.log)
sed -i "s/^SOL .*/SOL         $n_sol/" topol.top

# 6. Ions: 3 Na+ and 2 Cl- replace waters at seeded random positions.
$gmx grompp -f "$here/ions.mdp" -c trimmed.gro -p topol.top -o ions.tpr -maxwarn 1 > grompp_ions.log 2>&1
echo SOL | $gmx genion -s ions.tpr -o ions.gro -p topol.top -pname NA -nname CL \
    -np $n_na -nn $n_cl -seed 2026 > genion.log 2>&1

# 7. Energy minimisation (steepest descent), then 20 ps NPT at 300 K and 1 bar with the protein
#    heavy atoms restrained, so that the water reaches its density around the protein.
#    Single thread and -reprod: the same binary gives the same result.
mdrun="$run $gmx mdrun -nt 1 -ntmpi 1 -ntomp 1 -reprod"
$gmx grompp -f "$here/em.mdp" -c ions.gro -p topol.top -o em.tpr > grompp_em.log 2>&1
$mdrun -deffnm em > mdrun_em.log 2>&1
grep -E "^(Steepest Descents converged|Potential Energy|Maximum force)" em.log
$gmx grompp -f "$here/npt.mdp" -c em.gro -r em.gro -p topol.top -o npt.tpr > grompp_npt.log 2>&1
$mdrun -deffnm npt > mdrun_npt.log 2>&1
printf 'Density\nTemperature\n\n' | $gmx energy -f npt.edr -b 10 -o npt_energy.xvg 2>/dev/null \
    | grep -E "^(Density|Temperature)"

n_final=$(sed -n 2p npt.gro | tr -d ' ')
if [ "$n_final" -ne "$target_atoms" ]; then
    echo "build.sh: $n_final atoms, $target_atoms expected" >&2
    exit 1
fi

mkdir -p "$out"
# Coordinates only (the velocities of the NPT run are dropped); molecules are whole.
awk -v n="$n_final" '
NR == 1 { print "HIV-1 capsid CTD (PDB 1A8O 151-220) AMBER99SB-ILDN TIP3P 3NA 2CL, EM + 20 ps NPT (halomd examples/protein)"; next }
NR == 2 { print; next }
NR <= n + 2 { print substr($0, 1, 44); next }
{ print }' npt.gro > "$out/protein.gro"
# pdb2gmx's header names the user, host, date and working folder: drop those lines.
sed -e '/^;\tBy user:/d' -e '/^;\tOn host:/d' -e '/^;\tAt date:/d' -e '/^;\tWorking dir:/d' \
    topol.top > "$out/topol.top"
cp posre.itp "$out/"
echo "build.sh: wrote $out/protein.gro ($n_final atoms: $n_prot protein, $n_na Na+, $n_cl Cl-," \
     "$(( (n_final - n_prot - n_ions) / 3 )) waters; box $(tail -1 npt.gro | xargs) nm), topol.top, posre.itp"
