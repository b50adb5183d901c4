"""A DeePMD-kit model evaluated by halomd's engine (libhalomd) on NumPy arrays.

    from halomd import Model
    with Model("model.dp", backend="cuda") as m:
        out = m.eval(positions, ["O", "H", "H"], cell=cell)
        out["energy"], out["forces"], out["virial"], out["atom_energies"]

The model, the workspace and the GPU's copy of the model stay between calls. Units: Å, eV,
eV/Å; the virial is DeePMD-kit's (sum_k F_k (x) r_k, eV).
"""

import ctypes
import threading

import numpy as np

from halomd._lib import HalomdError, check, library

__all__ = ["Model", "HalomdError", "version"]


def version():
    """Version and commit of the loaded libhalomd."""
    return library().hmd_api_version().decode()


class Model:
    """A model opened once and evaluated on any number of configurations.

    backend: "auto" (CUDA when this build and machine have a GPU, else the CPU), "cpu" or
    "cuda". precision: "double" or "mixed" (GPU only). settings: further run parameters of
    docs/parameters.md, e.g. {"model-compress": "yes"}. Errors are HalomdError with the
    engine's message.
    """

    def __init__(self, path, backend="auto", precision="double", settings=None):
        lib = library()
        self._lib = lib
        self._lock = threading.Lock()
        self._handle = ctypes.c_void_p()
        items = [f"{k}={v}" for k, v in (settings or {}).items()]
        arr = (ctypes.c_char_p * max(1, len(items)))(*[s.encode() for s in items])
        check(lib.hmd_api_model_open(ctypes.byref(self._handle), str(path).encode(),
                                     backend.encode(), precision.encode(), arr, len(items)))
        self.path = str(path)
        n = lib.hmd_api_model_ntypes(self._handle)
        self.type_map = [lib.hmd_api_model_type_name(self._handle, t).decode() for t in range(n)]
        self.rcut = lib.hmd_api_model_rcut(self._handle)
        self.backend = lib.hmd_api_model_backend(self._handle).decode()

    def types_of(self, symbols):
        """Model type indices of element symbols (names of the model's type map)."""
        index = {name: t for t, name in enumerate(self.type_map)}
        try:
            return np.array([index[s] for s in symbols], dtype=np.intc)
        except KeyError as e:
            raise HalomdError(-65, f"element {e.args[0]} is not in the type map of {self.path} "
                              f"{self.type_map}") from None

    def eval(self, positions, types, cell=None, pbc=None):
        """Energy, forces, virial and atomic energies of one configuration.

        positions: (natoms, 3) Å. types: model type indices or element symbols. cell: (3, 3)
        cell vectors as rows (Å), or None for a system that is not periodic. pbc: three flags
        (default: periodic along all three when a cell is given).
        Returns {"energy": float (eV), "forces": (natoms, 3) eV/Å, "virial": (3, 3) eV,
        "atom_energies": (natoms,) eV}.
        """
        if self._handle is None:
            raise HalomdError(-64, "the model is closed")
        x = np.ascontiguousarray(positions, dtype=np.float64).reshape(-1, 3)
        natoms = x.shape[0]
        t = np.asarray(types)
        if t.dtype.kind in "USO":
            t = self.types_of(list(t))
        t = np.ascontiguousarray(t, dtype=np.intc).reshape(-1)
        if t.shape[0] != natoms:
            raise HalomdError(-65, f"{natoms} positions but {t.shape[0]} types")
        dp = ctypes.POINTER(ctypes.c_double)
        ip = ctypes.POINTER(ctypes.c_int)
        c = p = None
        if cell is not None:
            c = np.ascontiguousarray(cell, dtype=np.float64).reshape(3, 3)
            if pbc is not None:
                p = np.ascontiguousarray([1 if b else 0 for b in np.broadcast_to(pbc, 3)],
                                         dtype=np.intc)
        energy = ctypes.c_double()
        forces = np.empty((natoms, 3))
        virial = np.empty((3, 3))
        atom_energies = np.empty(natoms)
        with self._lock:
            check(self._lib.hmd_api_model_eval(
                self._handle, natoms, x.ctypes.data_as(dp), t.ctypes.data_as(ip),
                c.ctypes.data_as(dp) if c is not None else None,
                p.ctypes.data_as(ip) if p is not None else None, ctypes.byref(energy),
                forces.ctypes.data_as(dp), virial.ctypes.data_as(dp),
                atom_energies.ctypes.data_as(dp)))
        return {"energy": energy.value, "forces": forces, "virial": virial,
                "atom_energies": atom_energies}

    @property
    def dropped(self):
        """Neighbours within rcut the last evaluation left out of the descriptors."""
        return self._lib.hmd_api_model_dropped(self._handle)

    def close(self):
        """Frees the model (and its GPU memory); later calls raise HalomdError."""
        if self._handle is not None:
            self._lib.hmd_api_model_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self.close()
