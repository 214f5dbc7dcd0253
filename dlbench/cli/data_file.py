"""`dlbench run --data FILE.npz`: arrays whose headers say no more than the file holds.

The runner bounds a --data file by the sizes its zip members declare; each .npy header
inside declares its array's shape on its own, and loading allocates that shape. A header
that declares more than its member holds (32 GiB in a 2 kB file) is refused here, before
the model is built, in one line; a file that is not a readable .npz is left to the
runner's own check, which names what it expects."""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

from dlbench.core.text.errors import UsageError


def declared_and_held(path: Path) -> list[tuple[str, int, int]]:
    """(member, bytes its .npy header declares, bytes of data it holds) for each member;
    ValueError or zipfile.BadZipFile for a file that is not a .npz of .npy arrays."""
    import numpy as np

    sizes = []
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            with archive.open(member) as stream:
                version = np.lib.format.read_magic(stream)
                read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                        else np.lib.format.read_array_header_2_0)
                shape, _, dtype = read(stream)
                declared = math.prod(shape) * dtype.itemsize
                sizes.append((member.filename, declared, member.file_size - stream.tell()))
    return sizes


def refuse_arrays_larger_than_their_data(data_file: str) -> None:
    """UsageError naming the first array of --data `data_file` whose header declares more
    bytes than its member holds."""
    path = Path(data_file).expanduser()
    if not path.is_file():
        return
    try:
        sizes = declared_and_held(path)
    except (OSError, ValueError, zipfile.BadZipFile):
        return  # the runner's check says what a --data file must be
    for member, declared, held in sizes:
        if declared > held:
            raise UsageError(f"--data {str(path)!r}: array {member} declares {declared} bytes "
                             f"but holds {held}; expected arrays whose headers match their data "
                             "(as numpy.savez writes them)")
