"""`dlbench run --model`: a user's own model, checked before anything is written, planned as
cells of the runner's one machinery, parity before timing, answered by the verdict engine."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dlbench.cli import main
from tests.cli_fixtures import run_cli as _run
from dlbench.core.judging.model_answers import model_answers, parity_table
from dlbench.core.judging.sequential import single_look
from dlbench.core.judging.outcomes import Outcome
from dlbench.runner.cell.spec import NOT_MEASURED, CellSpec
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.launch.execute import execute_cells
from dlbench.runner.driver.user_model.plan import INFERENCE, PARITY, TRAINING, model_cells

KERAS_MODEL = textwrap.dedent('''
    import keras

    def build():
        model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(5, activation="relu"),
                                  keras.layers.Dense(3)])
        model.compile(optimizer="sgd",
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    class Noise(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed = keras.random.SeedGenerator(1)

        def call(self, x):
            return x + keras.random.normal(keras.ops.shape(x), seed=self.seed)

    def noisy():
        return keras.Sequential([keras.Input((6,)), keras.layers.Dense(3), Noise()])

    def not_a_model():
        return [1, 2, 3]

    def picky():
        if keras.backend.backend() == "tensorflow":
            raise RuntimeError("this model does not run on TensorFlow")
        return build()
''')
TORCH_MODEL = textwrap.dedent('''
    import torch

    def build():
        return torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))

    class Traced(torch.nn.Module):
        """Adds 1 when traced or compiled: a converted artifact computes something else."""

        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(6, 3)

        def forward(self, x):
            y = self.linear(x)
            return y + 1 if torch.jit.is_tracing() or torch.compiler.is_compiling() else y

    def traced():
        return Traced()
''')


@pytest.fixture()
def model_files(tmp_path: Path) -> Path:
    (tmp_path / "kmodel.py").write_text(KERAS_MODEL)
    (tmp_path / "tmodel.py").write_text(TORCH_MODEL)
    np.savez(tmp_path / "nox.npz", y=np.zeros(3))
    return tmp_path


@pytest.mark.parametrize(("argv", "expected"), [
    (["--model", "{d}/missing.py:build", "--input-shape", "6"], "no such file"),
    (["--model", "{d}/kmodel.txt:build", "--input-shape", "6"], "expected PATH.py:NAME"),
    (["--model", "{d}/kmodel.py", "--input-shape", "6"], "name the function that builds"),
    (["--model", "{d}/kmodel.py:nothing", "--input-shape", "6"], "defines no 'nothing'"),
    (["--model", "{d}/kmodel.py:build", "--input-shape", "6,x"], "--input-shape '6,x'"),
    (["--model", "{d}/kmodel.py:build", "--input-shape", "6", "--data", "{d}/nox.npz"],
     "one of them"),
    (["--model", "{d}/kmodel.py:build", "--input-shape", "6", "--input-dtype", "complex64"],
     "expected one of float32"),
    (["--model", "{d}/kmodel.py:build", "--data", "{d}/nox.npz"], "no array x"),
    (["--model", "{d}/kmodel.py:build", "--input-shape", "6", "--framework", "mxnet"],
     "valid: keras, keras-tensorflow"),
    (["--model", "{d}/kmodel.py:build", "--input-shape", "6", "--experiment", "training"],
     "leave out --experiment"),
    (["--input-shape", "6"], "use them with --model"),
])
def test_bad_model_input_exits_2_with_one_line_and_writes_nothing(argv, expected, model_files,
                                                                  capsys):
    results = model_files / "results"
    code, error = _run([a.format(d=model_files) for a in argv], results, capsys)
    assert code == 2
    assert expected in error
    assert len(error.strip().splitlines()) == 1
    assert not results.exists()


def _plan(suite: str = "quick", repeats: int | None = None) -> RunRequest:
    return RunRequest(suite=suite, device="cpu", repeats=repeats, threads=1)


KERAS_FACTS = {"kind": "keras", "model_id": "model-m-build", "batch_size": 16, "trains": True}


def test_keras_cells_parity_first_following_the_systems_declarations():
    cells = model_cells(_plan(), KERAS_FACTS, {"model_dir": "/nowhere"})
    experiments = [c.experiment for c in cells]
    assert experiments.index(INFERENCE) > max(i for i, e in enumerate(experiments)
                                              if e == PARITY)
    by_id = {(c.experiment, c.framework_id.name, c.mode): c for c in cells}
    # Keras on JAX already jit-compiles by default: measured once, as the built-ins do
    assert "measured as predict" in by_id[(INFERENCE, "keras-jax", "jit_compile")].params[
        NOT_MEASURED]
    assert "quick suite" in by_id[(TRAINING, "keras-torch", "jit_compile")].params[NOT_MEASURED]
    assert not by_id[(INFERENCE, "keras-tensorflow", "jit_compile")].params.get(NOT_MEASURED)
    assert by_id[(INFERENCE, "keras-tensorflow", "jit_compile")].params["compiles"]
    assert (TRAINING, "keras-openvino", "default") not in by_id  # OpenVINO only predicts
    assert by_id[(TRAINING, "keras-jax", "default")].batch_size == 16
    # quick's preview: 3 processes a cell (parity 1), as the built-in cells get
    assert all(c.repeats == (1 if c.experiment == PARITY else 3) for c in cells)


def test_several_processes_add_an_aa_control_and_untrained_models_plan_no_training():
    cells = model_cells(_plan("standard"), KERAS_FACTS | {"trains": False}, {})
    controls = [c for c in cells if c.control]
    assert len(controls) == 1 and controls[0].experiment == INFERENCE
    assert controls[0].mode == "predict" and controls[0].repeats == 3
    assert not [c for c in cells if c.experiment == TRAINING]
    assert all(c.repeats == 1 for c in cells if c.experiment == PARITY)


def test_a_torch_module_runs_eager_compiled_and_exported_and_can_be_narrowed():
    facts = KERAS_FACTS | {"kind": "torch", "trains": False}
    modes = {c.mode for c in model_cells(_plan(), facts, {}) if c.experiment == INFERENCE}
    assert modes == {"eager", "compiled", "onnxruntime", "openvino"}
    on_gpu = RunRequest(suite="quick", device="cuda", threads=1)
    devices = {c.mode: c.device for c in model_cells(on_gpu, facts, {})}
    assert devices["eager"] == "cuda" and devices["onnxruntime"] == "cpu"  # artifacts: CPU
    only = model_cells(_plan(), KERAS_FACTS, {}, ("keras-jax",))
    assert {c.framework_id.name for c in only} == {"keras-jax"}


def test_a_backend_that_is_not_installed_is_skipped_with_its_reason():
    spec = CellSpec(INFERENCE, "model-m-build", "keras", "nosuchbackend", "cpu", repeats=1)
    (record,) = execute_cells([spec])
    assert record.outcome.status.value == "skipped"
    assert record.outcome.reason == "not installed: nosuchbackend"


def _frames(values: dict[tuple[str, str], list[float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Observations and cells of model-inference cells: (backend, mode) -> latencies."""
    observations, cells = [], []
    for (backend, mode), latencies in values.items():
        cell_id = f"{INFERENCE}:model-m:keras-{backend}:fp32-{mode}-b1:cpu"
        cells.append({"run_id": "r", "cell_id": cell_id, "status": "ok",
                      "config_json": json.dumps({"control": ""}), "experiment": INFERENCE,
                      "framework": "keras", "backend": backend, "mode": mode, "reason": ""})
        for repeat, value in enumerate(latencies):
            observations.append({"run_id": "r", "cell_id": cell_id, "experiment": INFERENCE,
                                 "workload": "model-m", "framework": "keras",
                                 "backend": backend, "mode": mode, "device": "cpu",
                                 "batch_size": 1, "metric": "latency_p50", "value": value,
                                 "step": None, "repeat": repeat})
    return pd.DataFrame(observations), pd.DataFrame(cells)


def test_a_clear_difference_names_the_fastest_backend_with_its_interval():
    observations, cells = _frames({("jax", "predict"): [1.0, 1.01, 0.99, 1.0, 1.02, 0.98],
                                   ("tensorflow", "predict"): [2.0, 2.02, 1.98, 2.01, 1.99,
                                                               2.0]})
    answers = model_answers(observations, cells, None, single_look(6))
    overall = next(a for a in answers if a.question.key == "model-latency")
    assert overall.pairings[0].judgement.decision is Outcome.A_BETTER
    sentence = overall.sentence()
    assert sentence.startswith("On this machine your model runs fastest on Keras on JAX")
    assert "faster than Keras on TensorFlow" in sentence and "6 processes each" in sentence


def test_one_process_each_is_a_preview_that_decides_nothing():
    observations, cells = _frames({("jax", "predict"): [1.0], ("torch", "predict"): [3.0]})
    (overall, *_) = model_answers(observations, cells, None, single_look(1))
    assert overall.pairings[0].judgement.decision is not Outcome.A_BETTER
    assert "not decided" in overall.sentence() and "1 process each" in overall.sentence()


def test_parity_table_reads_each_parity_cell():
    cell_id = f"{PARITY}:model-m:keras-jax:fp32-predict-b1:cpu"
    cells = pd.DataFrame([{"run_id": "r", "cell_id": cell_id, "experiment": PARITY,
                           "framework": "keras", "backend": "jax", "mode": "predict",
                           "status": "ok", "reason": ""}])
    observations = pd.DataFrame([
        {"cell_id": cell_id, "metric": m, "value": v, "step": None}
        for m, v in (("parity_forward_max_abs", 0.5), ("parity_forward_max_rel", 0.2),
                     ("parity_tolerance", 1e-4), ("parity_pass", 0.0))])
    (row,) = parity_table(cells, observations).to_dict("records")
    assert row["system"] == "keras-jax" and not row["passed"] and row["max_rel"] == 0.2


@pytest.mark.slow
@pytest.mark.parametrize(("argv", "expected"), [
    (["--model", "{d}/kmodel.py:not_a_model", "--input-shape", "6"],
     "not_a_model() returned a builtins.list, not a model"),
    (["--model", "{d}/kmodel.py:build", "--input-shape", "5,2"],
     "input shape 5,2 does not fit the model; the model takes (None, 6)"),
    (["--model", "{d}/tmodel.py:build"], "the model declares no input shape: give "
     "--input-shape SHAPE"),
])
def test_a_model_that_cannot_be_measured_as_given_writes_nothing(argv, expected, model_files,
                                                                 capsys):
    results = model_files / "results"
    code, error = _run([a.format(d=model_files) for a in argv], results, capsys)
    assert code == 2
    assert expected in error and len(error.strip().splitlines()) == 1
    assert not results.exists()


@pytest.mark.slow
def test_a_model_drawing_random_numbers_fails_parity_and_is_not_timed(model_files, capsys):
    """Parity runs before any timing; a model whose outputs differ is reported as such, its
    timed cells recorded as not timed, and the draft site gets its page."""
    results = model_files / "results"
    code, error = _run(["--model", f"{model_files}/kmodel.py:noisy", "--input-shape", "6",
                        "--framework", "keras-jax", "--busy-retries", "0"], results, capsys)
    assert code == 0, error
    (run,) = (results / "runs").iterdir()
    facts = json.loads((run / "model.json").read_text())["facts"]
    assert facts["repeat_max_abs"] > 0 and not facts["trains"]
    records = [json.loads(p.read_text()) for p in (run / "processes").glob("*.json")]
    parity = [r for r in records if r["spec"]["experiment"] == PARITY
              and r["outcome"]["status"] == "ok"]
    assert parity and all({o["metric"]: o["value"] for o in r["outcome"]["observations"]}[
        "parity_pass"] == 0.0 for r in parity)
    timed = [r for r in records if r["spec"]["experiment"] == INFERENCE]
    assert timed and all(r["outcome"]["status"] == "skipped" for r in timed)
    assert any("not timed: parity failed" in r["outcome"]["reason"] for r in timed)
    assert "DIFFERS" in error
    out = model_files / "site_src"
    assert main(["build", "--run", "latest", "--results-dir", str(results), "--out",
                 str(out), "--cache-dir", str(model_files / "cache")]) == 0
    page = (out / "model.md").read_text()
    assert "draws random numbers at inference" in page and "**differs**" in page
    assert "No answer: no timed cell finished" in page


@pytest.mark.slow
def test_a_model_failing_in_one_backend_fails_there_and_the_others_are_timed(model_files,
                                                                           capsys):
    results = model_files / "results"
    # one process a cell (quick's 3 and an A/A control add nothing this asks about)
    code, error = _run(["--model", f"{model_files}/kmodel.py:picky", "--input-shape", "6",
                        "--batch-size", "8", "--framework", "keras-jax", "--framework",
                        "keras-tensorflow", "--repeats", "1", "--busy-retries", "0"],
                       results, capsys)
    assert code == 0, error
    (run,) = (results / "runs").iterdir()
    records = {(r["spec"]["experiment"], r["spec"]["backend"], r["spec"]["mode"]): r["outcome"]
               for r in (json.loads(p.read_text()) for p in (run / "processes").glob("*.json"))}
    failed = records[(PARITY, "tensorflow", "predict")]
    assert failed["status"] == "failed"
    assert failed["reason"] == "RuntimeError: this model does not run on TensorFlow"
    assert "its parity process failed" in records[(INFERENCE, "tensorflow", "predict")]["reason"]
    for key, metric in (((INFERENCE, "jax", "predict"), "latency_p50"),
                        ((TRAINING, "jax", "default"), "steady_step_time")):
        assert records[key]["status"] == "ok", records[key]["reason"]
        assert metric in {o["metric"] for o in records[key]["observations"]}


@pytest.mark.slow
def test_a_torch_module_and_the_example_are_prepared_and_agree_in_each_runtime(model_files):
    """The module is built once (weights, inputs and reference saved); its eager, ONNX
    Runtime and OpenVINO parity processes load those weights and agree with the eager
    reference. The example model of the README builds, takes its input shape and trains."""
    from dlbench.runner.driver.user_model.preparation import prepare_model
    from dlbench.runner.cell.model_source import model_request

    request = model_request(f"{model_files}/tmodel.py:build", "6", "float32", "", 4)
    prepared = prepare_model(request, 1)
    try:
        assert prepared.facts["kind"] == "torch" and prepared.facts["batch_size"] == 4
        cells = model_cells(_plan(), prepared.facts, {"model": request.to_dict(), "model_dir":
                            str(prepared.folder), "facts": prepared.facts})
        chosen = [c for c in cells if c.experiment == PARITY
                  and c.mode in ("eager", "onnxruntime", "openvino")]
        records = {spec.mode: execute_cells([spec])[0] for spec in chosen}
        assert set(records) == {"eager", "onnxruntime", "openvino"}
        for record in records.values():
            values = {o.metric: o.value for o in record.outcome.observations}
            assert record.outcome.status.value == "ok", record.outcome.reason
            assert values["parity_pass"] == 1.0, (record.spec.mode, values)
            assert values["parity_forward_max_rel"] <= values["parity_tolerance"]
        assert "openvino.convert_model" in records["openvino"].outcome.fairness.compile_mode
        # fp32 on every CPU: OpenVINO's own default is bf16 where the CPU has bf16 units
        settings = records["openvino"].outcome.fairness.settings
        assert settings["openvino.inference_precision_hint"] == "f32"
        assert records["eager"].outcome.fairness.settings["torch.mkldnn_fp32_precision"] == \
            "matmul=ieee, conv=ieee"
    finally:
        prepared.discard()
    example = Path(__file__).resolve().parent.parent / "examples" / "gru_classifier.py"
    gru = prepare_model(model_request(f"{example}:build", "", "float32", "", 8), 1)
    gru.discard()
    assert gru.facts["kind"] == "keras" and gru.facts["trains"]
    assert gru.facts["output_shape"] == [4] and gru.facts["input_shape"] == [20, 8]


@pytest.mark.slow
def test_a_keras_model_on_openvino_runs_at_f32_and_agrees_with_the_reference(model_files):
    """Keras' OpenVINO backend compiles with no precision hint (bf16 on CPUs with bf16
    units); the cell pins f32, reads it back, and agrees with the reference at fp32."""
    pytest.importorskip("openvino")
    from dlbench.runner.driver.user_model.preparation import prepare_model
    from dlbench.runner.cell.model_source import model_request

    request = model_request(f"{model_files}/kmodel.py:build", "6", "float32", "", 4)
    prepared = prepare_model(request, 1)
    try:
        cells = model_cells(_plan(), prepared.facts, {"model": request.to_dict(), "model_dir":
                            str(prepared.folder), "facts": prepared.facts})
        parity = [c for c in cells if c.experiment == PARITY and c.backend == "openvino"][0]
        (record,) = execute_cells([parity])
    finally:
        prepared.discard()
    values = {o.metric: o.value for o in record.outcome.observations}
    assert record.outcome.status.value == "ok", record.outcome.reason
    assert values["parity_pass"] == 1.0, values
    assert record.outcome.fairness.settings["openvino.inference_precision_hint"].startswith(
        "f32 (pinned")


@pytest.mark.slow
def test_an_openvino_conversion_that_differs_from_eager_fails_parity_and_is_not_timed(
        model_files):
    """OpenVINO's converted module against the eager reference: a module that computes
    something else when converted fails parity, and its timed cell is not timed."""
    from dlbench.runner.driver.commands.run_model import gate
    from dlbench.runner.driver.user_model.preparation import prepare_model
    from dlbench.runner.cell.model_source import model_request

    request = model_request(f"{model_files}/tmodel.py:traced", "6", "float32", "", 4)
    prepared = prepare_model(request, 1)
    try:
        cells = model_cells(_plan(), prepared.facts, {"model": request.to_dict(), "model_dir":
                            str(prepared.folder), "facts": prepared.facts})
        (parity,) = [c for c in cells if c.experiment == PARITY and c.mode == "openvino"]
        (record,) = execute_cells([parity])
    finally:
        prepared.discard()
    values = {o.metric: o.value for o in record.outcome.observations}
    assert record.outcome.status.value == "ok", record.outcome.reason
    assert values["parity_pass"] == 0.0 and values["parity_forward_max_abs"] == pytest.approx(1)
    (timed,) = [c for c in cells if c.experiment == INFERENCE and c.mode == "openvino"]
    assert gate(timed, [record]).params[NOT_MEASURED].startswith("not timed: parity failed")


def test_user_arrays_from_npz_are_the_inputs_repeated_to_the_samples_needed(model_files):
    from dlbench.runner.worker.user_model.loading import load_inputs
    from dlbench.runner.cell.model_source import model_request

    x = np.arange(12, dtype="float32").reshape(3, 4)
    np.savez(model_files / "data.npz", x=x, y=np.array([0, 1, 2]))
    request = model_request(f"{model_files}/kmodel.py:build", "", "float32",
                            str(model_files / "data.npz"), None)
    assert request.input_shape == () and request.batch_size == 0  # 0: chosen when built
    inputs, targets = load_inputs(request, 8)
    assert inputs.shape == (9, 4) and np.array_equal(inputs[3:6], x)
    assert list(targets[:4]) == [0, 1, 2, 0]
    np.savez(model_files / "uneven.npz", x=x, y=np.zeros(2))
    with pytest.raises(Exception, match="x has 3 samples but y has 2"):
        model_request(f"{model_files}/kmodel.py:build", "", "float32",
                      str(model_files / "uneven.npz"), None)


@pytest.mark.parametrize("content, expected", [
    ("not a zip", "not a .keras archive"),
    ("big config", "its 'config.json' expands to 17825792 bytes, over the limit"),
])
def test_a_keras_file_is_checked_for_its_expanded_size_before_keras_reads_it(
        tmp_path: Path, capsys, content: str, expected: str) -> None:
    import zipfile

    model = tmp_path / "m.keras"
    if content == "not a zip":
        model.write_text("{}")
    else:
        with zipfile.ZipFile(model, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("metadata.json", "{}")
            archive.writestr("config.json", b" " * (17 << 20))  # kilobytes in the file
    results = tmp_path / "results"
    code, error = _run(["--model", str(model)], results, capsys)
    assert code == 2 and expected in error and error.count("\n") == 1, error
    assert not results.exists()


def test_timeout_bounds_building_the_model(tmp_path: Path, capsys) -> None:
    (tmp_path / "slow.py").write_text(textwrap.dedent('''
        import time

        def build():
            time.sleep(600)
    '''))
    results = tmp_path / "results"
    code, error = _run(["--model", f"{tmp_path}/slow.py:build", "--input-shape", "6",
                        "--timeout", "2"], results, capsys)
    assert code == 2 and error.count("\n") == 1, error
    assert "building the model took more than 2 s (--timeout)" in error
    assert not results.exists() or not list((results / "runs").glob("*"))
