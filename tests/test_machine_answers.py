"""A site built from runs of two and three machine kinds: one table per question with a column
per machine and the line saying where each answer holds (report/pages/machine_columns.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dlbench.core.judging.outcomes import Outcome
from dlbench.report.inputs.source import load_draft
from dlbench.report.site.build import site_files
from tests.machine_fixtures import AMD_AVX2, AMD_AVX512, INTEL_AMX, machine_run
from tests.site_fixtures import RUN_A, SITE_URL, TEMPLATES, golden_results

TRAINING_TIME = "## Which framework trains fastest?"


def _pages(results: Path, runs: list[str]) -> dict[str, str]:
    files = site_files(load_draft(results, runs), TEMPLATES, SITE_URL)
    return {page: files[page].decode() for page in ("index.md", "claims.md")}


def _home(results: Path, runs: list[str]) -> str:
    return _pages(results, runs)["index.md"]


def _machine_table(home: str, heading: str) -> list[list[str]]:
    """The rows of the machine table under `heading`, as cells."""
    section = home.split(heading, 1)[1].split("Per machine and system:", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows]


@pytest.fixture(scope="module")
def three_pages(tmp_path_factory) -> dict[str, str]:
    """Three CPU kinds: TensorFlow twice as slow on the AVX2 EPYC (its oneDNN custom
    operations are off there), PyTorch 3x slower on the AVX-512 EPYC."""
    results = golden_results(tmp_path_factory.mktemp("machines"))
    runs = [machine_run(results, RUN_A, "20261201T120000Z-amx", INTEL_AMX),
            machine_run(results, RUN_A, "20261201T130000Z-avx512", AMD_AVX512,
                        {"pytorch": 3.0}),
            machine_run(results, RUN_A, "20261201T140000Z-avx2", AMD_AVX2,
                        {"tensorflow": 2.0})]
    return _pages(results, runs)


@pytest.fixture(scope="module")
def three_machines(three_pages) -> str:
    return three_pages["index.md"]


def test_each_claim_says_where_it_holds_across_the_machines(three_pages):
    lines = re.findall(r"^\*\*Where it holds:\*\* (.+)\.$", three_pages["claims.md"],
                       re.MULTILINE)
    pattern = r"(\w[\w ]* on all 3 machine kinds|depends on the machine kind: )"
    assert lines and all(re.match(pattern, line) for line in lines)


def test_each_question_has_a_column_per_machine_named_in_words(three_machines):
    header, _, *rows = _machine_table(three_machines, TRAINING_TIME)
    # each kind in short in a table: the caption names it in full once (issue 66)
    assert header == ["Workload", "Intel Xeon (AMX)", "AMD EPYC (AVX-512 BF16)",
                      "AMD EPYC (AVX2 only)", "Where it holds"]
    assert len(rows) == 2 and all(len(row) == len(header) for row in rows)


def test_a_winner_that_changes_with_the_cpu_says_so_with_each_machines_winner(three_machines):
    rows = _machine_table(three_machines, TRAINING_TIME)[2:]
    cnn = next(row for row in rows if row[0].startswith("CNN"))
    assert cnn[1].startswith("**TensorFlow**") and cnn[3].startswith("**PyTorch**")
    assert cnn[-1].startswith("the winner depends on the machine kind: TensorFlow on Intel Xeon")
    assert "PyTorch on AMD EPYC (AVX2 only)" in cnn[-1]


def test_the_same_winner_on_two_machines_holds_on_both(tmp_path):
    results = golden_results(tmp_path)
    runs = [machine_run(results, RUN_A, "20261201T120000Z-amx", INTEL_AMX),
            machine_run(results, RUN_A, "20261201T140000Z-avx2", AMD_AVX2)]
    rows = _machine_table(_home(results, runs), TRAINING_TIME)[2:]
    cnn = next(row for row in rows if row[0].startswith("CNN"))
    assert cnn[1] == cnn[2] == "**TensorFlow** 1.09x"
    assert re.fullmatch(r"TensorFlow on both machine kinds \(leads 1\.09x\)", cnn[-1])


def test_a_single_machine_release_keeps_its_one_table_per_question(tmp_path):
    results = golden_results(tmp_path)
    home = _home(results, [RUN_A])
    assert "Where it holds" not in home and "Per machine and system:" not in home
    assert TRAINING_TIME in home


def test_a_machine_label_from_a_run_reaches_the_page_as_text(tmp_path):
    results = golden_results(tmp_path)
    hostile = AMD_AVX2 | {"model": "<script>alert(1)</script> [x](javascript:alert(1))"}
    runs = [machine_run(results, RUN_A, "20261201T120000Z-amx", INTEL_AMX),
            machine_run(results, RUN_A, "20261201T140000Z-avx2", hostile)]
    table = "\n".join(" | ".join(row) for row in
                      _machine_table(_home(results, runs), TRAINING_TIME))
    assert "<script>" not in table and not re.search(r"(?<!\\)\]\(javascript:", table)
    assert "‹script›alert(1)‹/script› ［x］(javascript:alert(1)) (AVX2 only)" in table


def test_a_parity_answer_is_no_verdict_to_read_across_machines():
    from dlbench.core.judging.where_it_holds import MachineAnswer
    from dlbench.report.pages.machine_columns import PARITY, _machine_cell

    assert _machine_cell(MachineAnswer("Intel Xeon", PARITY, "pytorch")) == "same model"


def test_machines_of_one_kind_are_each_told_apart_by_their_run():
    from dlbench.report.pages.machine_columns import machine_names

    names = machine_names({("r1", "cpu"): "AMD EPYC, 2 cores, AVX2 only",
                           ("r2", "cpu"): "AMD EPYC, 2 cores, AVX2 only",
                           ("r3", "cpu"): "Intel Xeon, 2 cores, AMX"})
    assert list(names.values()) == ["AMD EPYC, 2 cores, AVX2 only (run 1)",
                                    "AMD EPYC, 2 cores, AVX2 only (run 2)",
                                    "Intel Xeon, 2 cores, AMX"]


def test_where_it_holds_counts_kinds_and_says_whether_a_kind_s_runs_agree():
    """Two runs of one kind and a run of another: 'both machine kinds', never 'all 3
    machines', with the replication of the kind measured twice."""
    from dlbench.core.judging.where_it_holds import Lead, MachineAnswer, where_it_holds
    from dlbench.report.pages.machine_columns import holds_words

    amx = "Intel Xeon, 2 cores, AMX"
    runs = [MachineAnswer(f"{amx} (run {n})", Outcome.WINNER, "pytorch", "pytorch",
                          {"tensorflow": Lead(1.5, 1.3, 1.7)}, kind=amx) for n in (1, 2)]
    other = MachineAnswer("AMD EPYC, 2 cores, AVX-512 BF16", Outcome.WINNER, "pytorch", "pytorch",
                          {"tensorflow": Lead(1.6, 1.4, 1.8)})
    words = holds_words(where_it_holds([*runs, other]))
    assert words.startswith("PyTorch on both machine kinds")
    assert words.endswith(f"; its 2 runs agree on {amx}")


def test_an_experiment_page_labels_each_run_of_one_kind_by_its_number(tmp_path):
    """Two runs of one kind and one of another (issue 66): every row of an experiment's
    tables that shows a run's own values names its run, numbered as the home page's caption
    numbers it; the kind measured once keeps its plain name."""
    results = golden_results(tmp_path)
    runs = [machine_run(results, RUN_A, "20261201T120000Z-amx", INTEL_AMX),
            machine_run(results, RUN_A, "20261201T130000Z-amx", INTEL_AMX, {"pytorch": 2.0}),
            machine_run(results, RUN_A, "20261201T140000Z-avx2", AMD_AVX2)]
    files = site_files(load_draft(results, runs), TEMPLATES, SITE_URL)
    page = files["experiments/training.md"].decode()
    rows = [line for line in page.splitlines() if line.startswith("| ") and "Intel" in line]
    assert rows and all(re.search(r"Intel Xeon, 2 cores, AMX[^|]* \(run [12]\) \|", row)
                        for row in rows), rows[:3]
    for number in (1, 2):  # each run's own rows, PyTorch 2x slower on run 2
        assert sum(f"(run {number}) |" in row for row in rows) == len(rows) // 2
    assert re.search(r"cpu: AMD EPYC[^|(]*\|", page)
    home = files["index.md"].decode()
    assert "Intel Xeon (AMX) (run 1)" in home and "Intel Xeon (AMX) (run 2)" in home
