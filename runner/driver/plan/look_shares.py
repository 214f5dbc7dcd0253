"""The share of a suite's multi-process cells its second look topped up, as the suite's own
earlier runs on this machine kind recorded it (run.json `looks`, cells.parquet `repeats`).

The projection (dlbench.runner.driver.plan.projection) assumes a share for each later look.
Its default comes from release 2027.02's standard run; the machine suite's own runs differ
from it: release 2027.04's topped up 22 and 24 of 68 cells on the Intel Xeon kind and 32 of
68 on the AMD EPYC kind (0.34 and 0.47, against the default's 0.65). A kind's own runs of the
same suite say more about its next run than another suite's run on another machine did.
Nothing here is timed.
"""

from __future__ import annotations

from pathlib import Path

from dlbench.core.storage import layout
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.tables import read_table
from dlbench.runner.driver.plan.machine_scale import run_kind, run_sources


def run_top_up(root: Path, suite: str) -> tuple[int, int] | None:
    """(cells topped up at the second look, multi-process cells) of the run at `root`, or
    None for a run of another suite, or without a second look or a readable record."""
    try:
        info = layout.read_run_info(root)
        cells = read_table(root / "cells.parquet", "cells")
    except (ResultsFileError, OSError, ValueError):
        return None
    if (info.get("request") or {}).get("suite") != suite:
        return None
    second = next((look for look in info.get("looks") or [] if look.get("look") == 2), None)
    multi = int((cells["repeats"].fillna(1) > 1).sum())
    return (len(second.get("cells") or []), multi) if second is not None and multi else None


def recorded_share(results_dir: Path, kind: str, suite: str) -> tuple[float, int] | None:
    """The second look's share over every earlier run of `suite` on machine kind `kind`
    (its topped-up cells over its multi-process cells), and how many runs it rests on;
    None where none recorded one."""
    topped = multi = runs = 0
    for _, _, root in run_sources(results_dir):
        counts = run_top_up(root, suite) if run_kind(root) == kind else None
        if counts:
            topped, multi, runs = topped + counts[0], multi + counts[1], runs + 1
    return (topped / multi, runs) if multi else None


def second_look_share(results_dir: Path, kind: str, suite: str) -> tuple[float, str]:
    """The second look's share a projection of `suite` on `kind` assumes, and where it came
    from in words: the kind's own runs of the suite, else release 2027.02's default."""
    from dlbench.runner.driver.plan.projection import SECOND_LOOK_SHARE

    found = recorded_share(results_dir, kind, suite)
    if found is None:
        return SECOND_LOOK_SHARE, (f"look shares: release 2027.02's ({SECOND_LOOK_SHARE:.2f}); "
                                   f"no earlier {suite} run of this kind recorded its own")
    share, runs = found
    return share, (f"look shares: {share:.2f} of the cells topped up at the second look, as "
                   f"{runs} earlier {suite} run{'s' if runs > 1 else ''} of this kind did")
