"""halomd Python tools.

Submodules:
    make_golden  golden reference data for the tests, computed by DeePMD-kit itself
                 (``python python/halomd/make_golden.py --update``).
"""
