"""An ASE calculator over halomd's engine (imported as halomd.ase).

    from halomd.ase import Calculator
    atoms.calc = Calculator("model.dp", backend="cuda")
    atoms.get_potential_energy(), atoms.get_forces(), atoms.get_stress()

Results are those of `halomd eval` bit for bit, and agree with DeePMD-kit's own ASE calculator
(deepmd.calculator.DP) within 1e-10 for float64 models. As DP does, the results hold energy,
free_energy, forces, virial (3x3, eV) and, for periodic systems, stress (-(W + W^T) / 2V as
the Voigt 6-vector xx yy zz yz xz xy, eV/Å^3); halomd adds energies (per atom, eV). Atoms are
typed by their chemical symbols through the model's type map. A system with any periodic
direction is given its cell, periodic only along the directions atoms.pbc says (DP treats
such a system as periodic along all three).
"""

import numpy as np
from ase.calculators.calculator import Calculator as _AseCalculator
from ase.calculators.calculator import PropertyNotImplementedError, all_changes

from halomd.model import HalomdError, Model

__all__ = ["Calculator", "HalomdError"]


class Calculator(_AseCalculator):
    """ASE calculator of a DeePMD-kit model run by halomd.

    model: path of a .dp file, or an open halomd.Model. backend, precision, settings: as
    halomd.Model. The model is opened once and kept for every calculation.
    """

    implemented_properties = ["energy", "free_energy", "energies", "forces", "virial", "stress"]
    name = "halomd"

    def __init__(self, model, backend="auto", precision="double", settings=None, **kwargs):
        super().__init__(**kwargs)
        self.model = model if isinstance(model, Model) else Model(model, backend, precision,
                                                                  settings)

    def calculate(self, atoms=None, properties=("energy",), system_changes=all_changes):
        super().calculate(atoms, properties, system_changes)
        a = self.atoms
        periodic = bool(np.any(a.pbc))
        out = self.model.eval(a.get_positions(), a.get_chemical_symbols(),
                              cell=np.asarray(a.get_cell()) if periodic else None,
                              pbc=a.pbc if periodic else None)
        v = out["virial"]
        self.results = {
            "energy": out["energy"],
            "free_energy": out["energy"],
            "energies": out["atom_energies"],
            "forces": out["forces"],
            "virial": v,
        }
        if periodic:
            stress = -0.5 * (v + v.T) / a.get_volume()
            self.results["stress"] = stress.flat[[0, 4, 8, 5, 2, 1]]
        elif "stress" in properties:
            raise PropertyNotImplementedError("stress: the system is not periodic")
