"""Claim rules that count rather than compare: cell statuses, working paths, listing lines.

Each returns {(machine, device): Finding}, like the rules of report/claim_rules.py.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import pandas as pd

from dlbench.judging import Family
from report.claim_context import Context, of_system, select
from report.claim_types import ClaimOutcome, Finding, Rule, StatusCondition
from report.conditions import optional_package
from report.verdicts import with_system

SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_MEASURABLE = ClaimOutcome
Key = tuple[str, str]


def _attempted(rule: Rule, cells: pd.DataFrame) -> pd.DataFrame:
    """The rule's cells that were attempted: not skipped, not missing an optional package."""
    frame = select(with_system(cells), rule)
    missing = [optional_package(str(s), str(r)) for s, r in zip(frame["status"], frame["reason"],
                                                                strict=True)]
    frame = frame.assign(missing_package=missing)
    return frame[(frame["status"] != "skipped") & frame["missing_package"].isna()]


def _skipped(rule: Rule, cells: pd.DataFrame) -> pd.DataFrame:
    frame = select(with_system(cells), rule)
    missing = [optional_package(str(s), str(r)) or ("" if s != "skipped" else str(r)[:60])
               for s, r in zip(frame["status"], frame["reason"], strict=True)]
    frame = frame.assign(missing_package=missing)
    return frame[(frame["status"] == "skipped") | (frame["missing_package"] != "")]


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
        text = f"{int(ok.sum())} of {len(group)} selected cells ran" + (
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


def count_ok(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    """The first framework must have more working paths than each other one, robustly: even
    if every skipped path of the others worked; contradicted when even with all of its own
    skipped paths working it would not."""
    skipped_all = _skipped(rule, context.cells)
    result = {}
    for (machine, device), group in _attempted(rule, context.cells).groupby(["machine",
                                                                             "device"]):
        skipped = skipped_all[(skipped_all["machine"] == machine)
                              & (skipped_all["device"] == device)]
        counts = []
        for name in rule.order:
            mine, gone = of_system(group, name), of_system(skipped, name)
            packages = sorted(set(gone["missing_package"]) - {""})
            counts.append((name, int((mine["status"] == "ok").sum()), len(mine), len(gone),
                           packages))
        text = "; ".join(f"{n}: {ok} of {tried} {rule.experiment} paths tried here work"
                         + (f", {gone} skipped" + (f" (not installed: {', '.join(p)})" if p else "")
                            if gone else "") + _untried(rule, n, group, skipped)
                         for n, ok, tried, gone, p in counts)
        first, others = counts[0], counts[1:]
        if any(c[2] + c[3] == 0 for c in counts):
            outcome = INCONCLUSIVE
        elif first[1] > max(o[1] + o[3] for o in others):
            outcome = SUPPORTED
        elif first[1] + first[3] <= max(o[1] for o in others):
            outcome = CONTRADICTED
        else:
            outcome = INCONCLUSIVE
        result[(str(machine), str(device))] = Finding(outcome, text, tuple(group["cell_id"]))
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
    """The first framework's listing must be shorter than each other's by the margin."""
    paths = dict(rule.listings)
    missing = [n for n in rule.order if paths.get(n) not in listings]
    if missing:
        return Finding(INCONCLUSIVE, f"no listing of {', '.join(missing)} to count")
    sizes = [(n, code_lines(listings[paths[n]])) for n in rule.order]
    text = "; ".join(f"{n}: {lines} lines ({paths[n]})" for n, lines in sizes)
    shorter = all(sizes[0][1] * (1 + rule.margin) < lines for _, lines in sizes[1:])
    return Finding(SUPPORTED if shorter else CONTRADICTED, text)


def code_size(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    finding = code_size_finding(rule, context.listings)
    devices = {(str(m), str(d)) for m, d in zip(context.cells["machine"], context.cells["device"],
                                                strict=True)}
    return {key: finding for key in sorted(devices)}
