"""Your machine beside the published ones: a draft of the reader's own run (what `make` builds)
placed beside the newest release's machines on the comparisons they share.

For each pair this machine judged (the best against another system, in one question group),
the ratio measured here with its interval, and the same two cells' ratio of geometric means
on each machine of the release. The release's machines are never pooled with this one: each
ratio belongs to its own machine. Where the two cells were measured with other settings (the
quick suite's fewer epochs, say) or by other code, the page says so."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from dlbench.core.declarations.identity import config_differences
from dlbench.core.storage.measurement_code import differing_files, runs_code_record
from dlbench.core.declarations.metrics import Direction
from dlbench.core.storage.schema import system_label
from dlbench.core.judging.summaries import geometric_centres
from dlbench.core.judging.verdict_engine import metric_direction, repeat_rows
from dlbench.report.inputs.source import Source, source_processes
from dlbench.report.inputs.labelled import format_number, hardware_words
from dlbench.report.pages.answer_tables import group_label
from dlbench.report.pages.machine_columns import machine_names
from dlbench.report.pages.registry import Page, PageInputs, page
from dlbench.report.render.jinja import render
from dlbench.report.verdicts.answers import Verdict

#: How many differing code files the page names before it counts the rest.
NAMED_FILES = 5


@dataclass(frozen=True)
class Placement:
    """One pair judged here, beside the same pair on each machine of the release."""

    title: str
    group: str
    pair: str  # 'PyTorch against Keras on JAX'
    here: str  # '1.60x (1.42–1.81x)'
    there: tuple[str, ...]  # one per release machine: '1.55x' or '–'
    agrees: str  # whether this machine's interval holds the release's ratios, in words
    settings: str  # how the cells' settings differ from the release's, in words ('' same)


def _times(value: float) -> str:
    return "–" if math.isnan(value) else f"{format_number(value)}x"


def _advantage(best: float, other: float, direction: Direction) -> float:
    """How many times better `best`'s centre is than `other`'s."""
    if math.isnan(best) or math.isnan(other) or best <= 0 or other <= 0:
        return math.nan
    return other / best if direction is Direction.LOWER else best / other


def _agreement(low: float, high: float, ratios: list[float]) -> str:
    measured = [r for r in ratios if not math.isnan(r)]
    if not measured:
        return "not measured there"
    inside = sum(low <= r <= high for r in measured)
    if inside == len(measured):
        return "within this machine's interval"
    return f"{len(measured) - inside} of {len(measured)} outside this machine's interval"


def _settings(draft_cells: pd.DataFrame, release_cells: pd.DataFrame, cell_ids: list[str]
              ) -> str:
    """How the draft's cells were configured against the release's, in words."""
    mine = draft_cells.drop_duplicates("cell_id").set_index("cell_id")
    theirs = release_cells.drop_duplicates("cell_id").set_index("cell_id")
    changed: dict[str, str] = {}
    for cell_id in cell_ids:
        if cell_id not in mine.index or cell_id not in theirs.index:
            continue
        for key, here, there in config_differences(str(mine.at[cell_id, "config_json"]),
                                                   str(theirs.at[cell_id, "config_json"])):
            changed[key.removeprefix("params.").replace("_", " ")] = \
                f"{_setting(here)} here, {_setting(there)} there"
    return "; ".join(f"{key}: {words}" for key, words in sorted(changed.items()))


def _setting(value: object) -> str:
    return "not set" if value is None else str(value)


def placements(found: list[Verdict], draft: Source, release: Source,
               machines: Mapping[str, str]) -> list[Placement]:
    """Every pair this machine judged whose two cells the release measured on a machine."""
    centres = geometric_centres(repeat_rows(release.observations, release.cells,
                                   source_processes(release)))
    placed = []
    for verdict in found:
        if not verdict.tested or not verdict.standings:
            continue
        best = verdict.standings[0]
        direction = metric_direction(verdict.metric)
        for pairing in verdict.pairings:
            there = [_advantage(centres.get((run_id, best.cell_id, verdict.metric), math.nan),
                                centres.get((run_id, pairing.other_cell, verdict.metric),
                                            math.nan), direction) for run_id in machines]
            if all(math.isnan(r) for r in there):
                continue
            low, high = pairing.advantage_interval()
            placed.append(Placement(
                verdict.title, group_label(_group_key(verdict), verdict.device, "system"),
                f"{system_label(best.contender)} against {system_label(pairing.other)}",
                f"{_times(pairing.advantage)} ({_times(low)}–{_times(high)})",
                tuple(_times(r) for r in there), _agreement(low, high, there),
                _settings(draft.cells, release.cells, [best.cell_id, pairing.other_cell])))
    return placed


def _group_key(verdict: Verdict) -> str:
    return json.dumps(dict(verdict.group))


def code_words(draft: Source, release: Source) -> str:
    """Whether this machine measured with the release's code, in words."""
    mine = runs_code_record([run.root for run in draft.runs])
    theirs = runs_code_record([run.root for run in release.runs])
    if not mine or not theirs:
        return (f"Whether this run's code differs from release {release.name}'s is unknown: "
                "one side kept no code record.")
    files = differing_files(mine, theirs)
    if not files:
        return (f"This run was measured by the same code as release {release.name}: every "
                "file both imported is alike.")
    named = ", ".join(files[:NAMED_FILES]) + (
        f" and {len(files) - NAMED_FILES} more" if len(files) > NAMED_FILES else "")
    return (f"This run was measured by other code than release {release.name}: "
            f"{len(files)} measuring files differ ({named}), so a difference below may come "
            "from the code as well as from the machine.")


@page("your-machine.md")
def your_machine_page(inputs: PageInputs) -> Page | None:
    """A draft's machine beside the newest release's machines; no page for a release."""
    release = inputs.beside_release
    if release is None:
        return None
    words = machine_names({(run.run_id, "cpu"): hardware_words(run.environment, "cpu")
                           for run in release.runs})
    machines = {run_id: name for (run_id, _), name in words.items()}
    here = machine_names({(run.run_id, "cpu"): hardware_words(run.environment, "cpu")
                          for run in inputs.source.runs})
    rows = placements(inputs.judged.answers, inputs.source, release, machines)
    text = render(inputs.env, "your-machine.md.j2", release=release, rows=rows,
                  machines=list(machines.values()), here=", ".join(here.values()),
                  code=code_words(inputs.source, release), **inputs.common)
    return Page(text)
