"""A suite's whole run, projected before anything is measured: the first look as the runner
prints it, each later look if every pair stayed undecided (the bound), and a projection where
each later look tops up only a share of the cells; and, after the run, the projection's error.

The default shares come from release 2027.02, the last standard run measured alone before
looks had three steps: its second look topped up 50 of its 77 cells with more than one
process (97 planned, 20 of them parity; `results/releases/2027.02/runs/*/run.json`, `looks`);
the third look's share is assumed to be the second's squared (a pair still undecided is as
likely to stay undecided again). Nothing here is timed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.plan.estimate import estimate
from dlbench.runner.driver.plan.repeats import SINGLE_PROCESS_EXPERIMENTS, run_design
from dlbench.runner.driver.plan.schedule import process_order
from dlbench.runner.driver.plan.sharing import worker_batches

#: Release 2027.02's second look: 50 of its 77 multi-process cells topped up.
SECOND_LOOK_SHARE = 50 / 77


@dataclass(frozen=True)
class LookMinutes:
    """One later look: its processes per cell before and after, its minutes if every cell
    were topped up, and the share of cells expected to be."""

    before: int
    after: int
    most_min: float
    share: float


@dataclass(frozen=True)
class Projection:
    """A run's expected minutes: its first look, later looks, projected total and bound."""

    cells: int
    processes: int
    first_min: float
    looks: tuple[LookMinutes, ...]

    @property
    def projected_min(self) -> float:
        return self.first_min + sum(look.share * look.most_min for look in self.looks)

    @property
    def bound_min(self) -> float:
        return self.first_min + sum(look.most_min for look in self.looks)

    def lines(self) -> list[str]:
        """The projection in words, one line each."""
        said = [f"{self.cells} cells; first look: {self.processes} processes, "
                f"{self.first_min:.0f} min"]
        for index, look in enumerate(self.looks, start=2):
            said.append(f"look {index} ({look.before} -> {look.after} processes): at most "
                        f"{look.most_min:.0f} min; {look.share:.2f} of the cells: "
                        f"{look.share * look.most_min:.0f} min")
        said.append(f"whole run: projected {self.projected_min:.0f} min; at most "
                    f"{self.bound_min:.0f} min")
        return said

    def record(self) -> dict:
        """The projection as run.json records it."""
        return {"first_look_min": round(self.first_min, 1),
                "projected_min": round(self.projected_min, 1),
                "bound_min": round(self.bound_min, 1), "processes": self.processes}


def project(cells: list[CellSpec], suite: str, history: dict[str, float],
            shares: list[float] | None = None, override: int | None = None,
            second: float = SECOND_LOOK_SHARE) -> Projection:
    """The projection of measuring `cells` under `suite`'s design (`shares`: of the cells
    topped up at each later look; by default `second` to the power of the look, `second`
    being the second look's share: dlbench.runner.driver.plan.look_shares reads the kind's
    own)."""
    first = estimate(worker_batches(process_order(cells, 0), suite), history)
    design = run_design(suite, override)
    shares = shares or [second ** (k + 1) for k in range(len(design.looks) - 1)]
    if len(shares) != len(design.looks) - 1:
        raise ValueError(f"give one share for each of the {len(design.looks) - 1} later looks")
    looks = tuple(LookMinutes(before, after, _look_minutes(suite, cells, before, after, history),
                              share)
                  for (before, after), share in zip(zip(design.looks, design.looks[1:]), shares,
                                                    strict=True))
    return Projection(len(cells), first.processes, first.seconds / 60, looks)


def _look_minutes(suite: str, cells: list[CellSpec], first: int, last: int,
                  history: dict[str, float]) -> float:
    """Minutes of processes `first`..`last - 1` of every multi-process cell."""
    added = [replace(cell, repeat_index=index, repeats=last) for cell in cells
             if cell.experiment not in SINGLE_PROCESS_EXPERIMENTS
             for index in range(first, last)]
    return estimate(worker_batches(added, suite), history).seconds / 60 if added else 0.0


def error_line(projected_min: float, measured_s: float) -> str:
    """The projection's error after the run, in words."""
    measured_min = measured_s / 60
    error = (measured_min / projected_min - 1) * 100 if projected_min else 0.0
    return (f"estimate's error: projected {projected_min:.0f} min, measured "
            f"{measured_min:.0f} min ({error:+.0f}%)")
