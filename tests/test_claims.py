"""Claims checked: the claims file, every rule kind, and missing evidence."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from tests.stats_fixtures import FakeCell, noisy, spec, training_cells, write_run

from dlbench.schema import CellStatus
from dlbench.tables import read_table
from report.claims import (
    ClaimOutcome,
    ClaimsFileError,
    check_claims,
    load_claims,
    parse_claims,
)

CLAIMS_MD = Path("/work/shared/CLAIMS.md")


def tables(tmp_path, runs: dict[str, list[FakeCell]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write runs with the runner's store and read their tables back, concatenated."""
    observations, cells = [], []
    for run_id, run_cells in runs.items():
        root = write_run(tmp_path, run_id, run_cells)
        observations.append(read_table(root / "observations.parquet", "observations"))
        cells.append(read_table(root / "cells.parquet", "cells"))
    return pd.concat(observations, ignore_index=True), pd.concat(cells, ignore_index=True)


def one_claim(rule: dict, claim_id: str = "c") -> list:
    return parse_claims({"claims": [{"id": claim_id, "claim": "A claim.", "source": "test",
                                     "decides": "test", "evidence": [rule]}]})


def verdict_of(claims: list, observations, cells, claim_id: str, device: str = "cpu"):
    found = [v for v in check_claims(observations, cells, claims)
             if v.claim_id == claim_id and v.device == device]
    assert len(found) == 1
    return found[0]


PROJECT = {claim.id: claim for claim in load_claims()}
TRAIN_ORDER = {"kind": "order", "experiment": "training", "metric": "steady_epoch_time",
               "order": ["tensorflow", "pytorch", "keras"]}


def test_the_claims_file_holds_every_claim_of_the_list():
    listed = set(re.findall(r"^\| ([a-z0-9-]+) \|", CLAIMS_MD.read_text(), re.MULTILINE)) \
        if CLAIMS_MD.exists() else set()
    listed.discard("id")
    assert listed <= set(PROJECT)
    assert len(PROJECT) >= 12
    assert all(claim.evidence and claim.source and claim.decides for claim in PROJECT.values())


@pytest.mark.parametrize(("rule", "message"), [
    ({"kind": "ranking", "experiment": "training"}, "kind 'ranking' is not one of: order"),
    ({**TRAIN_ORDER, "oder": ["a"]}, "unknown field 'oder'"),
    ({"kind": "order", "experiment": "training", "metric": "m"}, "needs order"),
    ({"kind": "effect", "experiment": "p", "metric": "m", "contest": "precision",
      "baseline": "fp32", "expect": "within"}, "needs ratio_range"),
    ({"kind": "status", "experiment": "p"}, "needs supported_if or contradicted_if"),
    ({**TRAIN_ORDER, "combine": "most"}, "combine 'most' is not one of: all, any"),
])
def test_a_bad_rule_names_its_claim_and_field(rule, message):
    with pytest.raises(ClaimsFileError, match=re.escape(message)) as error:
        one_claim(rule, "my-claim")
    assert "claim my-claim rule 1" in str(error.value)


def test_a_new_claim_needs_only_a_yaml_entry(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [{
        "id": "pytorch-fastest", "claim": "PyTorch trains fastest.", "source": "a blog",
        "decides": "steady epoch time", "evidence": [{
            "kind": "order", "experiment": "training", "metric": "steady_epoch_time",
            "order": ["pytorch", "tensorflow"]}]}]}))
    rng = np.random.default_rng(0)
    observations, cells = tables(tmp_path, {"r1": training_cells(rng, {"pytorch": 1.0,
                                                                       "tensorflow": 1.5})})
    verdict = verdict_of(load_claims(path), observations, cells, "pytorch-fastest")
    assert verdict.verdict is ClaimOutcome.SUPPORTED
    assert "pytorch beats tensorflow" in verdict.explanation


def test_training_order_is_supported_or_contradicted_by_the_numbers(tmp_path):
    claims = one_claim(TRAIN_ORDER, "train-order")
    rng = np.random.default_rng(1)
    times = {"tensorflow": 0.8, "pytorch": 1.0, "keras-tensorflow": 1.3, "keras-torch": 1.6}
    runs = {"as-claimed": training_cells(rng, times),
            "reversed": training_cells(rng, {**times, "tensorflow": 1.2})}
    observations, cells = tables(tmp_path, runs)
    verdicts = {v.machine: v for v in check_claims(observations, cells, claims)}
    assert verdicts["as-claimed"].verdict is ClaimOutcome.SUPPORTED
    assert verdicts["reversed"].verdict is ClaimOutcome.CONTRADICTED
    explanation = verdicts["reversed"].explanation
    assert "pytorch beats tensorflow" in explanation and "95% CI" in explanation
    assert "training:mlp-digits:pytorch:fp32-default-b32:cpu" in verdicts["reversed"].evidence


def test_keras_is_represented_by_its_best_backend(tmp_path):
    claims = one_claim({**TRAIN_ORDER, "order": ["pytorch", "keras"]})
    rng = np.random.default_rng(2)
    cells = training_cells(rng, {"pytorch": 1.0, "keras-tensorflow": 2.0, "keras-torch": 0.7})
    verdict = verdict_of(claims, *tables(tmp_path, {"r1": cells}), "c")
    assert verdict.verdict is ClaimOutcome.CONTRADICTED
    assert "keras-torch beats pytorch" in verdict.explanation


def test_same_accuracy_claim(tmp_path):
    rng = np.random.default_rng(3)
    same = training_cells(rng, {"pytorch": 1, "tensorflow": 1, "keras-torch": 1},
                          accuracy={"pytorch": 0.96, "tensorflow": 0.955, "keras-torch": 0.962})
    apart = training_cells(rng, {"pytorch": 1, "tensorflow": 1},
                           accuracy={"pytorch": 0.96, "tensorflow": 0.90})
    observations, cells = tables(tmp_path, {"same": same, "apart": apart})
    verdicts = {v.machine: v for v in check_claims(observations, cells,
                                                  [PROJECT["accuracy-equal"]])}
    assert verdicts["same"].verdict is ClaimOutcome.SUPPORTED
    assert verdicts["apart"].verdict is ClaimOutcome.CONTRADICTED
    assert "tolerance 0.02" in verdicts["apart"].explanation


def _precision(rng, ratios: dict[str, float], metric: str = "peak_memory") -> list[FakeCell]:
    return [FakeCell(spec("pytorch", "pytorch", experiment="precision", precision=p),
                     {metric: noisy(rng, 100 * r, spread=0.01)}) for p, r in ratios.items()]


def test_half_memory_claim_uses_the_ratio_range(tmp_path):
    rng = np.random.default_rng(4)
    runs = {"half": _precision(rng, {"fp32": 1.0, "fp16": 0.5, "bf16": 0.52}),
            "same": _precision(rng, {"fp32": 1.0, "bf16": 0.97})}
    observations, cells = tables(tmp_path, runs)
    verdicts = {v.machine: v for v in check_claims(observations, cells,
                                                  [PROJECT["fp16-memory"]])}
    assert verdicts["half"].verdict is ClaimOutcome.SUPPORTED
    assert verdicts["same"].verdict is ClaimOutcome.CONTRADICTED
    assert "bf16/fp32 peak_memory ratio 0.97×" in verdicts["same"].explanation


def test_speed_claim_with_no_meaningful_difference_is_contradicted(tmp_path):
    rng = np.random.default_rng(5)
    cells = _precision(rng, {"fp32": 1.0, "bf16": 1.0}, metric="steady_epoch_time")
    verdict = verdict_of([PROJECT["fp16-speed"]], *tables(tmp_path, {"r1": cells}), "fp16-speed")
    assert verdict.verdict is ClaimOutcome.CONTRADICTED


def test_may_cost_accuracy_needs_one_drop_only(tmp_path):
    rng = np.random.default_rng(6)
    drop = [FakeCell(spec(f, b, experiment="precision", precision=p),
                     {"test_accuracy": noisy(rng, acc, spread=0.001)})
            for (f, b), p, acc in ((("pytorch", "pytorch"), "fp32", 0.96),
                                   (("pytorch", "pytorch"), "fp16", 0.96),
                                   (("tensorflow", "tensorflow"), "fp32", 0.96),
                                   (("tensorflow", "tensorflow"), "fp16", 0.90))]
    verdict = verdict_of([PROJECT["fp16-accuracy"]], *tables(tmp_path, {"r1": drop}),
                         "fp16-accuracy")
    assert verdict.verdict is ClaimOutcome.SUPPORTED


def _keras_precision(status: CellStatus) -> list[FakeCell]:
    return [FakeCell(spec("keras", backend, experiment="precision", precision="bf16"),
                     {"steady_epoch_time": [1.0, 1.1]} if status is CellStatus.OK else {},
                     status=status, reason="dtype policy refused")
            for backend in ("tensorflow", "torch")]


def test_keras_fp16_claim_follows_the_cell_statuses(tmp_path):
    observations, cells = tables(tmp_path, {"works": _keras_precision(CellStatus.OK),
                                            "refused": _keras_precision(CellStatus.UNSUPPORTED)})
    verdicts = {v.machine: v for v in check_claims(observations, cells, [PROJECT["keras-fp16"]])}
    assert verdicts["works"].verdict is ClaimOutcome.CONTRADICTED
    assert verdicts["refused"].verdict is ClaimOutcome.SUPPORTED
    assert "0 of 2 selected cells ran" in verdicts["refused"].explanation
    assert "dtype policy refused" in verdicts["refused"].explanation


def test_export_claim_counts_working_paths(tmp_path):
    def export(framework: str, fmt: str, status: CellStatus) -> FakeCell:
        return FakeCell(spec(framework, framework, experiment="export", export_format=fmt),
                        status=status, reason="export failed")
    cells = [export("pytorch", "onnx", CellStatus.OK), export("pytorch", "pt2", CellStatus.OK),
             export("tensorflow", "savedmodel", CellStatus.OK),
             export("tensorflow", "tflite", CellStatus.FAILED)]
    verdict = verdict_of([PROJECT["deploy-tf-wins"]], *tables(tmp_path, {"r1": cells}),
                         "deploy-tf-wins")
    assert verdict.verdict is ClaimOutcome.CONTRADICTED
    assert "tensorflow: 1 of 2 export cells work; pytorch: 2 of 2" in verdict.explanation


def test_missing_evidence_is_inconclusive_with_the_reason_per_device(tmp_path):
    rng = np.random.default_rng(7)
    cells = training_cells(rng, {"pytorch": 1.0, "tensorflow": 0.7}) + training_cells(
        rng, {"pytorch": 1.0}, device="cuda")
    observations, cells_table = tables(tmp_path, {"r1": cells})
    verdicts = check_claims(observations, cells_table, [PROJECT["train-order"],
                                                        PROJECT["dp-tf-scales"]])
    by = {(v.claim_id, v.device): v for v in verdicts}
    assert set(by) == {("train-order", "cpu"), ("train-order", "cuda"),
                       ("dp-tf-scales", "cpu"), ("dp-tf-scales", "cuda")}
    assert all(v.verdict is ClaimOutcome.INCONCLUSIVE for v in verdicts)
    assert "no keras cell" in by[("train-order", "cpu")].explanation
    assert "no data-parallel cells" in by[("dp-tf-scales", "cpu")].explanation
    assert "no tensorflow cell" in by[("train-order", "cuda")].explanation


def test_runs_of_one_machine_are_judged_together_latest_cell_wins(tmp_path):
    claims = one_claim({**TRAIN_ORDER, "order": ["tensorflow", "pytorch"]})
    rng = np.random.default_rng(8)
    old = training_cells(rng, {"tensorflow": 2.0, "pytorch": 1.0})
    new = training_cells(rng, {"tensorflow": 0.5})
    observations, cells = tables(tmp_path, {"20261201T1": old, "20261201T2": new})
    machines = {"20261201T1": "box", "20261201T2": "box"}
    [verdict] = check_claims(observations, cells, claims, machines=machines)
    assert (verdict.machine, verdict.device) == ("box", "cpu")
    assert verdict.verdict is ClaimOutcome.SUPPORTED
    runs = dict(zip(verdict.evidence, verdict.evidence_runs, strict=True))
    assert runs == {"training:mlp-digits:tensorflow:fp32-default-b32:cpu": "20261201T2",
                    "training:mlp-digits:pytorch:fp32-default-b32:cpu": "20261201T1"}
    separate = check_claims(observations, cells, claims)
    assert {v.machine: v.verdict for v in separate} == {
        "20261201T1": ClaimOutcome.CONTRADICTED, "20261201T2": ClaimOutcome.INCONCLUSIVE}


def test_concise_code_claim_counts_lines_of_each_frameworks_own_code(tmp_path):
    from report.claim_rules import code_lines

    short = ('"""Doc."""\n\n# comment\nimport torch\n\n\ndef f():\n    """Doc\n    more."""\n'
             "    return 1\n")
    assert code_lines(short) == 3
    longer = "import tensorflow\n" + "x = 1\n" * 10
    paths = {"pytorch": "runner/experiments/training/pytorch.py",
             "tensorflow": "runner/experiments/training/tensorflow.py",
             "keras": "runner/experiments/training/keras.py"}
    cells = [FakeCell(spec(f, b), {"steady_epoch_time": [1.0, 1.1]}, code_path=paths[f])
             for f, b in (("pytorch", "pytorch"), ("tensorflow", "tensorflow"),
                          ("keras", "torch"))]
    observations, table = tables(tmp_path, {"r1": cells})
    claim = [PROJECT["pytorch-concise"]]
    code = {paths["pytorch"]: short, paths["tensorflow"]: longer, paths["keras"]: longer}
    [verdict] = check_claims(observations, table, claim, code=code)
    assert verdict.verdict is ClaimOutcome.SUPPORTED
    assert "pytorch: 3 lines" in verdict.explanation
    code[paths["keras"]] = "import keras\n"
    [verdict] = check_claims(observations, table, claim, code=code)
    assert verdict.verdict is ClaimOutcome.CONTRADICTED
    [verdict] = check_claims(observations, table, claim)
    assert verdict.verdict is ClaimOutcome.INCONCLUSIVE
    assert "no code of pytorch, tensorflow, keras to count" in verdict.explanation


def test_static_graph_claim_compares_graph_modes_with_each_frameworks_eager_mode(tmp_path):
    rng = np.random.default_rng(9)

    def cells(keras_jit: float) -> list[FakeCell]:
        modes = {("pytorch", "pytorch"): {"eager": 1.0, "compiled": 0.5},
                 ("keras", "torch"): {"run_eagerly": 1.0, "default": 1.0, "jit_compile": keras_jit}}
        return [FakeCell(spec(f, b, experiment="execution-mode", mode=m),
                         {"steady_step_time": noisy(rng, t, spread=0.01)})
                for (f, b), times in modes.items() for m, t in times.items()]

    observations, table = tables(tmp_path, {"faster": cells(0.6), "same": cells(1.0)})
    verdicts = {v.machine: v for v in check_claims(observations, table,
                                                   [PROJECT["static-graph-fast"]])}
    assert verdicts["faster"].verdict is ClaimOutcome.SUPPORTED
    assert verdicts["same"].verdict is ClaimOutcome.CONTRADICTED
    assert "jit_compile/run_eagerly" in verdicts["same"].explanation
    assert "default/" not in verdicts["faster"].explanation


def test_a_loaded_release_is_checked_per_machine_with_its_code(tmp_path):
    from report.claims import check_source_claims, machines_of
    from report.source import load_draft

    rng = np.random.default_rng(10)
    box = {"cpu": {"model": "Box CPU", "logical_cores": 2}, "hostname_sha256": "aaaaaa"}
    other = {"cpu": {"model": "Box CPU", "logical_cores": 2}, "hostname_sha256": "bbbbbb"}
    write_run(tmp_path, "r1", training_cells(rng, {"pytorch": 1.0, "tensorflow": 0.5}),
              environment=box)
    write_run(tmp_path, "r2", training_cells(rng, {"pytorch": 1.0}, workload="cnn-digits"),
              environment=box)
    write_run(tmp_path, "r3", training_cells(rng, {"pytorch": 1.0}), environment=other)
    source = load_draft(tmp_path, ["r1", "r2", "r3"])
    machines = machines_of(source.runs)
    assert machines["r1"] == machines["r2"] == "Box CPU (2 cores) [host aaaaaa]"
    assert machines["r3"] == "Box CPU (2 cores) [host bbbbbb]"
    found = check_source_claims(source, [PROJECT["train-order"]])
    assert sorted(v.machine for v in found) == sorted(set(machines.values()))
