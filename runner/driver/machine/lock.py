"""One measurement per machine at a time: an exclusive lock on a machine-wide file.

`dlbench run` holds an fcntl lock on /tmp/dlbench-measure.lock (or $DLBENCH_LOCK_FILE) for
as long as it measures; the holder writes its PID, start time and command line into the
file, so a second run can say who holds the machine. The kernel drops the lock when its
holder dies, however it dies. /tmp is shared by every user of the machine; a container
with its own /tmp is a machine of its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

DEFAULT_LOCK_FILE = Path("/tmp/dlbench-measure.lock")


class MachineLockedError(Exception):
    """Another measurement holds this machine."""


def lock_file() -> Path:
    """The machine-wide lock file ($DLBENCH_LOCK_FILE overrides it, e.g. for tests)."""
    return Path(os.environ.get("DLBENCH_LOCK_FILE") or DEFAULT_LOCK_FILE)


def _open(path: Path) -> int:
    """Open the lock file for writing, creating it usable by every user of the machine."""
    try:
        return os.open(path, os.O_RDWR)
    except FileNotFoundError:
        pass
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        os.fchmod(fd, 0o666)
        return fd
    except FileExistsError:
        return os.open(path, os.O_RDWR)


def holder_of(path: Path) -> str:
    """Who holds the lock, in words, from what the holder wrote into the file."""
    try:
        holder = json.loads(path.read_text())
        return f"PID {holder['pid']} since {holder['since']} ({holder['command']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet said who it is"


@contextmanager
def measurement_lock(command: list[str] | None = None) -> Iterator[Path]:
    """Hold the machine's measurement lock, or raise MachineLockedError naming its holder."""
    path = lock_file()
    try:
        fd = _open(path)
    except OSError as error:
        raise MachineLockedError(f"cannot open the machine lock {path}: {error}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise MachineLockedError(
                f"another measurement holds this machine: {holder_of(path)}; lock {path}. "
                "One measurement at a time: wait for it to end, or stop it") from None
        holder = {"pid": os.getpid(),
                  "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "command": " ".join(command or ["dlbench", *sys.argv[1:]])}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
