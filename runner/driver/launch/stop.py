"""Ctrl-C, SIGTERM and SIGHUP (its terminal closed) stop a run, and the stop is never lost.

Python runs a signal handler between bytecodes of the main thread; when that happens inside
a finalizer (a `__del__`, a weakref callback) the KeyboardInterrupt it raises is printed as
"Exception ignored" and dropped, and the run would go on to the end as if nothing happened.
So the handler also remembers the request, and the places that wait (between processes, and
while a worker runs) ask again with `raise_if_stop_requested`.
"""

from __future__ import annotations

import signal

_stop_requested = False


def _request_stop(signum: int, frame: object) -> None:
    global _stop_requested
    _stop_requested = True
    raise KeyboardInterrupt


#: The signals that stop a run as Ctrl-C does.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def stop_on_signals() -> None:
    """Treat SIGTERM and SIGHUP like Ctrl-C, and remember any of them even if its exception
    is swallowed. A SIGHUP ignored when the run started stays ignored (a run started under
    `nohup` goes on when its terminal closes); Ctrl-C and SIGTERM always stop it, even in a
    background job, which starts with SIGINT ignored."""
    for signum in STOP_SIGNALS:
        if signum != signal.SIGHUP or signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _request_stop)


def raise_if_stop_requested() -> None:
    """Raise KeyboardInterrupt if a stop was requested, even one whose exception was lost."""
    if _stop_requested:
        raise KeyboardInterrupt
