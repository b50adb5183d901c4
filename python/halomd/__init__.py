"""halomd from Python.

    halomd.Model        a DeePMD-kit model evaluated by halomd's engine (libhalomd) on NumPy
                        arrays (halomd/model.py; needs numpy)
    halomd.ase          an ASE calculator over it (halomd/ase.py; needs ase)
    halomd.HalomdError  the engine's errors

Tools (standard library unless they say otherwise):
    make_golden         golden reference data for the tests, computed by DeePMD-kit itself
                        (``python python/halomd/make_golden.py --update``)
    make_dptest_golden  the goldens of `halomd eval -s` (dp test), of the model deviation
                        (dp model-devi) and of the ASE calculator (DeePMD-kit's DP)

Importing the package loads nothing: Model and HalomdError are looked up on first use.
"""

__all__ = ["Model", "HalomdError", "version"]


def __getattr__(name):
    if name in ("Model", "version"):
        from halomd import model

        return getattr(model, name)
    if name == "HalomdError":
        from halomd._lib import HalomdError

        return HalomdError
    raise AttributeError(f"module 'halomd' has no attribute {name!r}")
