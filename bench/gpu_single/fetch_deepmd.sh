#!/bin/bash
# Recreate .gpudeps/py: a PYTHONPATH folder that makes DeePMD-kit 3.2.0 (PyTorch backend)
# importable on the GPU node (Python 3.12 venv that already has torch 2.11, numpy, scipy,
# h5py; no deepmd-kit, no internet). Run it here, on a machine that reaches PyPI, from the
# repository root:   bash bench/gpu_single/fetch_deepmd.sh
# Needs: a pip (PIP=..., default /root/dpenv/bin/pip, else pip3) and python3 with zipfile.
#
# What it does (see .gpudeps/py/README for the resulting listing):
#  * pip download --no-deps --only-binary=:all: the wheels for CPython 3.12, manylinux x86_64;
#  * unpacks them into .gpudeps/py (wheels are zip files; no install step on the node);
#  * trims the deepmd-kit wheel to what the PyTorch backend needs: drops deepmd/lib/*.so
#    (the compiled TF/PT/CUDA ops: 27 MB, and libdeepmd_op_pt.so needs MPICH's libmpi.so.12),
#    deepmd_kit.libs, the tf/tf2/jax/pd backends and the wheel's top-level docs/, examples/,
#    dpa_adapt/;
#  * size: the device-run carry (tracked files ~40 MiB + .gpudeps) is capped at 64 MiB, so
#    the optional C accelerators of PyYAML and msgpack are dropped (both fall back to their
#    pure-Python code) and the remaining .so files are stripped (--strip-unneeded);
#  * sets CIBUILDWHEEL = 0 in deepmd/lib/run_config.ini: with 1, deepmd.pt.cxx_op dlopens the
#    MPICH wheel's libmpi at import (metadata.files("mpich")), which is only needed by the
#    compiled ops we dropped. Without deepmd/lib/libdeepmd_op_pt.so, cxx_op.load_library()
#    returns False (ENABLE_CUSTOMIZED_OP = False) and the pure-PyTorch code path is used;
#    compressed (tabulated) models then cannot run or be made in the PT backend;
#  * replaces mendeleev (which pulls pandas+sqlalchemy+pydantic+pint+...: >130 MB) by a tiny
#    stub package: deepmd only calls mendeleev.element(sym).atomic_number (sort_element_type,
#    make_econf_embedding); the stub answers atomic_number for H..Og and raises ValueError
#    otherwise, as the real one does for an unknown symbol.
set -euo pipefail
cd "$(dirname "$0")/../.."
DEST=${DEST:-.gpudeps/py}   # override only for local tests (e.g. a cp311 copy)
PIP=${PIP:-/root/dpenv/bin/pip}
[ -x "$PIP" ] || PIP=pip3
PYVER=${PYVER:-3.12}
WHEELS=(
  deepmd-kit==3.2.0
  dargs==0.5.1
  typeguard==4.6.1
  wcmatch==12.0.1
  bracex==3.2.3
  einops==0.8.2
  e3nn==0.6.0
  opt_einsum_fx==0.1.4
  opt_einsum==3.4.0
  ml_dtypes==0.6.0
  array-api-compat==1.16.0
  lmdb==3.0.0
  msgpack==1.2.4
  PyYAML==6.0.4
  typing_extensions==4.16.0
  packaging==26.4
  vesin==0.6.2
  vesin-torch==0.6.2
)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$PIP" download --dest "$TMP/wh" --no-deps --only-binary=:all: --python-version "$PYVER" \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 "${WHEELS[@]}"
rm -rf "$DEST"
mkdir -p "$DEST"
for w in "$TMP"/wh/*.whl; do
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$DEST"
done
# --- trim deepmd-kit -------------------------------------------------------------------
rm -f "$DEST"/deepmd/lib/*.so
rm -rf "$DEST"/deepmd/lib/dp_ipi "$DEST"/deepmd_kit.libs
# sub-packages the PT inference/convert path never imports (TF, TF2, JAX, Paddle backends).
rm -rf "$DEST"/deepmd/tf "$DEST"/deepmd/tf2 "$DEST"/deepmd/jax "$DEST"/deepmd/pd
rm -rf "$DEST"/docs "$DEST"/examples "$DEST"/dpa_adapt
# --- size: optional C accelerators out, strip the rest ------------------------------------
rm -f "$DEST"/yaml/_yaml.*.so "$DEST"/msgpack/_cmsgpack.*.so
find "$DEST" -name '*.so' -exec strip --strip-unneeded {} \; 2>/dev/null || true
# vesin-torch ships one libvesin_torch.so per torch minor version: keep the node's (2.11).
TORCH_MINOR=${TORCH_MINOR:-2.11}
find "$DEST"/vesin_torch -maxdepth 1 -name 'torch-*' ! -name "torch-$TORCH_MINOR" -exec rm -rf {} +
sed -i 's/^CIBUILDWHEEL *= *1/CIBUILDWHEEL = 0/' "$DEST"/deepmd/lib/run_config.ini
# --- mendeleev stub --------------------------------------------------------------------
mkdir -p "$DEST"/mendeleev
cat > "$DEST"/mendeleev/__init__.py <<'EOF'
"""Minimal stand-in for mendeleev, for DeePMD-kit inference on the GPU node only.

deepmd.utils.econf_embd imports `element` and uses `element(symbol).atomic_number`
(sort_element_type) and electron-configuration attributes (make_econf_embedding, used only
to regenerate the table shipped in econf_embd.py). Only atomic_number is provided here.
Made by bench/gpu_single/fetch_deepmd.sh; the real package needs pandas/sqlalchemy/pydantic.
"""

__version__ = "0+halomd.stub"

_SYMBOLS = (
    "H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge "
    "As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm "
    "Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U "
    "Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og"
).split()
_Z = {s: i + 1 for i, s in enumerate(_SYMBOLS)}


class _Element:
    def __init__(self, symbol, z):
        self.symbol = symbol
        self.atomic_number = z

    def __getattr__(self, name):
        raise NotImplementedError(
            f"mendeleev stub (halomd .gpudeps): attribute {name!r} is not available"
        )


def element(ids):
    if isinstance(ids, int):
        if 1 <= ids <= len(_SYMBOLS):
            return _Element(_SYMBOLS[ids - 1], ids)
        raise ValueError(f"no element with atomic number {ids}")
    if ids in _Z:
        return _Element(ids, _Z[ids])
    raise ValueError(f"element {ids!r} not found")
EOF
find "$DEST" -name '__pycache__' -prune -exec rm -rf {} +
# --- README ------------------------------------------------------------------------------
{
  echo "# .gpudeps/py — DeePMD-kit 3.2.0 (PyTorch backend) for the GPU node, via PYTHONPATH"
  echo
  echo "Made by: bash bench/gpu_single/fetch_deepmd.sh   ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo "Use:     PYTHONPATH=\$PWD/.gpudeps/py python3 -m deepmd ...   (needs torch, numpy, scipy, h5py"
  echo "         from the node's own venv; nothing is pip-installed)"
  echo
  echo "Wheels (pip download --no-deps --only-binary=:all: --python-version $PYVER, manylinux x86_64):"
  for w in "$TMP"/wh/*.whl; do echo "  $(basename "$w")  $(du -k "$w" | cut -f1) KiB"; done
  echo
  echo "Changes after unpacking:"
  echo "  - deepmd/lib/*.so, deepmd/lib/dp_ipi, deepmd_kit.libs removed (compiled ops; 27 MB;"
  echo "    libdeepmd_op_pt.so also needs MPICH libmpi.so.12). deepmd.pt.ENABLE_CUSTOMIZED_OP"
  echo "    is then False: plain (uncompressed) models run in pure PyTorch; compressed"
  echo "    (tabulated) models and 'dp --pt compress' need the ops and do NOT work."
  echo "  - deepmd/tf, deepmd/tf2, deepmd/jax, deepmd/pd removed (other backends); the deepmd"
  echo "    wheel's top-level docs/, examples/, dpa_adapt/ removed."
  echo "  - yaml/_yaml*.so and msgpack/_cmsgpack*.so removed (pure-Python fallbacks are used);"
  echo "    the other .so files stripped (--strip-unneeded). Reason: the device carry limit."
  echo "  - deepmd/lib/run_config.ini: CIBUILDWHEEL = 0 (else cxx_op loads mpich's libmpi)."
  echo "  - vesin_torch: only torch-$TORCH_MINOR/ kept (the node's torch). With vesin.torch"
  echo "    importable, DeepPot(nlist_backend='auto') builds its neighbour list with vesin's"
  echo "    O(N) cell list (as a 'pip install deepmd-kit[torch]' user gets), not the dense one."
  echo "  - mendeleev: a stub (mendeleev/__init__.py, atomic_number only) replaces the real"
  echo "    package and its pandas/sqlalchemy/pydantic/pint dependencies."
  echo
  echo "Top-level entries and sizes:"
  (cd "$DEST" && du -sk -- * | sort -k2 | awk '{printf "  %-45s %6d KiB\n", $2, $1}')
  echo
  echo "Total: $(du -sk "$DEST" | cut -f1) KiB"
} > "$DEST"/README
cat "$DEST"/README
