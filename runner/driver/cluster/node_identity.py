"""What a node must share with the driver before it may measure: the project's commit and
the sha256 of its measuring code, computed the same way on both sides."""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path

from dlbench.runner.driver.machine.environment import MEASUREMENT_CODE, git_state
from dlbench.runner import PROJECT_ROOT


def code_hash(project_root: Path = PROJECT_ROOT) -> str:
    """sha256 over the path and bytes of every measuring source file (runner/, dlbench/,
    pyproject.toml), in path order."""
    digest = hashlib.sha256()
    for name in MEASUREMENT_CODE:
        top = project_root / name
        files = [top] if top.is_file() else sorted(top.rglob("*.py"))
        for path in files:
            digest.update(str(path.relative_to(project_root)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def node_identity(project_root: Path = PROJECT_ROOT) -> dict[str, str]:
    """This machine's project commit, code hash and host name."""
    return {"commit": git_state(project_root)["commit"], "code_hash": code_hash(project_root),
            "host": platform.node()}


def mismatch(node: dict[str, str], driver: dict[str, str], kind: str) -> str | None:
    """One line saying how a node's code differs from the driver's, or None when it does not."""
    if node["commit"] == driver["commit"] and node["code_hash"] == driver["code_hash"]:
        return None
    return (f"node {node['host']} (machine kind {kind}) runs commit {node['commit'][:12]} with "
            f"code hash {node['code_hash'][:12]}, the driver commit {driver['commit'][:12]} "
            f"with code hash {driver['code_hash'][:12]}: check out and install the same "
            "commit on every node, then start it again")
