"""precision: the plan, the refusal probe with a real framework error, and a real fp16 cell."""

from __future__ import annotations

import numpy as np
import pytest

from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.experiments.precision import EXPERIMENT, PRECISIONS
from dlbench.runner.worker.experiments.precision.protocol import measure_precision
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.cell.outcome import Fairness
from dlbench.runner.cell.spec import CellSpec
from tests.harness_fixtures import numpy_cell


@pytest.mark.parametrize("suite, precisions", [("quick", ("fp32", "bf16")),
                                               # asked by name: the standard suite
                                               # plans none on a CPU unasked
                                               ("standard", ("fp32", "bf16")),
                                               ("full", PRECISIONS)])
def test_plan_has_the_suites_precisions_for_every_framework(suite, precisions):
    request = RunRequest(suite=suite, workloads=["mlp-digits"], device="cpu", threads=1)
    cells = EXPERIMENT.plan(request)
    assert len({c.cell_id for c in cells}) == len(cells)
    assert sorted((c.framework_id.name, c.precision) for c in cells) == sorted(
        (f.name, p) for f in FRAMEWORKS for p in precisions)


class HalfInverseTrainer:
    """A trainer whose step needs an op PyTorch does not implement in half precision."""

    def reset(self, layers) -> None:
        pass

    def logits(self, x: np.ndarray) -> np.ndarray:
        return np.zeros((len(x), 10), np.float32)

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        import torch

        torch.linalg.inv(torch.eye(2, dtype=torch.float16))
        return 0.0


def test_a_framework_refusal_becomes_unsupported_with_its_own_message():
    spec = CellSpec(experiment="precision", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", precision="fp16", mode="mixed", batch_size=32,
                    repeats=3, params={"epochs": 1})
    fairness = Fairness("epochs", "fp16", "eager", "arrays", 1, 32)
    outcome = measure_precision(numpy_cell(spec), lambda precision: HalfInverseTrainer(),
                                fairness, refusals=(RuntimeError,))
    assert outcome.status.value == "unsupported"
    assert outcome.reason.startswith("RuntimeError: ")
    assert "Half" in outcome.reason and "\n" not in outcome.reason
    assert not outcome.observations and outcome.fairness is fairness


def test_an_error_that_is_not_a_refusal_still_raises():
    spec = CellSpec(experiment="precision", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", precision="fp16", mode="mixed", batch_size=32,
                    repeats=3, params={"epochs": 1})
    with pytest.raises(RuntimeError):
        measure_precision(numpy_cell(spec), lambda precision: HalfInverseTrainer(),
                          Fairness("e", "fp16", "eager", "arrays", 1, 32), refusals=(KeyError,))


@pytest.mark.slow
def test_real_pytorch_fp16_cell_compares_with_fp32_from_the_same_weights():
    from dlbench.runner.driver.launch.execute import execute_cell

    spec = CellSpec(experiment="precision", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", precision="fp16", mode="mixed", batch_size=32,
                    repeats=2, repeat_index=1, threads=1, timeout_s=240,
                    params={"epochs": 2, "warmup_calls": 2, "latency_calls": 20,
                            "throughput_batch": 64, "throughput_samples": 2,
                            "min_window_s": 0.02})
    record = execute_cell(spec)
    outcome = record.outcome
    assert outcome.status.value == "ok", outcome.reason + record.stderr_tail
    assert {o.repeat for o in outcome.observations} == {1}
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    assert 0 < values["output_deviation_vs_fp32"] < 0.05  # half precision rounds, a little
    assert 0 < values["output_deviation_rel_vs_fp32"] < 0.05
    assert values["output_deviation_rel_vs_fp32"] != values["output_deviation_vs_fp32"]
    assert outcome.details["bf16_units"]  # this CPU's, in words, with or without units
    assert abs(values["accuracy_change_vs_fp32"]) < 0.1
    assert values["test_accuracy"] > 0.8
    for metric in ("steady_epoch_time", "working_memory", "inference_throughput", "latency_p50"):
        assert values[metric] > 0
    assert "GradScaler" in outcome.fairness.precision_policy


@pytest.mark.parametrize(("flags", "words"), [
    ({"amx_bf16", "amx_tile", "avx512_bf16"}, "AMX and AVX-512 BF16"),
    ({"avx512_bf16", "avx512f"}, "AVX-512 BF16"),
    ({"avx2", "fma"}, "none: bf16 is converted to fp32 for the arithmetic (no native bf16 "
                      "units)"),
])
def test_a_cpus_bf16_units_are_said_with_or_without_them(flags, words):
    from dlbench.core.machine.cpu_flags import bf16_units, isa_features

    assert bf16_units(isa_features(flags)) == words


def test_cpu_flags_read_from_an_arm_cpuinfo(tmp_path):
    from dlbench.core.machine.cpu_flags import cpu_flags

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nFeatures\t: fp asimd sve bf16\n")
    assert cpu_flags(cpuinfo) == {"fp", "asimd", "sve", "bf16"}


@pytest.mark.slow
def test_a_bf16_cell_without_accuracy_states_its_output_parity_and_the_cpus_units():
    """A real-size precision cell's baseline (NO_ACCURACY_PARAM) is fp32's forward pass alone:
    the bf16 outputs' deviation is stated, no accuracy change; on any CPU, with or without
    bf16 units, the cell runs and says which units it had."""
    from dlbench.runner.driver.launch.execute import execute_cell
    from dlbench.runner.workloads.real_size import NO_ACCURACY_PARAM

    spec = CellSpec(experiment="precision", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", precision="bf16", mode="mixed", batch_size=32,
                    repeats=1, threads=1, timeout_s=240,
                    params={"epochs": 1, "warmup_calls": 2, "latency_calls": 10,
                            "throughput_batch": 64, "throughput_samples": 2,
                            "min_window_s": 0.02, NO_ACCURACY_PARAM: True})
    record = execute_cell(spec)
    outcome = record.outcome
    assert outcome.status.value == "ok", outcome.reason + record.stderr_tail
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    assert "accuracy_change_vs_fp32" not in values
    assert 0 < values["output_deviation_rel_vs_fp32"] < 0.05  # bf16 rounds, a little
    from dlbench.core.machine.cpu_flags import bf16_units, cpu_flags, isa_features

    assert outcome.details["bf16_units"] == bf16_units(isa_features(cpu_flags()))


#: One precision trainer evaluated in a fresh process: the batch sizes its Predictor calls see
#: while it computes test accuracy and the test logits.
EVALUATE = """
import json, sys
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.harness import open_cell
import importlib
spec = CellSpec.from_json(sys.argv[1])
module = importlib.import_module(f"dlbench.runner.worker.experiments.precision.{spec.framework}")
cell = open_cell(spec)
framework = next(v for v in vars(module).values() if getattr(v, "trainer_class", None)
                 and isinstance(v, type))
trainer = framework.trainer_class(cell.adapter, cell.data.workload, cell.data.input_shape,
                                  spec.precision)
trainer.reset(cell.data.initial_layers())
seen, predict = [], trainer.predict
trainer.predict = lambda prepared: seen.append(len(prepared)) or predict(prepared)
accuracy = trainer.accuracy(cell.data.x_test, cell.data.dataset.y_test)
logits = trainer.logits(cell.data.x_test)
print(json.dumps({"seen": seen, "samples": len(cell.data.x_test), "accuracy": accuracy,
                  "logits": list(logits.shape)}))
"""


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow"])
def test_a_precision_trainer_evaluates_at_the_training_batch_size(framework):
    """Issue 61: the precision cells' accuracy after each epoch (inside the working memory's
    region) and their test logits sent the whole test set through in one call, where the
    training experiment's trainers evaluate at the training batch size, so a precision cell's
    working memory held more than a training step's; now every call is one batch."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    from dlbench.runner.cell.environment import cell_environment

    root = Path(__file__).resolve().parents[1]
    spec = CellSpec(experiment="precision", workload="mlp-digits", framework=framework,
                    backend="", device="cpu", precision="fp32", batch_size=32, repeats=1,
                    threads=1, params={"epochs": 1})
    done = subprocess.run([sys.executable, "-c", EVALUATE, spec.to_json()], cwd=root,
                          env=cell_environment(spec) | {"PYTHONPATH": str(root)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    samples = result["samples"]
    assert samples > 32 and result["logits"] == [samples, 10]
    assert result["seen"] and max(result["seen"]) <= 32, result["seen"]
    assert sum(result["seen"]) == 2 * samples  # accuracy's pass, then the logits'
    assert 0 <= result["accuracy"] <= 1
