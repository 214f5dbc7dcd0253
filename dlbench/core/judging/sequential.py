"""The pre-registered design of a run's verdicts: how many processes per cell at each look,
and the significance level each look spends.

A three-look group-sequential design (Pocock's boundary): after the first look's processes
the pairs a verdict compares are judged at the first level; the cells of pairs that are
still undecided get the second look's processes (the runner adds them in interleaved rounds)
and those pairs are judged again; what is still undecided after the second look gets the
third look's processes, and only that. Pocock's equal nominal levels (0.0221 each for three
looks at an overall 0.05) keep the chance that any look names a false winner at about 0.05;
benchmarks/verdict_calibration.py checks it by simulation at a release's own spreads (the
third look is twice the second, not equally spaced, which the simulation accounts for). Runs
recorded with two looks keep them (run.json records the design; `--resume` follows it). A
run measured before looks existed (or with `--repeats N`) has one look at the full level.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The overall significance level of one family of pairs.
OVERALL_ALPHA = 0.05
#: Pocock's nominal level for each of two equally spaced looks at an overall 0.05.
POCOCK_TWO_LOOKS = 0.0294
#: Pocock's nominal level for each of three looks at an overall 0.05.
POCOCK_THREE_LOOKS = 0.0221


@dataclass(frozen=True)
class Design:
    """Cumulative processes per cell at each look, and the two-sided level of each look."""

    looks: tuple[int, ...]
    alphas: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.looks) != len(self.alphas) or not self.looks:
            raise ValueError("a design needs one level per look")
        if list(self.looks) != sorted(set(self.looks)):
            raise ValueError(f"looks must grow: {self.looks}")

    @property
    def first(self) -> int:
        """Processes per cell at the first look."""
        return self.looks[0]

    @property
    def last(self) -> int:
        """Processes per cell at the last look (the most a cell gets)."""
        return self.looks[-1]

    def record(self) -> dict:
        """The design as run.json records it."""
        return {"looks": list(self.looks), "alphas": list(self.alphas)}


def single_look(processes: int) -> Design:
    """One look at the full level (a fixed number of processes per cell)."""
    return Design((processes,), (OVERALL_ALPHA,))


def two_looks(first: int, last: int) -> Design:
    """Pocock's two-look design: `first` processes per cell, then up to `last`."""
    return Design((first, last), (POCOCK_TWO_LOOKS, POCOCK_TWO_LOOKS))


def three_looks(first: int, second: int, last: int) -> Design:
    """Pocock's three-look design: `first` processes per cell, then `second`, then `last`
    for the pairs still undecided after the second look."""
    return Design((first, second, last), (POCOCK_THREE_LOOKS,) * 3)


#: Each suite's design. Quick is a preview of 3 processes per cell in one look: enough for
#: a large difference to be decided, never citable (dlbench.runner.driver.plan.repeats).
SUITE_DESIGNS: dict[str, Design] = {
    "quick": single_look(3),
    "standard": three_looks(3, 6, 12),
    # the machine suite (75 minutes on 2 cores): undecided pairs get 5 processes, once
    "machine": two_looks(3, 5),
    "full": three_looks(5, 10, 20),
}


def design_for(suite: str, override: int | None = None) -> Design:
    """The design a run of `suite` follows; `--repeats N` fixes N processes in one look."""
    return single_look(override) if override else SUITE_DESIGNS[suite]


def design_from_policy(policy: dict | None) -> Design:
    """The design recorded in a run's process policy (run.json); a run recorded before
    looks existed followed one look at its processes per cell."""
    policy = policy or {}
    if policy.get("design"):
        recorded = policy["design"]
        return Design(tuple(recorded["looks"]), tuple(recorded["alphas"]))
    return single_look(int(policy.get("processes_per_cell") or 1))
