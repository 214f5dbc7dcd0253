"""The evidence rule kinds of report/claims/check.py: each turns tables into findings per device.

`evaluate(rule, context, family)` returns {(machine, device): Finding}; the tables need a
`machine` column (check_claims adds it). Devices without any matching evidence are absent;
check_claims reports them as inconclusive. Every pair is judged by the one rule of
dlbench.core.judging.decisions; a pair the home page answers takes its decision
(report/claims/answered.py).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from collections.abc import Callable, Mapping

import pandas as pd

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.decisions import (CEILINGS, IDENTICAL_REPEATS, Family, PairDecision,
                                            identical_repeats)
from dlbench.core.judging.regime import Regime
from dlbench.core.declarations.metrics import METRICS, Direction, reader_label
from dlbench.core.declarations.modes import group_words, stands_for
from dlbench.report.claims.answered import AS_ANSWERED, AnsweredFamily
from dlbench.report.claims.context import Context, of_system, select
from dlbench.report.claims.counts import code_size, count_ok, status
from dlbench.report.claims.defaults_rule import defaults_accuracy
from dlbench.report.claims.precision_rule import precision_accuracy
from dlbench.report.claims.vocabulary import Expect, Finding, Rule, RuleKind, combine_findings
from dlbench.core.judging.conditions import (
    Need,
    half_precision_reason,
    overhead_memory_reason,
    two_devices_reason,
    working_memory_reason,
)
from dlbench.core.judging.verdict_engine import (Standing, cell_samples, cell_values,
                                                 like_with_like, standings)

SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_MEASURABLE = (
    Outcome.SUPPORTED, Outcome.CONTRADICTED, Outcome.INCONCLUSIVE,
    Outcome.NOT_MEASURABLE)
#: A group without the cells its rule names compares nothing: the claim's other groups decide.
NOT_MEASURED = Outcome.NOT_MEASURED
DEFAULT_GROUPS = {RuleKind.ORDER: ("workload", "batch_size", "mode_class"),
                  RuleKind.EQUIVALENT: ("workload", "batch_size", "mode_class"),
                  RuleKind.EFFECT: ("workload", "batch_size", "system")}
Key = tuple[str, str]
__all__ = ["Context", "evaluate"]


def _label(columns: tuple[str, ...], key: object) -> str:
    values = key if isinstance(key, tuple) else (key,)
    return group_words(list(zip(columns, values, strict=True)))


def _numbers(judgement: PairDecision) -> str:
    return (f"ratio {judgement.ratio:.2f}× ({judgement.confidence:.1%} CI "
            f"{judgement.ci_low:.2f}–{judgement.ci_high:.2f}×, "
            f"Holm p={judgement.p_adjusted:.2g})")


def _device_reason(rule: Rule, rows: pd.DataFrame, device: str, env: Mapping) -> str | None:
    for need in rule.needs:
        if need is Need.TWO_DEVICES:
            return two_devices_reason(device, env)
        if need is Need.WORKING_MEMORY:
            return working_memory_reason(set(rows["metric"]))
    return None


def _without_emulated(rule: Rule, rows: pd.DataFrame, device: str,
                      env: Mapping) -> tuple[pd.DataFrame, list[Finding]]:
    """Rows of precisions this device computes natively; a finding for each one it emulates."""
    if Need.HALF_PRECISION_UNITS not in rule.needs:
        return rows, []
    findings = []
    for precision in sorted(set(rows["precision"].astype(str))):
        reason = half_precision_reason(precision, device, env)
        if reason:
            rows = rows[rows["precision"].astype(str) != precision]
            findings.append(Finding(NOT_MEASURABLE, reason, why=(f"no {precision} units",)))
    return rows, findings


def why_undecided(judgement: PairDecision) -> tuple[str, ...]:
    """A short reason when a pair could not decide; empty when it did."""
    if judgement.decision in (Outcome.A_BETTER, Outcome.B_BETTER) or judgement.equivalent:
        return ()
    if judgement.decision is Outcome.INCONCLUSIVE:
        return ("identical repeats (deterministic reruns, not seeds)",)
    if min(judgement.test.n_a, judgement.test.n_b) < 2:
        return ("too few repeats for a test",)
    if judgement.reason == AS_ANSWERED:
        return (AS_ANSWERED,)
    if judgement.effect <= judgement.threshold:
        return (f"differences within {judgement.threshold:.0%}",)
    return ("not significant after Holm's correction over the comparisons the home page does "
            "not make",)


def pair_key(group: pd.DataFrame, metric: str, cell_a: str, cell_b: str) -> tuple:
    """What identifies a comparison of two cells: (run, metric, A, B) when both come from one
    run, the key under which the home page answered it (report/claims/answered.py); the
    two runs otherwise, which the home page never compares."""
    runs = dict(zip(group["cell_id"], group["run_id"].astype(str), strict=False))
    run_a, run_b = runs.get(cell_a, ""), runs.get(cell_b, "")
    if run_a == run_b:
        return (run_a, metric, cell_a, cell_b)
    return (metric, cell_a, run_a, cell_b, run_b)


def _memory_gated(rule: Rule, rows: pd.DataFrame, columns: tuple[str, ...]) -> dict:
    """Group key -> why a memory rule cannot decide that group (dlbench.core.judging.conditions)."""
    if Need.WORKING_MEMORY not in rule.needs:
        return {}
    reasons = {key: overhead_memory_reason(group)
               for key, group in rows.groupby(list(columns), sort=True)}
    return {key: reason for key, reason in reasons.items() if reason}


def _by_group(rule: Rule, context: Context,
              judge: Callable[[str, pd.DataFrame, Mapping], Finding]) -> dict[Key, Finding]:
    """Judge each group of the rule's rows per machine and device; needs checked first."""
    rows = select(context.rows, rule)
    metrics = {rule.metric, rule.baseline_metric} - {""}
    metrics |= {"peak_memory", "model_memory"} if Need.WORKING_MEMORY in rule.needs else set()
    rows = rows[rows["metric"].isin(metrics)]
    columns = rule.group_by or DEFAULT_GROUPS[rule.kind]
    rows = like_with_like(rows, columns)
    result = {}
    for (machine, device), device_rows in rows.groupby(["machine", "device"], sort=True):
        env = context.environment(device_rows)
        reason = _device_reason(rule, device_rows, str(device), env)
        if reason:
            result[(str(machine), str(device))] = Finding(NOT_MEASURABLE, reason)
            continue
        gated = _memory_gated(rule, device_rows, columns)
        device_rows = device_rows[device_rows["metric"].isin({rule.metric, rule.baseline_metric})]
        device_rows, findings = _without_emulated(rule, device_rows, str(device), env)
        findings += [Finding(NOT_MEASURABLE, f"{_label(columns, key)}: {gated[key]}",
                             tuple(sorted(set(group["cell_id"]))))
                     if key in gated else judge(_label(columns, key), group, env)
                     for key, group in device_rows.groupby(list(columns), sort=True)]
        result[(str(machine), str(device))] = combine_findings(findings, rule.combine)
    return result


def _regime_gate(rule: Rule, context: Context, label: str, group: pd.DataFrame,
                 cells: tuple[str, ...]) -> tuple[Regime, Finding | None]:
    """The group's regime, and a finding when the rule decides only compute-bound groups."""
    regime = context.regime(group, cells)
    if rule.regime != Regime.COMPUTE_BOUND.value or regime is Regime.COMPUTE_BOUND:
        return regime, None
    if regime is Regime.OVERHEAD_BOUND:
        return regime, Finding(NOT_MEASURABLE, f"{label}: overhead-bound, and the claim is "
                               "about large (compute-bound) computations", cells, (regime,),
                               why=("overhead-bound workloads only",))
    return regime, Finding(INCONCLUSIVE, f"{label}: the regime was not recorded, and the claim "
                           "is about large (compute-bound) computations", cells, (regime,),
                           why=("regime not recorded",))


def _pair_outcome(judgement: PairDecision) -> Outcome:
    """A claim that A is better than B, as this judgement of A against B says."""
    decision = judgement.decision
    if decision is Outcome.A_BETTER:
        return SUPPORTED
    if decision is Outcome.B_BETTER or judgement.equivalent:
        return CONTRADICTED  # B better, or a tight interval within the practical threshold
    return INCONCLUSIVE


def _order(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    direction = _direction(rule)

    def judge(label: str, group: pd.DataFrame, env: Mapping) -> Finding:
        best: list[Standing] = []
        for name in rule.order:
            mine = of_system(group, name)
            if mine.empty:
                return Finding(NOT_MEASURED, f"{label}: no {name} cell")
            best.append(standings(mine, "system", direction)[0])
        cells = tuple(s.cell_id for s in best)
        regime, gated = _regime_gate(rule, context, label, group, cells)
        if gated:
            return gated
        values, texts, outcomes, ratios, why = cell_values(group), [], [], [], []
        for a, b in itertools.combinations(best, 2):
            judgement = family.judge(pair_key(group, rule.metric, a.cell_id, b.cell_id),
                                     values[a.cell_id], values[b.cell_id], direction,
                                     rule.margin, ceiling=CEILINGS.get(rule.metric))
            outcomes.append(_pair_outcome(judgement))
            why += why_undecided(judgement)
            texts.append(f"{a.contender}/{b.contender} {reader_label(rule.metric)} "
                         f"{_numbers(judgement)}, "
                         f"{_decision_words(judgement, a.contender, b.contender)}"
                         + (f" ({judgement.reason})" if judgement.reason else ""))
            ratios.append(_ratio(f"{label}: {a.contender}/{b.contender}", judgement))
        outcome = (CONTRADICTED if CONTRADICTED in outcomes else
                   SUPPORTED if all(o is SUPPORTED for o in outcomes) else INCONCLUSIVE)
        return Finding(outcome, f"{label}: " + "; ".join(texts), cells, (regime,), tuple(ratios),
                       tuple(dict.fromkeys(why)))

    return _by_group(rule, context, judge)


def _decision_words(judgement: PairDecision, a: str, b: str) -> str:
    return {Outcome.A_BETTER: f"{a} better", Outcome.B_BETTER: f"{b} better"}.get(
        judgement.decision, judgement.decision.value)


def _direction(rule: Rule) -> Direction:
    metric = METRICS.get(rule.metric)
    return metric.direction if metric else Direction.LOWER


def _ratio(label: str, judgement: PairDecision) -> tuple[str, float, float, float]:
    return (label, judgement.ratio, judgement.ci_low, judgement.ci_high)


def _expected(rule: Rule, judgement: PairDecision) -> Outcome:
    if judgement.decision is Outcome.INCONCLUSIVE:
        return INCONCLUSIVE
    if rule.expect is Expect.WITHIN:
        low, high = rule.ratio_range
        if low <= judgement.ci_low and judgement.ci_high <= high:
            return SUPPORTED
        if judgement.ci_high < low or judgement.ci_low > high:
            return CONTRADICTED
        return INCONCLUSIVE
    outcome = _pair_outcome(judgement)
    if rule.expect is Expect.WORSE and outcome is not INCONCLUSIVE:
        flipped = judgement.decision is Outcome.B_BETTER
        return SUPPORTED if flipped else CONTRADICTED
    return outcome


def _stands_for(rule: Rule, group: pd.DataFrame, name: str) -> pd.Series:
    """Rows whose contest value is `name`, or (modes) whose cell measures it: Keras on JAX's
    default cell is also its jit_compile (dlbench.core.declarations.modes.SAME_AS)."""
    contest = group[rule.contest].astype(str)
    if rule.contest != "mode":
        return contest == name
    return pd.Series([name in stands_for(str(e), str(s), m, str(d)) for e, s, m, d in
                      zip(group["experiment"], group["system"], contest, group["device"],
                          strict=True)], index=group.index, dtype=bool)


def _effect(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    direction = _direction(rule)
    words = {SUPPORTED: "as claimed", CONTRADICTED: "against the claim",
             INCONCLUSIVE: "undecided"}

    def judge(label: str, group: pd.DataFrame, env: Mapping) -> Finding:
        paired = group[group["metric"] == rule.baseline_metric]
        group = group[group["metric"] == rule.metric]
        contest = group[rule.contest].astype(str)
        is_base = contest.isin(rule.baseline)
        if not is_base.any() and not rule.baseline_metric:
            return Finding(NOT_MEASURED, f"{label}: no {' or '.join(rule.baseline)} cell")
        variants = rule.variants or tuple(sorted(set(contest) - set(rule.baseline)))
        findings, values = [], cell_values(group)
        for variant in (v for v in variants if _stands_for(rule, group, v).any()):
            mine = standings(group[_stands_for(rule, group, variant)], rule.contest,
                             direction)[0]
            if rule.baseline_metric:  # the baseline measured in the variant's own process
                base_name, cells = f"{rule.baseline[0]} (same process)", (mine.cell_id,)
                base_values = paired.loc[paired["cell_id"] == mine.cell_id, "value"].to_numpy()
            else:
                base = standings(group[is_base], rule.contest, direction)[0]
                base_name, cells = base.contender, (mine.cell_id, base.cell_id)
                base_values = values[base.cell_id]
            if not len(base_values):
                findings.append(Finding(INCONCLUSIVE, f"{label}: no {base_name} for {variant}"))
                continue
            regime, gated = _regime_gate(rule, context, label, group, cells)
            if gated:
                findings.append(gated)
                continue
            key = (pair_key(group, rule.metric, *cells) if len(cells) == 2
                   else (rule.metric, rule.baseline_metric, *cells))  # paired in one process
            judgement = family.judge(key, values[mine.cell_id], base_values, direction,
                                     rule.margin)
            outcome = _expected(rule, judgement)
            why = f" ({judgement.reason})" if judgement.reason else ""
            findings.append(Finding(
                outcome, f"{label}: {variant}/{base_name} {reader_label(rule.metric)} "
                f"{_numbers(judgement)}, {words[outcome]}{why}", cells, (regime,),
                (_ratio(f"{label}: {variant}/{base_name}", judgement),),
                why_undecided(judgement)))
        if not findings:
            device = str(group["device"].iloc[0])
            emulated = Need.HALF_PRECISION_UNITS in rule.needs and all(
                half_precision_reason(v, device, env) for v in variants)
            return Finding(NOT_MEASURABLE if emulated else NOT_MEASURED,
                           f"{label}: no {' or '.join(variants)} cell"
                           + (" computed natively here" if emulated else ""))
        return combine_findings(findings, rule.combine)

    return _by_group(rule, context, judge)


def _equivalent(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    direction = _direction(rule)

    def judge(label: str, group: pd.DataFrame, env: Mapping) -> Finding:
        best = standings(group, "system", direction)
        if len(best) < 2:
            return Finding(NOT_MEASURED, f"{label}: only {best[0].contender} measured")
        cells_used = tuple(s.cell_id for s in best)
        home = _as_home_page(rule, family, group, best, label)
        if home is not None:
            return home
        samples = cell_samples(group)
        if any(identical_repeats(samples[c].values) and not samples[c].own_seeds
               for c in cells_used):
            return Finding(INCONCLUSIVE, f"{label}: {IDENTICAL_REPEATS}", cells_used,
                           why=("identical repeats (deterministic reruns, not seeds)",))
        lows = [s.summary.ci_low for s in best]
        highs = [s.summary.ci_high for s in best]
        medians = ", ".join(f"{s.contender} {s.summary.median:.4g}" for s in best)
        floor = rule.min_value
        text = (f"{label}: {reader_label(rule.metric)} medians {medians}; largest gap "
                f"{max(s.summary.median for s in best) - min(s.summary.median for s in best):.3g}"
                f" (tolerance {rule.tolerance:g}" + (f", minimum {floor:g})" if floor else ")"))
        if max(lows) - min(highs) > rule.tolerance or (floor is not None and min(highs) < floor):
            return Finding(CONTRADICTED, text, cells_used)
        if max(highs) - min(lows) <= rule.tolerance and (floor is None or min(lows) >= floor):
            return Finding(SUPPORTED, text, cells_used)
        return Finding(INCONCLUSIVE, text, cells_used)

    return _by_group(rule, context, judge)


#: An equivalence rule's group as the home page decided its pairs: the claim's outcome.
_HOME_EQUAL = {Outcome.NO_MEANINGFUL_DIFFERENCE: SUPPORTED, Outcome.A_BETTER: CONTRADICTED,
               Outcome.B_BETTER: CONTRADICTED}


def _as_home_page(rule: Rule, family: Family, group: pd.DataFrame, best: list[Standing],
                  label: str) -> Finding | None:
    """An equivalence group whose every pair (the best against each other) the home page
    decided takes its decisions: supported when none differs meaningfully (and every median
    clears the rule's minimum), contradicted when one does, else inconclusive; None where the
    home page did not judge all of them."""
    keys = [pair_key(group, rule.metric, best[0].cell_id, s.cell_id) for s in best[1:]]
    answered = family.answered if isinstance(family, AnsweredFamily) else {}
    if not keys or not all(key in answered for key in keys):
        return None
    outcomes = {_HOME_EQUAL.get(answered[key].decision, INCONCLUSIVE) for key in keys}
    outcome = (CONTRADICTED if CONTRADICTED in outcomes else
               INCONCLUSIVE if INCONCLUSIVE in outcomes else SUPPORTED)
    floor = rule.min_value
    if outcome is SUPPORTED and floor is not None and min(s.summary.median for s in best) < floor:
        outcome = CONTRADICTED
    medians = ", ".join(f"{s.contender} {s.summary.median:.4g}" for s in best)
    words = {SUPPORTED: "no meaningful difference", CONTRADICTED: "a meaningful difference",
             INCONCLUSIVE: "not decided"}[outcome]
    return Finding(outcome, f"{label}: {reader_label(rule.metric)} medians {medians}; "
                   f"{words}, as the home page decides it"
                   + (f" (minimum {floor:g})" if floor else ""),
                   tuple(s.cell_id for s in best))


def _precision_accuracy(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    """Reduced precision's accuracy answers (report/claims/precision_rule.py); where a device
    has none, its release's reduced-precision and fp32 cells compared as an effect (releases
    before 2027.05 trained each precision in a cell of its own, without its test set's size)."""
    found = precision_accuracy(rule, context)
    older = _effect(replace(rule, kind=RuleKind.EFFECT), context, family)
    return {key: older.get(key, finding) if finding.outcome is Outcome.NOT_MEASURED
            else finding for key, finding in found.items()} | {
        key: finding for key, finding in older.items() if key not in found}


HANDLERS = {RuleKind.ORDER: _order, RuleKind.EFFECT: _effect, RuleKind.EQUIVALENT: _equivalent,
            RuleKind.STATUS: status, RuleKind.COUNT_OK: count_ok, RuleKind.CODE_SIZE: code_size,
            RuleKind.DEFAULTS_ACCURACY: defaults_accuracy,
            RuleKind.PRECISION_ACCURACY: _precision_accuracy}


def evaluate(rule: Rule, context: Context, family: Family) -> dict[Key, Finding]:
    """Findings of one rule per (machine, device); a metric not registered gives none, unless
    the rule needs working memory (then the device says it cannot measure it)."""
    if rule.metric and rule.metric not in METRICS and Need.WORKING_MEMORY not in rule.needs:
        return {}
    return HANDLERS[rule.kind](rule, context, family)

