"""The home page's opening: the project's founding questions, each with its answer on each
machine kind (read from the question tables the page shows below it), or what this release
did not measure, why, and which releases measured it. The words are in
templates/_founding.md.j2."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.core.judging.compare_kinds import runs_by_kind
from dlbench.core.storage.layout import RunData, release_dir, release_names
from dlbench.core.judging.outcomes import WHERE_IT_HOLDS, Outcome
from dlbench.report.pages.parity_answer import EXPERIMENT as PARITY, parity_lines
from dlbench.report.render.user_text import plain_text
from dlbench.report.verdicts.defaults_answers import QUESTION as DEFAULTS_QUESTION
from dlbench.report.verdicts.precision_answers import ANCHOR as PRECISION_ACCURACY


@dataclass(frozen=True)
class Founding:
    """One founding question: the page's question tables that answer it, and the experiment
    (and precision, where it asks of one) whose cells measure it."""

    ask: str
    questions: tuple[str, ...]
    experiment: str
    precision: str = ""


#: The questions this project was started to answer, in the order a reader asks them.
FOUNDING = (
    Founding("Does half precision (BF16) train faster, use less memory or lose accuracy "
             "against FP32?", ("precision-speedup", "precision-memory", PRECISION_ACCURACY),
             "precision", "bf16"),
    Founding("Does FP16 train faster than FP32?", ("precision-fp16-speedup",), "precision",
             "fp16"),
    Founding("Which framework trains fastest?", ("training-speed",), "training"),
    Founding("Does the framework you use change accuracy?", (DEFAULTS_QUESTION,),
             "defaults-accuracy"),
    Founding("Which framework serves fastest, one request at a time (batch 1) and at a "
             "serving batch?", ("serve-resnet50-latency", "serve-bert-base-latency",
                                "serve-resnet50-throughput", "serve-bert-base-throughput"),
             "inference"),
    Founding("Static or dynamic graphs: does a compiled path run faster than eager?",
             ("compile-speedup", "compile-serving-latency", "compile-serving-throughput"),
             "execution-mode"),
    Founding("Does data parallelism pay, and whose scales best?",
             ("data-parallel-throughput", "scaling-efficiency",
              "data-parallel-time-to-accuracy"), "data-parallel"),
    Founding("Which way to deploy a model serves it fastest?",
             ("deploy-resnet50", "runtime-or-framework", "export-latency"), "export"),
    Founding("Are the frameworks running the same model?", (PARITY,), PARITY),
)
#: Answer lines one founding question shows; the tables below hold every row.
LINES = 3


def measured(cells: pd.DataFrame, experiment: str, precision: str = "") -> bool:
    """Whether any cell of `experiment` (at `precision`, where given) ran to a result."""
    mine = cells[(cells["experiment"].astype(str) == experiment)
                 & (cells["status"].astype(str) == "ok")]
    if precision:
        mine = mine[mine["precision"].astype(str) == precision]
    return not mine.empty


def why_not(cells: pd.DataFrame, experiment: str, precision: str = "") -> str:
    """Why a release has no result of `experiment`: its cells' most common recorded reason,
    or that its suite did not hold it."""
    mine = cells[cells["experiment"].astype(str) == experiment]
    if precision:
        mine = mine[mine["precision"].astype(str) == precision]
    reasons = Counter(str(r) for r in mine.get("reason", pd.Series(dtype=str)).dropna()
                      if str(r).strip())
    if reasons:
        return reasons.most_common(1)[0][0].rstrip(".")
    what = f"{precision} " if precision else ""
    return f"this release's suite held no {what}{experiment.replace('-', ' ')} cell"


def measured_in(results_dir: Path | None, release: str, experiment: str,
                precision: str = "") -> list[str]:
    """The other committed releases with a result of `experiment` (at `precision`)."""
    if results_dir is None:
        return []
    found = []
    for name in release_names(results_dir):
        path = release_dir(results_dir, name) / "cells.parquet"
        if name == release or not path.is_file():
            continue
        cells = pd.read_parquet(path, columns=["experiment", "status", "precision"])
        if measured(cells, experiment, precision):
            found.append(name)
    return found


def _lines(founding: Founding, tables: Mapping[str, dict], per_machine: Mapping[str, dict],
           defaults: list[dict], precision_accuracy: list[dict],
           cells: pd.DataFrame) -> list[dict]:
    """Up to LINES answers of a founding question: a row's label and its answer on each
    machine kind (where it holds), or its winner on the one machine, with its anchor; an
    accuracy answer (defaults, precision) by its own rule's sentence; parity from its cells."""
    lines = []
    for key in founding.questions:
        if key == PARITY:
            lines += parity_lines(cells)
            continue
        if key == DEFAULTS_QUESTION:
            lines += [{"label": block["task"], "answer": block["sentence"],
                       "anchor": "does-the-framework-you-use-change-accuracy"}
                      for block in defaults[:1]]
            continue
        if key == PRECISION_ACCURACY and precision_accuracy:
            lines.append(_precision_line(precision_accuracy))
            continue
        table, machines = tables.get(key), per_machine.get(key)
        if machines and machines["rows"]:
            row = min(machines["rows"], key=_decidedness)
            lines.append({"label": row["label"], "answer": row["holds"], "anchor": f"q-{key}"})
        elif table:
            lines += [{"label": row["label"], "answer": _one_machine(row, table),
                       "anchor": f"q-{key}"} for row in table["rows"][:1]]
    return lines[:LINES]


def _decidedness(row: Mapping) -> int:
    """Where a row's answer holds, as a rank (0: decided on every kind): a question's line
    on the home page is its most decided row, the first such in the table's order, not
    whatever row the table happens to list first."""
    outcomes = [outcome.value for outcome in WHERE_IT_HOLDS]
    outcome = str(row.get("outcome", ""))
    return outcomes.index(outcome) if outcome in outcomes else len(outcomes)


def run_kinds(runs: list[RunData]) -> dict[str, str]:
    """Each run's machine kind in words, by run ID."""
    return {run.run_id: kind.words for kind, mine in runs_by_kind(runs).items() for run in mine}


def _kinds_without(founding: Founding, cells: pd.DataFrame,
                   kinds: Mapping[str, str]) -> list[dict]:
    """A line for each machine kind that measured no cell of a founding question which
    another kind answered (an fp16 cell where the CPU has no fp16 units, a framework that
    failed there): its cells' most common reason, tied to the experiment's page."""
    if (len(set(kinds.values())) < 2 or "run_id" not in cells
            or not measured(cells, founding.experiment, founding.precision)):
        return []  # one kind, or answered from another experiment's cells
    of_kind = cells["run_id"].astype(str).map(kinds)
    lines = []
    for kind in dict.fromkeys(kinds.values()):
        mine = cells[(of_kind == kind).to_numpy()]
        if not measured(mine, founding.experiment, founding.precision):
            lines.append({"label": f"on {kind}", "answer": plain_text(
                f"not measured: {why_not(mine, founding.experiment, founding.precision)}"),
                "anchor": "", "href": f"experiments/{founding.experiment}.md",
                "link": "its cells"})
    return lines


def _precision_line(blocks: list[dict]) -> dict:
    """The precision accuracy answers in one line: each machine's sentence, named where the
    release holds several."""
    several = len({block["machine"] for block in blocks}) > 1
    answer = "; ".join((f"on {block['machine']}: " if several else "") + block["sentence"]
                       for block in blocks)
    workloads = ", ".join(dict.fromkeys(block["workload"] for block in blocks))
    return {"label": f"accuracy ({workloads})", "answer": plain_text(answer),
            "anchor": PRECISION_ACCURACY}


def _one_machine(row: dict, table: dict) -> str:
    """One row's answer on a release of one machine: the winner and its value, or why not."""
    value = f" ({row['best']} {table['unit']})" if row.get("best") and table.get("unit") else ""
    if row["outcome"] == "winner":
        return f"{row['winner_words']} leads{value}"
    if row["outcome"] == "no meaningful difference":
        return "no meaningful difference"
    return "not decided"


def founding_answers(tables: list[dict], per_machine: Mapping[str, dict], defaults: list[dict],
                     cells: pd.DataFrame, release: str, results_dir: Path | None,
                     links: bool, precision_accuracy: list[dict] | None = None,
                     kinds: Mapping[str, str] | None = None) -> list[dict]:
    """Each founding question with its answer lines, or 'not measured in this release' with
    why and the releases that measured it (linked where `links`: a published version); on
    a release of several machine kinds (`kinds`: run ID -> kind in words), each kind that
    measured none of a question the others answered, with why."""
    by_key = {table["key"]: table for table in tables}
    found = []
    for founding in FOUNDING:
        lines = _lines(founding, by_key, per_machine, defaults, precision_accuracy or [],
                       cells)
        lines += _kinds_without(founding, cells, kinds or {}) if lines else []
        missing = None if lines else {
            "why": why_not(cells, founding.experiment, founding.precision),
            "releases": [{"name": name, "href": f"../{name}/" if links else ""}
                         for name in measured_in(results_dir, release, founding.experiment,
                                                 founding.precision)]}
        found.append({"ask": founding.ask, "lines": lines, "missing": missing})
    return found


def machine_dependence(per_machine: Mapping[str, dict]) -> dict[str, int]:
    """How the compared answers hold across machine kinds: on every kind, by a margin or a
    winner that depends on the kind, or decided on none or some."""
    outcomes = Counter(row["outcome"] for table in per_machine.values()
                       for row in table["rows"])
    return {"rows": sum(outcomes.values()), "everywhere": outcomes[Outcome.EVERYWHERE.value],
            "margin": outcomes[Outcome.MARGIN_DEPENDS.value],
            "winner": outcomes[Outcome.WINNER_DEPENDS.value]}


def run_anchor(run_id: str) -> str:
    """The anchor of a run's section on the environment page ('## Run <id>', slugged as
    mkdocs' table of contents slugs it)."""
    return "run-" + re.sub(r"[^\w-]", "", run_id.lower())


def machine_kinds(runs: list[RunData]) -> list[dict]:
    """Each machine kind of a release once, in words, with its runs numbered and tied to the
    environment page's section of each."""
    return [{"words": kind.words,
             "runs": [{"number": number, "anchor": run_anchor(run.run_id)}
                      for number, run in enumerate(mine, start=1)]}
            for kind, mine in runs_by_kind(runs).items()]


#: The framework packages a caption names, in its order, with their words.
FRAMEWORK_PACKAGES = (("torch", "PyTorch"), ("tensorflow", "TensorFlow"), ("keras", "Keras"),
                      ("jax", "JAX"))


def framework_versions(runs: list[RunData]) -> str:
    """The framework versions the runs used ('PyTorch 2.13.0, TensorFlow 2.21.0'), each
    package once, every version where runs differ."""
    words = []
    for name, label in FRAMEWORK_PACKAGES:
        versions = sorted({str((run.environment.get("packages") or {}).get(name) or "")
                           .split("+")[0] for run in runs} - {""})
        if versions:
            words.append(f"{label} {' / '.join(versions)}")
    return ", ".join(words)


#: The longest summary of a release's notes the home page shows.
SUMMARY_CHARS = 400


def notes_summary(notes: str) -> str:
    """A release's notes in short: their first paragraph, or the first item of a list they
    open with, cut at a sentence within SUMMARY_CHARS (the whole is on the notes page); ''
    for notes that open with a heading or a table."""
    first = notes.strip().split("\n\n", 1)[0]
    if first.startswith(("#", "|")):
        return ""
    if first.startswith(("- ", "* ")):
        first = re.split(r"\n[-*] ", first[2:], maxsplit=1)[0]
    text = " ".join(first.split())
    if len(text) <= SUMMARY_CHARS:
        return text
    cut = text[:SUMMARY_CHARS].rsplit(". ", 1)[0]
    return cut + "."


def summary_frame(tables: list[dict]) -> pd.DataFrame:
    """The summary chart's rows: for the first row of the first table of each founding
    question, its decided best's lead over the closest other system on each machine (label,
    ratio, low, high)."""
    by_key = {table["key"]: table for table in tables}
    rows = []
    for founding in FOUNDING:
        table = next((by_key[key] for key in founding.questions if key in by_key), None)
        mine = (table or {}).get("rows", [])
        for row in (r for r in mine if r["group"] == mine[0]["group"]):
            lead = row.get("lead")
            if lead and all(v == v and v > 0 for v in lead):
                where = f" on {row['machine']}" if row["machine"] else ""
                rows.append({"label": f"{row['group']}: {row['winner_words']}{where}",
                             "ratio": lead[0], "low": lead[1], "high": lead[2]})
    return pd.DataFrame(rows, columns=["label", "ratio", "low", "high"])
