"""The framework adapters and the harness: declarative skips, one model dispatch point,
experiments that import no other experiment, and the code record."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from dlbench.runner.worker.harness.code_record import imported_project_files
from dlbench.runner.worker.harness.data import cell_data
from dlbench.runner.cell.spec import CellSpec

EXPERIMENTS = Path(__file__).resolve().parent.parent / "runner" / "worker" / "experiments"


def _spec(framework: str = "pytorch", backend: str = "", device: str = "cpu") -> CellSpec:
    return CellSpec(experiment="training", workload="mlp-digits", framework=framework,
                    backend=backend, device=device, batch_size=32, repeats=3,
                    params={"epochs": 1})


def test_no_experiment_imports_another_experiments_code():
    for path in EXPERIMENTS.glob("*/*.py"):
        own = f"dlbench.runner.worker.experiments.{path.parent.name}"
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module
                assert (not module.startswith("dlbench.runner.worker.experiments.")
                        or module == own or module.startswith(own + ".")), (path, module)


def test_a_missing_package_is_a_skip_reason_naming_it(monkeypatch):
    from dlbench.runner.cell import frameworks
    from dlbench.runner.worker.adapters import adapter_for

    monkeypatch.setitem(frameworks.REQUIRED_MODULES, "pytorch", ("torch", "no_such_module"))
    assert adapter_for(_spec()).skip_reason() == "not installed: no_such_module"


@pytest.mark.slow
def test_a_cuda_cell_without_a_gpu_is_skipped_with_the_reason():
    import torch

    from dlbench.runner.worker.adapters import adapter_for

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    reason = adapter_for(_spec(device="cuda")).skip_reason()
    assert reason == "PyTorch sees 0 CUDA devices, the cell needs 1"
    assert adapter_for(_spec()).skip_reason() == ""


@pytest.mark.slow
def test_the_adapter_builds_the_workload_model_from_the_shared_weights():
    import torch

    from dlbench.runner.worker.adapters import adapter_for
    from dlbench.runner.worker.experiments.parity import reference

    spec = _spec()
    data = cell_data(spec)
    adapter = adapter_for(spec)
    model = adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    with torch.inference_mode():
        logits = model(adapter.to_device(data.x_test[:8])).numpy()
    expected = reference.forward(data.initial_layers(), data.x_test[:8])
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-5)


def test_the_code_record_hashes_imported_project_files_only():
    import dlbench.runner.worker.harness.sampling  # noqa: F401 - imported to be recorded

    files = imported_project_files()
    assert len(files["runner/worker/harness/sampling.py"]) == 64
    assert "runner/worker/harness/code_record.py" in files
    assert all(not path.startswith(".") and "site-packages" not in path for path in files)


CONFIGURE_AND_REPORT = """
import sys
import numpy as np
from dlbench.runner.worker.adapters import adapter_for
from dlbench.runner.cell.spec import CellSpec
spec = CellSpec(experiment="training", workload="mlp-digits", framework="keras",
                backend=sys.argv[1], device="cpu", batch_size=32, repeats=3,
                params={"epochs": 1})
adapter_for(spec).configure()
import keras
print("tensorflow" in sys.modules, float(keras.random.uniform((1,))[0]), np.random.rand())
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_keras_on_other_backends_is_seeded_without_importing_tensorflow(backend):
    """keras.utils.set_random_seed imports TensorFlow whenever it is installed; a Keras-on-
    torch or JAX process must not carry TensorFlow's import time and memory."""
    import os
    import subprocess
    import sys

    env = os.environ | {"KERAS_BACKEND": backend, "CUDA_VISIBLE_DEVICES": ""}
    runs = [subprocess.run([sys.executable, "-c", CONFIGURE_AND_REPORT, backend], env=env,
                           cwd=EXPERIMENTS.parent.parent, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs[0][0] == "False"
    assert runs[0] == runs[1]  # seeded: keras.random and NumPy draw the same in both
