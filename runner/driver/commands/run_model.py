"""`dlbench run --model PATH.py:NAME`: a user's model measured with the built-ins' protocol.

Everything the user gave is checked, and the model built once (dlbench.runner.driver.user_model.preparation),
before the run folder exists: a bad path, NAME, model or shape writes nothing. Then the run
measures, through the runner's one cell machinery (interleaved processes, busy checks and
re-runs, looks, an A/A control): first the parity cells, then the timed cells of every
system and mode whose parity passed (one that failed is recorded as not timed, with why).
`--resume RUN` plans the same cells again from what the run recorded
(dlbench.runner.driver.user_model.resume) and measures only the processes not yet finished.
"""

from __future__ import annotations

import json
from dataclasses import replace

from rich.console import Console

from dlbench.core.storage import layout
from dlbench.core.storage.atomic import atomic_write_bytes, make_dir
from dlbench.core.text.errors import UsageError
from dlbench.core.judging.model_answers import (MODEL_QUESTIONS, model_answers, no_answer_reason,
                                                parity_table)
from dlbench.core.judging.sequential import design_from_policy
from dlbench.runner.cell.spec import NOT_MEASURED, CellSpec
from dlbench.runner.driver.commands.resume_checks import refuse_foreign_run
from dlbench.runner.driver.commands.run import (busy_retries_of, existing_run, new_run_id,
                                                print_summary, run_cells)
from dlbench.runner.driver.commands.run_arguments import RunArguments
from dlbench.runner.driver.launch.stop import stop_on_signals
from dlbench.runner.driver.machine.lock import MachineLockedError, measurement_lock
from dlbench.runner.cell import frameworks
from dlbench.runner.driver.plan.cells import PlanError, resolve_device, validate
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.store.run_store import CellRecord, RunStore
from dlbench.runner.driver.store.run_frames import cells_frame, observations_frame, processes_frame
from dlbench.runner.driver.user_model.plan import (INFERENCE, PARITY, TRAINING, model_cells,
                                                   system_names)
from dlbench.runner.driver.user_model.preparation import MODEL_DIR, prepare_model
from dlbench.runner.driver.user_model.resume import MODEL_FILE, is_model_run, saved_model
from dlbench.runner.cell.model_source import ModelRequest, model_digest, model_request

console = Console(stderr=True)
#: Flags that select built-in cells, which a --model run replaces.
SELECTION_FLAGS = (("experiments", "--experiment"), ("workloads", "--workload"),
                   ("plan_file", "--plan"), ("remeasure", "--remeasure"), ("cells", "--cell"))


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


def resumes_a_model_run(arguments: RunArguments) -> bool:
    """Whether `dlbench run` goes on with a model run: --model, or --resume of a run that
    measured a model (the interrupted run's own hint names --resume alone)."""
    if arguments.model:
        return True
    if not arguments.resume or arguments.remeasure:
        return False
    return is_model_run(existing_run(arguments.results_dir, arguments.resume).root)


def run_model_command(arguments: RunArguments) -> int:
    """Entry point of `dlbench run --model` (and of --resume of a model run)."""
    stop_on_signals()
    if arguments.resume:
        return _resume(arguments)
    model, run_request = checked_request(arguments)
    retries = busy_retries_of(arguments)
    device = resolve_device(run_request.device)
    threads = run_request.thread_count
    digest = model_digest(model.path)  # the file as it is built now
    try:
        with measurement_lock():
            prepared = prepare_model(model, threads, run_request.timeout_s)
            try:
                store = RunStore(layout.run_dir(arguments.results_dir, new_run_id(device)))
                request = json.loads((prepared.folder / "request.json").read_text())
                cells = planned_cells(store, run_request, prepared.facts, request, device,
                                      threads, arguments.steps)
            except BaseException:
                prepared.discard()  # nothing of a run that never started is kept
                raise
            make_dir(store.root)
            prepared.move_into(store.root)
            save_model_file(store, model, prepared.facts, {
                "model_sha256": digest, "threads": threads, "steps": arguments.steps})
            records = measure_model(store, run_request, device, cells, arguments, retries)
    except MachineLockedError as error:
        raise UsageError(str(error)) from None
    return _report(store, records)


def _resume(arguments: RunArguments) -> int:
    """--resume RUN of a model run: the same cells, planned from what the run recorded;
    only the processes not yet finished are measured."""
    store = existing_run(arguments.results_dir, arguments.resume)
    refuse_foreign_run(store)
    saved = saved_model(store.root, store.run_id, arguments.model, _refused_flags(arguments))
    retries = busy_retries_of(arguments)
    info = store.load_run_info()
    run_request, device = RunRequest(**info["request"]), info["device"]
    threads = saved.threads or run_request.thread_count
    try:
        with measurement_lock():
            cells = planned_cells(store, run_request, saved.facts, saved.request, device,
                                  threads, saved.steps)
            records = measure_model(store, run_request, device, cells, arguments, retries)
    except MachineLockedError as error:
        raise UsageError(str(error)) from None
    return _report(store, records)


def _refused_flags(arguments: RunArguments) -> list[str]:
    """The flags given with --resume that would change what a model run measures."""
    given = (("--input-shape", arguments.input_shape), ("--data", arguments.data_file),
             ("--batch-size", arguments.batch_size is not None),
             ("--steps", arguments.steps is not None), ("--framework", arguments.request.frameworks),
             ("--repeats", arguments.request.repeats is not None),
             ("--executor ray", arguments.executor == "ray"),
             *((flag, getattr(arguments.request, field, None) or getattr(arguments, field, None))
               for field, flag in SELECTION_FLAGS))
    return [flag for flag, value in given if value]


def _report(store: RunStore, records: list[CellRecord]) -> int:
    """The run's summary, parity lines and answers."""
    print_summary(store, records)
    for line in answer_lines(store):
        console.print(line)
    return 0


def planned_cells(store: RunStore, run_request: RunRequest, facts: dict, request: dict,
                  device: str, threads: int, steps: int | None) -> list[CellSpec]:
    """The model's cells in the run `store` (a new run's or a resumed one's alike)."""
    systems = _kind_systems(facts, tuple(run_request.frameworks))
    plan = replace(run_request, workloads=[], frameworks=[], threads=threads).resolved(device)
    return model_cells(plan, facts, {"model": request, "model_dir": str(store.root / MODEL_DIR),
                                     "facts": facts}, systems, steps)


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


def save_model_file(store: RunStore, model: ModelRequest, facts: dict, plan: dict) -> None:
    """model.json: what was measured (the request, the model's facts, and what a resumed run
    plans the same cells from: the file's digest, threads, --steps)."""
    body = {"request": model.to_dict(), "facts": facts, **plan,
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
