"""parity: the float64 reference, the pairwise comparison, and real cells in every framework."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dlbench.core.judging.parity import pair_results
from dlbench.runner.worker.experiments.parity import reference
from dlbench.runner.worker.experiments.parity.protocol import TOLERANCE, inject_fault
from dlbench.runner.workloads.catalog import Layer


def _tiny_cnn() -> tuple[list[Layer], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    layers = [Layer("conv", rng.normal(size=(3, 3, 2, 3)), rng.normal(size=3) * 0.1),
              Layer("dense", rng.normal(size=(2 * 2 * 3, 4)), rng.normal(size=4) * 0.1)]
    return layers, rng.uniform(size=(5, 4, 4, 2)), rng.integers(0, 4, size=5)


def _loss(layers: list[Layer], x: np.ndarray, y: np.ndarray) -> float:
    logits = reference.forward(layers, x)
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(y)), y].mean())


def test_reference_gradients_match_finite_differences():
    layers, x, y = _tiny_cnn()
    grads = reference.gradients(layers, x, y)
    for index in range(len(layers)):
        for position in [(0,) * layers[index].kernel.ndim, (-1,) * layers[index].kernel.ndim]:
            plus = [Layer(l.kind, l.kernel.copy(), l.bias) for l in layers]
            minus = [Layer(l.kind, l.kernel.copy(), l.bias) for l in layers]
            plus[index].kernel[position] += 1e-6
            minus[index].kernel[position] -= 1e-6
            numeric = (_loss(plus, x, y) - _loss(minus, x, y)) / 2e-6
            assert grads[index].kernel[position] == pytest.approx(numeric, rel=1e-4, abs=1e-8)


def test_sgd_update_is_minus_learning_rate_times_gradient():
    layers, x, y = _tiny_cnn()
    updates = reference.sgd_updates(layers, x, y, 0.5)
    grads = reference.gradients(layers, x, y)
    np.testing.assert_allclose(updates[1].bias, -0.5 * grads[1].bias)


def test_fault_swaps_two_output_units_and_unknown_fault_is_refused():
    layers, _, _ = _tiny_cnn()
    faulty = inject_fault(layers, "swap-first-kernel-outputs")
    np.testing.assert_array_equal(faulty[0].kernel[..., 0], layers[0].kernel[..., 1])
    assert inject_fault(layers, "") is layers
    with pytest.raises(ValueError, match="valid: swap-first-kernel-outputs"):
        inject_fault(layers, "nonsense")


def _cell(framework: str, backend: str, logits: list, updates: list, ok: bool = True) -> dict:
    details = {"logits": logits, "updates": updates, "tolerance": TOLERANCE,
               "reference_pass": ok}
    return {"run_id": "r", "experiment": "parity", "workload": "w", "device": "cpu",
            "framework": framework, "backend": backend, "status": "ok",
            "details_json": json.dumps(details)}


def test_pair_results_flags_the_pair_that_differs():
    cells = pd.DataFrame([
        _cell("pytorch", "", [[1.0, 2.0]], [0.1, 0.2]),
        _cell("keras", "jax", [[1.0, 2.0 + 1e-7]], [0.1, 0.2]),
        _cell("tensorflow", "", [[1.0, 2.1]], [0.1, 0.2]),
    ])
    pairs = pair_results(cells).set_index(["framework_a", "framework_b"])
    assert len(pairs) == 3
    assert bool(pairs.loc[("keras-jax", "pytorch"), "passed"])
    assert not pairs.loc[("pytorch", "tensorflow"), "passed"]
    assert pairs.loc[("pytorch", "tensorflow"), "forward_max_abs"] == pytest.approx(0.1)


def test_pair_fails_when_a_cell_missed_the_reference_and_ignores_other_cells():
    cells = pd.DataFrame([
        _cell("pytorch", "", [[1.0]], [0.1]),
        _cell("tensorflow", "", [[1.0]], [0.1], ok=False),
        _cell("keras", "torch", [[1.0]], [0.1]) | {"status": "failed"},
        _cell("keras", "jax", [[1.0]], [0.1]) | {"experiment": "training"},
    ])
    pairs = pair_results(cells)
    assert len(pairs) == 1 and not pairs["passed"].iloc[0]
    assert pair_results(cells.iloc[:0]).empty


def _digits_specs() -> tuple[list, object]:
    """The digits parity cells of every installed system, and PyTorch's faulty one."""
    from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules
    from dlbench.runner.cell.spec import CellSpec

    installed = [f for f in FRAMEWORKS if not missing_modules(f)]
    specs = [CellSpec(experiment="parity", workload=workload, framework=f.framework,
                      backend=f.backend, device="cpu", mode="one-step", batch_size=32,
                      repeats=1, threads=1, timeout_s=240)
             for workload in ("mlp-digits", "cnn-digits") for f in installed]
    faulty = CellSpec(experiment="parity", workload="mlp-digits", framework="pytorch",
                      backend="", device="cpu", mode="one-step-faulty", batch_size=32,
                      repeats=1, threads=1, timeout_s=240,
                      params={"fault": "swap-first-kernel-outputs"})
    return specs, faulty


def _tiny_real_size_specs() -> list:
    """The planned real-size parity cells of every installed system at their families' tiny
    size (the test's; the release runs them at the CPU size)."""
    from dataclasses import replace

    from dlbench.runner.cell.frameworks import missing_modules

    return [replace(c, params=c.params | {"profile": "tiny"}, timeout_s=240)
            for c in _machine_real_size_parity() if not missing_modules(c.framework_id)]


@pytest.fixture(scope="module")
def parity_processes() -> dict:
    """The digits cells, the faulty cell and the tiny real-size cells run by real workers,
    each system's cells in one worker process as the quick suite shares them
    (dlbench.runner.driver.plan.sharing): one framework import per system for the two tests
    that read them. {"batches": cells by process, "records": cell_id -> record}."""
    from dlbench.runner.driver.launch.execute import execute_cells
    from dlbench.runner.driver.plan.sharing import share_key

    specs, faulty = _digits_specs()
    batches: dict[tuple, list] = {}
    for spec in [*specs, faulty, *_tiny_real_size_specs()]:
        batches.setdefault(share_key(spec), []).append(spec)
    records = [record for batch in batches.values() for record in execute_cells(batch)]
    return {"batches": batches, "records": {(r.spec.cell_id, r.spec.mode): r
                                            for r in records}}


def _records_of(processes: dict, specs: list) -> list:
    """The records of `specs`, in their order."""
    return [processes["records"][(spec.cell_id, spec.mode)] for spec in specs]


@pytest.mark.slow
def test_every_framework_pair_agrees_and_a_mis_transferred_weight_fails(parity_processes):
    from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules
    from dlbench.runner.driver.plan.sharing import may_share
    from dlbench.runner.driver.store.run_store import cells_frame

    installed = [f for f in FRAMEWORKS if not missing_modules(f)]
    assert len(installed) >= 3
    specs, faulty = _digits_specs()
    # each framework's cells in one worker process, as the quick suite measures them
    # (dlbench.runner.driver.plan.sharing): one framework import per framework, not per cell
    assert all(may_share(spec, "quick") for spec in [*specs, faulty])
    records = _records_of(parity_processes, [*specs, faulty])
    assert [r.outcome.status.value for r in records] == ["ok"] * len(records), \
        [r.outcome.reason for r in records]
    assert len(records) == len(specs) + 1
    assert len(parity_processes["batches"]) == len(installed)
    cells = cells_frame(records, "r")
    good = pair_results(cells[cells["mode"] == "one-step"])
    assert len(good) == 2 * len(installed) * (len(installed) - 1) // 2
    assert good["passed"].all(), good.to_string()
    assert (good["forward_max_rel"] < TOLERANCE).all()

    (bad_cell,) = [r.outcome for r in records if r.spec.mode == "one-step-faulty"]
    metrics = {o.metric: o.value for o in bad_cell.observations}
    assert metrics["parity_pass"] == 0.0 and metrics["parity_forward_max_rel"] > 100 * TOLERANCE
    assert "DELIBERATE FAULT" in bad_cell.fairness.notes
    mixed = cells[(cells["workload"] == "mlp-digits")
                  & ((cells["mode"] == "one-step-faulty") | (cells["framework"] != "pytorch"))]
    bad_pairs = pair_results(mixed)
    with_faulty = bad_pairs[(bad_pairs["framework_a"] == "pytorch")
                            | (bad_pairs["framework_b"] == "pytorch")]
    assert len(with_faulty) == len(installed) - 1 and not with_faulty["passed"].any()
    assert bad_pairs.drop(with_faulty.index)["passed"].all()


MODEL_WORKLOADS = ("resnet-synthetic", "resnet-cifar10", "transformer-tokens", "lstm-tokens")
#: (framework, backend, workload, perturbation): one convention changed in one framework.
PERTURBED = [("pytorch", "pytorch", "transformer-tokens", "gelu-tanh"),
             ("keras", "jax", "resnet-synthetic", "batchnorm-momentum"),
             ("tensorflow", "tensorflow", "lstm-tokens", "lstm-gate-order"),
             ("keras", "torch", "transformer-tokens", "layernorm-epsilon"),
             ("keras", "tensorflow", "resnet-cifar10", "batchnorm-epsilon"),
             ("tensorflow", "tensorflow", "resnet-synthetic", "same-padding"),
             ("keras", "torch", "resnet-cifar10", "same-padding")]


def _model_cells(framework: str, backend: str, cells: list[tuple[str, str]]) -> list[dict]:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = os.environ | {"PYTHONPATH": str(root), "KERAS_BACKEND": backend,
                        "CUDA_VISIBLE_DEVICES": "", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, str(root / "tests" / "parity_models_worker.py"),
                           framework, backend, json.dumps(cells)],
                          capture_output=True, text=True, env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.slow
def test_model_families_agree_in_every_framework_pair_and_a_changed_convention_fails():
    from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules

    installed = [f for f in FRAMEWORKS if not missing_modules(f)]
    assert len(installed) >= 3
    rows = []
    for f in installed:
        cells = [(w, "") for w in MODEL_WORKLOADS]
        cells += [(w, p) for fw, b, w, p in PERTURBED if (fw, b) == (f.framework, f.backend)]
        for cell in _model_cells(f.framework, f.backend, cells):
            rows.append(_cell(f.framework, f.backend, [], []) | {
                "workload": cell["workload"], "mode": cell["perturbation"] or "one-step",
                "details_json": json.dumps(cell["details"]), "metrics": cell["metrics"],
                "notes": cell["notes"]})
    cells = pd.DataFrame(rows)
    clean = cells[cells["mode"] == "one-step"]
    assert (clean["metrics"].map(lambda m: m["parity_pass"]) == 1.0).all(), \
        clean[["framework", "backend", "workload", "metrics"]].to_string()
    pairs = pair_results(clean)
    assert len(pairs) == len(MODEL_WORKLOADS) * len(installed) * (len(installed) - 1) // 2
    assert pairs["passed"].all(), pairs.to_string()

    perturbed = cells[cells["mode"] != "one-step"]
    assert len(perturbed) == sum(1 for fw, b, *_ in PERTURBED
                                 if any((f.framework, f.backend) == (fw, b) for f in installed))
    for _, row in perturbed.iterrows():
        assert row["metrics"]["parity_pass"] == 0.0, row["mode"]
        assert f"DELIBERATE PERTURBATION: {row['mode']}" in row["notes"]
        mixed = pd.concat([row.to_frame().T, clean[(clean["workload"] == row["workload"])
                                                   & (clean["framework"] != row["framework"])]])
        assert not pair_results(mixed)["passed"].all()


def test_model_reference_updates_running_statistics_in_each_frameworks_convention():
    from dlbench.runner.models.reference_forward import forward
    from dlbench.runner.models.definitions import RESNET_TINY
    from dlbench.runner.models.weights import initial_weights

    weights = initial_weights(RESNET_TINY)
    x = np.random.default_rng(0).uniform(size=(3, 8, 8, 3))
    logits, unbiased = forward(RESNET_TINY, weights, x, training=True)
    _, biased = forward(RESNET_TINY, weights, x, training=True, running_variance="biased")
    assert sorted(unbiased) == sorted(n for n in weights if n.endswith((".mean", ".variance")))
    count = 3 * 8 * 8  # the stem's batch x height x width
    batch_unbiased = (unbiased["stem.bn.variance"] - 0.9) / 0.1
    batch_biased = (biased["stem.bn.variance"] - 0.9) / 0.1
    np.testing.assert_allclose(batch_unbiased, batch_biased * count / (count - 1))
    eval_logits, nothing = forward(RESNET_TINY, weights, x)
    assert nothing == {} and not np.allclose(eval_logits, logits)


def _machine_real_size_parity() -> list:
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.workloads.real_size import is_real_size

    cells = plan_cells(RunRequest(suite="machine", experiments=["parity"], threads=1), "cpu")
    return [c for c in cells if is_real_size(c.workload)]


def test_the_machine_suite_plans_the_real_size_models_parity_at_their_size_in_every_system():
    from dlbench.runner.cell.frameworks import FRAMEWORKS
    from dlbench.runner.driver.plan.estimate import default_process_s
    from dlbench.runner.worker.experiments.parity.model_protocol import model_case
    from dlbench.runner.workloads.real_size import REAL_SIZE_WORKLOADS

    cells = _machine_real_size_parity()
    assert sorted((c.workload, c.framework_id.name) for c in cells) == sorted(
        (w, f.name) for w in REAL_SIZE_WORKLOADS for f in FRAMEWORKS)
    assert all(c.params["profile"] == "cpu" and c.batch_size == 1 and c.repeats == 1
               for c in cells)
    resnet = model_case(next(c for c in cells if c.workload == "resnet50-synthetic"))
    assert resnet.definition.name == "resnet-50"  # the size every other real-size cell runs
    assert resnet.x_forward.shape == (1, 224, 224, 3) and resnet.x_step.shape[0] == 1
    assert resnet.directions == 1
    seconds = {c.workload: default_process_s(c) for c in cells if c.framework == "pytorch"}
    assert 20 < seconds["resnet50-synthetic"] < seconds["bert-base-tokens"] < 300, seconds


@pytest.mark.slow
def test_the_machine_suites_real_size_parity_cells_run_and_agree_in_every_pair(
        parity_processes):
    """The planned real-size parity cells, run by real workers at their families' tiny size
    (the test's; the release runs them at the CPU size), pass the reference in every system
    and agree in every pair."""
    from dlbench.runner.driver.store.run_store import cells_frame

    cells = _tiny_real_size_specs()
    systems = {c.framework_id.name for c in cells}
    assert len(systems) >= 3
    records = _records_of(parity_processes, cells)
    assert [r.outcome.status.value for r in records] == ["ok"] * len(cells), \
        [r.outcome.reason for r in records]
    for record in records:
        metrics = {o.metric: o.value for o in record.outcome.observations}
        assert metrics["parity_pass"] == 1.0, (record.spec.cell_id, metrics)
        assert "1 for the inference-mode pass" in record.outcome.fairness.data_pipeline
        assert "1 random directions" in record.outcome.fairness.data_pipeline
    pairs = pair_results(cells_frame(records, "r"))
    assert len(pairs) == 2 * len(systems) * (len(systems) - 1) // 2
    assert pairs["passed"].all(), pairs.to_string()
