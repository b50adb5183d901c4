"""halomd.ase.Calculator: an ASE calculator over halomd's engine (halomd/_ase_calculator.py).

    from halomd.ase import Calculator
    atoms.calc = Calculator("model.dp", backend="cuda")
"""

if __name__ == "ase":
    # A script of this folder (python python/halomd/make_golden.py) has the folder on sys.path,
    # so its `import ase` found this file instead of ASE. Hand it the real ASE: drop the folder
    # from the path and put ASE where the import statement takes its result from.
    import os
    import sys

    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    del sys.modules["ase"]
    import ase as _ase  # noqa: E402  (the real ASE now)

    sys.modules["ase"] = _ase
else:
    from halomd._ase_calculator import Calculator, HalomdError  # noqa: F401

    __all__ = ["Calculator", "HalomdError"]
