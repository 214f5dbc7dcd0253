"""The reader's own questions (issue 53): runtime or framework, compile or not; judged by the
one engine from verdict_questions.yaml, each outcome on synthetic data, and the committed
release 2027.03 answered with the numbers its pages show."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.core.judging.verdict_engine import QUESTIONS
from dlbench.report.inputs.source import load_release
from dlbench.report.pages.answer_values import _pays_back
from dlbench.report.pages.home import source_judgement, with_new_questions
from dlbench.report.render.labels import contender_label
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.verdicts.answers import answer

Q = {q.key: q for q in QUESTIONS}
ROOT = Path(__file__).resolve().parents[1]
REAL = {"workload": "resnet50-synthetic", "batch_size": 8}


def serving(plain: float, production: float, runtimes: dict[str, float]) -> list[dict]:
    """PyTorch's plain and production inference paths and its exported runtimes, as
    throughput (samples/s) at one serving batch."""
    cells = [{"system": "pytorch", "experiment": "inference", "mode": mode, **REAL,
              "values": {"inference_throughput": noisy(value, i)}}
             for i, (mode, value) in enumerate((("inference_mode", plain),
                                                ("compiled", production)))]
    cells += [{"system": "pytorch", "experiment": "export", "export_format": fmt, **REAL,
               "values": {"artifact_throughput": noisy(value, 9 + i)}}
              for i, (fmt, value) in enumerate(runtimes.items())]
    return cells


def one(key: str, cells: list[dict]):
    [verdict] = answer(Q[key], *tables(cells), environments={"r1": CPU_ENV})
    return verdict


def test_a_runtime_faster_than_both_framework_paths_wins_over_the_framework():
    verdict = one("runtime-or-framework", serving(12.3, 17.2, {"onnx-dynamo": 21.6}))
    assert verdict.outcome is Outcome.WINNER and verdict.winner == "onnx-dynamo"
    assert {p.other for p in verdict.pairings} == {"default", "fastest"}


def test_a_framework_path_faster_than_the_runtime_wins_over_it():
    verdict = one("runtime-or-framework", serving(12.3, 25.0, {"tflite": 18.0}))
    assert verdict.winner == "fastest"


def test_a_runtime_as_fast_as_the_production_path_names_no_winner():
    verdict = one("runtime-or-framework", serving(12.3, 20.0, {"onnx-dynamo": 20.1}))
    assert verdict.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE


def test_compile_questions_set_each_systems_plain_path_against_its_production_one():
    cells = [{"system": "tensorflow", "experiment": "inference", "mode": mode,
              "workload": "resnet50-synthetic", "batch_size": 1,
              "values": {"latency_p50": noisy(value, i)}}
             for i, (mode, value) in enumerate((("eager", 115.0), ("tf.function", 63.0)))]
    verdict = one("compile-serving-latency", cells)
    assert verdict.winner == "fastest" and dict(verdict.group)["system"] == "tensorflow"


@pytest.mark.parametrize(("first", "steady", "metric", "expected"), [
    ([0.1, 24.6], [79.0, 72.3], "latency_p50", "about 3,657 requests"),
    ([0.1, 24.6], [12.3, 17.2], "inference_throughput", "about 1,058 samples"),
    ([0.1, 24.6], [72.3, 79.0], "latency_p50", "never: not faster per request"),
    ([0.5, 0.4], [79.0, 72.3], "latency_p50", "at once: its first call costs no more"),
])
def test_the_first_calls_cost_is_paid_back_after_so_many_requests(first, steady, metric,
                                                                   expected):
    assert _pays_back(first, steady, metric) == expected


def test_runtimes_paths_and_modes_are_named_in_words():
    assert [contender_label("path", c) for c in ("onnx-dynamo", "onnx-openvino", "tflite",
                                                 "savedmodel", "default", "fastest")] == [
        "ONNX Runtime", "OpenVINO", "LiteRT", "SavedModel", "framework, plain",
        "framework, production"]
    assert contender_label("export_format", "onnx-dynamo") == "ONNX Runtime"
    assert contender_label("mode", "jit_compile") == "jit-compiled"


def test_a_question_the_stored_verdicts_lack_is_judged_today_and_marked_as_such():
    stored = pd.DataFrame({"row": ["answer"], "question": ["training-speed"]})
    today = pd.DataFrame({"row": ["answer", "answer", "control"],
                          "question": ["training-speed", "runtime-or-framework", ""]})
    shown, added = with_new_questions(stored, today, stored)
    assert added == {"runtime-or-framework"}
    assert list(shown["question"]) == ["training-speed", "runtime-or-framework"]
    assert with_new_questions(today, today, None) == (today, frozenset())


def test_release_2027_03_answers_runtime_or_framework_with_its_measured_numbers():
    found = source_judgement(load_release(ROOT / "results", "2027.03")).answers
    runtime = {dict(v.group)["system"]: v for v in found if v.question == "runtime-or-framework"}
    medians = {v: {s.contender: round(s.summary.median, 1) for s in v.standings}
               for v in runtime.values()}
    assert medians[runtime["pytorch"]] == {"onnx-dynamo": 21.6, "onnx-openvino": 20.4,
                                           "fastest": 17.2, "default": 12.3}
    assert runtime["tensorflow"].winner == "tflite"
    assert medians[runtime["tensorflow"]]["fastest"] == 16.9
    compile_answers = [v for v in found if v.question == "compile-serving-throughput"
                       and v.pairings]
    assert {dict(v.group)["system"] for v in compile_answers} >= {"pytorch", "tensorflow"}
