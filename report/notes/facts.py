"""The factual figures a release's notes state, computed from the release itself: per run
the processes re-measured as busy (its superseded/ records), the decided share of its
testable timing answers and the A/A controls that name a winner (its stored verdicts), its
machine's bound and the best real-size cell's share of it; per pair of machine kinds the
median slowdown of a cell's process time, by experiment."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pandas as pd

from dlbench.core.machine.achieved import cell_fractions
from dlbench.core.machine.fma_peak import bound_words, environment_bound
from dlbench.core.machine.machines import machine_kind
from dlbench.report.inputs.source import Source, source_processes
from dlbench.report.verdicts.stored import stored_verdicts
from dlbench.report.verdicts.verdict_table import OWN_RULES

#: Questions that are not timing answers (the notes count timing answers): accuracy, memory
#: and the accuracy answers of their own rules (defaults-accuracy, precision-accuracy).
NOT_TIMING = ("accuracy", "peak-memory", "precision-memory", *OWN_RULES)
TESTED = ("winner", "no meaningful difference", "inconclusive")
DECIDED = ("winner", "no meaningful difference")
#: The real-size workloads, whose share of the bound the notes give.
REAL_SIZE = ("resnet50-synthetic", "bert-base-tokens")
#: A steal share in a busy reason: 'CPU steal 6.2% in the timed window'.
STEAL = re.compile(r"CPU steal ([\d.]+)%")


@dataclass(frozen=True)
class RunFacts:
    """What one run's data say, in the terms its notes use."""

    run_id: str
    machine: str
    remeasured: int  # distinct processes measured again because the machine was busy
    remeasures: int  # re-measurements (a process may be measured again twice)
    largest_steal: float | None  # the largest CPU steal share a busy reason names
    decided: int
    testable: int
    controls_named: int
    controls: int
    bound_flops: float | None
    bound_derivation: str
    best_real_share: float | None
    best_real_cell: str


def busy_remeasures(run) -> tuple[int, int, float | None]:
    """Distinct processes re-measured, re-measurements, and the largest steal they name."""
    records = sorted((run.root / "superseded").glob("*.json"))
    processes = {re.sub(r"__\d{8}T\d+Z\.json$", "", path.name) for path in records}
    steals = [float(share) / 100 for path in records
              for share in STEAL.findall(str(json.loads(path.read_text()).get("reason", "")))]
    return len(processes), len(records), max(steals) if steals else None


def _answers(verdicts: pd.DataFrame, run_id: str) -> tuple[int, int, int, int]:
    """Decided and testable timing answers, A/A controls naming a winner and controls."""
    mine = verdicts[verdicts["run_id"].astype(str) == run_id]
    answers = mine[(mine["row"] == "answer") & ~mine["question"].isin(NOT_TIMING)
                   & (mine["derived_from"].fillna("").astype(str) == "")]
    outcome = answers["outcome"].astype(str)
    controls = mine[mine["row"] == "control"]
    named = controls["winner"].fillna("").astype(str) != ""
    return (int(outcome.isin(DECIDED).sum()), int(outcome.isin(TESTED).sum()),
            int(named.sum()), len(controls))


def run_facts(source: Source) -> list[RunFacts]:
    """Each run's facts, in the release's run order."""
    verdicts = stored_verdicts(source)
    environments = {run.run_id: run.environment for run in source.runs}
    fractions = cell_fractions(source.observations, source.cells, environments)
    real = set(source.cells.loc[source.cells["workload"].isin(REAL_SIZE)
                                & (source.cells["precision"].astype(str) == "fp32"), "cell_id"])
    facts = []
    for run in source.runs:
        shares = {cell: share for (run_id, cell), share in fractions.items()
                  if run_id == run.run_id and cell in real}
        best = max(shares, key=shares.get, default="")
        device = str(run.info.get("device") or "cpu")
        bound = environment_bound(run.environment, "fp32_flops", device)
        counts = _answers(verdicts, run.run_id) if verdicts is not None else (0, 0, 0, 0)
        facts.append(RunFacts(run.run_id, machine_kind(run.environment).words,
                              *busy_remeasures(run), *counts,
                              bound.flops if bound else None,
                              bound_words(run.environment, "fp32_flops", device),
                              shares.get(best), best))
    return facts


def slowdowns(source: Source, slower: str, faster: str) -> dict[str, float]:
    """By experiment, the median over cells of the ratio of the cells' median process wall
    time on run `slower` to run `faster` (processes that finished, re-measured ones replaced)."""
    processes = source_processes(source)
    if processes is None:
        return {}
    done = processes[processes["status"] == "ok"]
    times = done.groupby(["run_id", "cell_id"])["wall_time_s"].median()
    if slower not in times.index.get_level_values(0) or faster not in \
            times.index.get_level_values(0):
        return {}
    ratio = (times.loc[slower] / times.loc[faster]).dropna()
    experiments = ratio.index.to_series().str.split(":").str[0]
    return {str(k): float(v) for k, v in ratio.groupby(experiments.values).median().items()}
