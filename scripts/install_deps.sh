#!/bin/sh
# Installs the Debian packages given as arguments that are not installed yet.
# As root: runs apt-get. Otherwise: prints the exact apt-get line to run and fails.
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
