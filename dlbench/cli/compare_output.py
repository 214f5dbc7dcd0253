"""`dlbench compare A B` output: a table for people (80 columns), csv, json or markdown.

The table groups rows by cell and lists only significant changes unless --all is given (the
rest are counted); cells that share a name but not a configuration are listed apart, as not
comparable, with the parameters that differ. csv and json always hold every row.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pandas as pd

from dlbench.core.judging.compare import ComparisonReport, compare
from dlbench.core.judging.outcomes import COMPARISON, Outcome
from dlbench.core.judging.compare_kinds import KindComparison, compare_by_kind, several_kinds
from dlbench.core.text.errors import CompareError, UsageError
from dlbench.core.declarations.metrics import UnknownMetricError
from dlbench.core.text.visible import visible_controls
from dlbench.core.text.words import plural
from dlbench.report.render.labels import differences_sentences

WIDTH = 80
SHORT = {Outcome.NO_SIGNIFICANT_DIFFERENCE: "n.s.", Outcome.DIFFERENT: "differs"}
EXAMPLES = 2  # cells named per group of not comparable cells, unless --all
ENVIRONMENT_LINES = 10  # environment differences shown, unless --all


def _number(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.4g}"


def _fit(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _ratio(row: pd.Series) -> str:
    return (f"{_number(row['ratio'])}× [{_number(row['ratio_ci_low'])}–"
            f"{_number(row['ratio_ci_high'])}]")


def shown_rows(report: ComparisonReport, show_all: bool) -> pd.DataFrame:
    """The (cell, metric) rows a person sees: the significant ones, or all with --all."""
    frame = report.metrics
    return frame if show_all else frame[frame["significant"].astype(bool)]


def _metric_lines(report: ComparisonReport, show_all: bool) -> list[str]:
    rows = shown_rows(report, show_all)
    lines = [_fit(f"B = {report.b} against A = {report.a}; A, B: medians; B/A: ratio of "
                  "geometric means, Holm's CI")]
    if len(rows):
        lines.append(f"  {'metric [unit]':<30} {'A':>9} {'B':>9} {'B/A [Holm CI]':<17} change")
    for cell_id, group in rows.sort_values(["cell_id", "metric"]).groupby("cell_id", sort=True):
        lines.append(_fit(str(cell_id)))
        for _, row in group.iterrows():
            change = Outcome(row["change"])
            label = _fit(f"{row['metric']} [{row['unit']}]", 30)
            lines.append(_fit(f"  {label:<30} {_number(row['median_a']):>9} "
                              f"{_number(row['median_b']):>9} {_ratio(row):<17} "
                              f"{SHORT.get(change, change.value)}"))
    hidden = len(report.metrics) - len(rows)
    counts = ", ".join(f"{report.count(c)} {c.value}" for c in COMPARISON if report.count(c))
    lines.append(_fit(f"{len(report.metrics)} compared alike: {counts or 'none'}"))
    if hidden:
        lines.append(f"{hidden} rows without a significant change not shown (--all shows them)")
    elif show_all and len(rows):
        lines.append("n.s.: no significant difference")
    lines.append("a change is named when its interval, at the level Holm's step-down over")
    lines.append("these comparisons tested it at, lies wholly beyond 5%")
    return lines


def _not_comparable_lines(report: ComparisonReport, show_all: bool) -> list[str]:
    frame = report.not_comparable
    if frame.empty:
        return []
    lines = [f"{len(frame)} cells not comparable (same name, other configuration; "
             "never compared):"]
    for changes, group in frame.groupby("changes", sort=True):
        lines.append(_fit(f"  {plural(len(group), 'cell')}: {differences_sentences(changes)}"))
        cells = list(group["cell_id"])
        named = cells if show_all else cells[:EXAMPLES]
        lines += [_fit(f"    {cell}") for cell in named]
    if not show_all and any(len(g) > EXAMPLES for _, g in frame.groupby("changes")):
        lines.append(f"  (the first {EXAMPLES} cells of each; --all lists them)")
    return lines


def _other_lines(report: ComparisonReport, show_all: bool) -> list[str]:
    lines = []
    for label, cells in (("A", report.only_in_a), ("B", report.only_in_b)):
        if cells:
            named = cells if show_all else cells[:EXAMPLES]
            more = "" if len(named) == len(cells) else f", … ({len(cells)} in all; --all)"
            lines.append(_fit(f"{len(cells)} cells only in {label}: {', '.join(named)}{more}"))
    changes = report.status_changes
    for _, row in (changes if show_all else changes.head(EXAMPLES)).iterrows():
        lines.append(_fit(f"status {row['status_a']} → {row['status_b']}: {row['cell_id']}"))
    if not show_all and len(changes) > EXAMPLES:
        lines.append(f"and {len(changes) - EXAMPLES} more status changes (--all lists them)")
    if report.environment.empty:
        return lines + ["environment: no differences recorded"]
    environment = report.environment if show_all else report.environment.head(ENVIRONMENT_LINES)
    lines.append(f"{len(report.environment)} environment differences (A → B):")
    lines += [_fit(f"  {row['key']}: {row['a']} → {row['b']}")
              for _, row in environment.iterrows()]
    if len(environment) < len(report.environment):
        lines.append(f"  and {len(report.environment) - len(environment)} more (--all lists them)")
    return lines


def machine_lines(report: ComparisonReport) -> list[str]:
    """First, when the machines differ: how, and what that means for the speed changes."""
    if not report.machines_differ:
        return []
    lines = ["The machines differ: " + "; ".join(report.machines_differ) + "."]
    if report.across_machines:
        lines.append("Faster/slower below compare two machines (--across-machines), not two "
                     "versions of the code on one.")
    else:
        lines.append("No change is called faster or slower: a speed difference between two "
                     "machines is not a change of the code. --across-machines names them.")
    return lines


def table_text(report: ComparisonReport, show_all: bool = False) -> str:
    """The comparison for a terminal: every line at most 80 columns."""
    blocks = [[textwrap.fill(line, WIDTH) for line in machine_lines(report)],
              _metric_lines(report, show_all), _not_comparable_lines(report, show_all),
              _other_lines(report, show_all)]
    text = "\n".join("\n".join(block) for block in blocks if block) + "\n"
    return visible_controls(text)


def _markdown_cell(value: object) -> str:
    return str(value).replace("|", "\\|")


def markdown_text(report: ComparisonReport, show_all: bool = False) -> str:
    """The comparison as Markdown tables, for a pull request."""
    rows = shown_rows(report, show_all)
    lines = [*machine_lines(report), ""] if report.machines_differ else []
    lines += [f"**{report.b}** compared with **{report.a}** (A, B: medians; B/A: ratio of "
              "geometric means, its interval at the level Holm tested it at)",
              ""]
    if len(rows):
        lines += ["| Cell | Metric | A | B | B/A [Holm CI] | p | Change |",
                  "| --- | --- | ---: | ---: | --- | ---: | --- |"]
    else:
        lines.append("No significant change.")
    previous = None
    for _, row in rows.sort_values(["cell_id", "metric"]).iterrows():
        cell = "" if row["cell_id"] == previous else f"`{row['cell_id']}`"
        previous = row["cell_id"]
        lines.append(f"| {cell} | {row['metric']} ({row['unit']}) | {_number(row['median_a'])} | "
                     f"{_number(row['median_b'])} | {_ratio(row)} | {row['p_value']:.2g} | "
                     f"{row['change']} |")
    hidden = len(report.metrics) - len(rows)
    lines += ["", f"{len(report.metrics)} comparisons"
              + (f"; {hidden} without a significant change not shown." if hidden else ".")]
    if not report.not_comparable.empty:
        lines += ["", "Not comparable (same name, other configuration):", "",
                  "| Cell | How its configurations differ |", "| --- | --- |"]
        lines += [f"| `{r['cell_id']}` | {_markdown_cell(differences_sentences(r['changes']))} |"
                  for _, r in report.not_comparable.iterrows()]
    if not report.environment.empty:
        lines += ["", "| Setting | A | B |", "| --- | --- | --- |"]
        lines += [f"| {_markdown_cell(r['key'])} | {_markdown_cell(r['a'])} | "
                  f"{_markdown_cell(r['b'])} |" for _, r in report.environment.iterrows()]
    return "\n".join(lines) + "\n"


def csv_text(report: ComparisonReport, show_all: bool = True) -> str:
    """Every (cell, metric) row, then every not comparable cell (change 'not comparable')."""
    not_comparable = report.not_comparable.assign(change="not comparable",
                                                  note=report.not_comparable["differences"])
    frame = pd.concat([report.metrics, not_comparable[["cell_id", "experiment", "workload",
                                                        "system", "change", "note"]]],
                      ignore_index=True)
    return frame.to_csv(index=False)


def json_text(report: ComparisonReport, show_all: bool = True) -> str:
    """The whole comparison as one JSON object."""
    def records(frame: pd.DataFrame) -> list[dict]:
        return json.loads(frame.to_json(orient="records"))

    return json.dumps({
        "a": report.a, "b": report.b, "machines_differ": list(report.machines_differ),
        "across_machines": report.across_machines, "metrics": records(report.metrics),
        "not_comparable": records(report.not_comparable),
        "only_in_a": list(report.only_in_a), "only_in_b": list(report.only_in_b),
        "status_changes": records(report.status_changes),
        "environment": records(report.environment),
    }, indent=2) + "\n"


WRITERS: dict[str, Callable[[ComparisonReport, bool], str]] = {
    "table": table_text, "csv": csv_text, "json": json_text, "markdown": markdown_text,
}


def write_report(report: ComparisonReport, form: str = "table", show_all: bool = False,
                 out: TextIO | None = None) -> None:
    """Write the comparison in one of the formats of WRITERS."""
    (out or sys.stdout).write(WRITERS[form](report, show_all))


def compare_command(args: argparse.Namespace) -> int:
    """`dlbench compare A B`: what got faster or slower, what cannot be compared, and why."""
    if args.format not in WRITERS:
        raise UsageError(f"unknown format {args.format!r}; valid: {', '.join(WRITERS)}")
    results = Path(args.results_dir)
    try:
        if several_kinds(args.a, results) or several_kinds(args.b, results):
            found = compare_by_kind(args.a, args.b, results, args.metric or None,
                                    across_machines=args.across_machines)
            sys.stdout.write(kinds_text(found, args.format, args.all))
            return 0
        report = compare(args.a, args.b, results, args.metric or None,
                         across_machines=args.across_machines)
    except (CompareError, UnknownMetricError) as error:
        raise UsageError(str(error)) from None
    write_report(report, args.format, args.all)
    return 0


def kind_heading(item: KindComparison) -> str:
    """Which machine kind of A is compared with which of B, and the runs behind each."""
    return (f"Machine kind {item.kind_b.words} (B, {len(item.runs_b)} run"
            f"{'' if len(item.runs_b) == 1 else 's'}) against {item.kind_a.words} "
            f"(A, {len(item.runs_a)} run{'' if len(item.runs_a) == 1 else 's'})")


def kinds_text(found: list[KindComparison], form: str = "table",
               show_all: bool = False) -> str:
    """A comparison of sides of several machine kinds, one section per pair of kinds: csv
    with the kinds as its first columns, json as a list of objects."""
    if form == "csv":
        frames = [pd.read_csv(io.StringIO(csv_text(item.report)))
                  .assign(kind_a=item.kind_a.words, kind_b=item.kind_b.words)
                  for item in found]
        frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        first = ["kind_a", "kind_b"]
        return frame[first + [c for c in frame if c not in first]].to_csv(index=False) \
            if frames else ""
    if form == "json":
        return json.dumps([{"kind_a": item.kind_a.words, "kind_b": item.kind_b.words}
                           | json.loads(json_text(item.report)) for item in found],
                          indent=2) + "\n"
    mark = "## " if form == "markdown" else "== "
    return "\n".join(f"{mark}{kind_heading(item)}\n\n"
                     + WRITERS[form](item.report, show_all) for item in found)
