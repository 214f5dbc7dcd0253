"""A release's verdicts as first published, kept as data when the verdict rules change, so
its rebuilt pages can say which answers changed and why.

    report/verdicts/originals/verdicts-<RELEASE>-original.json
        rules_changed   what changed in the rules since it was published (shown on the pages)
        questions       home-page answers: question, run_id, device, group, outcome, winner
        claims          claim outcomes: claim, machine, device, outcome
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

FIRST_PUBLISHED = Path(__file__).with_name("originals")


@functools.cache
def first_published(release: str) -> dict | None:
    """The record of `release`'s first published verdicts; None when it has none."""
    path = FIRST_PUBLISHED / f"verdicts-{release}-original.json"
    return json.loads(path.read_text()) if path.is_file() else None


def rules_changed(release: str) -> str:
    """What changed in the rules since `release` was first published ("" without a record)."""
    return (first_published(release) or {}).get("rules_changed", "")
