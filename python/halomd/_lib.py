"""Loads libhalomd (the engine, built from this repository) and declares its C API
(src/api/halomd.h) for ctypes. No computation happens here.

The library is looked for, in order: the file named by the environment variable
HALOMD_LIBRARY; libhalomd.so inside this package (where `pip install ./python` puts it); the
build folder of the source tree this package sits in (build/libhalomd.so, for developers).
"""

import ctypes
import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_lib = None


class HalomdError(RuntimeError):
    """An error of the engine: `status` is its code (negated sysexits: -65 bad data, -66
    missing file, -69 unsupported, -78 bad parameter), the message is the engine's."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _candidates():
    env = os.environ.get("HALOMD_LIBRARY")
    if env:
        yield Path(env)
        return
    yield _HERE / "libhalomd.so"
    yield _HERE.parents[1] / "build" / "libhalomd.so"


def library():
    """The loaded library, with argument and result types declared."""
    global _lib
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        tried.append(str(path))
        if path.is_file():
            lib = ctypes.CDLL(str(path))
            break
    else:
        raise HalomdError(-66, "libhalomd.so not found (tried " + ", ".join(tried) + "); "
                          "install the package with `pip install ./python` or set "
                          "HALOMD_LIBRARY")
    c_double_p = ctypes.POINTER(ctypes.c_double)
    c_int_p = ctypes.POINTER(ctypes.c_int)
    model_p = ctypes.c_void_p
    lib.hmd_api_model_open.argtypes = [ctypes.POINTER(model_p), ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
    lib.hmd_api_model_open.restype = ctypes.c_int
    lib.hmd_api_model_eval.argtypes = [model_p, ctypes.c_int, c_double_p, c_int_p, c_double_p,
                                       c_int_p, c_double_p, c_double_p, c_double_p, c_double_p]
    lib.hmd_api_model_eval.restype = ctypes.c_int
    lib.hmd_api_model_ntypes.argtypes = [model_p]
    lib.hmd_api_model_ntypes.restype = ctypes.c_int
    lib.hmd_api_model_type_name.argtypes = [model_p, ctypes.c_int]
    lib.hmd_api_model_type_name.restype = ctypes.c_char_p
    lib.hmd_api_model_rcut.argtypes = [model_p]
    lib.hmd_api_model_rcut.restype = ctypes.c_double
    lib.hmd_api_model_backend.argtypes = [model_p]
    lib.hmd_api_model_backend.restype = ctypes.c_char_p
    lib.hmd_api_model_dropped.argtypes = [model_p]
    lib.hmd_api_model_dropped.restype = ctypes.c_long
    lib.hmd_api_model_close.argtypes = [model_p]
    lib.hmd_api_model_close.restype = None
    lib.hmd_api_error_message.argtypes = []
    lib.hmd_api_error_message.restype = ctypes.c_char_p
    lib.hmd_api_version.argtypes = []
    lib.hmd_api_version.restype = ctypes.c_char_p
    _lib = lib
    return lib


def check(status):
    """Raises HalomdError with the engine's message when status is not 0."""
    if status != 0:
        raise HalomdError(status, library().hmd_api_error_message().decode(errors="replace"))
