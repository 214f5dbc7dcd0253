"""`dlbench run --resume RUN` of a model run: go on with the run's own model, inputs and
systems. Its weights, inputs, reference outputs and finished processes (parity included)
are kept; a model file changed since the run began is refused (its digest is compared),
since the finished processes measured the file as it was."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from dlbench.core.text.errors import UsageError
from dlbench.runner.cell.model_source import KERAS_WEIGHTS, TORCH_WEIGHTS
from dlbench.runner.driver.user_model.preparation import MODEL_DIR
from dlbench.runner.cell.model_source import model_digest, parse_model

#: The file of a model run holding the model's request, facts, digest and calls per process.
MODEL_FILE = "model.json"


@dataclass(frozen=True)
class SavedModel:
    """What a model run recorded when it began: enough to plan the same cells again."""

    request: dict  # the checked --model request (ModelRequest.to_dict())
    facts: dict
    threads: int | None  # None: recorded by a run from before threads were kept
    steps: int | None


def is_model_run(run_root: Path) -> bool:
    """Whether the run in `run_root` measured a user's model (--model)."""
    return (run_root / MODEL_FILE).is_file()


def saved_model(run_root: Path, run_id: str, model: str, refused: list[str]) -> SavedModel:
    """The recorded model of run `run_id`, checked to be resumable as it was measured (the
    --model given, if any, names it; `refused`: flags given that would change what is
    measured); UsageError in one line otherwise."""
    if refused:
        raise UsageError(f"--resume goes on with run {run_id}'s own model, inputs and "
                         f"systems: leave out {', '.join(refused)}")
    if not is_model_run(run_root):
        raise UsageError(f"run {run_id} measured the built-in workloads, not a model: "
                         "resume it without --model")
    body = json.loads((run_root / MODEL_FILE).read_text())
    request = body["request"]
    recorded = request["path"] + (f":{request['name']}" if request["name"] else "")
    if model:
        path, name = parse_model(model)
        if (str(path), name) != (request["path"], request["name"]):
            raise UsageError(f"--model {model}: run {run_id} measured {recorded}; "
                             "resume it with that model, or leave out --model")
    _check_unchanged(Path(request["path"]), body.get("model_sha256"), run_id)
    _check_prepared(run_root / MODEL_DIR, body["facts"]["kind"], run_id)
    return SavedModel(request, body["facts"], body.get("threads"), body.get("steps"))


def _check_unchanged(path: Path, digest: str | None, run_id: str) -> None:
    """The model file exists and is byte for byte what the run measured."""
    start_new = "start a new run with --model"
    if not digest:
        raise UsageError(f"run {run_id} recorded no digest of its model file, so a change "
                         f"could not be told: {start_new}")
    if not path.is_file():
        raise UsageError(f"run {run_id}'s model file {path} no longer exists: {start_new}")
    now = model_digest(path)
    if now != digest:
        raise UsageError(f"{path.name} changed since run {run_id} measured it (sha256 "
                         f"{digest[:12]} then, {now[:12]} now): its finished processes "
                         f"measured the file as it was; {start_new}")


def _check_prepared(folder: Path, kind: str, run_id: str) -> None:
    """The weights, inputs and request the run's workers load are still in the run."""
    weights = TORCH_WEIGHTS if kind == "torch" else KERAS_WEIGHTS
    needed = ("request.json", "inputs.npz", weights)
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise UsageError(f"run {run_id} lacks its prepared model ({MODEL_DIR}/"
                         f"{', '.join(missing)}): start a new run with --model")
