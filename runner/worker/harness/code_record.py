"""The code record: every project source file this process imported, with its hash."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from dlbench.runner import PROJECT_ROOT


def imported_project_files(root: Path = PROJECT_ROOT) -> dict[str, str]:
    """{path relative to `root`: sha256 of its bytes} for each imported module's file under
    `root` (installed packages, even in a virtual environment inside `root`, excluded)."""
    files: dict[str, str] = {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if not name:
            continue
        path = Path(name).resolve()
        if not path.is_file() or not path.is_relative_to(root):
            continue
        relative = path.relative_to(root)
        if "site-packages" in relative.parts or relative.parts[0].startswith("."):
            continue
        files[relative.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(files.items()))
