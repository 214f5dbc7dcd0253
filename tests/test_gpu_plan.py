"""The GPU run's plan (scripts/gpu_plan.json): it fits the machine's time, measures every
system and experiment the GPU release needs, and `dlbench run --plan` plans exactly its cells."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.runner.driver.plan.device import (PlanFileError, load_plan, plan_selections,
                                              runnable_steps, step_seconds)
from dlbench.runner.driver.plan.cells import PlanError, plan_cells, validate
from dlbench.runner.driver.plan.request import RunRequest

PLAN_FILE = Path(__file__).resolve().parent.parent / "scripts" / "gpu_plan.json"
GPU_SYSTEMS = {"pytorch", "keras-torch", "keras-jax"}


def plan_request(selections: list[dict]) -> RunRequest:
    return RunRequest(suite="quick", experiments=[], workloads=[], frameworks=[],
                      device="cuda", repeats=None, threads=1, timeout_s=None, data_dir="",
                      plan=selections)


def test_the_gpu_plan_fits_eight_minutes():
    plan = load_plan(PLAN_FILE)
    total = plan.fixed_s + sum(
        step_seconds(step, plan_cells(plan_request([step.selection()]), "cuda"))
        for step in runnable_steps(plan, 1))
    assert plan.device == "cuda" and plan.budget_s <= 8 * 60
    assert 0 < total <= plan.budget_s


def test_the_gpu_plan_covers_every_system_experiment_and_variant():
    plan = load_plan(PLAN_FILE)
    cells = plan_cells(plan_request(plan_selections(plan)), "cuda")
    assert len({c.cell_id for c in cells}) == len(cells)
    measured = [c for c in cells if c.framework_id.name in GPU_SYSTEMS]
    for experiment in ("training", "inference", "precision", "execution-mode", "export"):
        assert {c.framework_id.name for c in measured if c.experiment == experiment} == \
            GPU_SYSTEMS, experiment
    trained = {c.workload for c in cells if c.experiment == "training"}
    assert {"resnet-synthetic", "transformer-tokens", "lstm-tokens"} <= trained
    assert {c.precision for c in cells if c.experiment == "precision"} == {"fp32", "bf16",
                                                                           "fp16"}
    modes = {(c.framework_id.name, c.mode) for c in cells if c.experiment == "execution-mode"}
    assert {("pytorch", "compiled"), ("keras-jax", "default"), ("keras-torch", "jit_compile")} \
        <= modes
    assert all(c.device == "cuda" for c in cells if c.experiment != "export")
    bert = {c.batch_size for c in cells if c.workload == "transformer-tokens"
            and c.experiment in ("training", "precision")}
    assert bert == {32}  # BERT-base's GPU batch, not the CPU profile's
    assert {"tensorflow", "keras-tensorflow"} <= {c.framework_id.name for c in cells}
    left_out = {entry["experiment"]: entry["reason"] for entry in plan.not_measured}
    assert "one GPU" in left_out["data-parallel"]


def test_the_data_parallel_cells_are_planned_for_two_or_more_gpus_only(monkeypatch):
    """The CPU machine suite's data-parallel strategies, on a machine with 2+ GPUs: a
    1-GPU and a 2-GPU cell per strategy; a 1-GPU machine leaves the step out."""
    from dlbench.runner.driver.machine import environment

    plan = load_plan(PLAN_FILE)
    [step] = [s for s in plan.steps if s.experiments == ["data-parallel"]]
    assert step.min_gpus == 2
    assert step.selection() not in plan_selections(plan, 1)
    # a machine whose GPUs were not found (a test's fake device) keeps every 1-GPU step
    assert plan_selections(plan, 0) == plan_selections(plan, 1) != []
    assert step.selection() in plan_selections(plan, 2) == plan_selections(plan)
    monkeypatch.setattr(environment, "gpu_facts", lambda: [{}, {}])
    cells = plan_cells(plan_request(plan_selections(plan, 2)), "cuda")
    parallel = [c for c in cells if c.experiment == "data-parallel"]
    modes = {(c.framework_id.name, c.mode) for c in parallel}
    assert {("pytorch", "ddp"), ("tensorflow", "mirrored"),
            ("keras-jax", "keras-data-parallel")} <= modes
    assert {c.workers for c in parallel} == {1, 2}
    assert all(c.device == "cuda" for c in parallel)


def test_a_plan_step_is_validated_like_the_command_line():
    with pytest.raises(PlanError, match="unknown experiment 'speed'"):
        validate(plan_request([{"suite": "quick", "experiments": ["speed"], "workloads": [],
                                "frameworks": [], "repeats": 1}]))


@pytest.mark.parametrize("text, expected", [
    ("{", "not a device plan"),
    ('{"device": "cuda", "budget_s": 1, "fixed_s": 0, "steps": [{"suite": "quick"}]}',
     "not a device plan"),
    ('{"device": "cuda", "budget_s": 1, "fixed_s": 0, "steps": [{"suite": "quick", '
     '"experiments": [], "workloads": [], "frameworks": ["pytorch"], "repeats": 1, '
     '"seconds_per_process": {}}]}', "no estimate for ['pytorch']"),
])
def test_a_bad_plan_file_names_what_is_wrong(tmp_path, text, expected):
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(PlanFileError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        load_plan(path)


@pytest.mark.parametrize("extra, expected", [
    (["--plan", str(PLAN_FILE), "--experiment", "training"], "--plan names the cells"),
    (["--plan", "missing.json"], "--plan missing.json: no such file"),
])
def test_run_refuses_a_plan_it_cannot_follow(tmp_path, capsys, extra, expected):
    from dlbench.cli import main

    assert main(["run", "--results-dir", str(tmp_path), *extra]) == 2
    error = capsys.readouterr().err
    assert expected in error and len(error.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_plan_run_resumes_with_the_same_cells():
    """run.json records the plan's steps in the request; --resume rebuilds it from there."""
    import json
    from dataclasses import asdict

    request = plan_request(plan_selections(load_plan(PLAN_FILE)))
    recorded = RunRequest(**json.loads(json.dumps(asdict(request))))
    assert [c.cell_id for c in plan_cells(recorded, "cuda")] == \
        [c.cell_id for c in plan_cells(request, "cuda")]
