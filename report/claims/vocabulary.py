"""The vocabulary shared by claims (report/claims/check.py) and their rules
(report/claims/rules.py).

Kept apart so that neither of the two imports the other's module for its types.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from dlbench.core.judging.decisions import PRACTICAL_THRESHOLD
from dlbench.core.judging.regime import Regime
from dlbench.core.judging.conditions import Need
from dlbench.core.judging.outcomes import CLAIM, Outcome


#: Outcomes that decide nothing: a claim's other findings decide where there are any.
UNDECIDING = (Outcome.NOT_MEASURABLE, Outcome.NOT_MEASURED)


class RuleKind(enum.Enum):
    """The kinds of evidence rule a claim can use."""

    ORDER = "order"
    EFFECT = "effect"
    EQUIVALENT = "equivalent"
    STATUS = "status"
    COUNT_OK = "count_ok"
    CODE_SIZE = "code_size"
    DEFAULTS_ACCURACY = "defaults_accuracy"
    PRECISION_ACCURACY = "precision_accuracy"


class Combine(enum.Enum):
    """How a rule's groups (workloads, frameworks) add up to one finding."""

    ALL = "all"  # a general claim: every group must support it; one contradiction refutes it
    ANY = "any"  # an existence claim ("may", "some"): one supporting group suffices


class Expect(enum.Enum):
    """What an effect rule expects of the variant against the baseline."""

    BETTER = "better"
    WORSE = "worse"
    WITHIN = "within"


class StatusCondition(enum.Enum):
    """Conditions on the statuses of the selected cells."""

    ALL_OK = "all_ok"
    ANY_OK = "any_ok"
    NONE_OK = "none_ok"
    ANY_NOT_OK = "any_not_ok"


@dataclass(frozen=True)
class Rule:
    """One declarative evidence rule; which fields matter depends on its kind."""

    kind: RuleKind
    experiment: str
    metric: str = ""
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()
    group_by: tuple[str, ...] = ()
    combine: Combine = Combine.ALL
    order: tuple[str, ...] = ()  # order, count_ok, code_size: framework names, claimed best first
    contest: str = "system"  # effect: the column whose values are compared
    baseline: tuple[str, ...] = ()  # effect: its name(s), e.g. [eager, run_eagerly]
    baseline_metric: str = ""  # effect: the baseline measured in the variant's own process
    variants: tuple[str, ...] = ()  # effect: empty means every value except the baseline
    expect: Expect = Expect.BETTER  # effect
    ratio_range: tuple[float, float] = (0.0, 0.0)  # effect with expect: within
    margin: float = PRACTICAL_THRESHOLD  # the practical threshold: smaller is no difference
    tolerance: float = 0.0  # equivalent
    min_value: float | None = None  # equivalent
    supported_if: StatusCondition | None = None  # status
    contradicted_if: StatusCondition | None = None  # status
    needs: tuple[Need, ...] = ()  # what the device must offer for the rule to decide
    regime: str = ""  # compute-bound: only such groups decide (the claim is about them)
    listings: tuple[tuple[str, str], ...] = ()  # code_size: framework -> listing path
    documented: tuple[tuple[str, tuple[str, ...]], ...] = ()  # count_ok: framework -> paths
    #: true: cells a run may lack (the real-size models): without them on a device the rule
    #: is not measurable there, not inconclusive, and the claim's other rules decide
    optional: bool = False


@dataclass(frozen=True)
class Claim:
    """A claim as it circulates, where it comes from, and the rules that decide it."""

    id: str
    claim: str
    source: str
    decides: str
    evidence: tuple[Rule, ...]


@dataclass(frozen=True)
class Finding:
    """What one rule (or one group of it) says, its facts in short words, and on which cells."""

    outcome: Outcome
    sentence: str
    cells: tuple[str, ...] = ()
    regimes: tuple[Regime, ...] = ()
    ratios: tuple[tuple[str, float, float, float], ...] = field(default=())  # label, r, low, high
    why: tuple[str, ...] = ()  # short reasons a comparison could not decide


def combine_findings(findings: list[Finding], combine: Combine) -> Finding:
    """Several findings as one: a contradiction wins under ALL, a support under ANY; findings
    that are not measurable here or not measured in this release count only when nothing
    else is known."""
    if not findings:
        return Finding(Outcome.INCONCLUSIVE, "no evidence")
    cells = tuple(dict.fromkeys(c for f in findings for c in f.cells))
    regimes = tuple(dict.fromkeys(r for f in findings for r in f.regimes))
    ratios = tuple(r for f in findings for r in f.ratios)
    why = tuple(dict.fromkeys(w for f in findings for w in f.why))
    measurable = [f for f in findings if f.outcome not in UNDECIDING]
    if not measurable:  # nothing measured says so; else the device could not show it
        outcome = (Outcome.NOT_MEASURED if all(
            f.outcome is Outcome.NOT_MEASURED for f in findings)
            else Outcome.NOT_MEASURABLE)
        return Finding(outcome, _join(findings), cells, regimes, ratios, why)
    by = {o: [f for f in measurable if f.outcome is o] for o in CLAIM}
    supported, contradicted = by[Outcome.SUPPORTED], by[Outcome.CONTRADICTED]
    outcome, told = Outcome.INCONCLUSIVE, findings
    if combine is Combine.ANY and supported:
        outcome, told = Outcome.SUPPORTED, supported
    elif combine is Combine.ANY and len(contradicted) == len(measurable):
        outcome, told = Outcome.CONTRADICTED, contradicted
    elif combine is Combine.ALL and contradicted:
        outcome, told = Outcome.CONTRADICTED, contradicted
    elif combine is Combine.ALL and len(supported) == len(measurable):
        outcome, told = Outcome.SUPPORTED, supported
    return Finding(outcome, _join(told), cells, regimes, ratios, why)


def _join(findings: list[Finding]) -> str:
    """Sentences joined; 'label: reason' sentences with one reason are said once."""
    labels: dict[str, list[str]] = {}
    for finding in findings:
        label, colon, reason = finding.sentence.partition(": ")
        key, value = (reason, label) if colon else (finding.sentence, "")
        labels.setdefault(key, []).append(value)
    parts = []
    for reason, where in labels.items():
        where = [w for w in dict.fromkeys(where) if w]
        if not where:
            parts.append(reason)
        elif len(where) == 1:
            parts.append(f"{where[0]}: {reason}")
        else:
            parts.append(f"{reason} ({' / '.join(where)})")
    return "; ".join(parts)
