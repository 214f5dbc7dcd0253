"""The real-size models on the CPU: which cells the suites plan, their serving batches, what
a process is expected to cost, the batch each result is filed under, and the serving
questions. No real-size model runs here (tests/test_export_runtimes.py runs their family's
tiny size)."""

from __future__ import annotations

import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.core.storage.schema import CellStatus
from dlbench.runner.cell.outcome import CellOutcome, Observation
from dlbench.runner.cell.spec import NOT_MEASURED, CellSpec
from dlbench.runner.driver.plan.experiments import get_experiment
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.estimate import default_process_s
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.driver.store.record import CellRecord
from dlbench.runner.driver.store.run_frames import observations_frame
from dlbench.runner.workloads.catalog import get_workload, size_profile
from dlbench.runner.workloads.real_size import (MIN_SERVING_CALL_S, REAL_SIZE_WORKLOADS,
                                                SERVING_BATCH, serving_call_s)
from dlbench.report.verdicts.answers import QUESTIONS, answer

SYSTEMS = {f.name for f in FRAMEWORKS}


def planned(experiment: str, suite: str = "standard", device: str = "cpu",
            workloads: tuple[str, ...] = ()) -> list[CellSpec]:
    request = RunRequest(suite=suite, workloads=list(workloads), device=device, threads=2)
    return get_experiment(experiment).plan(request)


def test_the_real_size_models_are_the_gpu_definitions_with_the_same_weights():
    pairs = {"resnet50-synthetic": "resnet-synthetic", "bert-base-tokens": "transformer-tokens"}
    for real, family in pairs.items():
        cpu = size_profile(get_workload(real), "cpu").definition
        assert cpu == size_profile(get_workload(family), "gpu").definition
        assert get_workload(real).seed == get_workload(family).seed  # same initial weights


def test_a_serving_call_lasts_at_least_the_minimum_even_at_the_measured_peak():
    for workload, batch in SERVING_BATCH.items():
        assert serving_call_s(workload, batch) >= MIN_SERVING_CALL_S
        assert serving_call_s(workload, batch // 2) < 2 * MIN_SERVING_CALL_S  # not wasteful


def test_standard_on_a_cpu_serves_every_system_at_resnet50_on_both_paths():
    cells = [c for c in planned("inference") if c.workload in REAL_SIZE_WORKLOADS]
    measured = [c for c in cells if not c.params.get(NOT_MEASURED)]
    resnet = {(c.framework_id.name, mode_class("inference", c.framework, c.mode))
              for c in measured if c.workload == "resnet50-synthetic"}
    production = {s for s, cls in resnet if cls == FASTEST}
    assert {s for s, _ in resnet} == SYSTEMS
    # Keras on JAX's plain path is XLA already (SAME_AS); Keras' jit_compile on torch is cut
    # from the standard CPU suite (issue 38: its dearest cell)
    assert production == SYSTEMS - {"keras-jax", "keras-torch"}
    # BERT-base's plain path: Keras answers on torch (issue 38's cuts: on JAX and on
    # TensorFlow it is answered at ResNet-50)
    bert = {c.framework_id.name for c in measured if c.workload == "bert-base-tokens"}
    assert bert == SYSTEMS - {"keras-jax", "keras-tensorflow"}
    for cell in measured:
        assert cell.batch_size == 1 and cell.params["data_size"] == "small"
        assert cell.params["throughput_batch"] == SERVING_BATCH[cell.workload]
        assert cell.timeout_s >= 600  # a cold compile of the real size takes minutes
    cut = [c for c in cells if c.params.get(NOT_MEASURED)]
    assert cut and all("the full suite measures it" in c.params[NOT_MEASURED] for c in cut)
    assert not {c.workload for c in planned("inference")} & {"resnet-synthetic"}


def test_the_full_suite_measures_every_real_size_cell_and_the_quick_suite_none():
    full = [c for c in planned("inference", "full") if c.workload in REAL_SIZE_WORKLOADS]
    assert full and not any(c.params.get(NOT_MEASURED) for c in full)
    assert not [c for c in planned("inference", "quick") if c.workload in REAL_SIZE_WORKLOADS]
    assert not [c for c in planned("inference", "standard", "cuda")
                if c.workload in REAL_SIZE_WORKLOADS]  # a GPU's own sizes are these models


def test_standard_exports_resnet50_into_every_deployment_runtime():
    cells = [c for c in planned("export") if c.workload == "resnet50-synthetic"]
    assert {c.export_format for c in cells} == {"onnx-dynamo", "onnx-openvino", "savedmodel",
                                                "tflite"}
    assert {c.batch_size for c in cells} == {SERVING_BATCH["resnet50-synthetic"]}
    assert all(c.params["export_samples"] >= c.batch_size for c in cells)


def test_a_real_size_process_is_estimated_from_its_arithmetic_and_compiles():
    cells = {(c.framework_id.name, c.mode): c for c in planned("inference")
             if c.workload == "resnet50-synthetic"}
    plain, compiled = cells[("pytorch", "inference_mode")], cells[("pytorch", "compiled")]
    small = next(c for c in planned("inference") if c.workload == "mlp-digits"
                 and c.framework == "pytorch" and c.mode == "inference_mode")
    assert default_process_s(compiled) > default_process_s(plain) > default_process_s(small)
    assert default_process_s(cells[("tensorflow", "xla")]) == 0.0  # planned as not measured
    bert = next(c for c in planned("inference") if c.workload == "bert-base-tokens"
                and c.framework == "pytorch" and c.mode == "inference_mode")
    assert default_process_s(bert) > default_process_s(plain)  # 2.7x the FLOPs, 4x the weights


def _record(metric_values: dict[str, float], **spec) -> CellRecord:
    spec = CellSpec(**{"experiment": "inference", "workload": "resnet50-synthetic",
                       "framework": "pytorch", "backend": "pytorch", "device": "cpu",
                       "batch_size": 1, "repeats": 1, **spec})
    outcome = CellOutcome(CellStatus.OK, [Observation(m, v, 0) for m, v in
                                          metric_values.items()], None)
    return CellRecord(spec, outcome, "2026-12-05T00:00:00", 1.0, "", "", "")


def test_each_result_is_filed_under_the_batch_it_was_measured_at():
    inference = _record({"latency_p50": 50.0, "inference_throughput": 40.0},
                        mode="inference_mode", params={"throughput_batch": 8})
    export = _record({"artifact_latency": 50.0, "artifact_throughput": 40.0},
                     experiment="export", export_format="onnx-dynamo", batch_size=8)
    frame = observations_frame([inference, export], "r1")
    batch = dict(zip(frame["experiment"] + ":" + frame["metric"], frame["batch_size"]))
    assert batch == {"inference:latency_p50": 1, "inference:inference_throughput": 8,
                     "export:artifact_latency": 1, "export:artifact_throughput": 8}


@pytest.mark.parametrize("key", ["serve-resnet50-throughput", "inference-throughput"])
def test_the_serving_questions_ask_the_real_size_cells_and_the_others_the_small(key):
    [question] = [q for q in QUESTIONS if q.key == key]
    cells = [{"system": s, "experiment": "inference", "mode": m, "workload": w, "batch_size": b,
              "values": {"inference_throughput": noisy(rate, i)}}
             for i, (s, m, rate) in enumerate([("pytorch", "inference_mode", 30.0),
                                               ("tensorflow", "eager", 20.0)])
             for w, b in (("resnet50-synthetic", 8), ("mlp-digits", 128))]
    [verdict] = answer(question, *tables(cells), environments={"r1": CPU_ENV})
    group = dict(verdict.group)
    real = key.startswith("serve")
    assert group["workload"] == ("resnet50-synthetic" if real else "mlp-digits")
    assert str(group["batch_size"]) == ("8" if real else "128")
    assert verdict.winner == "pytorch"


def test_the_real_size_questions_come_first_on_the_home_page():
    keys = [q.key for q in QUESTIONS]
    serving = [k for k in keys if k.startswith(("serve-", "deploy-"))]
    assert serving and keys[:len(serving)] == serving


def test_the_full_suite_times_real_size_training_steps_and_bf16_memory_on_a_cpu():
    training = [c for c in planned("training", "full") if c.workload in REAL_SIZE_WORKLOADS]
    assert {c.framework_id.name for c in training} == SYSTEMS
    assert {mode_class("training", c.framework, c.mode) for c in training} == {"default",
                                                                               FASTEST}
    for cell in training:
        assert cell.params == {"epochs": 3, "data_size": "small", "test_samples": 16}
        assert cell.batch_size == 8  # the CPU profile's: 4 steps an epoch of 32 samples
    precision = [c for c in planned("precision", "full") if c.workload in REAL_SIZE_WORKLOADS]
    assert {c.precision for c in precision} == {"fp32", "bf16"}
    assert all(c.params["data_size"] == "small" for c in precision)  # not full's "large"
    for suite in ("quick", "standard"):  # standard's time goes to inference and runtimes
        for experiment in ("training", "precision"):
            assert not {c.workload for c in planned(experiment, suite)} & set(
                REAL_SIZE_WORKLOADS)


def test_a_real_size_cell_evaluates_only_its_few_test_samples():
    from dlbench.runner.worker.harness.data import cell_data

    spec = CellSpec(experiment="training", workload="resnet50-synthetic", framework="pytorch",
                    backend="pytorch", device="cpu", batch_size=4, repeats=1,
                    params={"profile": "tiny", "test_samples": 16, "data_size": "small"})
    data = cell_data(spec)
    assert len(data.x_test) == len(data.dataset.y_test) == 16
    assert data.x_test.shape[1:] == (16, 16, 3)  # the family's tiny size, not 224
    whole = cell_data(CellSpec(**{**spec.__dict__, "params": {"profile": "tiny"}}))
    assert len(whole.x_test) > 16


def test_the_deployment_question_names_the_fastest_runtime_path():
    [question] = [q for q in QUESTIONS if q.key == "deploy-resnet50"]
    rates = {("pytorch", "onnx-dynamo"): 30.0, ("pytorch", "onnx-openvino"): 45.0,
             ("tensorflow", "savedmodel"): 20.0, ("tensorflow", "tflite"): 25.0}
    cells = [{"system": s, "experiment": "export", "export_format": f, "batch_size": 8,
              "workload": w, "values": {"artifact_throughput": noisy(rate, i)}}
             for i, ((s, f), rate) in enumerate(rates.items())
             for w in ("resnet50-synthetic", "cnn-digits")]
    [verdict] = answer(question, *tables(cells), environments={"r1": CPU_ENV})
    assert dict(verdict.group)["workload"] == "resnet50-synthetic"
    assert verdict.winner == "onnx-openvino"


def test_a_standard_cpu_cut_leaves_its_cell_planned_with_its_reason_and_every_other_measured():
    from dlbench.runner.driver.plan.experiments.standard_cpu_cuts import STANDARD_CPU_CUTS

    for experiment in ("inference", "training", "precision"):
        cells = planned(experiment)
        for cell in cells:
            key = (experiment, cell.workload, cell.framework_id.name, cell.mode)
            cut = cell.params.get(NOT_MEASURED, "")
            if key in STANDARD_CPU_CUTS:
                assert STANDARD_CPU_CUTS[key] in cut
        # the same cells in the full suite are measured
        full = {(c.workload, c.framework_id.name, c.mode, c.precision): c
                for c in planned(experiment, "full")}
        for cell in cells:
            twin = full.get((cell.workload, cell.framework_id.name, cell.mode, cell.precision))
            if cell.params.get(NOT_MEASURED) and twin is not None:
                assert not twin.params.get(NOT_MEASURED, "").startswith(
                    "not measured on this device in the standard suite")
    assert planned("precision") == []  # the full suite's on a CPU
    assert {"fp32", "bf16"} <= {c.precision for c in planned("precision", "full")}
    training = {(c.workload, c.framework_id.name, c.mode) for c in planned("training")
                if c.params.get(NOT_MEASURED)}
    assert {("resnet-synthetic", "pytorch", "compiled"),
            ("resnet-synthetic", "keras-tensorflow", "jit_compile"),
            ("transformer-tokens", "keras-tensorflow", "default")} <= training
    assert ("mlp-digits", "pytorch", "default") not in training
    assert ("resnet-synthetic", "keras-tensorflow", "default") not in training


def test_the_machine_suite_plans_what_a_machine_answers(monkeypatch):
    """Real-size serving (ResNet-50 and BERT-base) and runtimes, ResNet-50's training steps,
    bf16 against fp32 at ResNet-50 in every system, and the digits MLP trained and served;
    BERT-base in bf16 planned as not measured, with its reason; parity of the real-size
    models, the MLP's bf16 accuracy and the defaults-accuracy answer over seeds."""
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.experiments import precision as precision_plan

    monkeypatch.setattr(precision_plan, "cpu_flags", lambda: {"avx512f", "avx512_bf16"})
    cells = plan_cells(RunRequest(suite="machine", device="cpu", threads=2), "cpu")
    measured = {(c.experiment, c.workload) for c in cells if c.runs}
    assert measured == {("training", "mlp-digits"), ("training", "resnet50-synthetic"),
                        ("inference", "mlp-digits"), ("inference", "resnet50-synthetic"),
                        ("inference", "bert-base-tokens"), ("parity", "mlp-digits"),
                        ("precision", "resnet50-synthetic"), ("export", "resnet50-synthetic"),
                        ("execution-mode", "resnet50-synthetic"), ("data-parallel", "mlp-digits"),
                        ("parity", "resnet50-synthetic"), ("parity", "bert-base-tokens"),
                        ("precision", "mlp-digits"), ("defaults-accuracy", "mlp-bn-noisy")}
    precision = {(c.framework_id.name, c.precision) for c in cells if c.experiment ==
                 "precision" and c.workload != "mlp-digits" and c.runs and not c.control}
    assert precision == {(s, p) for s in SYSTEMS for p in ("fp32", "bf16")}
    steps = [c for c in cells if c.experiment == "training"
             and c.workload == "resnet50-synthetic" and not c.control]
    assert {c.framework_id.name for c in steps} == SYSTEMS and {c.mode for c in steps} == {
        "default"}
    assert all(c.params["epochs"] == 2 for c in steps)  # one steady epoch after the first
    runtimes = {c.export_format for c in cells if c.experiment == "export"}
    assert runtimes == {"onnx-dynamo", "onnx-openvino", "savedmodel", "tflite"}
    bert_bf16 = [c for c in cells if c.experiment == "precision"
                 and c.workload == "bert-base-tokens"]
    assert bert_bf16 and all("machine suite" in c.params[NOT_MEASURED] for c in bert_bf16)
    seeded = {("precision", "mlp-digits"), ("defaults-accuracy", "mlp-bn-noisy")}
    assert all(c.repeats == 3 for c in cells if c.runs and c.experiment != "parity"
               and (c.experiment, c.workload) not in seeded)
    assert sum(c.control != "" for c in cells) == 6  # an A/A twin per judged experiment


def test_the_machine_suite_is_citable_and_tops_undecided_pairs_up_once():
    request = RunRequest(suite="machine", device="cpu", threads=2)
    policy = request.policy()
    assert policy["citable"] and policy["design"]["looks"] == [3, 5]


def test_a_real_size_precision_cell_compares_outputs_not_accuracy_with_fp32():
    """Its fp32 baseline is one forward pass (a few steps reach no accuracy to compare)."""
    from dlbench.runner.workloads.real_size import NO_ACCURACY_PARAM

    cells = planned("precision", suite="full", workloads=("resnet50-synthetic",))
    assert cells and all(c.params[NO_ACCURACY_PARAM] for c in cells)
    bf16 = next(c for c in cells if c.precision == "bf16")
    fp32 = next(c for c in cells if c.precision == "fp32" and c.framework == bf16.framework)
    # the bf16 process's own baseline costs one fp32 pass over the test samples, no training
    assert default_process_s(bf16) - default_process_s(fp32) < 0.2 * default_process_s(fp32)
