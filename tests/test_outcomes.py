"""One outcome vocabulary (dlbench/core/judging/outcomes.py), spoken by every judge, and
dlbench/core in folders named for what they hold."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dlbench.core.judging.decisions import judge_pair
from dlbench.core.judging.defaults_accuracy import judge_defaults_accuracy
from dlbench.core.judging.outcomes import (ANSWER, CLAIM, CONTROL, DEFAULTS_ANSWER, PAIR,
                                           SPOKEN, Outcome)
from dlbench.core.judging.where_it_holds import MachineAnswer, where_it_holds
from dlbench.core.declarations.metrics import Direction
from dlbench.report.claims.vocabulary import Combine, Finding, combine_findings

ROOT = Path(__file__).resolve().parents[1]
#: Where judging happens: each module here speaks the one vocabulary, owning none of its own.
JUDGES = (ROOT / "dlbench" / "core" / "judging", ROOT / "report" / "verdicts",
          ROOT / "report" / "claims")
#: Enums of the judges that share words with the vocabulary and are not outcomes.
NOT_OUTCOMES = {"Expect": "what an effect rule of claims.yaml expects: better, worse, within"}
#: dlbench/core's folders, each named for what it holds.
CORE_FOLDERS = {"declarations", "judging", "machine", "storage", "text"}


def _enums(path: Path) -> dict[str, set[str]]:
    """The Enum classes a module defines, with their string values."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and any("Enum" in ast.unparse(b) for b in node.bases):
            found[node.name] = {s.value.value for s in node.body if isinstance(s, ast.Assign)
                                and isinstance(s.value, ast.Constant)
                                and isinstance(s.value.value, str)}
    return found


def test_no_judge_owns_another_outcome_vocabulary():
    words = {o.value for o in Outcome}
    others = [f"{path.relative_to(ROOT)}: {name}" for folder in JUDGES
              for path in sorted(folder.glob("*.py")) if path.name != "outcomes.py"
              for name, values in _enums(path).items()
              if values & words and name not in NOT_OUTCOMES]
    assert others == []


def test_every_word_is_spoken_by_some_judge_each_judge_in_one_order():
    spoken = set().union(*SPOKEN.values())
    assert spoken == set(Outcome)
    assert all(isinstance(words, tuple) and len(set(words)) == len(words)
               for words in SPOKEN.values())


@pytest.mark.parametrize("release", sorted(p.name for p in (ROOT / "results" / "releases")
                                           .iterdir() if (p / "verdicts.csv").exists()))
def test_the_words_stored_in_every_release_are_the_vocabulary(release):
    """The words the site prints are the stored ones: a renamed outcome would fail here."""
    table = pd.read_csv(ROOT / "results" / "releases" / release / "verdicts.csv")
    decisions = set(table["decision"].dropna().astype(str))
    answers = set(table.loc[table["row"] == "answer", "outcome"].dropna().astype(str))
    controls = set(table.loc[table["row"] == "control", "outcome"].dropna().astype(str))
    assert decisions <= {o.value for o in PAIR}
    assert answers <= {o.value for o in ANSWER}
    assert controls <= {o.value for o in CONTROL}


@pytest.mark.parametrize(("b", "expected"), [
    ([1.0, 1.01, 0.99, 1.0, 1.02, 0.98], Outcome.NO_MEANINGFUL_DIFFERENCE),
    ([2.0, 2.02, 1.98, 2.0, 2.04, 1.96], Outcome.B_BETTER),
    ([0.5, 0.505, 0.495, 0.5, 0.51, 0.49], Outcome.A_BETTER),
])
def test_a_pair_speaks_the_vocabulary(b, expected):
    a = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98]
    decision = judge_pair(a, b, Direction.HIGHER).decision
    assert decision is expected and decision in PAIR


def test_a_defaults_answer_speaks_the_vocabulary():
    accuracies = np.array([0.90, 0.91, 0.89, 0.90, 0.92])
    seeds = {system: (np.arange(5), accuracies) for system in ("pytorch", "tensorflow")}
    answer = judge_defaults_accuracy(seeds, test_samples=10_000, chance=0.1)
    assert isinstance(answer.outcome, Outcome) and answer.outcome in DEFAULTS_ANSWER


def test_a_claim_and_where_it_holds_share_the_words_of_an_answer():
    finding = combine_findings([Finding(Outcome.SUPPORTED, "a"), Finding(Outcome.INCONCLUSIVE,
                                                                          "b")], Combine.ANY)
    assert finding.outcome is Outcome.SUPPORTED and finding.outcome in CLAIM
    reading = where_it_holds([MachineAnswer("A", Outcome.NO_MEANINGFUL_DIFFERENCE, "jax"),
                              MachineAnswer("B", Outcome.NO_MEANINGFUL_DIFFERENCE, "torch")])
    assert reading.holds is Outcome.NO_DIFFERENCE_EVERYWHERE


def test_core_holds_folders_named_for_what_they_hold():
    core = ROOT / "dlbench" / "core"
    flat = sorted(p.name for p in core.glob("*.py") if p.name != "__init__.py")
    folders = {p.name for p in core.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert flat == [] and folders == CORE_FOLDERS
    assert all((core / name / "__init__.py").read_text().startswith('"""') for name in folders)


def _private_reach(path: Path) -> list[str]:
    """Names starting with one underscore imported from another module or read off another
    object, and attributes read by name through getattr (what a class does not declare)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found += [f"import {a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "getattr":
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and not node.attr.startswith("__") and ast.unparse(node.value) != "self":
            found.append(ast.unparse(node))
    return found


@pytest.mark.parametrize("module", ["rules.py", "answered.py", "check.py", "defaults_rule.py"])
def test_the_claims_use_public_names_of_the_judges(module):
    assert _private_reach(ROOT / "report" / "claims" / module) == []
