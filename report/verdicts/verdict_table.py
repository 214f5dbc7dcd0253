"""The verdicts as data: one row per judged pair, per answer and per A/A control (the
download every page's answers render from), and the page's error rate by simulation at its
own spreads (dlbench/core/judging/calibration.py)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlbench.core.judging.calibration import BUILD_REPLICATIONS, POWER_RATIOS, power, simulate
from dlbench.core.judging.decisions import PairDecision
from dlbench.core.declarations.metrics import reader_label
from dlbench.core.declarations.modes import group_words
from dlbench.core.judging.sequential import Design, design_from_policy
from dlbench.core.judging.verdict_engine import QUESTIONS, Control
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.verdicts.answers import Verdict, Verdicts
from dlbench.report.verdicts.defaults_answers import QUESTION as DEFAULTS_QUESTION
from dlbench.report.verdicts.defaults_answers import (DefaultsAnswer, defaults_answers,
                                                      defaults_rows)
from dlbench.report.verdicts.precision_answers import QUESTION as PRECISION_QUESTION
from dlbench.report.verdicts.precision_answers import (PrecisionAnswer, precision_answers,
                                                       precision_rows)

#: The columns of downloads/verdicts.csv, in order.
VERDICT_COLUMNS = [
    "row", "question", "title", "run_id", "device", "group", "metric", "cell_a", "cell_b",
    "result_id_a", "result_id_b", "contender_a", "contender_b", "processes_a", "processes_b",
    "ratio", "ci_low", "ci_high", "confidence", "p_value", "p_adjusted", "family_size",
    "look", "threshold", "decision", "outcome", "winner", "aa_control", "derived_from",
    "processes_needed",
    "group_key",  # the group as JSON ({"workload": ..., "batch_size": ...}): pages word it
    # a defaults-accuracy pair: the leader's accuracy minus the other's, paired by seed, and
    # its interval (fractions: 0.01 is one point); no ratio
    "difference", "difference_low", "difference_high",
]
#: The answers stored with a rule of their own (accuracy paired by seed, a difference and no
#: ratio), not a question of dlbench/core/judging/verdict_questions.yaml: the defaults-accuracy
#: answers and reduced precision's accuracy against fp32.
OWN_RULES = (DEFAULTS_QUESTION, PRECISION_QUESTION)


def _pair_row(judgement: PairDecision) -> dict:
    test = judgement.test
    return {"processes_a": test.n_a, "processes_b": test.n_b, "ratio": test.ratio,
            "ci_low": judgement.ci_low, "ci_high": judgement.ci_high,
            "confidence": judgement.confidence, "p_value": test.p_value,
            "p_adjusted": judgement.p_adjusted, "family_size": judgement.family_size,
            "look": judgement.look, "threshold": judgement.threshold,
            "decision": judgement.decision.value}


def _answer_rows(verdict: Verdict, ids: Mapping[tuple, str]) -> list[dict]:
    common = {"question": verdict.question, "title": verdict.title, "run_id": verdict.run_id,
              "device": verdict.device, "group": group_words(verdict.group),
              "group_key": json.dumps(dict(verdict.group), sort_keys=True),
              "metric": verdict.metric, "aa_control": False,
              "derived_from": verdict.derived_from, "threshold": verdict.threshold}
    best = verdict.standings[0] if verdict.standings else None
    rows = [common | {"row": "answer", "outcome": verdict.outcome.value,
                      "winner": verdict.winner or "", "processes_needed": verdict.needed,
                      "cell_a": best.cell_id if best else "",
                      "contender_a": best.contender if best else ""}]
    for pairing in verdict.pairings:
        rows.append(common | _pair_row(pairing.judgement) | {
            "row": "pair", "cell_a": best.cell_id, "cell_b": pairing.other_cell,
            "contender_a": best.contender, "contender_b": pairing.other,
            "result_id_a": ids.get((verdict.run_id, best.cell_id,
                                    _read(verdict, best.cell_id)), ""),
            "result_id_b": ids.get((verdict.run_id, pairing.other_cell,
                                    _read(verdict, pairing.other_cell)), "")})
    return rows


def _read(verdict: Verdict, cell_id: str) -> str:
    """The metric a verdict's question reads of a cell (a joined experiment's own)."""
    question = next((q for q in QUESTIONS if q.key == verdict.question), None)
    return question.metric_of(cell_id) if question else verdict.metric


def _control_row(control: Control, ids: Mapping[tuple, str]) -> dict:
    return _pair_row(control.judgement) | {
        "row": "control", "question": "", "title": "A/A control", "run_id": control.run_id,
        "device": control.cell_a.rsplit(":", 1)[-1], "group": control.experiment,
        "metric": control.metric, "cell_a": control.cell_a, "cell_b": control.cell_b,
        "result_id_a": ids.get((control.run_id, control.cell_a, control.metric), ""),
        "result_id_b": ids.get((control.run_id, control.cell_b, control.metric), ""),
        "aa_control": True,
        "outcome": (Outcome.WINNER if control.named_winner else Outcome.NO_WINNER).value}


def result_ids(summary: pd.DataFrame) -> dict[tuple, str]:
    """(run, cell, metric) -> the result ID a page links to."""
    return {(r, c, m): i for r, c, m, i in zip(summary["run_id"], summary["cell_id"],
                                              summary["metric"], summary["result_id"],
                                              strict=True)}


def judged_table(judged: Verdicts, summary: pd.DataFrame, observations: pd.DataFrame,
                 cells: pd.DataFrame) -> pd.DataFrame:
    """The verdicts table of a judged source: its answers, the answers of its own rules
    (OWN_RULES) from its `observations` and `cells`, and A/A controls, linked to the result
    IDs of its summary."""
    return verdicts_frame(judged.answers, judged.controls, result_ids(summary),
                          defaults_answers(observations, cells),
                          precision_answers(observations, cells))


def verdicts_frame(found: list[Verdict], controls: list[Control], ids: Mapping[tuple, str],
                   defaults: Sequence[DefaultsAnswer] = (),
                   precision: Sequence[PrecisionAnswer] = ()) -> pd.DataFrame:
    """Every answer, its pairs, the defaults-accuracy and precision-accuracy answers and
    the A/A controls, one row each."""
    rows = [row for verdict in found for row in _answer_rows(verdict, ids)]
    rows += defaults_rows(list(defaults))
    rows += precision_rows(list(precision))
    rows += [_control_row(control, ids) for control in controls]
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def verdict_files(frame: pd.DataFrame) -> dict[str, bytes]:
    """downloads/verdicts.csv and downloads/verdicts.parquet."""
    parquet = io.BytesIO()
    frame.astype({"processes_needed": "Int64", "processes_a": "Int64", "processes_b": "Int64",
                  "family_size": "Int64", "look": "Int64"}).to_parquet(parquet, index=False)
    return {"downloads/verdicts.csv": frame.to_csv(index=False).encode(),
            "downloads/verdicts.parquet": parquet.getvalue()}


def log_spreads(verdict: Verdict) -> np.ndarray:
    """Each contender's spread between processes on the log scale (from its CV)."""
    return np.array([math.sqrt(math.log1p(s.summary.cv ** 2)) if not math.isnan(s.summary.cv)
                     else math.nan for s in verdict.standings])


def simulated(verdict: Verdict) -> bool:
    """Whether a verdict is one the calibration simulates: tested, with a spread on every
    side. A side with none (identical values on every seed, exact: dlbench/core/judging/seeds.py)
    has no sampling error to simulate."""
    spreads = log_spreads(verdict)
    return (verdict.tested and verdict.outcome is not Outcome.NOT_MEASURABLE
            and min(s.summary.n for s in verdict.standings) >= 2
            and not any(p.judgement.test.note for p in verdict.pairings)
            and not np.isnan(spreads).any() and bool((spreads > 0).all()))


@dataclass(frozen=True)
class Risk:
    """The page's false-winner risk at its own spreads."""

    tested: int
    rate: str  # mean per-verdict false-winner rate, e.g. '1.2%'
    expected: str  # expected false winners on the page, e.g. '0.4'


@dataclass(frozen=True)
class Calibration:
    """The rule simulated at a page's own spreads: the methodology table and the page risk."""

    rows: list[dict]
    risk: Risk | None


def _design(designs: Mapping[str, Design], verdict: Verdict) -> Design:
    return designs.get(verdict.run_id) or design_from_policy(None)


def calibrate(found: list[Verdict], designs: Mapping[str, Design],
              replications: int = BUILD_REPLICATIONS) -> Calibration:
    """Per look, the false-winner rate and the power at each of POWER_RATIOS, averaged over
    the page's tested verdicts at their own spreads; the risk is the last look's rate x
    tested verdicts."""
    chosen = [v for v in found if simulated(v) and _design(designs, v).first >= 2]
    if not chosen:
        return Calibration([], None)
    looks = max(len(_design(designs, v).looks) for v in chosen)
    nulls = [_by_look(_null_by_look(v, _design(designs, v), replications), looks)
             for v in chosen]
    powers = {r: [_by_look(power(log_spreads(v), r, _design(designs, v), v.threshold,
                                 replications), looks) for v in chosen] for r in POWER_RATIOS}
    rows = []
    for look in range(looks):
        sizes = sorted({_design(designs, v).looks[min(look, len(_design(designs, v).looks) - 1)]
                        for v in chosen})
        rows.append({"look": look + 1, "processes": " or ".join(map(str, sizes)),
                     "verdicts": len(chosen),
                     "false_winners": f"{np.mean([n[look] for n in nulls]):.1%}",
                     "power": [f"{np.mean([p[look] for p in powers[r]]):.0%}"
                               for r in POWER_RATIOS]})
    rate = float(np.mean([n[-1] for n in nulls]))
    return Calibration(rows, Risk(len(chosen), f"{rate:.1%}", f"{rate * len(chosen):.1f}"))


def _null_by_look(verdict: Verdict, design: Design, replications: int) -> tuple[float, ...]:
    spreads = log_spreads(verdict)
    return simulate(spreads, np.zeros(len(spreads)), design, verdict.threshold,
                    replications).winner_by_look


def _by_look(values: tuple[float, ...], looks: int) -> tuple[float, ...]:
    return tuple(values) + (values[-1],) * (looks - len(values))


def controls_summary(controls: list[Control]) -> dict | None:
    """How the page's A/A controls came out: how many named a false winner, how many show
    their two cells alike (interval inside the threshold) and how many could not separate
    the threshold at their machine's noise (neither: the rule named no winner, yet the
    control does not show the noise is small)."""
    if not controls:
        return None
    noises = [c.noise for c in controls if not math.isnan(c.noise)]
    alike = sum(c.judgement.equivalent for c in controls)
    named = sum(c.named_winner for c in controls)
    return {"total": len(controls), "named": named, "alike": alike,
            "too_noisy": len(controls) - alike - named,
            "largest": f"{max(noises):.1%}" if noises else "n/a"}


def control_rows(controls: list[Control]) -> list[dict]:
    """The methodology page's A/A table: each control, its ratio, interval and decision."""
    return [{"experiment": c.experiment, "metric": reader_label(c.metric), "cell_a": c.cell_a,
             "cell_b": c.cell_b, "kind": "natural (two names of one mode)" if c.natural
             else "planned twin", "ratio": f"{c.judgement.ratio:.3f}x"
             if not math.isnan(c.judgement.ratio) else "n/a",
             "interval": (f"{c.judgement.ci_low:.2f}–{c.judgement.ci_high:.2f}x"
                          if not math.isnan(c.judgement.ci_low) else "n/a"),
             "processes": f"{c.judgement.test.n_a} and {c.judgement.test.n_b}",
             "decision": "false winner" if c.named_winner else c.judgement.decision.value}
            for c in controls]
