"""A release's own verdict design in words, read from what its runs recorded (run.json's
process policy): the methodology page states it instead of a design written into a template."""

from __future__ import annotations

from dlbench.core.judging.sequential import Design
from dlbench.core.text.words import plural
from dlbench.report.inputs.source import Source, source_designs

#: Look counts in words, for the designs the project uses.
LOOK_WORDS = {1: "one look", 2: "two looks", 3: "three looks", 4: "four looks"}


def design_words(design: Design) -> str:
    """'two looks: 3 processes per cell, then up to 5 for the cells of undecided pairs, each
    look at a level of 0.0294' (the levels listed where they differ)."""
    looks = LOOK_WORDS.get(len(design.looks), f"{len(design.looks)} looks")
    counts = f"{plural(design.looks[0], 'process')} per cell"
    if len(design.looks) > 1:
        counts += ", then up to " + ", then ".join(str(n) for n in design.looks[1:]) + \
            " for the cells of undecided pairs"
    levels = sorted(set(design.alphas))
    if len(levels) == 1:
        level = f"{'each look' if len(design.looks) > 1 else 'the look'} at a level of " \
                f"{levels[0]:g}"
    else:
        level = "levels " + ", ".join(f"{a:g}" for a in design.alphas)
    return f"{looks}: {counts}, {level}"


def release_designs(source: Source) -> list[dict]:
    """Each distinct design of the release's runs: its words and the runs (with their suite)
    measured by it, in run order."""
    grouped: dict[str, list[str]] = {}
    designs = source_designs(source)
    for run in source.runs:
        design = designs[run.run_id]
        suite = (run.info.get("processes_policy") or {}).get("suite")
        named = f"{run.run_id} ({suite} suite)" if suite else run.run_id
        grouped.setdefault(design_words(design), []).append(named)
    return [{"words": words, "runs": runs} for words, runs in grouped.items()]


def experiments_present(source: Source) -> set[str]:
    """The experiments the release's cells belong to."""
    return set(source.cells["experiment"].astype(str)) if len(source.cells) else set()
