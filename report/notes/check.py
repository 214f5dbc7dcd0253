"""A release's published notes read against its data (report/notes/facts.py): each sentence
of a kind the notes use for a run's facts is found in that run's paragraph and its figures
compared with the ones the data give. What the notes state and the data contradict is a
finding; a note the check cannot read is not one (it counts what it checked)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dlbench.report.inputs.source import Source
from dlbench.report.notes.facts import RunFacts, run_facts, slowdowns

#: A run's paragraph in the notes: a list item that starts with its run ID as code.
RUN_ITEM = re.compile(r"^- `(?P<run>[^`]+)`:(?P<text>.*?)(?=^- `|^#|\Z)", re.M | re.S)
NO_BUSY = re.compile(r"no process(?:es)? (?:was |were )?re-?measured as busy", re.I)
BUSY = re.compile(r"(\d+) process(?:es)? (?:was |were )?re-?measured as busy", re.I)
DECIDED = re.compile(r"(\d+) of (\d+) testable timing answers decided")
CONTROLS = re.compile(r"(\d+) of (\d+) A/A controls name a winner")
SLOWER = re.compile(r"([\d.]+)-([\d.]+)x longer than the same cell's on the ([^(]+?) \(")
#: Two figures agree when they round alike to the notes' two decimals.
TOLERANCE = 0.005


@dataclass(frozen=True)
class Finding:
    """One figure of the notes the data contradict."""

    run_id: str
    claim: str
    data: str


def run_paragraphs(notes: str) -> dict[str, str]:
    """Each run's paragraph of the notes, by run ID, on one line."""
    return {m["run"]: " ".join(m["text"].split()) for m in RUN_ITEM.finditer(notes)}


def check_notes(source: Source) -> tuple[int, list[Finding]]:
    """How many of the notes' figures were checked, and those the data contradict."""
    facts = {f.run_id: f for f in run_facts(source)}
    checked, findings = 0, []
    for run_id, text in run_paragraphs(source.notes).items():
        if run_id not in facts:
            continue
        for check in (_busy, _decided, _controls):
            result = check(text, facts[run_id])
            if result is not None:
                checked += 1
                findings += [Finding(run_id, *result)] if result else []
        for found in SLOWER.finditer(text):
            checked += 1
            findings += _slower(source, facts, run_id, found)
    return checked, findings


def _busy(text: str, facts: RunFacts) -> tuple | None:
    """The busy re-measures the paragraph states against the run's superseded/ records."""
    found = NO_BUSY.search(text) or BUSY.search(text)
    if not found:
        return None
    if (int(found[1]) if found.groups() else 0) == facts.remeasured:
        return ()
    steal = f" (CPU steal up to {facts.largest_steal:.1%})" if facts.largest_steal else ""
    return (found[0],
            f"{facts.remeasured} processes re-measured as busy, {facts.remeasures} "
            f"re-measurements{steal}")


def _counted(pattern: re.Pattern, actual: tuple[int, int], words: str, text: str) -> tuple | None:
    """A stated 'N of M ...' count against the data's (`words`: what follows the counts)."""
    found = pattern.search(text)
    if not found:
        return None
    if (int(found[1]), int(found[2])) == actual:
        return ()
    return found[0], f"{actual[0]} of {actual[1]} {words}"


def _decided(text: str, facts: RunFacts) -> tuple | None:
    return _counted(DECIDED, (facts.decided, facts.testable), "testable timing answers decided",
                    text)


def _controls(text: str, facts: RunFacts) -> tuple | None:
    return _counted(CONTROLS, (facts.controls_named, facts.controls),
                    "A/A controls name a winner", text)


def _slower(source: Source, facts: dict[str, RunFacts], run_id: str,
            found: re.Match) -> list[Finding]:
    """The range of per-experiment slowdowns stated against each run of the named machine."""
    low, high, machine = float(found[1]), float(found[2]), found[3].strip()
    findings = []
    for other in (f for f in facts.values() if f.machine.startswith(machine)):
        by_experiment = slowdowns(source, run_id, other.run_id)
        if not by_experiment:
            continue
        lowest, highest = min(by_experiment.values()), max(by_experiment.values())
        if abs(lowest - low) > TOLERANCE or abs(highest - high) > TOLERANCE:
            findings.append(Finding(run_id, f"{found[0].rstrip(' (')} (median by experiment)",
                                    f"{lowest:.2f}-{highest:.2f}x against {other.run_id} ("
                                    + ", ".join(f"{k} {v:.2f}x" for k, v in
                                                sorted(by_experiment.items())) + ")"))
    return findings
