"""Repeats: how many independent worker processes measure a cell (the harness's policy,
one per suite), and, inside a process, adaptive repeats until an interval is tight enough.

Processes per cell: quick 2 (a preview: enough to see a spread, not to cite), standard 3,
full 5; `--repeats N` sets N for every cell. Parity is measured by one process whatever the
suite: whether two frameworks compute the same function does not vary between processes.
A run is citable when its suite is standard or full and every cell has at least that
suite's number of processes; run.json records the policy and whether the run is citable.

Adaptive repeats inside a process:

A cell runs at least `spec.repeats` repeats and, where its grid asks for it
(params `max_repeats`, `target_ci`), more until the 95% CI of the key metric's median has a
relative half-width at or below the target, or the cap is reached. The decision is recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from dlbench.stats import RepeatDecision, repeat_decision
from runner.outcome import Observation
from runner.spec import CellSpec

DEFAULT_TARGET_CI = 0.05

#: Worker processes per cell for each suite.
SUITE_PROCESSES: dict[str, int] = {"quick": 2, "standard": 3, "full": 5}
#: Suites whose results may be cited (quick is a preview).
CITABLE_SUITES = ("standard", "full")
#: Experiments one process measures whatever the suite, and why.
SINGLE_PROCESS_EXPERIMENTS: dict[str, str] = {
    "parity": "agreement between frameworks does not vary between processes",
}


def process_count(suite: str, experiment: str, override: int | None = None) -> int:
    """How many independent worker processes measure a cell of `experiment` in `suite`."""
    if experiment in SINGLE_PROCESS_EXPERIMENTS:
        return 1
    return override or SUITE_PROCESSES[suite]


def policy_record(suite: str, override: int | None = None) -> dict:
    """The process-count policy of a run, as run.json records it."""
    processes = override or SUITE_PROCESSES[suite]
    citable = suite in CITABLE_SUITES and processes >= SUITE_PROCESSES[suite]
    return {"suite": suite, "processes_per_cell": processes, "override": override is not None,
            "suite_processes": SUITE_PROCESSES[suite],
            "single_process_experiments": SINGLE_PROCESS_EXPERIMENTS,
            "citable": citable, "preview": not citable}


def adaptive_repeats(spec: CellSpec, measure_one: Callable[[int], list[Observation]],
                     key_metric: str) -> tuple[list[Observation], RepeatDecision]:
    """Call `measure_one(repeat)` until the stopping rule says enough; return all observations."""
    max_repeats = max(spec.repeats, int(spec.params.get("max_repeats", spec.repeats)))
    target = float(spec.params.get("target_ci", DEFAULT_TARGET_CI))
    observations: list[Observation] = []
    key_values: list[float] = []
    repeat = 0
    while True:
        new = measure_one(repeat)
        observations += new
        key_values += [o.value for o in new if o.metric == key_metric and o.step is None]
        repeat += 1
        decision = repeat_decision(key_values, target, max_repeats,
                                   min_repeats=min(spec.repeats, max_repeats))
        if not decision.more:
            return observations, decision


def decision_details(decision: RepeatDecision, key_metric: str) -> dict:
    """The stopping decision as it is stored with the cell."""
    return {
        "repeats": {
            "key_metric": key_metric,
            "done": decision.n,
            "stopped_because": decision.reason.value,
            "relative_half_width": decision.relative_half_width,
            "target_relative_half_width": decision.target_relative_half_width,
        }
    }
