"""A user's model run: --steps, --resume of an interrupted run (weights, parity and finished
processes kept; a changed model file refused), and a layer torch's oneDNN crashes on recorded
as that backend's failure before it runs, the other backends training it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.cli_fixtures import run_cli as _run
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.launch.execute import execute_cells
from dlbench.runner.driver.store.run_store import RunStore
from dlbench.core.machine.cpu_flags import cpu_flags
from dlbench.runner.worker.user_model.known_crashes import onednn_refusal
from dlbench.runner.driver.user_model.plan import INFERENCE, PARITY, TRAINING, model_cells

SMALL_MODEL = textwrap.dedent('''
    import keras

    def build():
        model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4, activation="relu"),
                                  keras.layers.Dense(3)])
        model.compile(optimizer="sgd", loss="mse")
        return model
''')
STRIDED_MODEL = textwrap.dedent('''
    import keras

    def build():
        model = keras.Sequential([keras.Input((8, 8, 3)),
                                  keras.layers.Conv2D(8, 1, strides=2, name="shortcut"),
                                  keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(3)])
        model.compile(optimizer="sgd", loss="mse")
        return model
''')
FACTS = {"kind": "keras", "model_id": "model-m-build", "batch_size": 8, "trains": True}
STRIDED = [{"layer": "shortcut", "strides": [2, 2], "input_channels": 3}]


@pytest.mark.parametrize(("argv", "expected"), [
    (["--model", "{d}/small.py:build", "--steps", "0"], "--steps 0 is out of range; expected 1"),
    (["--model", "{d}/small.py:build", "--steps", "100001"], "--steps 100001 is out of range"),
    (["--steps", "5"], "use them with --model"),
])
def test_steps_out_of_range_or_without_a_model_exit_2_in_one_line(argv, expected, tmp_path,
                                                                  capsys):
    (tmp_path / "small.py").write_text(SMALL_MODEL)
    results = tmp_path / "results"
    code, error = _run([a.format(d=tmp_path) for a in argv], results, capsys)
    assert code == 2 and expected in error and len(error.strip().splitlines()) == 1
    assert not results.exists()


def test_steps_set_the_timed_calls_and_training_steps_of_every_process():
    plan = RunRequest(suite="quick", device="cpu", threads=1).resolved("cpu")
    asked = model_cells(plan, FACTS, {}, ("keras-jax",), steps=7)
    suites = model_cells(plan, FACTS, {}, ("keras-jax",))
    for cell in (c for c in asked if c.experiment == INFERENCE):
        assert cell.params["latency_calls"] == 7 and cell.params["latency_budget_s"] >= 1e6
    assert {c.params["train_steps"] for c in asked if c.experiment == TRAINING} == {7}
    assert all("train_steps" not in c.params and c.params["latency_calls"] == 200
               for c in suites)


@pytest.mark.parametrize(("facts", "backend", "training", "device", "flags", "refused"), [
    (FACTS | {"onednn_strided_1x1": STRIDED}, "torch", True, "cpu", {"avx2"}, True),
    (FACTS | {"onednn_strided_1x1": STRIDED}, "jax", True, "cpu", {"avx2"}, False),
    (FACTS | {"onednn_strided_1x1": STRIDED}, "torch", False, "cpu", {"avx2"}, False),
    (FACTS | {"onednn_strided_1x1": STRIDED}, "torch", True, "cuda", {"avx2"}, False),
    (FACTS | {"onednn_strided_1x1": STRIDED}, "torch", True, "cpu", {"avx2", "avx512f"},
     False),
    (FACTS | {"onednn_strided_1x1": []}, "torch", True, "cpu", {"avx2"}, False),
    (FACTS, "torch", True, "cpu", {"avx2"}, False),  # a run prepared before the check
])
def test_onednn_refusal_only_for_keras_on_torch_training_on_an_avx2_cpu(
        facts, backend, training, device, flags, refused):
    reason = onednn_refusal(facts, backend, training, device, flags)
    assert bool(reason) is refused
    if refused:
        assert "'shortcut'" in reason and "oneDNN" in reason and "3 input channels" in reason
        assert "\n" not in reason


def test_cpu_flags_read_from_cpuinfo(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\nbogomips\t: 1\n")
    assert cpu_flags(cpuinfo) == {"fpu", "sse2", "avx2", "fma"}
    assert cpu_flags(tmp_path / "missing") == set()


def _records(run: Path) -> dict[tuple[str, str], dict]:
    return {(r["spec"]["experiment"], r["spec"]["mode"]): r
            for r in (json.loads(p.read_text()) for p in (run / "processes").glob("*.json"))}


@pytest.mark.slow
def test_an_interrupted_model_run_resumes_and_a_changed_model_file_is_refused(
        tmp_path, capsys, monkeypatch):
    """As the suite's resume test does, a finished process's record is removed (the run
    stopped before it ended): --resume measures only that process, with the run's weights,
    parity result and --steps; a model file changed since is refused in one line."""
    monkeypatch.setenv("DLBENCH_LOCK_FILE", str(tmp_path / "measure.lock"))
    model = tmp_path / "small.py"
    model.write_text(SMALL_MODEL)
    results = tmp_path / "results"
    code, error = _run(["--model", f"{model}:build", "--framework", "keras-jax", "--repeats",
                        "1", "--steps", "25", "--busy-retries", "0", "--seed", "1"],
                       results, capsys)
    assert code == 0, error
    (run,) = (results / "runs").iterdir()
    before = _records(run)
    latencies = [o for o in before[(INFERENCE, "predict")]["outcome"]["observations"]
                 if o["metric"] == "inference_latency"]
    assert len(latencies) == 25  # --steps: the timed batch-1 calls of the process
    sampling = before[(TRAINING, "default")]["outcome"]["details"]["sampling"]["measurements"]
    windows = sampling["train_steps"]
    assert windows["asked"] == 25
    assert windows["windows"] == -(-25 // windows["calibrated_loops"])
    assert sampling["steady_step_time"]["samples"] == windows["windows"]
    weights = (run / "model" / "model.weights.h5").read_bytes()

    store = RunStore(run)
    stopped = CellSpec(**before[(TRAINING, "default")]["spec"])
    store.record_path(stopped).unlink()
    store.save_run_info(store.load_run_info() | {"status": "interrupted"})
    code, error = _run(["--resume", run.name, "--busy-retries", "0"], results, capsys)
    assert code == 0, error
    after = _records(run)
    assert set(after) == set(before)
    for key in ((PARITY, "predict"), (INFERENCE, "predict")):  # kept, not measured again
        assert after[key]["started_at"] == before[key]["started_at"]
    resumed = after[(TRAINING, "default")]
    assert resumed["order_index"] > before[(INFERENCE, "predict")]["order_index"]
    assert resumed["outcome"]["status"] == "ok", resumed["outcome"]["reason"]
    assert resumed["spec"]["params"]["train_steps"] == 25
    assert (run / "model" / "model.weights.h5").read_bytes() == weights
    assert store.load_run_info()["status"] == "complete"

    (tmp_path / "other.py").write_text(SMALL_MODEL)
    model.write_text(SMALL_MODEL + "\n# edited\n")
    for argv, expected in (
            (["--resume", run.name, "--input-shape", "6"], "leave out --input-shape"),
            (["--resume", run.name, "--model", f"{tmp_path}/other.py:build"],
             f"measured {model}:build; resume it with that model"),
            (["--resume", run.name], "small.py changed since run"),
            (["--model", f"{model}:build", "--resume", run.name], "small.py changed since")):
        code, error = _run(argv, results, capsys)
        assert code == 2 and expected in error, error
        assert len(error.strip().splitlines()) == 1
    assert _records(run) == after


@pytest.mark.slow
def test_a_layer_that_crashes_torchs_onednn_fails_keras_on_torch_training_before_it_runs(
        tmp_path):
    """A strided 1x1 Conv2D of 3 input channels: found when the model is built; Keras on
    torch's training cell is failed with the layer and the bug named, without training;
    Keras on JAX trains the same model."""
    from dlbench.runner.driver.user_model.preparation import prepare_model
    from dlbench.runner.cell.model_source import model_request

    (tmp_path / "strided.py").write_text(STRIDED_MODEL)
    request = model_request(f"{tmp_path}/strided.py:build", "", "float32", "", 8)
    prepared = prepare_model(request, 1)
    try:
        assert prepared.facts["onednn_strided_1x1"] == STRIDED
        plan = RunRequest(suite="quick", device="cpu", repeats=1, threads=1).resolved("cpu")
        cells = model_cells(plan, prepared.facts, {
            "model": request.to_dict(), "model_dir": str(prepared.folder),
            "facts": prepared.facts}, ("keras-jax", "keras-torch"), steps=3)
        training = {c.backend: c for c in cells if c.experiment == TRAINING
                    and c.mode == "default"}
        (jax,) = execute_cells([training["jax"]])
        assert jax.outcome.status.value == "ok", jax.outcome.reason
        assert "steady_step_time" in {o.metric for o in jax.outcome.observations}
        if onednn_refusal(prepared.facts, "torch", True, "cpu", cpu_flags()) == "":
            pytest.skip("this CPU has AVX-512: oneDNN does not take the crashing AVX2 kernel")
        (torch,) = execute_cells([training["torch"]])
    finally:
        prepared.discard()
    assert torch.outcome.status.value == "failed"
    assert "'shortcut'" in torch.outcome.reason and "oneDNN" in torch.outcome.reason
    assert not torch.outcome.observations  # refused before any step ran


def test_a_run_that_cannot_be_resumed_as_a_model_run_is_refused_in_one_line(tmp_path):
    from dlbench.core.text.errors import UsageError
    from dlbench.runner.driver.user_model.resume import MODEL_FILE, saved_model
    from dlbench.runner.cell.model_source import model_digest

    model = tmp_path / "small.py"
    model.write_text(SMALL_MODEL)
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(UsageError, match="measured the built-in workloads, not a model"):
        saved_model(run, "R", f"{model}:build", [])
    body = {"request": {"path": str(model), "name": "build"}, "facts": FACTS}
    (run / MODEL_FILE).write_text(json.dumps(body))
    with pytest.raises(UsageError, match="leave out --steps, --framework"):
        saved_model(run, "R", "", ["--steps", "--framework"])
    with pytest.raises(UsageError, match="recorded no digest of its model file"):
        saved_model(run, "R", "", [])
    (run / MODEL_FILE).write_text(json.dumps(body | {"model_sha256": model_digest(model)}))
    with pytest.raises(UsageError, match=r"lacks its prepared model \(model/request.json, "
                                         r"inputs.npz, model.weights.h5\)"):
        saved_model(run, "R", "", [])
    model.unlink()
    with pytest.raises(UsageError, match="small.py no longer exists"):
        saved_model(run, "R", "", [])
