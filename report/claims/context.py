"""What claim rules read: the tables of a release with a `machine` column, its listings and
run environments, and how a rule selects its rows and frameworks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from dlbench.core.judging.regime import Regime
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.vocabulary import Combine, Finding, Rule, combine_findings
from dlbench.core.machine.achieved import cell_fractions
from dlbench.core.judging.conditions import regime_of_cells
from dlbench.core.judging.verdict_engine import repeat_rows


@dataclass
class Context:
    """What rules read: the tables (with `machine`), listings, run environments and the home
    page's defaults-accuracy decisions."""

    observations: pd.DataFrame
    cells: pd.DataFrame
    listings: Mapping[str, str]
    environments: Mapping[str, Mapping]
    #: the defaults-accuracy answers of the home page's verdicts table: (run, device,
    #: workload) -> (outcome, ((other system, decision), ...)) (report/claims/defaults_rule.py)
    defaults: Mapping[tuple[str, str, str], tuple[str, tuple[tuple[str, str], ...]]] = field(
        default_factory=dict)
    #: the precision-accuracy answers of that table: (run, device, workload, system) ->
    #: outcome (report/claims/precision_rule.py)
    precision: Mapping[tuple[str, str, str, str], str] = field(default_factory=dict)
    _rows: pd.DataFrame | None = field(default=None, repr=False)
    _fractions: dict | None = field(default=None, repr=False)

    @property
    def rows(self) -> pd.DataFrame:
        """Per-repeat values of ok cells, with `system`."""
        if self._rows is None:
            self._rows = repeat_rows(self.observations, self.cells)
        return self._rows

    @property
    def fractions(self) -> dict:
        """Achieved fraction of peak per (run_id, cell_id)."""
        if self._fractions is None:
            self._fractions = cell_fractions(self.observations, self.cells, self.environments)
        return self._fractions

    def environment(self, rows: pd.DataFrame) -> Mapping:
        """The environment of the (first) run of `rows`."""
        return self.environments.get(str(rows["run_id"].iloc[0])) or {} if len(rows) else {}

    def regime(self, rows: pd.DataFrame, cell_ids: tuple[str, ...]) -> Regime:
        """The regime of a comparison of these cells."""
        runs = dict(zip(rows["cell_id"], rows["run_id"], strict=True))
        return regime_of_cells(self.fractions, [(str(runs[c]), c) for c in cell_ids])[0]


def matches(system: str, name: str) -> bool:
    """True if a system (e.g. keras-torch) is covered by a name (keras, keras-torch)."""
    return system == name or system.startswith(f"{name}-")


def of_system(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """The rows of `frame` whose system is covered by `name`."""
    return frame[frame["system"].map(lambda s: matches(s, name)).astype(bool)]


def select(frame: pd.DataFrame, rule: Rule) -> pd.DataFrame:
    """The rows of `frame` in the rule's experiment that satisfy its `where`."""
    frame = frame[frame["experiment"] == rule.experiment]
    for column, allowed in rule.where:
        frame = frame[frame[column].astype(str).isin(allowed)]
    return frame


def per_device(context: Context, found: Iterable[tuple[str, str, Finding]], combine: Combine,
               not_run: str) -> dict[tuple[str, str], Finding]:
    """Findings of an answer rule, each (run, device, finding), as one finding per (machine,
    device) of the context's cells; a device with none is not measured, `not_run` saying
    why."""
    cells = context.cells
    machines = dict(zip(cells["run_id"].astype(str), cells["machine"].astype(str),
                        strict=True))
    by_key: dict[tuple[str, str], list[Finding]] = {}
    for run_id, device, finding in found:
        by_key.setdefault((machines[run_id], device), []).append(finding)
    devices = set(zip(cells["machine"].astype(str), cells["device"].astype(str), strict=True))
    return {key: combine_findings(by_key[key], combine) if key in by_key
            else Finding(Outcome.NOT_MEASURED, not_run) for key in sorted(devices)}
