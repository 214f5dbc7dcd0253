"""The parent's side of preparing a user's model: run dlbench.runner.worker.user_model.build_once in a process
of its own (the runner never imports a framework), into a scratch folder that becomes the
run's `model/` folder only once the model is known to build and take its inputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dlbench.core.text.errors import UsageError
from dlbench.runner.cell.frameworks import missing_modules
from dlbench.runner.driver.launch.execute import kill_group
from dlbench.runner.cell.spec import FrameworkId
from dlbench.runner.cell.model_source import ModelRequest

PREPARE_TIMEOUT_S = 600.0
#: The folder of a run that holds the model's weights, inputs and facts.
MODEL_DIR = "model"
#: Backends the model is built on to prepare it, in order of preference (the first installed).
PREPARE_BACKENDS = ("jax", "tensorflow", "torch")


@dataclass(frozen=True)
class Prepared:
    """A model built once: its facts and the scratch folder holding weights and inputs."""

    facts: dict
    folder: Path

    def move_into(self, run_root: Path) -> Path:
        """The prepared folder moved into the run; returns where it is now."""
        target = run_root / MODEL_DIR
        shutil.move(str(self.folder), target)
        return target

    def discard(self) -> None:
        """Remove the scratch folder (a run that never started keeps nothing)."""
        shutil.rmtree(self.folder, ignore_errors=True)


def prepare_backend() -> str:
    """The Keras backend the model is first built on (JAX imports fastest)."""
    for backend in PREPARE_BACKENDS:
        if not missing_modules(FrameworkId("keras", backend)):
            return backend
    return "tensorflow"


def prepare_model(request: ModelRequest, threads: int,
                  timeout_s: float | None = None) -> Prepared:
    """Build the model once, within `timeout_s` (--timeout; default PREPARE_TIMEOUT_S);
    UsageError (nothing kept) when it cannot be measured as given."""
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.cell.environment import cell_environment
    from dlbench.runner import PROJECT_ROOT

    timeout = timeout_s or PREPARE_TIMEOUT_S
    folder = Path(tempfile.mkdtemp(prefix="dlbench-model-"))
    (folder / "request.json").write_text(json.dumps(request.to_dict()))
    spec = CellSpec("model-prepare", request.model_id, "keras", prepare_backend(), "cpu",
                    repeats=1, threads=threads)
    command = [sys.executable, "-P", "-m", "dlbench.runner.worker.user_model.build_once",
               str(folder / "request.json"), str(folder)]
    output = run_in_own_group(command, cell_environment(spec), PROJECT_ROOT, timeout,
                              folder / "build-output.txt")
    result_file = folder / "prepared.json"
    if output is None:
        result = {"error": f"building the model took more than {timeout:g} s (--timeout)"}
    else:
        result = json.loads(result_file.read_text()) if result_file.exists() else {
            "error": "building the model ended without a result: "
                     + (output.strip().splitlines() or ["no output"])[-1][:300]}
    if "error" in result:
        shutil.rmtree(folder, ignore_errors=True)
        raise UsageError(f"--model {Path(request.path).name}"
                         f"{':' + request.name if request.name else ''}: {result['error']}")
    return Prepared(result["facts"], folder)


def run_in_own_group(command: list[str], env: dict[str, str], cwd: Path, timeout: float,
                     log: Path) -> str | None:
    """Run `command` in a session of its own with its output in the file `log` (no pipe a
    child could hold open); its output, or None past `timeout`. Every process it left behind
    (a model's forward or builder that forked) is ended with it either way."""
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            process.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            kill_group(process)
    text = log.read_text(errors="replace")
    log.unlink(missing_ok=True)
    return None if timed_out else text
