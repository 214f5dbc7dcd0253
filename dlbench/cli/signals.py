"""SIGTERM read as Ctrl-C while a command that writes results runs (publish, import-run,
build, deploy, export, erratum, export-run, and serve, which builds in a temporary folder),
so its staging folders are removed and its all-or-nothing steps end as an interrupt does;
`dlbench run` handles its own signals."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

#: The commands whose SIGTERM is an interrupt.
WRITING_COMMANDS = frozenset({"publish", "import-run", "build", "deploy", "export", "erratum",
                              "export-run", "serve"})


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt(command: str) -> Iterator[None]:
    """While the block runs, SIGTERM raises KeyboardInterrupt (for WRITING_COMMANDS, on the
    main thread); the handler before is restored after."""
    if command not in WRITING_COMMANDS or threading.current_thread() is not \
            threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
