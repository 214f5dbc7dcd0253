"""The comparison page: what changed against the previous release, and between the machines
of a release (the numbers come from dlbench/core/judging/compare.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from dlbench.core.judging.compare import ComparisonReport, compare
from dlbench.core.judging.outcomes import COMPARISON, Outcome
from dlbench.core.judging.compare_kinds import compare_by_kind, runs_by_kind, several_kinds
from dlbench.core.text.words import plural
from dlbench.core.text.errors import CompareError
from dlbench.core.declarations.metrics import reader_label
from dlbench.core.storage.schema import system_label
from dlbench.report.render.labels import (cell_id_words, differences_sentences,
                                          environment_key, environment_value, workload_label)
from dlbench.report.render.user_text import inert_record
from dlbench.core.storage.layout import release_names
from dlbench.report.pages.registry import Page, PageInputs, page
from dlbench.report.render.jinja import render
from dlbench.report.inputs.source import Source
from dlbench.report.inputs.labelled import format_number

MAX_ROWS = 40  # significant changes listed per comparison; the downloads hold them all
SIGNIFICANT = {Outcome.FASTER.value, Outcome.SLOWER.value, Outcome.BETTER.value,
               Outcome.WORSE.value, Outcome.DIFFERENT.value}


def _number(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.4g}"


def change_text(row: pd.Series) -> str:
    """A reader's phrase for one row, e.g. '1.52× slower (CI 1.41–1.60×, p=0.008)'."""
    change = Outcome(row["change"])
    interval = f"{_number(row['ratio_ci_low'])}–{_number(row['ratio_ci_high'])}×"
    stats = f"ratio {_number(row['ratio'])}× (Holm CI {interval}, Holm p={row['p_value']:.2g})"
    if change is Outcome.NO_SIGNIFICANT_DIFFERENCE:
        return f"no significant difference: {stats}"
    return f"{change.value}: {stats}"


def comparison_pairs(source: Source, results_dir: Path) -> list[tuple[str, str, str]]:
    """(title, side A, side B): the previous release against this one, then machine pairs."""
    names = release_names(results_dir)
    pairs = []
    if source.draft:
        if names and len(source.runs) == 1:
            run_id = source.runs[0].run_id
            pairs.append((f"Release {names[-1]} → run {run_id}", names[-1], run_id))
    else:
        index = names.index(source.name) if source.name in names else 0
        if index > 0:
            pairs.append((f"Release {names[index - 1]} → release {source.name}",
                          names[index - 1], source.name))
        pairs += machine_pairs(source)
    return pairs


def machine_pairs(source: Source) -> list[tuple[str, str, str]]:
    """Within a release: each machine kind's runs against its first (replicates of one kind),
    then each kind's first run against the first kind's; named by kind, never by run ID."""
    kinds = runs_by_kind(list(source.runs))
    pairs = []
    for kind, runs in kinds.items():
        pairs += [(f"{kind.words}: run {index} against run 1 (replicates of one kind)",
                   f"{source.name}@{runs[0].run_id}", f"{source.name}@{run.run_id}")
                  for index, run in enumerate(runs[1:], start=2)]
    first, *others = list(kinds.items()) or [(None, [])]
    pairs += [(f"{kind.words} against {first[0].words}", f"{source.name}@{first[1][0].run_id}",
               f"{source.name}@{runs[0].run_id}") for kind, runs in others]
    return pairs


def _blocks(title: str, a: str, b: str, results_dir: Path) -> list[dict]:
    """One comparison, or one per machine kind where a side holds several (compare_kinds),
    every string of it inert (the runs it reads come from anyone)."""
    try:
        if several_kinds(a, results_dir) or several_kinds(b, results_dir):
            return [inert_record(_comparison(
                f"{title}, on {item.kind_b.words}" + ("" if item.kind_a == item.kind_b
                                                      else f" against {item.kind_a.words}"),
                f"{a} ({plural(len(item.runs_a), 'run')})",
                f"{b} ({plural(len(item.runs_b), 'run')})", item.report))
                    for item in compare_by_kind(a, b, results_dir)]
        return [inert_record(_comparison(title, a, b, compare(a, b, results_dir)))]
    except CompareError as error:
        return [inert_record({"title": title, "a": a, "b": b, "error": str(error)})]


def _comparison(title: str, a: str, b: str, report: ComparisonReport) -> dict:
    frame = report.metrics
    significant = frame[frame["change"].isin(SIGNIFICANT)].sort_values(
        ["experiment", "workload", "system", "metric"])
    rows = [{
        "experiment": r["experiment"],
        "workload": workload_label(str(r["workload"]), str(r.get("device", ""))),
        "system": system_label(str(r["system"])),
        "metric": reader_label(r["metric"]), "a": format_number(r["median_a"]),
        "b": format_number(r["median_b"]), "change": change_text(r),
    } for _, r in significant.head(MAX_ROWS).iterrows()]
    counts = {c.value: report.count(c) for c in COMPARISON}
    return {
        "title": title, "a": a, "b": b, "error": "", "compared": len(frame),
        "machines": list(report.machines_differ),
        "counts": ", ".join(f"{n} {c}" for c, n in counts.items() if n) or "nothing",
        "rows": rows, "more": max(0, len(significant) - MAX_ROWS),
        "only": len(report.only_in_a) + len(report.only_in_b),
        "not_comparable": [row | {"what": cell_id_words(str(row["cell_id"])),
                                  "differences": differences_sentences(str(row["changes"]))}
                           for row
                           in report.not_comparable.head(MAX_ROWS).to_dict("records")],
        "environment": [(environment_key(str(r["key"])),
                         environment_value(str(r["key"]), r["a"]),
                         environment_value(str(r["key"]), r["b"]))
                        for _, r in report.environment.iterrows()],
    }


def compare_blocks(source: Source, results_dir: Path) -> list[dict]:
    """One block per comparison this version can show."""
    return [block for title, a, b in comparison_pairs(source, results_dir)
            for block in _blocks(title, a, b, results_dir)]


@page("compare.md")
def compare_page(inputs: PageInputs) -> Page | None:
    """The comparison page, when the build knows where the other releases are."""
    if inputs.results_dir is None:
        return None
    return Page(render(inputs.env, "compare.md.j2",
                       comparisons=compare_blocks(inputs.source, inputs.results_dir),
                       **inputs.common))
