"""Common claims about the frameworks, checked against a release's measurements.

The claims are data (report/claims/claims.yaml); each names evidence rules of a kind this module
knows (see report/claims/rules.py). `check_claims` gives one verdict per claim and machine
device: supported, contradicted or inconclusive, with the numbers and the evidence cells.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path

import pandas as pd
import yaml

from dlbench.core.judging.decisions import Family, judge_together
from dlbench.core.judging.regime import Regime
from dlbench.core.storage.schema import system_label
from dlbench.report.claims.answered import AnsweredFamily, AnsweredPairs, answered_pairs
from dlbench.report.claims.defaults_rule import DecidedAnswers, decided_answers
from dlbench.report.claims.precision_rule import DecidedPrecision, decided_precision
from dlbench.report.claims.rules import Context, evaluate
from dlbench.report.render.labels import workload_label
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.vocabulary import (Claim, Combine, Expect, Finding, Rule, RuleKind,
                                              UNDECIDING, StatusCondition, combine_findings)
from dlbench.core.judging.conditions import Need
from dlbench.core.storage.project_files import listings_dir

CLAIMS_FILE = Path(__file__).with_name("claims.yaml")
LISTINGS_DIR = listings_dir()


class ClaimsFileError(ValueError):
    """A claims file that is not valid: says which claim and field, and what is accepted."""


@dataclass(frozen=True)
class ClaimVerdict:
    """A claim's verdict on one device of one machine of a release."""

    claim_id: str
    claim: str
    machine: str  # the label passed in `machines`, or the run ID
    device: str
    verdict: Outcome
    explanation: str
    evidence: tuple[str, ...]  # cell IDs
    evidence_runs: tuple[str, ...]  # the run ID of each evidence cell, same order
    regimes: tuple[Regime, ...] = ()
    ratios: tuple[tuple[str, float, float, float], ...] = ()  # label, ratio, low, high
    why: tuple[str, ...] = ()  # short reasons comparisons could not decide


REQUIRED: dict[RuleKind, tuple[str, ...]] = {
    RuleKind.ORDER: ("experiment", "metric", "order"),
    RuleKind.EFFECT: ("experiment", "metric", "contest", "baseline", "expect"),
    RuleKind.EQUIVALENT: ("experiment", "metric", "tolerance"),
    RuleKind.STATUS: ("experiment",),
    RuleKind.COUNT_OK: ("experiment", "order"),
    RuleKind.CODE_SIZE: ("experiment", "order", "listings"),
    RuleKind.DEFAULTS_ACCURACY: ("experiment", "metric"),
    RuleKind.PRECISION_ACCURACY: ("experiment", "metric"),
}

_ENUMS = {"kind": RuleKind, "combine": Combine, "expect": Expect,
          "supported_if": StatusCondition, "contradicted_if": StatusCondition}
_ENUM_LISTS = {"needs": Need}


def _enum_value(name: str, value: object, where: str) -> enum.Enum:
    kind = _ENUMS.get(name) or _ENUM_LISTS[name]
    try:
        return kind(value)
    except ValueError:
        accepted = ", ".join(member.value for member in kind)
        raise ClaimsFileError(f"{where}: {name} {value!r} is not one of: {accepted}") from None


def _tuple(value: object) -> tuple:
    return tuple(value) if isinstance(value, list | tuple) else (value,)


def parse_rule(raw: dict, where: str) -> Rule:
    """A rule from its YAML mapping, or a ClaimsFileError naming the bad field."""
    if not isinstance(raw, dict) or "kind" not in raw:
        raise ClaimsFileError(f"{where}: a rule must be a mapping with a 'kind'")
    known = {f.name for f in fields(Rule)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ClaimsFileError(
            f"{where}: unknown field {unknown[0]!r}; fields: {', '.join(sorted(known))}")
    kind = _enum_value("kind", raw["kind"], where)
    missing = [name for name in REQUIRED[kind] if name not in raw]
    if missing:
        raise ClaimsFileError(f"{where}: a {kind.value} rule needs {', '.join(missing)}")
    values: dict = {}
    for name, value in raw.items():
        if name in _ENUMS:
            values[name] = _enum_value(name, value, where)
        elif name in _ENUM_LISTS:
            values[name] = tuple(_enum_value(name, v, where) for v in _tuple(value))
        elif name == "listings":
            values[name] = tuple(sorted((str(k), str(v)) for k, v in value.items()))
        elif name == "documented":
            values[name] = tuple(sorted((str(k), tuple(str(x) for x in _tuple(v)))
                                        for k, v in value.items()))
        elif name == "where":
            values[name] = tuple((str(k), tuple(str(v) for v in _tuple(vs)))
                                 for k, vs in sorted(value.items()))
        elif name in ("group_by", "order", "variants", "baseline"):
            values[name] = tuple(str(v) for v in _tuple(value))
        elif name == "ratio_range":
            values[name] = (float(value[0]), float(value[1]))
        else:
            values[name] = value
    rule = Rule(**values)
    if kind is RuleKind.EFFECT and rule.expect is Expect.WITHIN and "ratio_range" not in raw:
        raise ClaimsFileError(f"{where}: expect 'within' needs ratio_range: [low, high]")
    if kind is RuleKind.STATUS and not (rule.supported_if or rule.contradicted_if):
        raise ClaimsFileError(f"{where}: a status rule needs supported_if or contradicted_if")
    return rule


def parse_claims(data: object, origin: str = "claims") -> list[Claim]:
    """Claims from the parsed YAML document."""
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise ClaimsFileError(f"{origin}: expected a mapping with a 'claims' list")
    claims, seen = [], set()
    for index, raw in enumerate(data["claims"]):
        where = f"{origin}: claim {raw.get('id', index) if isinstance(raw, dict) else index}"
        missing = [k for k in ("id", "claim", "source", "decides", "evidence")
                   if not isinstance(raw, dict) or k not in raw]
        if missing:
            raise ClaimsFileError(f"{where}: missing {', '.join(missing)}")
        if raw["id"] in seen:
            raise ClaimsFileError(f"{where}: duplicate id")
        seen.add(raw["id"])
        rules = tuple(parse_rule(rule, f"{where} rule {i + 1}")
                      for i, rule in enumerate(raw["evidence"]))
        claims.append(Claim(str(raw["id"]), str(raw["claim"]), str(raw["source"]),
                            str(raw["decides"]), rules))
    return claims


def load_claims(path: Path = CLAIMS_FILE) -> list[Claim]:
    """The claims of a YAML file (by default the project's report/claims/claims.yaml)."""
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ClaimsFileError(f"{path}: cannot read claims ({error})") from None
    return parse_claims(data, str(path))


def latest_per_machine(cells: pd.DataFrame, machines: Mapping[str, str] | None) -> pd.DataFrame:
    """Cells with a `machine` column; a cell in several runs of one machine kept from the latest."""
    labels = [str((machines or {}).get(str(r), r)) for r in cells["run_id"]]
    cells = cells.assign(machine=pd.Series(labels, index=cells.index, dtype="object"))
    cells = cells.sort_values("run_id", kind="stable")
    return cells.drop_duplicates(["machine", "cell_id"], keep="last").reset_index(drop=True)


def load_listings(directory: Path = LISTINGS_DIR) -> dict[str, str]:
    """The user-facing listings by path relative to the project (listings/<framework>.py)."""
    return {f"listings/{path.name}": path.read_text() for path in sorted(directory.glob("*.py"))
            if path.name != "__init__.py"}


def check_claims(observations: pd.DataFrame, cells: pd.DataFrame,
                 claims: list[Claim] | None = None,
                 machines: Mapping[str, str] | None = None,
                 listings: Mapping[str, str] | None = None,
                 environments: Mapping[str, Mapping] | None = None,
                 answered: AnsweredPairs | None = None,
                 defaults: DecidedAnswers | None = None,
                 precision: DecidedPrecision | None = None) -> list[ClaimVerdict]:
    """Every claim's verdict on every machine and device of a release, claim order kept.

    `machines` maps run IDs to a machine kind's label, so runs of one kind are judged as one;
    by default every run is its own machine. `listings` maps a listing's path to its text
    (code_size rules; by default the project's listings/). `environments` maps run IDs to
    their environment records (what the device can measure, its peak FLOP/s). `answered`
    holds the home page's pair decisions (report/claims/answered.py): a comparison among them
    takes that decision; the other comparisons of every claim are one family, Holm's
    correction runs over them. `defaults` holds the home page's defaults-accuracy answers
    (report/claims/defaults_rule.py) and `precision` its precision-accuracy answers
    (report/claims/precision_rule.py): a claim judged on the same answer takes them.
    """
    claims = load_claims() if claims is None else claims
    cells = latest_per_machine(cells, machines)
    observations = observations.merge(cells[["run_id", "cell_id", "machine"]],
                                      on=["run_id", "cell_id"], how="inner")
    context = Context(observations, cells, load_listings() if listings is None else listings,
                      environments or {}, defaults=defaults or {},
                      precision=precision or {})
    run_of = {(m, c): r for m, c, r in zip(cells["machine"], cells["cell_id"], cells["run_id"],
                                           strict=True)}
    devices = sorted({(str(m), str(d)) for m, d in zip(cells["machine"], cells["device"],
                                                       strict=True)})

    def judge_all(family: Family) -> list[ClaimVerdict]:
        verdicts = []
        for claim in claims:
            per_rule = [evaluate(rule, context, family) for rule in claim.evidence]
            for machine, device in devices:
                findings = [found.get((machine, device)) or Finding(
                    Outcome.NOT_MEASURABLE if rule.optional else Outcome.NOT_MEASURED,
                    f"no {rule.experiment} cell{_metric_text(rule)}{_where_text(rule)} ran "
                    f"on this machine")
                    for rule, found in zip(claim.evidence, per_rule, strict=True)]
                total = claim_total(findings)
                verdicts.append(ClaimVerdict(
                    claim.id, claim.claim, machine, device, total.outcome, total.sentence + ".",
                    total.cells, tuple(str(run_of[(machine, c)]) for c in total.cells),
                    total.regimes, total.ratios, total.why))
        return verdicts

    return judge_together(judge_all, AnsweredFamily(answered=answered or {}))


def claim_total(findings: list[Finding]) -> Finding:
    """A claim's rules as one finding: 'not measured in this release' when none of them was
    measured; otherwise a rule that was not measured leaves the claim short of support (it
    is part of what the claim says), so it counts as inconclusive."""
    if all(f.outcome in UNDECIDING for f in findings):
        return combine_findings(findings, Combine.ALL)
    return combine_findings([replace(f, outcome=Outcome.INCONCLUSIVE)
                             if f.outcome is Outcome.NOT_MEASURED else f
                             for f in findings], Combine.ALL)


def _where_text(rule: Rule) -> str:
    """A rule's selection in words (' of TensorFlow, fp16'): what did not run."""
    if not rule.where:
        return ""
    return " of " + ", ".join(_where_words(column, values) for column, values in rule.where)


def _where_words(column: str, values: tuple[str, ...]) -> str:
    """One column of a rule's selection in a reader's words: 'TensorFlow', 'fp16 or bf16'."""
    if column in ("framework", "system", "backend"):
        return " or ".join(system_label(v) for v in values)
    if column == "workload":
        return " or ".join(workload_label(v, "cpu") for v in values)
    return " or ".join(values)


def _metric_text(rule: Rule) -> str:
    from dlbench.core.declarations.metrics import METRICS, reader_label

    if not rule.metric:
        return ""
    if rule.metric not in METRICS:
        return f" with {reader_label(rule.metric)} (not measured by this dlbench version)"
    return f" with {reader_label(rule.metric)}"


def machines_of(runs: Sequence[object]) -> dict[str, str]:
    """A machine kind's label per run (CPU and GPUs): runs of one kind share it, whichever
    host measured them, so they are judged as one kind (its latest run's cells), never
    counted as two machines."""
    from dlbench.report.inputs.labelled import machine_label

    labels = {}
    for run in runs:
        env = run.environment
        label = machine_label(env, "cpu").removeprefix("cpu: ")
        if env.get("gpus"):
            label += " + " + machine_label(env, "cuda").removeprefix("cuda: ")
        labels[run.run_id] = label
    return labels


def check_source_claims(source: object, claims: list[Claim] | None = None,
                        verdicts: pd.DataFrame | None = None) -> list[ClaimVerdict]:
    """check_claims for a loaded release (dlbench.report.inputs.source.Source): its machines and
    environments, and `verdicts`, the home page's verdicts table (stored or this build's)."""
    return check_claims(source.observations, source.cells, claims, machines_of(source.runs),
                        environments={run.run_id: run.environment for run in source.runs},
                        answered=answered_pairs(verdicts), defaults=decided_answers(verdicts),
                        precision=decided_precision(verdicts))
