"""SIGTERM, and SIGHUP (the terminal it runs in closed), read as Ctrl-C while a command that
writes results runs (publish, import-run, build, deploy, export, erratum, export-run, and
serve, which builds in a temporary folder), so its staging folders are removed and its
all-or-nothing steps end as an interrupt does; `dlbench run` handles its own signals."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

#: The commands whose SIGTERM and SIGHUP are an interrupt.
WRITING_COMMANDS = frozenset({"publish", "import-run", "build", "deploy", "export", "erratum",
                              "export-run", "serve"})
#: The signals that end such a command as Ctrl-C does.
INTERRUPTS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt(command: str) -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise KeyboardInterrupt (for
    WRITING_COMMANDS, on the main thread; a signal ignored when it started, as `nohup`
    ignores SIGHUP, stays ignored); the handlers before are restored after."""
    if command not in WRITING_COMMANDS or threading.current_thread() is not \
            threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _interrupt) for signum in INTERRUPTS
                if signal.getsignal(signum) is not signal.SIG_IGN}  # `nohup` stays nohup
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
