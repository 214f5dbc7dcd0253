"""Every value is labelled with the batch it was measured at (issue 53): the rule for each kind
of value, and every committed release's labels against its cells' recorded parameters."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from dlbench.core.declarations.measured_batch import batch_words, cell_batch_words, measured_batch
from dlbench.report.inputs.labelled import variant_label
from dlbench.report.pages.answer_tables import group_label

ROOT = Path(__file__).resolve().parents[1]
RELEASES = sorted(p.name for p in (ROOT / "results" / "releases").iterdir() if p.is_dir())


def _counter():
    spec = importlib.util.spec_from_file_location("batch_labels",
                                                  ROOT / "benchmarks" / "batch_labels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("metric", "experiment", "expected"), [
    ("inference_throughput", "inference", 8),   # the serving batch
    ("inference_throughput", "precision", 8),
    ("latency_p50", "inference", 1),            # one sample per call
    ("latency_p99", "precision", 1),            # a precision cell trains at 32, serves at 1
    ("artifact_latency", "export", 1),
    ("artifact_throughput", "export", 32),      # the cell's batch
    ("steady_epoch_time", "precision", 32),
])
def test_each_value_has_the_batch_its_protocol_measured_it_at(metric, experiment, expected):
    assert measured_batch(metric, 32, {"throughput_batch": 8}, experiment) == expected


def test_a_serving_cell_without_a_recorded_serving_batch_takes_the_plans_default():
    assert measured_batch("inference_throughput", 1, {}, "inference") == 512


def test_inference_memory_names_both_batches_it_spans():
    assert batch_words("working_memory", 1, {"throughput_batch": 8}, "inference") == \
        "batches 1 and 8"
    assert batch_words("working_memory", 32, {"throughput_batch": 8}, "training") == "batch 32"


def test_a_cell_label_names_each_batch_the_cell_measured_at():
    assert cell_batch_words("inference", 1, {"throughput_batch": 4}) == \
        "latency at batch 1, throughput at batch 4"
    assert cell_batch_words("precision", 32, {"throughput_batch": 1024}).startswith(
        "training at batch 32, latency at batch 1")
    assert cell_batch_words("training", 32, {}) == "batch 32"


def test_a_throughput_row_is_labelled_with_the_serving_batch_not_the_cells():
    cell = {"experiment": "inference", "precision": "fp32", "mode": "default",
            "batch_size": 1, "workers": 1, "export_format": "",
            "config_json": json.dumps({"params": {"throughput_batch": 8}})}
    assert variant_label(cell, "inference_throughput").endswith("batch 8")
    assert variant_label(cell, "latency_p50").endswith("batch 1")


def test_a_home_row_names_the_measured_batch_over_its_groups():
    key = json.dumps({"workload": "mlp-digits", "batch_size": "1", "mode_class": "default"})
    assert "batch 1," in group_label(key, "cpu", "system")
    assert "batch 128," in group_label(key, "cpu", "system", "batch 128")


@pytest.mark.parametrize("release", RELEASES)
def test_no_label_of_a_committed_release_names_a_batch_its_value_was_not_measured_at(release):
    counts = _counter().release_counts(ROOT / "results", release)
    assert counts["labels"] > 0 and counts["home_rows"] > 0
    assert (counts["rows"], counts["home"]) == (0, 0)
