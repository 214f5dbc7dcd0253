"""Measuring on many machines at once: every process of every cell is a Ray task placed on a
node of the requested machine kind, one measurement per node at a time; the driver writes
the results with the same store as a local run, one run per machine kind.

Ray is an optional extra (`pip install -e '.[cluster]'`); only `--executor ray` needs it.
"""

from __future__ import annotations

from dlbench.core.text.errors import UsageError

INSTALL_HINT = "--executor ray needs Ray, an optional extra: pip install -e '.[cluster]'"


def require_ray() -> None:
    """Raise a UsageError saying how to install Ray where it cannot be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
