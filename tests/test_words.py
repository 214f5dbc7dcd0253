"""Count words: one owner of singular and plural, used by messages and pages alike."""

from __future__ import annotations

from pathlib import Path

from dlbench.core.judging.decisions import pair_test
from dlbench.core.text.words import counts, noun, plural
from dlbench.report.render.jinja import environment


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert plural(1, "process") == "1 process"
    assert plural(3, "process") == "3 processes"
    assert plural(0, "repeat") == "0 repeats"
    assert plural(2, "question group") == "2 question groups"
    assert noun(2, "family") == "families" and noun(1, "family") == "family"
    assert counts([3, 6], "process") == "3 and 6 processes"
    assert counts([1, 1], "process") == "1 and 1 process"
    assert counts([2], "cell") == "2 cells"


def test_an_untestable_pair_says_1_process() -> None:
    assert pair_test([1.0], [1.2, 1.3, 1.25]).note.startswith("1 process on a side")


def test_templates_count_with_the_plural_filter() -> None:
    env = environment(Path(__file__).parents[1] / "templates")
    assert env.from_string('{{ 1 | plural("process") }}, {{ 2 | plural("cell") }}').render() \
        == "1 process, 2 cells"
