"""`dlbench run --model PATH.py:NAME`: a user's model measured with the built-ins' protocol.

Everything the user gave is checked, and the model built once (dlbench.runner.user_model.preparation),
before the run folder exists: a bad path, NAME, model or shape writes nothing. Then the run
measures, through the runner's one cell machinery (interleaved processes, busy checks and
re-runs, looks, an A/A control): first the parity cells, then the timed cells of every
system and mode whose parity passed (one that failed is recorded as not timed, with why).
"""

from __future__ import annotations

import json
from dataclasses import replace

from rich.console import Console

from dlbench.core import layout
from dlbench.core.atomic import atomic_write_bytes, make_dir
from dlbench.core.errors import UsageError
from dlbench.core.model_answers import (MODEL_QUESTIONS, model_answers, no_answer_reason,
                                        parity_table)
from dlbench.core.sequential import design_from_policy
from dlbench.runner.cell.spec import NOT_MEASURED, CellSpec
from dlbench.runner.commands.run import busy_retries_of, new_run_id, print_summary, run_cells
from dlbench.runner.commands.run_arguments import RunArguments
from dlbench.runner.process.stop import stop_on_signals
from dlbench.runner.machine.lock import MachineLockedError, measurement_lock
from dlbench.runner.plan import frameworks
from dlbench.runner.plan.cells import PlanError, resolve_device, validate
from dlbench.runner.plan.request import RunRequest
from dlbench.runner.store.run_store import CellRecord, RunStore
from dlbench.runner.store.tables import cells_frame, observations_frame, processes_frame
from dlbench.runner.user_model.plan import INFERENCE, PARITY, TRAINING, model_cells, system_names
from dlbench.runner.user_model.preparation import MODEL_DIR, Prepared, prepare_model
from dlbench.runner.user_model.source import ModelRequest, model_request

console = Console(stderr=True)
#: The file of a model run holding the model's request, facts and parity verdict.
MODEL_FILE = "model.json"
#: Flags that select built-in cells, which a --model run replaces.
SELECTION_FLAGS = (("experiments", "--experiment"), ("workloads", "--workload"),
                   ("plan_file", "--plan"), ("resume", "--resume"),
                   ("remeasure", "--remeasure"), ("cells", "--cell"))


def checked_request(arguments: RunArguments) -> tuple[ModelRequest, RunRequest]:
    """The model request and the run request it records; UsageError before anything runs."""
    for field, flag in SELECTION_FLAGS:
        if getattr(arguments.request, field, None) or getattr(arguments, field, None):
            raise UsageError(f"--model measures the model given: leave out {flag}")
    if arguments.executor == "ray":
        raise UsageError("--model measures on this machine: leave out --executor ray")
    systems = chosen_systems(tuple(arguments.request.frameworks))
    model = model_request(arguments.model, arguments.input_shape, arguments.input_dtype,
                          arguments.data_file, arguments.batch_size)
    run_request = replace(arguments.request, experiments=[PARITY, INFERENCE, TRAINING],
                          workloads=[model.model_id], frameworks=[], data_dir="")
    try:
        validate(replace(run_request, experiments=[], workloads=[]))
    except PlanError as error:
        raise UsageError(str(error)) from None
    return model, replace(run_request, frameworks=list(systems))


def chosen_systems(names: tuple[str, ...]) -> tuple[str, ...]:
    """--framework with --model: the systems to measure ('keras': every Keras backend)."""
    valid = [*system_names("keras"), *system_names("torch")]
    chosen: list[str] = []
    for name in names:
        if name == "keras":
            chosen += system_names("keras")
        elif name in valid:
            chosen.append(name)
        else:
            raise UsageError(f"--framework {name!r} with --model: valid: keras, "
                             f"{', '.join(valid)}")
    return tuple(dict.fromkeys(chosen))


def _kind_systems(facts: dict, chosen: tuple[str, ...]) -> tuple[str, ...]:
    """The chosen systems that can run a model of this kind; UsageError when none can."""
    mine = system_names(facts["kind"])
    if chosen and not set(chosen) & set(mine):
        raise UsageError(f"--framework {', '.join(chosen)}: a "
                         f"{'Keras' if facts['kind'] == 'keras' else 'PyTorch'} model runs on "
                         f"{', '.join(mine)}")
    return tuple(s for s in chosen if s in mine)


def run_model_command(arguments: RunArguments) -> int:
    """Entry point of `dlbench run --model`."""
    stop_on_signals()
    model, run_request = checked_request(arguments)
    retries = busy_retries_of(arguments)
    device = resolve_device(run_request.device)
    threads = run_request.thread_count
    try:
        with measurement_lock():
            prepared = prepare_model(model, threads)
            try:
                store, cells = _planned(arguments, run_request, prepared, device)
            except BaseException:
                prepared.discard()  # nothing of a run that never started is kept
                raise
            make_dir(store.root)
            prepared.move_into(store.root)
            save_model_file(store, model, prepared.facts)
            records = measure_model(store, run_request, device, cells, arguments, retries)
    except MachineLockedError as error:
        raise UsageError(str(error)) from None
    print_summary(store, records)
    for line in answer_lines(store):
        console.print(line)
    return 0


def _planned(arguments: RunArguments, run_request: RunRequest, prepared: Prepared,
             device: str) -> tuple[RunStore, list[CellSpec]]:
    """The new run's store (not yet created) and the model's cells."""
    systems = _kind_systems(prepared.facts, tuple(run_request.frameworks))
    store = RunStore(layout.run_dir(arguments.results_dir, new_run_id(device)))
    plan = replace(run_request, workloads=[], frameworks=[]).resolved(device)
    request = json.loads((prepared.folder / "request.json").read_text())
    cells = model_cells(plan, prepared.facts, {
        "model": request, "model_dir": str(store.root / MODEL_DIR),
        "facts": prepared.facts}, systems)
    return store, cells


def measure_model(store: RunStore, request: RunRequest, device: str, cells: list[CellSpec],
                  arguments: RunArguments, retries: int) -> list[CellRecord]:
    """Parity first (every system's parity process), then the timed cells of the systems
    and modes whose parity passed."""
    parity = [c for c in cells if c.experiment == PARITY]
    run_cells(store, request, device, parity, progress=arguments.progress,
              busy_retries=retries, seed=arguments.seed, record_plan=False,
              questions=MODEL_QUESTIONS)
    gated = [c if c.experiment == PARITY else gate(c, store.load_records()) for c in cells]
    return run_cells(store, request, device, gated, progress=arguments.progress,
                     busy_retries=retries, seed=arguments.seed, questions=MODEL_QUESTIONS)


def parity_mode(cell: CellSpec) -> str:
    """The inference mode whose parity process vouches for `cell`."""
    if cell.experiment == TRAINING:
        return "predict" if cell.mode == "default" else cell.mode
    return cell.mode


def gate(cell: CellSpec, records: list[CellRecord]) -> CellSpec:
    """`cell`, or `cell` planned as not timed when its parity process failed or disagreed."""
    if cell.params.get(NOT_MEASURED):
        return cell
    parity = next((r for r in records if r.spec.experiment == PARITY
                   and r.spec.framework_id == cell.framework_id
                   and r.spec.mode == parity_mode(cell)), None)
    why = parity_refusal(parity)
    return replace(cell, params=cell.params | {NOT_MEASURED: why}) if why else cell


def parity_refusal(record: CellRecord | None) -> str:
    """Why a parity process's result stops its system and mode from being timed ('' if not)."""
    if record is None:
        return ""
    outcome = record.outcome
    if outcome.status.value == "skipped":
        return ""  # the timed cell is skipped for the same reason
    if outcome.status.value != "ok":
        return f"not timed: its parity process {outcome.status.value}: {outcome.reason}"
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    if values.get("parity_pass", 0.0) >= 1.0:
        return ""
    return (f"not timed: parity failed (outputs differ from the reference by "
            f"{values.get('parity_forward_max_rel', float('nan')):.3g} relative, tolerance "
            f"{values.get('parity_tolerance', float('nan')):g})")


def save_model_file(store: RunStore, model: ModelRequest, facts: dict) -> None:
    """model.json: what was measured (the request and the model's facts)."""
    body = {"request": model.to_dict(), "facts": facts,
            "systems_installed": [f.name for f in frameworks.FRAMEWORKS
                                  if not frameworks.missing_modules(f)]}
    atomic_write_bytes(store.root / MODEL_FILE, json.dumps(body, indent=2).encode())


def answer_lines(store: RunStore) -> list[str]:
    """The parity result and each answer, as the page words them."""
    records = store.load_records()
    run_id = store.run_id
    cells = cells_frame(records, run_id)
    observations = observations_frame(records, run_id)
    lines = [parity_line(row) for row in parity_table(cells, observations).itertuples()]
    design = design_from_policy(store.load_run_info().get("processes_policy"))
    processes = processes_frame(records, run_id)
    answers = model_answers(observations, cells, processes, design)
    lines += [f"{answer.question.title}: {answer.sentence()}" for answer in answers]
    return lines if answers else [*lines, no_answer_reason(cells, processes)]


def parity_line(row) -> str:
    """One parity cell in words."""
    where = f"parity {row.system} {row.mode}"
    if row.status != "ok":
        return f"{where}: {row.status}: {row.reason}"
    verdict = "agrees" if row.passed else "DIFFERS"
    return (f"{where}: {verdict} (max relative difference {row.max_rel:.2g}, "
            f"tolerance {row.tolerance:g})")
