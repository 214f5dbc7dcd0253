"""A release's verdicts as published, stored inside the release (verdicts.csv, listed in its
manifest), so its pages render the verdicts a reader cited; a later rule's different
judgement is shown beside them, never instead.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

from dlbench.core.storage.releases import VERDICTS, add_release_file
from dlbench.report.inputs.source import Source
from dlbench.report.verdicts.verdict_table import VERDICT_COLUMNS

#: The file in a release's folder that holds its verdicts as published.
STORED = VERDICTS
#: Where the site serves a release's stored verdicts.
PUBLISHED_VERDICTS = "downloads/verdicts-published.csv"


def stored_verdicts(source: Source) -> pd.DataFrame | None:
    """The verdicts stored with a release when it was published; None for a draft or a
    release that stores none."""
    if source.draft or source.root is None or not (source.root / STORED).is_file():
        return None
    return read_verdicts((source.root / STORED).read_bytes())


def read_verdicts(data: bytes) -> pd.DataFrame:
    """A verdicts table from its CSV bytes, with the columns a page reads."""
    numbers = ("ratio", "ci_low", "ci_high", "difference", "difference_low", "difference_high")
    frame = pd.read_csv(io.BytesIO(data), dtype={"winner": str, "group_key": str},
                        keep_default_na=False, na_values=dict.fromkeys(numbers, [""]))
    for column in VERDICT_COLUMNS:
        if column not in frame:
            frame[column] = ""
    return frame


def store_verdicts(root: Path, frame: pd.DataFrame) -> Path:
    """Write a release's verdicts into it once and list them in its manifest."""
    return add_release_file(root, STORED, frame.to_csv(index=False).encode())


def answer_key(row: pd.Series | dict) -> tuple[str, str, str, str]:
    """What identifies one answer across rules: question, run, device and group."""
    group = row.get("group_key") or ""
    if group:
        group = json.dumps(json.loads(group), sort_keys=True)
    return (str(row["question"]), str(row["run_id"]), str(row["device"]),
            group or str(row["group"]))


def judged_apart(stored: pd.DataFrame, today: pd.DataFrame) -> dict[tuple, dict]:
    """Answers today's rule judges differently from the stored ones, by answer_key: the
    stored and today's outcome and winner."""
    now = {answer_key(r): r for r in today[today["row"] == "answer"].to_dict("records")}
    apart = {}
    for row in stored[stored["row"] == "answer"].to_dict("records"):
        other = now.get(answer_key(row))
        if other is None:
            continue
        if (row["outcome"], row["winner"] or "") != (other["outcome"], other["winner"] or ""):
            apart[answer_key(row)] = {"stored": (row["outcome"], row["winner"] or ""),
                                      "today": (other["outcome"], other["winner"] or "")}
    return apart


#: Pair decisions that decide something: a side named, or no meaningful difference.
DECIDING = frozenset({"a better", "b better", "different", "no meaningful difference"})


def pair_key(row: pd.Series | dict) -> tuple:
    """What identifies one judged pair across rules: its answer and its two cells."""
    return (*answer_key(row), str(row["cell_a"]), str(row["cell_b"]))


def overturned_pairs(stored: pd.DataFrame, today: pd.DataFrame) -> list[dict]:
    """The stored pairs that decided something and that today's judgement of the same cells
    (on every process the release holds) decides otherwise: each with the processes it was
    decided on, its look, and both decisions and ratios."""
    now = {pair_key(r): r for r in today[today["row"] == "pair"].to_dict("records")}
    found = []
    for row in stored[stored["row"] == "pair"].to_dict("records"):
        other = now.get(pair_key(row))
        if row["decision"] not in DECIDING or other is None:
            continue
        if other["decision"] != row["decision"]:
            found.append({"key": pair_key(row), "stored": row["decision"],
                          "today": other["decision"], "stored_ratio": float(row["ratio"]),
                          "today_ratio": float(other["ratio"]), "look": row["look"],
                          "processes": (row["processes_a"], row["processes_b"]),
                          "processes_today": (other["processes_a"], other["processes_b"])})
    return found
