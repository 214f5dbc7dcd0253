"""A small disk for fault tests: a tmpfs mounted for the test where it can be (root), else a
stub "No space left on device" at dlbench.core.storage.atomic's one write function, switched on by a
flag file. Either way a test fills it while a command runs and frees it afterwards.

Run as a script (`python -m tests.small_disk ARGS`), it is the dlbench command with the stub
installed when DLBENCH_TEST_FULL_FLAG names a flag file.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

FLAG = "DLBENCH_TEST_FULL_FLAG"


class SmallDisk:
    """A folder on a filesystem of `size` (mount's syntax, e.g. '2m') that can be filled."""

    def __init__(self, root: Path, size: str, read_only: bool = False) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root, self.flag = root, root.parent / f".{root.name}.full"
        options = f"size={size}" + (",ro" if read_only else "")
        self.mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs",
                                       str(root)], capture_output=True).returncode == 0

    @property
    def command(self) -> list[str]:
        """The dlbench command line, stubbed where no tmpfs could be mounted."""
        return [sys.executable, "-m", "tests.small_disk"]

    @property
    def env(self) -> dict[str, str]:
        return os.environ | ({} if self.mounted else {FLAG: str(self.flag)})

    def fill(self) -> None:
        """Leave no free space on it."""
        if not self.mounted:
            self.flag.touch()
            return
        with (self.root / "ballast").open("ab", buffering=0) as ballast:
            try:
                while True:
                    ballast.write(b"\0" * 4096)
            except OSError as error:
                assert error.errno == errno.ENOSPC, error

    def free(self) -> None:
        """Make its space free again."""
        self.flag.unlink(missing_ok=True)
        (self.root / "ballast").unlink(missing_ok=True)

    def close(self) -> None:
        """Unmount the tmpfs (its files go with it)."""
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.root)], check=True)
        shutil.rmtree(self.root, ignore_errors=True)


def _stub_full_disk(flag: Path) -> None:
    """Make every atomic write fail as on a full disk while `flag` exists."""
    from dlbench.core.storage import atomic

    real = atomic._replace

    def replace(path: Path, data: bytes) -> None:
        if flag.exists():
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data)

    atomic._replace = replace


if __name__ == "__main__":
    if os.environ.get(FLAG):
        _stub_full_disk(Path(os.environ[FLAG]))
    from dlbench.cli import main

    sys.exit(main(sys.argv[1:]))
