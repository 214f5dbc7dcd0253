"""A worker's scratch folder (its spec, outcome and output files), named after the runner
process that made it: a runner killed before it could clean up (a Ray task cancelled by
Ctrl-C gets no chance to) leaves its folder behind, and the next runner on that machine
removes it. Only folders of this name, of this user, whose runner is gone are touched."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

PREFIX = "dlbench-cell-"
_NAME = re.compile(rf"{re.escape(PREFIX)}(\d+)-[\w]+")


def scratch_folder() -> tempfile.TemporaryDirectory:
    """A new scratch folder for this runner's worker, after sweeping abandoned ones."""
    sweep_abandoned(Path(tempfile.gettempdir()))
    return tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-")


def sweep_abandoned(root: Path) -> list[Path]:
    """Remove the scratch folders under `root` whose runner process no longer exists; the
    folders removed."""
    removed = []
    for folder in sorted(root.glob(f"{PREFIX}*")):
        found = _NAME.fullmatch(folder.name)
        if (found is None or folder.is_symlink() or not folder.is_dir()
                or folder.lstat().st_uid != os.getuid() or _alive(int(found.group(1)))):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
