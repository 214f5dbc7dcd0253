"""The folders a site command writes (build's --out, export's DIR, the pages repository):
never one holding files dlbench did not put there.

A command writes into a new folder, an empty one, or one holding the marker file an earlier
run of the same command wrote; anything else is refused in one line naming the path. A file
or a symbolic link is never replaced by a folder, and the current folder is never an output.
"""

from __future__ import annotations

import os
from pathlib import Path

from dlbench.core.storage.atomic import atomic_write_bytes
from dlbench.core.text.errors import UsageError

#: Written into an output folder by the command that filled it; its text names that command.
MARKER = ".dlbench-output"
#: Files an empty output folder may already hold (git keeps an empty folder with one).
HARMLESS = frozenset({".gitkeep"})


def check_output(path: Path, flag: str, command: str) -> None:
    """Refuse `path` as the output of `dlbench COMMAND` unless it is absent, an empty folder,
    or a folder an earlier `dlbench COMMAND` filled (its marker says so)."""
    shown = f"{flag} {path}".strip()
    if path.is_symlink():
        raise UsageError(f"{shown} is a symbolic link; pass the folder itself")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{shown} is a file, not a folder; pass a new or empty folder")
    if not path.exists():
        return
    here = Path.cwd().resolve()
    if path.resolve() == here or path.resolve() in here.parents:
        raise UsageError(f"{shown} is the current folder or holds it; pass a new folder")
    try:
        entries = {entry.name for entry in os.scandir(path)}
    except OSError as error:
        raise UsageError(f"cannot read {shown}: {error.strerror}") from None
    if not entries - HARMLESS:
        return
    marker = path / MARKER
    written_by = marker.read_text(errors="replace").strip() if marker.is_file() else ""
    if written_by != command:
        raise UsageError(f"{shown} holds files `dlbench {command}` did not write there (no "
                         f"{MARKER} of it); pass a new or empty folder, or remove that one")


def mark_output(path: Path, command: str) -> None:
    """Say in `path` that `dlbench COMMAND` filled it, so its next run may write there again."""
    marker = path / MARKER
    if not (marker.is_file() and marker.read_text(errors="replace").strip() == command):
        atomic_write_bytes(marker, f"{command}\n".encode())


def check_pages_repo(path: Path, flag: str = "--pages-repo") -> None:
    """Refuse a pages repository that is a file, a link, or a folder of other files that is
    not a git repository (mike commits only to its gh-pages branch; a new one is made)."""
    if path.is_symlink():
        raise UsageError(f"{flag} {path} is a symbolic link; pass the folder itself")
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path} is a file, not a folder; pass a git repository or "
                         "a new folder")
    if path.is_dir() and not (path / ".git").exists() and set(os.listdir(path)) - HARMLESS:
        raise UsageError(f"{flag} {path} is neither a git repository nor empty; pass a git "
                         "repository (its gh-pages branch holds the site) or a new folder")
    written = next((place for place in (path / ".git", path, *path.absolute().parents)
                    if place.exists()), None)
    if written is not None and not os.access(written, os.W_OK):
        raise UsageError(f"{flag} {path}: {written} is not writable (read-only, or not "
                         "yours); pass a git repository or a new folder you can write")
