"""`dlbench compare`: two runs, a release, two machines of a release."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.stats_fixtures import FRAMEWORKS, FakeCell, spec, training_cells, write_run

from dlbench.cli import main
from dlbench.core.judging.compare import compare, load_side
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.text.errors import CompareError
from dlbench.core.storage.schema import CellStatus

WORKLOADS = ["mlp-digits", "cnn-digits", "synthetic-images"]
TIMES = {"pytorch": 1.0, "tensorflow": 1.2, "keras-tensorflow": 1.4, "keras-torch": 1.6}


def _cells(seed: int, slow: str = "", factor: float = 1.0) -> list[FakeCell]:
    rng = np.random.default_rng(seed)
    cells = []
    for workload in WORKLOADS:
        times = {k: v * (factor if k == slow else 1.0) for k, v in TIMES.items()}
        cells += training_cells(rng, times, accuracy=dict.fromkeys(TIMES, 0.95),
                                workload=workload)
    return cells


@pytest.fixture()
def results(tmp_path):
    write_run(tmp_path, "run-a", _cells(seed=10))
    write_run(tmp_path, "run-b", _cells(seed=11))
    write_run(tmp_path, "run-slow", _cells(seed=12, slow="pytorch", factor=1.5),
              environment={"python": "3.12.1", "frameworks": {"torch": "2.14.0"},
                           "threads": {"OMP_NUM_THREADS": "2"}, "captured_at": "later"})
    return tmp_path


def test_same_distribution_shows_no_significant_difference_for_most_cells(results):
    report = compare("run-a", "run-b", results)
    assert len(report.metrics) == len(WORKLOADS) * len(FRAMEWORKS) * 2
    unchanged = report.count(Outcome.NO_SIGNIFICANT_DIFFERENCE)
    assert unchanged >= 0.8 * len(report.metrics)
    assert report.environment.empty
    assert report.only_in_a == () and report.only_in_b == ()


def test_slowed_framework_is_reported_slower_with_significance(results):
    report = compare("run-a", "run-slow", results, metrics=["steady_epoch_time"])
    rows = report.metrics.set_index("cell_id")
    for workload in WORKLOADS:
        row = rows.loc[f"training:{workload}:pytorch:fp32-default-b32:cpu"]
        assert row["change"] == Outcome.SLOWER.value
        assert row["significant"]
        assert row["p_value"] < 0.05
        assert 1.3 < row["ratio_ci_low"] <= row["ratio"] <= row["ratio_ci_high"] < 1.7
    others = report.metrics[report.metrics["system"] != "pytorch"]
    assert (others["change"] == Outcome.NO_SIGNIFICANT_DIFFERENCE.value).mean() >= 0.75
    # the significant rows come first
    assert report.metrics["significant"].iloc[0]


def test_environment_differences_name_what_changed(results):
    report = compare("run-a", "run-slow", results)
    env = report.environment.set_index("key")
    assert env.loc["frameworks.torch"].tolist() == ["2.13.0", "2.14.0"]
    assert env.loc["threads.OMP_NUM_THREADS"].tolist() == ["—", "2"]
    assert "captured_at" not in env.index


def test_step_metrics_are_not_compared_only_repeat_values(results):
    report = compare("run-a", "run-b", results)
    assert set(report.metrics["metric"]) == {"steady_epoch_time", "test_accuracy"}
    assert set(report.metrics["n_a"]) == {6}


def test_cells_missing_or_failing_on_one_side_are_listed(tmp_path):
    rng = np.random.default_rng(0)
    cells = training_cells(rng, {"pytorch": 1.0, "tensorflow": 1.0})
    failed = FakeCell(cells[1].spec, status=CellStatus.FAILED,
                      reason="timeout")
    extra = FakeCell(spec("pytorch", "pytorch", workload="cnn-digits"),
                     {"steady_epoch_time": [1.0, 1.1]})
    write_run(tmp_path, "a", cells)
    write_run(tmp_path, "b", [cells[0], failed, extra])
    report = compare("a", "b", tmp_path)
    assert report.only_in_b == (extra.spec.cell_id,)
    assert report.status_changes.to_dict("records") == [
        {"cell_id": cells[1].spec.cell_id, "status_a": "ok", "status_b": "failed"}]
    assert list(report.metrics["cell_id"].unique()) == [cells[0].spec.cell_id]


def test_release_with_two_machines_needs_one_named(tmp_path):
    from dlbench.core.storage.releases import freeze_release

    write_run(tmp_path, "m1", _cells(seed=1), environment={"cpu": {"model": "Xeon"}})
    write_run(tmp_path, "m2", _cells(seed=2, slow="tensorflow", factor=1.5),
              environment={"cpu": {"model": "EPYC"}})
    freeze_release(tmp_path, "2026.12", ["m1", "m2"], "2026-12-02", "Test", "cff-version: 1.2.0\n")
    with pytest.raises(CompareError, match="2026.12@m1"):
        load_side("2026.12", tmp_path)
    refused = compare("2026.12@m1", "2026.12@m2", tmp_path, metrics=["steady_epoch_time"])
    assert refused.machines_differ == ("CPU Xeon → EPYC",)
    assert not refused.metrics["change"].isin([Outcome.SLOWER.value, Outcome.FASTER.value]).any()
    other = refused.metrics[refused.metrics["change"] == Outcome.OTHER_MACHINE.value]
    assert set(other["system"]) == {"tensorflow"}
    report = compare("2026.12@m1", "2026.12@m2", tmp_path, metrics=["steady_epoch_time"],
                     across_machines=True)
    slower = report.metrics[report.metrics["change"] == Outcome.SLOWER.value]
    assert set(slower["system"]) == {"tensorflow"}
    assert report.environment.to_dict("records") == [{"key": "cpu.model", "a": "Xeon",
                                                      "b": "EPYC"}]
    with pytest.raises(CompareError, match="its runs: m1, m2"):
        load_side("2026.12@m3", tmp_path)


def test_command_prints_the_table_and_exits_zero(results, capsys):
    # one metric: Holm's correction over every metric of 6-repeat cells names nothing
    status = main(["compare", "run-a", "run-slow", "--results-dir", str(results),
                   "--metric", "steady_epoch_time"])
    out = capsys.readouterr().out
    assert status == 0
    assert "slower" in out and "frameworks.torch" in out and "2.14.0" in out


def test_unknown_side_is_one_line_listing_what_exists(results, capsys):
    status = main(["compare", "run-a", "nope", "--results-dir", str(results)])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert len(err.splitlines()) == 1
    assert "'nope'" in err and "run-a, run-b, run-slow" in err and "releases: none" in err


def test_unknown_metric_is_a_usage_error(results, capsys):
    status = main(["compare", "run-a", "run-b", "--metric", "speed", "--results-dir",
                   str(results)])
    assert status == 2
    assert "unknown metric 'speed'" in capsys.readouterr().err


def test_a_release_of_one_machine_compares_with_a_run(results):
    from dlbench.core.storage.releases import freeze_release

    freeze_release(results, "2026.11", ["run-a"], "2026-11-30", "Old", "cff-version: 1.2.0\n")
    report = compare("2026.11", "run-slow", results, metrics=["steady_epoch_time"])
    pytorch = report.metrics[report.metrics["system"] == "pytorch"]
    assert len(pytorch) == len(WORKLOADS)
    assert (pytorch["change"] == Outcome.SLOWER.value).all()
    assert "frameworks.torch" in set(report.environment["key"])


def test_by_default_only_significant_rows_are_shown_and_the_rest_counted(results, capsys):
    from dlbench.cli.compare_output import table_text

    report = compare("run-a", "run-slow", results, metrics=["steady_epoch_time"])
    text = table_text(report)
    rows = [line for line in text.splitlines() if line.startswith("  steady_epoch_time")
            or line.startswith("  test_accuracy")]
    assert len(rows) == int(report.metrics["significant"].sum()) >= len(WORKLOADS)
    assert all("n.s." not in line for line in rows)
    hidden = len(report.metrics) - len(rows)
    assert f"{hidden} rows without a significant change not shown (--all shows them)" in text
    every = table_text(report, show_all=True)
    assert sum(line.startswith("  steady_epoch_time") or line.startswith("  test_accuracy")
               for line in every.splitlines()) == len(report.metrics)
    assert main(["compare", "run-a", "run-b", "--all", "--results-dir", str(results)]) == 0


def test_rows_are_grouped_under_their_cell(results):
    from dlbench.cli.compare_output import table_text

    text = table_text(compare("run-a", "run-slow", results), show_all=True)
    lines = text.splitlines()
    cell = "training:mlp-digits:pytorch:fp32-default-b32:cpu"
    assert lines.count(cell) == 1
    below = lines[lines.index(cell) + 1: lines.index(cell) + 3]
    assert [line.split()[0] for line in below] == ["steady_epoch_time", "test_accuracy"]


@pytest.mark.parametrize("form", ["csv", "json", "markdown"])
def test_machine_formats_hold_the_rows(results, capsys, form):
    import io
    import json

    import pandas as pd

    status = main(["compare", "run-a", "run-slow", "--format", form, "--metric",
                   "steady_epoch_time", "--results-dir", str(results)])
    out = capsys.readouterr().out
    assert status == 0
    report = compare("run-a", "run-slow", results, metrics=["steady_epoch_time"])
    if form == "csv":
        frame = pd.read_csv(io.StringIO(out))
        assert len(frame) == len(report.metrics)
        assert set(frame["change"]) >= {"slower"}
    elif form == "json":
        data = json.loads(out)
        assert len(data["metrics"]) == len(report.metrics)
        assert data["environment"][0]["key"] == "frameworks.torch"
    else:
        assert "| Cell | Metric | A | B | B/A [Holm CI] | p | Change |" in out
        assert out.count("| slower |") == report.count(Outcome.SLOWER)


def test_unknown_format_is_a_one_line_error(results, capsys):
    assert main(["compare", "run-a", "run-b", "--format", "xml", "--results-dir",
                 str(results)]) == 2
    assert "unknown format 'xml'; valid: table, csv, json, markdown" in capsys.readouterr().err


def _sized(seed: int, **params) -> list[FakeCell]:
    rng = np.random.default_rng(seed)
    cells = []
    for workload in WORKLOADS:
        cells += training_cells(rng, TIMES, workload=workload, params=params)
    return cells


def test_a_quick_run_against_a_standard_run_is_not_comparable(tmp_path):
    write_run(tmp_path, "standard", _sized(1, epochs=8))
    fast = {"pytorch": 0.1, "tensorflow": 0.1, "keras-tensorflow": 0.1, "keras-torch": 0.1}
    rng = np.random.default_rng(2)
    quick = [c for w in WORKLOADS
             for c in training_cells(rng, fast, workload=w, params={"epochs": 2,
                                                                    "data_size": 512})]
    write_run(tmp_path, "quick", quick)
    report = compare("standard", "quick", tmp_path)
    assert report.metrics.empty  # no speed verdict at all, though quick is 10x "faster"
    assert len(report.not_comparable) == len(WORKLOADS) * len(FRAMEWORKS)
    assert set(report.not_comparable["parameters"]) == {"params.data_size, params.epochs"}
    assert "params.epochs 8→2" in report.not_comparable["differences"].iloc[0]
    assert report.only_in_a == report.only_in_b == ()
    # the command says how each group's configurations differ in a sentence (issue 66)
    from dlbench.cli.compare_output import table_text

    said = table_text(report).split("never compared):\n", 1)[1].splitlines()[0]
    assert said.startswith(f"  {len(report.not_comparable)} cells: A and B differ in data "
                           "size: "), said


def test_two_runs_of_one_configuration_get_the_usual_verdicts(tmp_path):
    write_run(tmp_path, "a", _sized(1, epochs=8))
    slow = _sized(2, epochs=8)
    slow = [FakeCell(c.spec, {m: list(np.array(v) * (1.5 if c.spec.framework == "pytorch"
                                                     else 1.0))
                              for m, v in c.values.items()}) for c in slow]
    write_run(tmp_path, "b", slow)
    report = compare("a", "b", tmp_path)
    assert report.not_comparable.empty
    slower = report.metrics[report.metrics["change"] == Outcome.SLOWER.value]
    assert set(slower["system"]) == {"pytorch"} and len(slower) == len(WORKLOADS)


def test_a_release_refuses_runs_of_one_cell_in_two_configurations(tmp_path):
    from dlbench.core.text.errors import ReleaseError
    from dlbench.core.storage.releases import freeze_release

    write_run(tmp_path, "standard", _sized(1, epochs=8))
    write_run(tmp_path, "quick", _sized(2, epochs=2))
    with pytest.raises(ReleaseError, match="different configurations \\(params.epochs 8→2\\)"):
        freeze_release(tmp_path, "2027.01", ["standard", "quick"], "2027-01-01", "T", "cff\n")
    assert not (tmp_path / "releases" / "2027.01").exists()
    write_run(tmp_path, "standard2", _sized(3, epochs=8))
    freeze_release(tmp_path, "2027.01", ["standard", "standard2"], "2027-01-01", "T", "cff\n")


def test_the_committed_releases_are_two_machines_and_compare_says_so_first(capsys) -> None:
    root = Path(__file__).parent.parent / "results"
    assert main(["compare", "2026.12", "2027.01", "--results-dir", str(root)]) == 0
    refused = capsys.readouterr().out
    assert refused.startswith("The machines differ: CPU AMD EPYC → Intel(R) Xeon(R)")
    assert " slower" not in refused.split("--across-machines", 1)[1]
    assert main(["compare", "2026.12", "2027.01", "--results-dir", str(root),
                 "--across-machines", "--format", "markdown"]) == 0
    asked = capsys.readouterr().out
    assert asked.startswith("The machines differ") and "| slower |" in asked


XEON = {"cpu": {"model": "Intel(R) Xeon(R) Processor", "vendor": "Intel", "avx512_bf16": True,
                "amx": True, "usable_cores": 2}}
XEON_WORDS = "Intel Xeon, 2 cores, AMX, AVX-512 BF16"
EPYC = {"cpu": {"model": "AMD EPYC 9B14", "vendor": "AMD", "avx512_bf16": True,
                "usable_cores": 2}}


def test_a_release_of_several_machine_kinds_is_compared_kind_by_kind(tmp_path, capsys):
    """Issue 66: two Xeon runs (replicates of one kind) and an EPYC against an older release
    of one Xeon: the Xeon kind against the Xeon (its runs pooled), the EPYC against the Xeon
    as another machine; the command prints one section a kind, never the refusal."""
    from dlbench.core.judging.compare_kinds import compare_by_kind, kind_pairs, runs_by_kind
    from dlbench.core.storage.releases import freeze_release

    write_run(tmp_path, "old", _cells(seed=1), environment=XEON)
    freeze_release(tmp_path, "2026.12", ["old"], "2026-12-01", "T", "cff-version: 1.2.0\n")
    write_run(tmp_path, "x1", _cells(seed=2), environment=XEON)
    write_run(tmp_path, "x2", _cells(seed=3), environment=XEON)
    write_run(tmp_path, "e1", _cells(seed=4, slow="tensorflow", factor=1.5), environment=EPYC)
    freeze_release(tmp_path, "2027.01", ["x1", "x2", "e1"], "2027-01-01", "T",
                   "cff-version: 1.2.0\n")
    found = compare_by_kind("2026.12", "2027.01", tmp_path, metrics=["steady_epoch_time"])
    assert [(f.kind_a.words, f.kind_b.words) for f in found] == [
        (XEON_WORDS, XEON_WORDS), (XEON_WORDS, "AMD EPYC, 2 cores, AVX-512 BF16")]
    same, other = found
    assert same.runs_b == ("x1", "x2") and not same.report.machines_differ
    assert set(same.report.metrics["n_b"]) == {2 * set(same.report.metrics["n_a"]).pop()}
    assert other.report.machines_differ and not other.report.metrics["change"].isin(
        [Outcome.SLOWER.value, Outcome.FASTER.value]).any()
    kinds = list(runs_by_kind([r for r in []]))
    assert kind_pairs(kinds, kinds) == []
    assert main(["compare", "2026.12", "2027.01", "--results-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("== Machine kind ") == 2 and "name one machine" not in out
    assert main(["compare", "2026.12", "2027.01", "--results-dir", str(tmp_path),
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("kind_a,kind_b,cell_id")


def test_a_list_in_the_environment_reads_as_words():
    from dlbench.core.judging.compare import flatten

    assert flatten({"isa": ["BF16", "FP32"]}) == {"isa": "BF16, FP32"}
