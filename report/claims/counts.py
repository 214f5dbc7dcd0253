"""Claim rules that count or describe rather than compare: cell statuses; the deployment
paths tried and the listings' lines, described and never judged (this project chose them).

Each returns {(machine, device): Finding}, like the rules of report/claims/rules.py.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import pandas as pd

from dlbench.core.judging.decisions import Family
from dlbench.core.text.words import plural
from dlbench.report.claims.context import Context, of_system, select
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.vocabulary import Finding, Rule, StatusCondition
from dlbench.core.judging.conditions import optional_package
from dlbench.core.judging.verdict_engine import with_system

SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_MEASURABLE = (
    Outcome.SUPPORTED, Outcome.CONTRADICTED, Outcome.INCONCLUSIVE,
    Outcome.NOT_MEASURABLE)
Key = tuple[str, str]


def _attempted(rule: Rule, cells: pd.DataFrame) -> pd.DataFrame:
    """The rule's cells that were attempted: not skipped, not missing an optional package."""
    frame = select(with_system(cells), rule)
    missing = [optional_package(str(s), str(r)) for s, r in zip(frame["status"], frame["reason"],
                                                                strict=True)]
    frame = frame.assign(missing_package=missing)
    return frame[(frame["status"] != "skipped") & frame["missing_package"].isna()]


def status(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    result = {}
    for (machine, device), group in _attempted(rule, context.cells).groupby(["machine",
                                                                             "device"]):
        ok = group["status"] == "ok"
        holds = {StatusCondition.ALL_OK: bool(ok.all()), StatusCondition.ANY_OK: bool(ok.any()),
                 StatusCondition.NONE_OK: not ok.any(),
                 StatusCondition.ANY_NOT_OK: not ok.all()}
        failing = [f"{r.cell_id} {r.status} ({str(r.reason)[:80]})"
                   for r in group[~ok].itertuples()]
        text = f"{int(ok.sum())} of {plural(len(group), 'selected cell')} ran" + (
            f"; not ok: {', '.join(failing)}" if failing else "")
        outcome = (SUPPORTED if rule.supported_if and holds[rule.supported_if] else
                   CONTRADICTED if rule.contradicted_if and holds[rule.contradicted_if] else
                   INCONCLUSIVE)
        result[(str(machine), str(device))] = Finding(outcome, text, tuple(group["cell_id"]))
    return result


def _untried(rule: Rule, name: str, attempted: pd.DataFrame, skipped: pd.DataFrame) -> str:
    """The paths the framework documents that no cell here tried, in words."""
    documented = dict(rule.documented).get(name, ())
    tried = set(of_system(attempted, name)["export_format"]) | set(
        of_system(skipped, name)["export_format"])
    untried = [path for path in documented if path not in tried]
    return f" (documented, not tried here: {', '.join(untried)})" if untried else ""


#: Why a claim decided by the paths or the listings chosen here is described, not judged.
PATHS_UNJUDGED = ("described, not judged: a count of the deployment paths chosen here decides "
                  "nothing about a framework's deployment story")
LINES_UNJUDGED = ("described, not judged: lines of code are not simplicity, and a margin of a "
                  "few lines between listings written here is no evidence")


def _path_words(cell: pd.Series, rows: pd.DataFrame) -> str:
    """One path in words: its format, whether it works, its parity and its latency."""
    if cell["status"] != "ok":
        gone = cell.get("missing_package") or ""
        return (f"{cell['export_format']} skipped (not installed: {gone})" if gone
                else f"{cell['export_format']} {cell['status']}")
    mine = rows[rows["cell_id"] == cell["cell_id"]]
    facts = [f"{label} {mine.loc[mine['metric'] == metric, 'value'].median():{spec}}{unit}"
             for metric, label, spec, unit in (("artifact_max_abs_diff", "max abs diff", ".2g", ""),
                                               ("artifact_latency", "latency", ".3g", " ms"))
             if (mine["metric"] == metric).any()]
    return f"{cell['export_format']} works" + (f" ({', '.join(facts)})" if facts else "")


def count_ok(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    """Each framework's deployment paths tried here, described (works, parity, latency) and
    never judged: which paths were tried is this project's choice."""
    frame = select(with_system(context.cells), rule)
    missing = [optional_package(str(s), str(r)) or "" for s, r in
               zip(frame["status"], frame["reason"], strict=True)]
    frame = frame.assign(missing_package=missing)
    result = {}
    for (machine, device), group in frame.groupby(["machine", "device"]):
        described = []
        for name in rule.order:
            mine = of_system(group, name).sort_values("export_format")
            paths = [_path_words(cell, context.rows) for _, cell in mine.iterrows()]
            described.append(f"{name}: " + ("; ".join(paths) or "no path tried")
                             + _untried(rule, name, mine[mine["status"] == "ok"],
                                        mine[mine["status"] != "ok"]))
        result[(str(machine), str(device))] = Finding(
            NOT_MEASURABLE, f"{PATHS_UNJUDGED}. " + " | ".join(described),
            tuple(group["cell_id"]))
    return result


def code_lines(text: str) -> int:
    """Lines of code: not blank, not a comment, not a docstring."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        first = body[0] if isinstance(body, list) and body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                and isinstance(first.value.value, str):
            docstrings.update(range(first.lineno, first.end_lineno + 1))
    return sum(1 for number, line in enumerate(text.splitlines(), 1)
               if line.strip() and not line.lstrip().startswith("#") and number not in docstrings)


def code_size_finding(rule: Rule, listings: Mapping[str, str]) -> Finding:
    """Each framework's listing and its lines of code, described and never judged."""
    paths = dict(rule.listings)
    sizes = [f"{n}: {code_lines(listings[paths[n]])} lines ({paths[n]})"
             if paths.get(n) in listings else f"{n}: no listing" for n in rule.order]
    return Finding(NOT_MEASURABLE, f"{LINES_UNJUDGED}. " + "; ".join(sizes))


def code_size(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    finding = code_size_finding(rule, context.listings)
    devices = {(str(m), str(d)) for m, d in zip(context.cells["machine"], context.cells["device"],
                                                strict=True)}
    return {key: finding for key in sorted(devices)}
