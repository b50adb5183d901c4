#!/bin/sh
# Installs the Debian packages given as arguments that are not installed yet.
# As root: runs apt-get. Otherwise: prints the exact apt-get line to run and fails.
# With --pypi DIR PKG==VERSION...: installs those PyPI packages into DIR (pip --target, with
# Debian's python3 -m pip), unless DIR/.installed already lists exactly them.
if [ "$1" = "--pypi" ]; then
    dir=$2
    shift 2
    [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$*" ] && exit 0
    echo "halomd: installing from PyPI into $dir: $*"
    rm -rf "$dir"
    /usr/bin/python3 -m pip install -q --no-deps --target "$dir" "$@" || exit 1
    echo "$*" > "$dir/.installed"
    exit 0
fi
missing=""
for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "halomd: missing Debian packages; run as root:" >&2
    echo "  apt-get update && $line" >&2
    exit 1
fi
echo "halomd: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q && $line
