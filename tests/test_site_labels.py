"""Labels, charts and citations a reader cannot misread: raw identifiers in words, axes that
fit the data's meaning, a sentence instead of a blank chart, one result's citation."""

from __future__ import annotations

import json
from pathlib import Path

import markdown
import pandas as pd

from dlbench.core.storage.history import history
from dlbench.core.storage.layout import release_names
from dlbench.core.judging.regime import Regime
from dlbench.report.claims.check import ClaimVerdict
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.render.charts import empty_reason, label_lines, ratio_chart, result_chart
from dlbench.report.pages.cite import Citation, ResultCitation
from dlbench.report.pages.claims import LINE_CHARS, interval_words, paragraphs, reason_lines
from dlbench.report.render.labels import (cell_words, environment_key, environment_value,
                                          metric_ids_in_words, reason_label, status_label)
from dlbench.report.site.static_server import not_found_page
from dlbench.report.inputs.source import load_release
from dlbench.report.pages.experiment import history_rows
from dlbench.report.render.jinja import environment, render
from dlbench.report.pages.info import environment_runs, run_settings

ROOT = Path(__file__).parent.parent


def _rows(medians: list[float]) -> pd.DataFrame:
    return pd.DataFrame({"series": [f"s{i}" for i in range(len(medians))],
                         "system": ["pytorch"] * len(medians), "variant": ["v"] * len(medians),
                         "median": medians, "low": medians, "high": medians,
                         "n": [3] * len(medians), "result_id": ["x"] * len(medians)})


def test_environment_keys_and_values_read_as_words() -> None:
    assert environment_key("hostname_sha256") == "host (hashed name)"
    assert environment_key("compute_peak.fp32_flops") == "compute peak · fp32 peak (GFLOP/s)"
    assert environment_key("[0].at") == "#1 when"
    assert environment_key("OMP_NUM_THREADS", "environment_variables") == "OMP_NUM_THREADS"
    assert environment_value("fp32_flops", "192444370551.9885") == "192.4"
    assert environment_value("bf16_flops", None) == "not measured"
    assert environment_value("amx", True) == "yes"
    assert environment_value("OMP_NUM_THREADS", "(empty)", "environment_variables") == "not set"


def test_a_crash_reads_as_a_failure_and_metric_ids_as_words() -> None:
    reason = "process 0: fails: AttributeError: 'NoneType' object has no attribute 'list_devices'"
    assert status_label("unsupported", reason).startswith("failed")
    assert status_label("unsupported", "fails: bf16 is not supported") == "unsupported"
    assert metric_ids_in_words("parity_forward_max_abs divided by") == \
        "forward difference from float64 divided by"


def test_a_crash_reason_reaches_the_page_as_a_sentence_not_a_python_error() -> None:
    crash = "process 0: fails: AttributeError: 'NoneType' object has no attribute 'list_devices'"
    words = reason_label("failed", crash)
    assert "AttributeError" in words and "NoneType" not in words and "crashed" in words
    abort = "ProcessExitedException: process 0 terminated with signal SIGABRT"
    assert "signal" not in reason_label("failed", abort)
    refused = "Keras 3's distribution API has no torch implementation"
    assert reason_label("unsupported", refused) == refused
    assert reason_label("failed", "timed out after 300 s") == "timed out after 300 s"
    assert reason_label("skipped", "") == "(none recorded)"


def test_a_chart_with_nothing_to_show_is_a_sentence() -> None:
    assert "exactly 0" in empty_reason(_rows([0.0, 0.0]), "accuracy_delta")
    assert "No process" in empty_reason(_rows([float("nan")]), "accuracy_delta")
    assert empty_reason(_rows([0.0, 0.1]), "accuracy_delta") == ""


def test_accuracy_is_on_zero_to_one_and_decades_on_a_log_axis() -> None:
    marks = pd.DataFrame({"label": ["chance"], "value": [0.1]})
    accuracy = result_chart(_rows([0.05, 0.1]), "test_accuracy", "t", marks).to_dict()
    assert accuracy["layer"][0]["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert len(accuracy["layer"]) == 3  # bars, ranges, the chance line
    steps = result_chart(_rows([12.0, 442008.0]), "break_even_steps", "t").to_dict()
    assert steps["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert steps["layer"][0]["mark"]["type"] == "point"  # a bar has no base on a log axis
    linear = result_chart(_rows([1.0, 2.0]), "steady_epoch_time", "t").to_dict()
    assert linear["layer"][0]["encoding"]["x"]["scale"] == {"zero": True}


def test_one_result_has_its_own_bibtex_and_cff_with_a_link_to_its_row() -> None:
    release = Citation("2027.01", "2026-12-03", "https://example.net/dlbench/", local=True)
    entry = ResultCitation(release, "2027.01-0557", "experiments/training/",
                           "mlp-digits, pytorch: time per epoch")
    url = "https://example.net/dlbench/2027.01/experiments/training/#r-2027.01-0557"
    assert "@misc{dlbench-2027-01-0557," in entry.bibtex() and url in entry.bibtex()
    assert "local release" in entry.bibtex()
    assert f'url: "{url}"' in entry.cff() and 'version: "2027.01"' in entry.cff()


def test_the_same_cell_is_found_in_every_committed_release() -> None:
    cell = "training:mlp-digits:pytorch:fp32-default-b32:cpu"
    rows = history(ROOT / "results", cell)
    epoch = rows[rows["metric"] == "steady_epoch_time"]
    ids = list(epoch["result_id"])
    assert ids[:2] == ["2026.12-0819", "2027.01-0557"]  # frozen IDs never change
    releases = [i.split("-")[0] for i in ids]
    assert list(dict.fromkeys(releases)) == release_names(ROOT / "results")
    for release, runs in epoch.groupby("release")["run_id"]:  # a machine's run: one ID each
        assert releases.count(release) == len(set(runs)) == len(runs), release
    assert epoch.loc[epoch["release"] == "2027.04", "run_id"].nunique() == 3  # three machines


def test_claim_words_place_each_interval_against_the_threshold() -> None:
    assert interval_words(1.24, 1.70) == "beyond 5%"
    assert interval_words(0.99, 1.02) == "within 5%"
    assert interval_words(0.35, 1.38).startswith("reaches across")


def test_a_long_axis_label_is_wrapped_into_whole_lines_never_cut_short() -> None:
    label = "MLP, 8x8 digits, batch 32, Keras on JAX: plain vs plain mode"
    wrapped = label_lines(label)
    assert " ".join(wrapped).replace(": ", " ") == label.replace(": ", " ")
    assert len(wrapped) > 1 and all(len(line) <= 22 for line in wrapped)
    assert label_lines("Keras on JAX: plain vs plain mode")[0] == "Keras on JAX"
    frame = pd.DataFrame({"label": [label, "PyTorch: bf16/fp32"], "ratio": [1.2, 0.9],
                          "low": [1.1, 0.8], "high": [1.3, 1.0]})
    axis = ratio_chart(frame, "a claim").to_dict()["layer"][1]["encoding"]["y"]["axis"]
    assert axis["labelLimit"] == 0  # Vega draws each line whole: no ellipsis
    assert json.dumps(wrapped) in axis["labelExpr"]  # drawn as these lines


def test_a_cell_id_reads_as_its_workload_and_framework() -> None:
    assert cell_words("training:resnet-synthetic:keras-jax:fp32-default-b32:cuda") == \
        "ResNet-50, 224 px, Keras on JAX"
    assert cell_words("not-a-cell") == "not-a-cell"


def test_the_cells_a_run_re_measured_or_looked_at_are_named_in_words() -> None:
    ids = [f"inference:mlp-digits:keras-jax:fp32-call-b{b}:cpu" for b in range(1, 10)]
    info = {"remeasured": [{"at": "then", "cells": ids[:2], "reason": "why"}],
            "looks": [{"alpha": 0.03, "cells": ids}]}
    shown = run_settings(info, {ids[0]: "Inference: MLP, 8x8 digits · Keras on JAX · b1"})
    assert shown["remeasured"][0]["cells"] == ("Inference: MLP, 8x8 digits · Keras on JAX · "
                                               "b1; MLP, 8x8 digits, Keras on JAX")
    assert shown["remeasured"][0]["reason"] == "why"
    assert shown["looks"][0]["cells"].startswith("9 cells (listed in the run's run.json")
    assert info["looks"][0]["cells"] == ids  # the run's record is left as it is


def test_the_environment_page_of_a_committed_release_names_no_cell_by_its_id() -> None:
    source = load_release(ROOT / "results", "2027.01")  # it re-measured 8 inference cells
    texts = [f"{key} {value}" for run in environment_runs(source)
             for group in run["groups"] for key, value in group["rows"]]
    assert not [t for t in texts if any(c in t for c in source.cells["cell_id"])]
    assert any("Inference: MLP, 8x8 digits · Keras on JAX · fp32" in t for t in texts)


def test_a_run_s_workloads_in_words_show_their_ids_as_code_not_as_text() -> None:
    source = load_release(ROOT / "results", "2027.03")  # its run recorded its workloads' words
    text = render(environment(ROOT / "templates"), "environment.md.j2", source=source,
                  runs=environment_runs(source))
    page = markdown.markdown(text, extensions=["tables", "attr_list"])
    assert "<td><code>resnet50-synthetic</code></td>\n<td>ResNet-50, 224 px</td>" in page
    assert "<td>resnet50-synthetic</td>" not in page and "<td>host (hashed name)</td>" in page


def test_a_metric_only_other_releases_hold_is_labelled_by_its_cell_in_words() -> None:
    cell = "training:mlp-digits:pytorch:fp32-default-b32:cpu"
    summary = pd.DataFrame([{"cell_id": cell, "metric": "steady_epoch_time",
                             "workload": "mlp-digits", "device": "cpu", "system": "pytorch",
                             "variant": "fp32 · default mode · batch 32"}])
    past = pd.DataFrame([{"cell_id": cell, "metric": "model_memory", "release": r,
                          "result_id": f"{r}-0001", "median": 3.0}
                         for r in ("2027.02", "2027.03")])
    releases, rows = history_rows(summary, past)
    assert releases == ["2027.02", "2027.03"]
    assert rows[0]["what"] == "MLP, 8x8 digits · PyTorch · fp32 · default mode · batch 32"


def test_a_long_text_is_broken_into_paragraphs_between_clauses_only() -> None:
    text = "; ".join(f"clause {i} (with a; pause) " + "word " * 30 for i in range(6))
    parts = paragraphs(text, 200)
    assert len(parts) > 1 and all(len(p) <= 200 for p in parts)
    assert " ".join(parts) == text.replace(";  ", "; ")  # nothing lost, nothing cut
    assert all("(with a;" in p for p in parts if "clause" in p)
    assert paragraphs("short.") == ["short."]


def _claim(pairs: int, why: tuple[str, ...] = ()) -> ClaimVerdict:
    label = "workload lstm-tokens, batch size 32, system keras-jax: plain vs plain mode"
    return ClaimVerdict("train-order", "claim", "AMD EPYC", "cpu", Outcome.INCONCLUSIVE,
                        "x", (), (), (Regime.OVERHEAD_BOUND,),
                        tuple((f"{label} {i}", 1.2, 0.9, 1.6) for i in range(pairs)), why)


def test_a_claim_reads_in_short_lines_naming_pair_ratio_and_interval() -> None:
    lines = reason_lines(_claim(9, why=("too few processes " * 40,) * 5))
    assert lines[0].startswith("LSTM 1x256, seq 64, batch 32, Keras on JAX: plain vs")
    assert "1.2x, 95% interval 0.9–1.6x, reaches across 5%" in lines[0]
    assert "And 6 more pairs (Details)." in lines
    assert all(len(line) <= LINE_CHARS + 20 for line in lines), [len(x) for x in lines]
    assert lines[-1].endswith("(see Details)")
    assert "keras-jax" not in " ".join(lines) and "lstm-tokens" not in " ".join(lines)


def test_an_unknown_path_finds_the_sites_own_404_page(tmp_path: Path) -> None:
    (tmp_path / "2027.01").mkdir()
    (tmp_path / "2027.01" / "404.html").write_text("version's")
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "404.html").write_text("latest's")
    assert not_found_page(tmp_path, "/2027.01/nope/") == b"version's"
    assert not_found_page(tmp_path, "/nope/x") == b"latest's"
    assert not_found_page(tmp_path, "/../etc/passwd") == b"latest's"


def test_the_environment_page_publishes_each_cell_s_rate_over_its_machine_s_bound() -> None:
    source = load_release(ROOT / "results", "2027.03")  # 9 cells above its NumPy probe
    groups = [g for run in environment_runs(source) for g in run["groups"]
              if g["title"] == "Achieved compute rates"]
    rows = dict(groups[0]["rows"])
    bound = rows["fp32 bound (GFLOP/s)"]
    assert bound.startswith("262.4 = 2 cores x 4.1 GHz, the highest clock documented")
    assert "this run measured no clock" in bound and "32 FLOP per cycle" in bound
    shares = [float(v.split(", ")[1].split("%")[0]) for k, v in rows.items() if "GFLOP/s," in v]
    assert len(shares) > 20 and max(shares) == 67.5  # its best cell, not clipped to 100
    assert rows["matmul probe fp32"].startswith("115.55 GFLOP/s, 44.0% of the bound")
