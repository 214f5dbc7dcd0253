"""The evidence rule kinds of report/claims.py: each turns tables into findings per device.

`evaluate(rule, observations, cells)` returns {(machine, device): Finding}; both tables
need a `machine` column (check_claims adds it). Devices without
any matching evidence are absent; check_claims reports them as inconclusive.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

import pandas as pd

from dlbench.metrics import METRICS, Direction
from dlbench.stats import Comparison, Outcome, compare_samples
from report.claim_types import (
    ClaimOutcome,
    Expect,
    Finding,
    Rule,
    RuleKind,
    StatusCondition,
    combine_findings,
)
from report.verdicts import Standing, repeat_rows, standings, with_system

SUPPORTED, CONTRADICTED, INCONCLUSIVE = (ClaimOutcome.SUPPORTED, ClaimOutcome.CONTRADICTED,
                                         ClaimOutcome.INCONCLUSIVE)
DEFAULT_GROUPS = {RuleKind.ORDER: ("workload", "batch_size"),
                  RuleKind.EQUIVALENT: ("workload", "batch_size"),
                  RuleKind.EFFECT: ("workload", "batch_size", "system")}
Key = tuple[str, str]


def matches(system: str, name: str) -> bool:
    """True if a system (e.g. keras-torch) is covered by a name (keras, keras-torch)."""
    return system == name or system.startswith(f"{name}-")


def _where(frame: pd.DataFrame, rule: Rule) -> pd.DataFrame:
    frame = frame[frame["experiment"] == rule.experiment]
    for column, allowed in rule.where:
        frame = frame[frame[column].astype(str).isin(allowed)]
    return frame


def _label(columns: tuple[str, ...], key: object) -> str:
    values = key if isinstance(key, tuple) else (key,)
    return ", ".join(f"{c.replace('_', ' ')} {v}" for c, v in zip(columns, values, strict=True))


def _values(rows: pd.DataFrame, standing: Standing) -> pd.Series:
    return rows.loc[rows["cell_id"] == standing.cell_id, "value"]


def _versus(rows: pd.DataFrame, a: Standing, b: Standing, direction: Direction) -> Comparison:
    return compare_samples(_values(rows, a), _values(rows, b), direction)


def _numbers(comparison: Comparison) -> str:
    return (f"ratio {comparison.ratio:.2f}× (95% CI {comparison.ratio_ci_low:.2f}–"
            f"{comparison.ratio_ci_high:.2f}×, p={comparison.p_value:.2g})")


def _by_group(rule: Rule, rows: pd.DataFrame,
              judge: Callable[[str, pd.DataFrame], Finding]) -> dict[Key, Finding]:
    columns = rule.group_by or DEFAULT_GROUPS[rule.kind]
    result = {}
    for (machine, device), device_rows in rows.groupby(["machine", "device"], sort=True):
        findings = [judge(_label(columns, key), group)
                    for key, group in device_rows.groupby(list(columns), sort=True)]
        result[(str(machine), str(device))] = combine_findings(findings, rule.combine)
    return result


def _order(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame) -> dict[Key, Finding]:
    direction = METRICS[rule.metric].direction
    rows = _where(repeat_rows(observations, cells), rule)
    rows = rows[rows["metric"] == rule.metric]

    def judge(label: str, group: pd.DataFrame) -> Finding:
        best = []
        for name in rule.order:
            mine = group[group["system"].map(lambda s, n=name: matches(s, n))]
            if mine.empty:
                return Finding(INCONCLUSIVE, f"{label}: no {name} cell")
            best.append(standings(mine, "system", direction)[0])
        cells_used = tuple(s.cell_id for s in best)
        texts, outcomes = [], []
        for a, b in zip(best, best[1:], strict=False):
            comparison = _versus(group, a, b, direction)
            outcomes.append(comparison.outcome)
            verdict = {Outcome.A_BETTER: f"{a.contender} beats {b.contender}",
                       Outcome.B_BETTER: f"{b.contender} beats {a.contender}"}.get(
                comparison.outcome, f"{a.contender} and {b.contender} do not differ significantly")
            texts.append(f"{verdict} on {rule.metric}, {a.contender}/{b.contender} "
                         f"{_numbers(comparison)}")
        outcome = (CONTRADICTED if Outcome.B_BETTER in outcomes else
                   SUPPORTED if all(o is Outcome.A_BETTER for o in outcomes) else INCONCLUSIVE)
        return Finding(outcome, f"{label}: " + "; ".join(texts), cells_used)

    return _by_group(rule, rows, judge)


def _expected(rule: Rule, comparison: Comparison) -> ClaimOutcome:
    if rule.expect is Expect.WITHIN:
        low, high = rule.ratio_range
        if low <= comparison.ratio_ci_low and comparison.ratio_ci_high <= high:
            return SUPPORTED
        if comparison.ratio_ci_high < low or comparison.ratio_ci_low > high:
            return CONTRADICTED
        return INCONCLUSIVE
    wanted = Outcome.A_BETTER if rule.expect is Expect.BETTER else Outcome.B_BETTER
    if comparison.outcome is wanted:
        return SUPPORTED
    if comparison.outcome in (Outcome.A_BETTER, Outcome.B_BETTER):
        return CONTRADICTED
    band = (1 / (1 + rule.margin), 1 + rule.margin)
    if band[0] <= comparison.ratio_ci_low and comparison.ratio_ci_high <= band[1]:
        return CONTRADICTED  # a tight interval around 1: no meaningful effect
    return INCONCLUSIVE


def _effect(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame) -> dict[Key, Finding]:
    direction = METRICS[rule.metric].direction
    rows = _where(repeat_rows(observations, cells), rule)
    rows = rows[rows["metric"] == rule.metric]
    words = {SUPPORTED: "as claimed", CONTRADICTED: "against the claim",
             INCONCLUSIVE: "undecided"}

    def judge(label: str, group: pd.DataFrame) -> Finding:
        contest = group[rule.contest].astype(str)
        is_base = contest.isin(rule.baseline)
        if not is_base.any():
            return Finding(INCONCLUSIVE, f"{label}: no {' or '.join(rule.baseline)} cell")
        base = standings(group[is_base], rule.contest, direction)[0]
        variants = rule.variants or tuple(sorted(set(contest) - set(rule.baseline)))
        findings = []
        for variant in (v for v in variants if (contest == v).any()):
            mine = standings(group[contest == variant], rule.contest, direction)[0]
            comparison = _versus(group, mine, base, direction)
            outcome = _expected(rule, comparison)
            findings.append(Finding(outcome, f"{label}: {variant}/{base.contender} {rule.metric} "
                                    f"{_numbers(comparison)}, {words[outcome]}",
                                    (mine.cell_id, base.cell_id)))
        if not findings:
            return Finding(INCONCLUSIVE, f"{label}: no {' or '.join(variants)} cell")
        return combine_findings(findings, rule.combine)

    return _by_group(rule, rows, judge)


def _equivalent(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame) -> dict[Key, Finding]:
    direction = METRICS[rule.metric].direction
    rows = _where(repeat_rows(observations, cells), rule)
    rows = rows[rows["metric"] == rule.metric]

    def judge(label: str, group: pd.DataFrame) -> Finding:
        best = standings(group, "system", direction)
        if len(best) < 2:
            return Finding(INCONCLUSIVE, f"{label}: only {best[0].contender} measured")
        lows = [s.summary.ci_low for s in best]
        highs = [s.summary.ci_high for s in best]
        medians = ", ".join(f"{s.contender} {s.summary.median:.4g}" for s in best)
        floor = rule.min_value
        text = (f"{label}: {rule.metric} medians {medians}; largest gap "
                f"{max(s.summary.median for s in best) - min(s.summary.median for s in best):.3g}"
                f" (tolerance {rule.tolerance:g}" + (f", minimum {floor:g})" if floor else ")"))
        cells_used = tuple(s.cell_id for s in best)
        if max(lows) - min(highs) > rule.tolerance or (floor is not None and min(highs) < floor):
            return Finding(CONTRADICTED, text, cells_used)
        if max(highs) - min(lows) <= rule.tolerance and (floor is None or min(lows) >= floor):
            return Finding(SUPPORTED, text, cells_used)
        return Finding(INCONCLUSIVE, text, cells_used)

    return _by_group(rule, rows, judge)


def _attempted(rule: Rule, cells: pd.DataFrame) -> pd.DataFrame:
    frame = _where(with_system(cells), rule)
    return frame[frame["status"] != "skipped"]


def _status(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame) -> dict[Key, Finding]:
    result = {}
    for (machine, device), group in _attempted(rule, cells).groupby(["machine", "device"]):
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


def _count_ok(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame) -> dict[Key, Finding]:
    result = {}
    for (machine, device), group in _attempted(rule, cells).groupby(["machine", "device"]):
        counts = []
        for name in rule.order:
            mine = group[group["system"].map(lambda s, n=name: matches(s, n))]
            counts.append((name, int((mine["status"] == "ok").sum()), len(mine)))
        text = "; ".join(f"{n}: {ok} of {total} {rule.experiment} cells work"
                         for n, ok, total in counts)
        if any(total == 0 for _, _, total in counts):
            outcome = INCONCLUSIVE
        else:
            outcome = SUPPORTED if counts[0][1] > max(c[1] for c in counts[1:]) else CONTRADICTED
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


def _code_size(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame,
               code: Mapping[str, str] | None) -> dict[Key, Finding]:
    result = {}
    for (machine, device), group in _attempted(rule, cells).groupby(["machine", "device"]):
        sizes, missing = [], []
        for name in rule.order:
            paths = sorted({str(p) for p, s in zip(group["code_path"], group["system"],
                                                   strict=True) if matches(s, name)})
            counted = [(code_lines(code[p]), p) for p in paths if code and p in code]
            if counted:
                sizes.append((name, *min(counted)))
            else:
                missing.append(name)
        if missing:
            outcome, text = INCONCLUSIVE, f"no code of {', '.join(missing)} to count"
        else:
            text = "; ".join(f"{n}: {lines} lines ({path})" for n, lines, path in sizes) + (
                " (each framework's own file; the shared protocol is the same for all)")
            outcome = SUPPORTED if all(sizes[0][1] < s[1] for s in sizes[1:]) else CONTRADICTED
        result[(str(machine), str(device))] = Finding(outcome, text, tuple(group["cell_id"]))
    return result


HANDLERS = {RuleKind.ORDER: _order, RuleKind.EFFECT: _effect, RuleKind.EQUIVALENT: _equivalent,
            RuleKind.STATUS: _status, RuleKind.COUNT_OK: _count_ok}


def evaluate(rule: Rule, observations: pd.DataFrame, cells: pd.DataFrame,
             code: Mapping[str, str] | None = None) -> dict[Key, Finding]:
    """Findings of one rule per (machine, device); a metric not registered gives none."""
    if rule.metric and rule.metric not in METRICS:
        return {}
    if rule.kind is RuleKind.CODE_SIZE:
        return _code_size(rule, observations, cells, code)
    return HANDLERS[rule.kind](rule, observations, cells)
