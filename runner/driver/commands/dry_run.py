"""`dlbench run --dry-run`: the run's plan and its projected minutes, before anything is
measured; nothing is locked, written or measured."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

from dlbench.core.text.errors import UsageError
from dlbench.runner.driver.commands.run_arguments import RunArguments
from dlbench.runner.driver.plan.cells import PlanError, plan_cells, resolve_device, validate
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.plan.estimate import estimate, machine_history
from dlbench.runner.driver.plan.look_shares import second_look_share
from dlbench.runner.driver.plan.projection import project


def dry_run_lines(arguments: RunArguments) -> list[str]:
    """What a run of `arguments` would measure (cells per experiment and workload, those
    recorded as not measured apart) and how long it is expected to take."""
    request = arguments.request
    if arguments.model or arguments.resume or arguments.remeasure or arguments.plan_file:
        raise UsageError("--dry-run plans a suite: give it without --model, --resume, "
                         "--remeasure or --plan")
    try:
        validate(request)
        device = resolve_device(request.device)
        cells = plan_cells(request, device)
    except PlanError as error:
        raise UsageError(str(error)) from None
    measured = Counter((c.experiment, c.workload) for c in cells if c.runs)
    left_out = Counter((c.experiment, c.workload) for c in cells if not c.runs)
    history = machine_history(arguments.results_dir)
    second, source = second_look_share(arguments.results_dir, history.kind, request.suite)
    projection = project(cells, request.suite, history.times, override=request.repeats,
                         second=second)
    policy = request.policy()
    lines = [f"dry run of the {request.suite} suite on {device} (nothing is measured); "
             f"{'citable' if policy['citable'] else 'a preview, not citable'}"]
    minutes = first_look_minutes(cells, history.times)
    for key in sorted(measured.keys() | left_out.keys()):
        lines.append(f"  {key[0]}, {key[1]}: {measured[key]} cells"
                     + (f", {left_out[key]} not measured here" if left_out[key] else "")
                     + (f"; first look about {minutes[key]:.0f} min" if measured[key] else ""))
    return lines + [history.sentence(), source] + projection.lines()


def first_look_minutes(cells: list[CellSpec], history: dict[str, float]) -> dict[tuple, float]:
    """(experiment, workload) -> the expected minutes of its first look's processes, each
    process alone (what a suite's time goes to, for choosing what it leaves out)."""
    minutes: dict[tuple, float] = defaultdict(float)
    for cell in cells:
        processes = [[replace(cell, repeat_index=index)] for index in range(cell.repeats)]
        minutes[(cell.experiment, cell.workload)] += estimate(processes, history).seconds / 60
    return minutes


def dry_run_command(arguments: RunArguments) -> int:
    """Print the plan and its projected minutes; exit 0."""
    print("\n".join(dry_run_lines(arguments)))
    return 0
