"""Builds libhalomd for the Python package (`pip install ./python`).

The library is the repository's own CMake target halomd_lib (libhalomd.so), configured with
the same options as `make` (CUDA, MPI, NetCDF AUTO), so the dependencies are those of
`make deps` (docs/install.md). Environment:
    HALOMD_LIBRARY=/path/libhalomd.so   copy this library instead of building one
    HALOMD_BUILD_DIR=/path/build        build there (and keep it) instead of a temporary folder
    HALOMD_CMAKE_ARGS="-DHALOMD_CUDA=OFF ..."   extra configure flags
    HALOMD_JOBS=N                        parallel build jobs (default: the CPU count)
"""

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

REPO = Path(__file__).resolve().parent.parent


def build_library():
    given = os.environ.get("HALOMD_LIBRARY")
    if given:
        return Path(given)
    if not (REPO / "CMakeLists.txt").is_file():
        raise RuntimeError(f"{REPO} is not the halomd source tree: build from a checkout "
                           "(pip install ./python), or give HALOMD_LIBRARY")
    build = os.environ.get("HALOMD_BUILD_DIR") or tempfile.mkdtemp(prefix="halomd-build-")
    jobs = os.environ.get("HALOMD_JOBS", str(os.cpu_count() or 1))
    subprocess.check_call(["cmake", "-S", str(REPO), "-B", build, "-DCMAKE_BUILD_TYPE=Release"]
                          + shlex.split(os.environ.get("HALOMD_CMAKE_ARGS", "")))
    subprocess.check_call(["cmake", "--build", build, "--target", "halomd_lib", "-j", jobs])
    return Path(build) / "libhalomd.so"


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        lib = build_library()
        if not lib.is_file():
            raise RuntimeError(f"{lib} was not built")
        dest = Path(self.build_lib) / "halomd" / "libhalomd.so"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(lib, dest)


class BinaryDistribution(Distribution):
    """The wheel holds a compiled library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
