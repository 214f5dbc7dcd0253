"""Atomic file writes: readers see the old file or the whole new one, never half of it.

The one place results, releases and the site are written. A write that the filesystem
refuses (no space, read-only, no permission) raises SaveError naming the path and the free
space there; callers say what was being saved (`saving`). New files and folders get the
mode the user's umask gives (a results folder may be shared or served as another user).

Kept free of heavy imports, since every worker process uses it.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dlbench.core.text.errors import SaveError


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so readers see the old file or the whole new one, never half;
    SaveError when the filesystem refuses."""
    try:
        _replace(path, data)
    except OSError as error:
        raise save_error(path, error) from None


def atomic_write_json(path: Path, value: object) -> None:
    """Write `value` as indented, key-sorted JSON, atomically."""
    text = json.dumps(value, indent=2, sort_keys=True, default=str) + "\n"
    atomic_write_bytes(path, text.encode())


def _replace(path: Path, data: bytes) -> None:
    """Write a temporary file beside `path` (mode from the umask), fsync, rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _unique(path.parent, f".{path.name}.", ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _unique(parent: Path, prefix: str, suffix: str = "") -> Path:
    """A name in `parent` that no file has now."""
    while True:
        candidate = parent / f"{prefix}{secrets.token_hex(6)}{suffix}"
        if not candidate.exists():
            return candidate


def new_dir(parent: Path, prefix: str) -> Path:
    """Create a new, empty, uniquely named folder in `parent` with the umask's mode (unlike
    tempfile.mkdtemp's 0700); SaveError when the filesystem refuses."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        while True:
            candidate = _unique(parent, prefix)
            try:
                candidate.mkdir()
                return candidate
            except FileExistsError:
                continue
    except OSError as error:
        raise save_error(parent, error) from None


#: The signals a user stops a command with; deferred while a staging folder is being made.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def staged_dir(parent: Path, prefix: str) -> Iterator[Path]:
    """A new folder (new_dir) removed when the block ends, however it ends; a block that
    renames it into place leaves nothing to remove.

    A Ctrl-C or SIGTERM arriving while the folder is being made is held until the folder's
    removal is armed, then handled as it would have been, inside the block: no stop leaves a
    staging folder behind (one arriving as mkdir returned once did). The stop is held by
    Python-level handlers, not a signal mask, because a mask holds only the calling thread
    and a library's thread would take the signal instead."""
    held: list[int] = []
    before = _hold_stops(held)
    try:
        staging = new_dir(parent, prefix)
    except BaseException:
        _release_stops(before, held)
        raise
    try:
        _release_stops(before, held)  # a stop held till now is raised here
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _hold_stops(held: list[int]) -> dict:
    """Record STOP_SIGNALS in `held` instead of handling them; the handlers they had. Off the
    main thread (where Python runs no signal handler) nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, lambda number, frame: held.append(number))
            for signum in STOP_SIGNALS}


def _release_stops(before: dict, held: list[int]) -> None:
    """Give each signal its handler back, then deliver the first stop held, if any."""
    for signum, handler in before.items():
        signal.signal(signum, handler)
    if held:
        signal.raise_signal(held[0])


def save_error(path: Path, error: OSError) -> SaveError:
    """The SaveError for `error` raised writing `path`."""
    return SaveError(path, error.strerror or str(error), free_space(path))


def free_space(path: Path) -> str:
    """The free space of the filesystem holding `path`, e.g. '12 KiB', or 'unknown'."""
    for place in (path, *path.parents):
        if place.exists():
            try:
                free = float(shutil.disk_usage(place).free)
            except OSError:
                return "unknown"
            for unit in ("bytes", "KiB", "MiB", "GiB"):
                if free < 1024 or unit == "GiB":
                    return f"{free:.0f} {unit}" if unit == "bytes" else f"{free:.1f} {unit}"
                free /= 1024
    return "unknown"


@contextmanager
def saving(what: str, hint: str = "") -> Iterator[None]:
    """Name what was being saved (and what to do) in a SaveError raised inside."""
    try:
        yield
    except SaveError as error:
        raise error.about(what, hint) from None


def make_dir(path: Path) -> None:
    """Create the new folder `path` (and its parents); SaveError when the filesystem refuses."""
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as error:
        raise save_error(path, error).about(f"the folder {path.name}") from None


def copy_tree(source: Path, target: Path) -> None:
    """Copy the folder `source` to the new folder `target`, each file atomically; files and
    folders get the umask's mode, not the source's (shutil.copytree keeps a folder's)."""
    make_dir(target)
    for path in sorted(source.rglob("*")):
        copy = target / path.relative_to(source)
        if path.is_dir():
            make_dir(copy)
        else:
            atomic_write_bytes(copy, path.read_bytes())
