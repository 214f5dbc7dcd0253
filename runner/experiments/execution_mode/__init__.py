"""execution-mode: do graphs and compilers train faster than eager execution, and when has
the compilation paid for itself?"""

from __future__ import annotations

from dlbench.modes import MODES as MODE_MATRIX
from dlbench.questions import QUESTIONS
from runner.experiments import Experiment, PlanRequest, suite_grid
from runner.spec import CellSpec, FrameworkId

#: Each framework's eager mode first, then its graph/compiled modes.
MODES: dict[str, tuple[str, ...]] = {
    framework: tuple(table) for framework, table in MODE_MATRIX["execution-mode"].items()}

#: Modes the quick suite leaves out because another quick cell measures the same thing: every
#: graph/compiled cell times its framework's eager mode in the same process (eager_step_time);
#: on torch Keras' default is eager (jit_compile="auto" is False on torch), and on JAX the
#: default is jit_compile=True. Standard and full suites run every mode as its own cell.
QUICK_DUPLICATES = {("pytorch", "eager"), ("tensorflow", "eager"), ("keras", "run_eagerly"),
                    ("torch", "default"), ("jax", "jit_compile")}
#: Modes the quick suite leaves out because one process takes minutes on 2 cores: Keras'
#: jit_compile on torch compiles with torch.compile twice (cold and warm), 235 s for the
#: digits MLP. Standard and full measure it.
QUICK_TOO_SLOW = {("torch", "jit_compile")}

#: Per suite: workloads, repeats (worker processes), and per mode the calibrated windows of
#: steady steps and the distinct batches they cycle over.
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"], "repeats": 3, "step_samples": 3, "batches": 16},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic"], "repeats": 5,
                 "step_samples": 5, "batches": 32,
                 "cpu": {"workloads": ["mlp-digits", "cnn-digits"]}},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic"], "repeats": 10,
             "step_samples": 10, "batches": 64},
}


def modes(suite: str, framework: FrameworkId, device: str = "cpu") -> list[str]:
    """The modes a suite measures for one framework (quick leaves out duplicates, and on a
    CPU the modes too slow for its 8 minutes)."""
    if suite != "quick":
        return list(MODES[framework.framework])
    left_out = QUICK_DUPLICATES | (QUICK_TOO_SLOW if device == "cpu" else set())
    return [mode for mode in MODES[framework.framework]
            if not {(framework.framework, mode), (framework.backend, mode)} & left_out]


def plan(request: PlanRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode, at the workload's batch size."""
    from runner.workloads import get_workload

    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or grid["workloads"]:
        workload = get_workload(name)
        for framework in request.frameworks:
            for mode in modes(request.suite, framework, request.device):
                cells.append(CellSpec(
                    experiment="execution-mode", workload=name, framework=framework.framework,
                    backend=framework.backend, device=request.device, mode=mode,
                    batch_size=workload.batch_size, repeats=request.repeats or grid["repeats"],
                    threads=request.threads, timeout_s=request.timeout_s or 600.0,
                    data_dir=request.data_dir,
                    params={k: grid[k] for k in ("step_samples", "batches")},
                ))
    return cells


EXPERIMENT = Experiment(
    name="execution-mode",
    question=QUESTIONS["execution-mode"],
    metrics=("steady_step_time", "compile_time_cold", "compile_time_warm", "eager_step_time",
             "break_even_steps", "step_time", "import_footprint"),
    plan=plan,
)
