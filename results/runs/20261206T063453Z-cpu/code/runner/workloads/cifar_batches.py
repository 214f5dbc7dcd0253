"""CIFAR-10's python batches read without running code: a pickle reader that builds only
what a batch holds (a dict of bytes, lists, numbers and one uint8 numpy array) and refuses
every other global by name, so a batch file whose `__reduce__` calls os.system is an error,
never a command."""

from __future__ import annotations

import codecs
import pickle
from pathlib import Path

import numpy as np

#: The globals a CIFAR-10 batch names (numpy's array reconstruction, under numpy 1's and
#: numpy 2's module names), and how Python 3 pickles bytes with protocol 2.
ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("_codecs", "encode"),
}
#: The one encoding `_codecs.encode` may be asked for in a batch (bytes in protocol 2).
BYTES_ENCODING = "latin1"


class BatchRefused(pickle.UnpicklingError):
    """A pickle that asks for something a CIFAR-10 batch never holds."""


def _latin1_bytes(text: str, encoding: str = BYTES_ENCODING) -> bytes:
    if codecs.lookup(encoding).name != "iso8859-1" or not isinstance(text, str):
        raise BatchRefused(f"asks for _codecs.encode with {encoding!r} (only "
                           f"{BYTES_ENCODING!r} encodes a batch's bytes)")
    return text.encode(BYTES_ENCODING)


def _plain_dtype(*args: object) -> np.dtype:
    dtype = np.dtype(*args)
    if dtype.hasobject:
        raise BatchRefused("holds an array of Python objects (a batch's arrays are numbers)")
    return dtype


class BatchUnpickler(pickle.Unpickler):
    """An unpickler whose only globals are ALLOWED (and no persistent IDs)."""

    def find_class(self, module: str, name: str) -> object:
        """The allowed global `module.name`, or BatchRefused naming it."""
        if (module, name) not in ALLOWED:
            raise BatchRefused(f"asks for {module}.{name}, which a CIFAR-10 batch never "
                               "holds (only numpy arrays, lists, bytes and numbers are read)")
        if name == "encode":
            return _latin1_bytes
        if name == "dtype":
            return _plain_dtype
        return super().find_class(module, name)


def read_batch(path: Path) -> dict:
    """The dict of one CIFAR-10 python batch file; pickle.UnpicklingError (BatchRefused for
    a global it may not build), EOFError or ValueError when it is not one."""
    with path.open("rb") as handle:
        batch = BatchUnpickler(handle, encoding="bytes").load()
    if not isinstance(batch, dict):
        raise pickle.UnpicklingError(f"holds a {type(batch).__name__}, not a dict")
    return batch
