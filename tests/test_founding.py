"""The home page's founding questions (issue 66): each answered from the question tables it
shows, or 'not measured in this release' with why and the releases that measured it; the
machine kinds named once with their runs; release notes in short; a citation example that is
not an A/A control; a metric against fp32 without fp32 against itself."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from dlbench.core.storage.layout import release_runs
from dlbench.report.pages.cite import example_row
from dlbench.report.pages.experiment import against_another
from dlbench.report.pages.founding import (FOUNDING, founding_answers, framework_versions,
                                           machine_kinds, measured_in, notes_summary,
                                           summary_frame, why_not)
from dlbench.report.pages.home import short_kind

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _cells(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["experiment", "status", "precision", "reason"])


def test_a_question_without_a_table_says_why_and_which_releases_measured_it():
    cells = _cells([("training", "ok", "fp32", ""),
                    ("precision", "skipped", "fp16", "no fp16 units on this CPU")])
    table = {"key": "training-speed", "unit": "s", "rows": [
        {"label": "MLP, 8x8 digits, batch 32", "outcome": "winner", "winner_words": "PyTorch",
         "best": "1.2"}]}
    found = founding_answers([table], {}, [], cells, "2027.04", RESULTS, links=True)
    asks = {item["ask"]: item for item in found}
    trains = asks["Which framework trains fastest?"]
    assert trains["lines"] == [{"label": "MLP, 8x8 digits, batch 32",
                                "answer": "PyTorch leads (1.2 s)", "anchor": "q-training-speed"}]
    fp16 = asks["Does FP16 train faster than FP32?"]
    assert fp16["missing"]["why"] == "no fp16 units on this CPU"
    assert [r["name"] for r in fp16["missing"]["releases"]] == ["2026.12"]
    parallel = next(item for item in found if "data parallelism" in item["ask"])
    assert parallel["missing"]["why"] == "this release's suite held no data parallel cell"
    assert parallel["missing"]["releases"] == [{"name": "2026.12", "href": "../2026.12/"},
                                               {"name": "2027.01", "href": "../2027.01/"}]
    assert len(found) == len(FOUNDING)


def test_a_draft_names_the_releases_without_linking_them():
    assert measured_in(None, "x", "data-parallel") == []
    found = founding_answers([], {}, [], _cells([]), "draft", RESULTS, links=False)
    assert all(r["href"] == "" for item in found for r in item["missing"]["releases"])
    assert why_not(_cells([]), "precision", "fp16") == \
        "this release's suite held no fp16 precision cell"


def test_each_machine_kind_is_named_once_with_its_runs_tied_to_the_environment_page():
    runs = release_runs(RESULTS, "2027.04")
    kinds = machine_kinds(runs)
    assert [k["words"] for k in kinds] == ["Intel Xeon, 2 cores, AMX, AVX-512 BF16",
                                           "AMD EPYC, 2 cores, AVX-512 BF16"]
    assert [r["number"] for r in kinds[0]["runs"]] == [1, 2]
    assert kinds[1]["runs"] == [{"number": 1, "anchor": "run-20261207t022029z-cpu"}]
    assert framework_versions(runs).startswith("PyTorch 2.13.0, TensorFlow 2.21.0")
    assert short_kind("Intel Xeon, 2 cores, AMX, AVX-512 BF16") == "Intel Xeon (AMX)"
    assert short_kind("AMD EPYC, 2 cores, AVX2 only") == "AMD EPYC (AVX2 only)"
    assert short_kind("NVIDIA H100 GPU") == "NVIDIA H100 GPU"


def test_the_home_page_shows_the_notes_first_paragraph_only():
    notes = json.loads((RESULTS / "releases" / "2027.04" / "release.json").read_text())["notes"]
    summary = notes_summary(notes)
    assert summary.startswith("Release 2027.04 asks") and "\n" not in summary
    assert len(summary) < 400 and "Machine kinds drawn" not in summary
    assert notes_summary("- a list first\n- its second item\n\nthen") == "a list first"
    assert notes_summary("## A heading\n\ntext") == ""


def test_the_citation_example_is_never_an_aa_control_or_its_twin():
    a, twin, b = ("inference:mlp-digits:pytorch:fp32-default-b1:cpu",
                  "inference:mlp-digits:pytorch:fp32-default-b1-aa:cpu",
                  "inference:mlp-digits:tensorflow:fp32-default-b1:cpu")
    cells = pd.DataFrame({"cell_id": [a, twin, b], "config_json": [
        "{}", json.dumps({"control": True}), "{}"]})
    summary = pd.DataFrame({"cell_id": [a, twin, b, b],
                            "metric": ["latency_p50", "latency_p50", "import_time",
                                       "latency_p50"]})
    assert example_row(summary, cells).name == 3
    assert example_row(summary[summary["cell_id"] != b], cells) is None


def test_a_metric_against_fp32_has_no_row_of_fp32_against_itself():
    rows = pd.DataFrame({"precision": ["fp32", "bf16"], "median": [0.0, -0.01]})
    assert list(against_another(rows, "accuracy_change_vs_fp32")["precision"]) == ["bf16"]
    assert against_another(rows[:1], "accuracy_change_vs_fp32").empty
    assert len(against_another(rows, "test_accuracy")) == 2


def test_the_summary_chart_holds_each_questions_first_row_on_each_machine():
    def row(group: str, machine: str, lead: tuple | None) -> dict:
        return {"group": group, "machine": machine, "lead": lead, "winner_words": "PyTorch",
                "label": f"{group} ({machine})"}

    tables = [{"key": "training-speed", "rows": [
        row("MLP, batch 32", "Intel Xeon (AMX)", (1.5, 1.2, 1.8)),
        row("MLP, batch 32", "AMD EPYC (AVX2 only)", None),
        row("CNN, batch 32", "Intel Xeon (AMX)", (2.0, 1.5, 2.5))]}]
    frame = summary_frame(tables)
    assert list(frame["label"]) == ["MLP, batch 32: PyTorch on Intel Xeon (AMX)"]
    assert list(frame["ratio"]) == [1.5] and summary_frame([]).empty


def _parity_cell(workload: str, framework: str, backend: str, logit: float) -> dict:
    details = {"logits": [[0.5, logit]], "updates": [0.1, 0.2], "tolerance": 1e-4,
               "reference_pass": True}
    return {"experiment": "parity", "status": "ok", "precision": "fp32", "reason": "",
            "run_id": "r1", "workload": workload, "device": "cpu", "framework": framework,
            "backend": backend, "details_json": json.dumps(details)}


def test_the_same_model_question_is_answered_from_the_parity_cells_of_each_workload():
    systems = [("pytorch", ""), ("tensorflow", ""), ("keras", "jax")]
    cells = pd.DataFrame(
        [_parity_cell("resnet50-synthetic", f, b, 0.25) for f, b in systems]
        + [_parity_cell("bert-base-tokens", f, b, 0.25 if f != "tensorflow" else 0.35)
           for f, b in systems])
    found = founding_answers([], {}, [], cells, "draft", None, links=False)
    same = next(item for item in found if "same model" in item["ask"])
    assert same["missing"] is None
    answers = {line["label"]: line["answer"] for line in same["lines"]}
    assert {line["href"] for line in same["lines"]} == {"experiments/parity.md"}
    resnet = next(a for label, a in answers.items() if label.startswith("ResNet-50"))
    assert resnet.startswith("the same model in all 3 systems")
    bert = next(a for label, a in answers.items() if label.startswith("BERT-base"))
    assert bert.startswith("2 of 3 pairs of 3 systems differ beyond tolerance")
    assert "TensorFlow" in bert and "same model" not in bert
    # without parity cells the question says it was not measured
    none = founding_answers([], {}, [], _cells([]), "draft", None, links=False)
    assert next(i for i in none if "same model" in i["ask"])["missing"]["why"] == \
        "this release's suite held no parity cell"


def test_fp16_and_data_parallelism_read_their_own_tables_when_their_cells_ran():
    cells = _cells([("precision", "ok", "fp16", ""), ("data-parallel", "ok", "fp32", "")])
    row = {"label": "ResNet-50, PyTorch", "outcome": "winner", "winner_words": "fp16",
           "best": "2.0"}
    tables = [{"key": key, "unit": "s", "rows": [row]}
              for key in ("precision-fp16-speedup", "data-parallel-throughput")]
    found = {item["ask"]: item for item in
             founding_answers(tables, {}, [], cells, "draft", None, links=False)}
    fp16 = found["Does FP16 train faster than FP32?"]
    assert fp16["missing"] is None
    assert fp16["lines"][0]["anchor"] == "q-precision-fp16-speedup"
    parallel = found["Does data parallelism pay, and whose scales best?"]
    assert parallel["lines"][0]["anchor"] == "q-data-parallel-throughput"


def test_a_kind_that_measured_none_of_an_answered_question_says_why():
    cells = pd.DataFrame([
        {"experiment": "precision", "status": "ok", "precision": "fp16", "reason": "",
         "run_id": "intel"},
        {"experiment": "precision", "status": "unsupported", "precision": "fp16",
         "reason": "this CPU has no fp16 units", "run_id": "amd"},
        {"experiment": "precision", "status": "ok", "precision": "bf16", "reason": "",
         "run_id": "amd"}])
    table = {"key": "precision-fp16-speedup", "unit": "s", "rows": [
        {"label": "ResNet-50, PyTorch", "outcome": "winner", "winner_words": "fp16",
         "best": "2.0"}]}
    kinds = {"intel": "Intel Xeon", "amd": "AMD EPYC"}
    found = {item["ask"]: item for item in founding_answers(
        [table], {}, [], cells, "draft", None, links=False, kinds=kinds)}
    fp16 = found["Does FP16 train faster than FP32?"]["lines"]
    assert [line["label"] for line in fp16] == ["ResNet-50, PyTorch", "on AMD EPYC"]
    assert fp16[1]["answer"] == "not measured: this CPU has no fp16 units"
    assert fp16[1]["href"] == "experiments/precision.md"
    # one kind, or a question whose experiment no kind measured (the compiled path's
    # serving rows come from the inference experiment): nothing more
    serving = {"key": "compile-serving-latency", "unit": "ms", "rows": [table["rows"][0]]}
    static = next(i for i in founding_answers([serving], {}, [], cells, "draft", None,
                                              links=False, kinds=kinds)
                  if "Static" in i["ask"])
    assert [line["anchor"] for line in static["lines"]] == ["q-compile-serving-latency"]
    one = founding_answers([table], {}, [], cells, "draft", None, links=False,
                           kinds={"intel": "Intel Xeon", "amd": "Intel Xeon"})
    assert len(next(i for i in one if "FP16" in i["ask"])["lines"]) == 1


def test_a_questions_line_is_its_most_decided_row_not_the_tables_first():
    """2027.04's bf16 line read Keras on JAX ("bf16 on 1 of 2 machine kinds") while
    PyTorch's bf16 lead held on both kinds, because the table listed Keras on JAX first."""
    cells = _cells([("precision", "ok", "bf16", "")])
    rows = [{"label": label, "outcome": outcome, "holds": f"{label}: {outcome}"}
            for label, outcome in [("Keras on JAX", "where decided"),
                                   ("Keras on TensorFlow", "decided nowhere"),
                                   ("PyTorch", "everywhere"), ("Keras on torch", "everywhere")]]
    per_machine = {"precision-speedup": {"rows": rows}}
    found = {item["ask"]: item for item in founding_answers(
        [{"key": "precision-speedup", "unit": "s", "rows": []}], per_machine, [], cells,
        "draft", None, links=False)}
    bf16 = next(item for ask, item in found.items() if "BF16" in ask)
    assert bf16["lines"][0]["answer"] == "PyTorch: everywhere"
    undecided = {"precision-speedup": {"rows": rows[:2]}}
    found = founding_answers([], undecided, [], cells, "draft", None, links=False)
    bf16 = next(item for item in found if "BF16" in item["ask"])
    assert bf16["lines"][0]["answer"] == "Keras on JAX: where decided"
