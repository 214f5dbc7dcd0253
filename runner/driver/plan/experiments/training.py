"""training: how long does each framework take to train the same model to the same accuracy?"""

from __future__ import annotations

from dlbench.core.declarations.modes import measured, modes
from dlbench.runner.driver.plan.experiments import (Experiment, not_measured_params,
                                                    outside_fastest_workloads, suite_grid)
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec, FrameworkId
from dlbench.runner.workloads import real_size
from dlbench.runner.workloads.real_size import REAL_SIZE_WORKLOADS

#: Per suite: workloads with their epoch counts (processes per cell: dlbench.runner.driver.plan.repeats);
#: "learning_rates" names a workload's SGD learning rate where the suite's size differs from
#: the workload's own (the cells' "learning_rate" parameter; dlbench.runner.worker.harness.data applies it);
#: "profiles" names a size profile other than the device's (quick on a CPU trains a model
#: family it is asked for at its tiny size).
GRID: dict[str, dict] = {
    # quick: the digits MLP, which reaches its target in 10 epochs (the model families train
    # in standard; `--suite quick --workload resnet-synthetic` trains one at its tiny size)
    "quick": {"workloads": ["mlp-digits"],
              "epochs": {"mlp-digits": 10, "resnet-synthetic": 2, "transformer-tokens": 2,
                         "lstm-tokens": 2},
              "cpu": {"profiles": {"resnet-synthetic": "tiny", "transformer-tokens": "tiny",
                                   "lstm-tokens": "tiny"}}},
    "standard": {"epochs": {"mlp-digits": 20, "cnn-digits": 15, "cnn-synthetic": 4,
                            "resnet-synthetic": 2, "transformer-tokens": 2, "lstm-tokens": 2},
                 # on 2 CPU cores (90 minutes for the suite) the three models take the CNNs'
                 # place, each on its profile's small data (512 samples; the ResNet's 1024,
                 # BERT-mini's 256) for the epochs it needs to reach its target (the ResNet's
                 # BatchNorm running statistics need about 64 steps to settle), and only the
                 # ResNet is also trained in each fastest mode. The ResNet-20 at batch 32
                 # trains at lr 0.025, He et al.'s 0.1 at batch 128 scaled to its batch: at the
                 # workload's 0.05 a loss spike late in the last epoch moved the weights away
                 # from BatchNorm's running statistics, and eval mode fell to 0.44 (release
                 # 2027.02, Keras on TensorFlow, process 2) though the weights were at 1.0
                 # (4 epochs since 2026-12-05: after 3, seed 9 of 12 ended at 0.898 against
                 # 0.90 in TensorFlow's XLA and Keras' jit_compile on TensorFlow, run
                 # 20261205T075341Z-cpu, while seeds 0-8, 10 and 11 were at 1.000)
                 "cpu": {"model_data_size": "small",
                         "epochs": {"mlp-digits": 20, "resnet-synthetic": 4,
                                    "transformer-tokens": 2, "lstm-tokens": 2},
                         "learning_rates": {"resnet-synthetic": 0.025},
                         "fastest_workloads": ["resnet-synthetic"]}},
    # machine (README: "The machine suite"): the digits MLP to its target in standard's 20
    # epochs (training to target, per-step overhead) and ResNet-50's training steps, each
    # system in its plain mode
    "machine": {"workloads": ["mlp-digits"], "epochs": {"mlp-digits": 20},
                "cpu": {"real_size": ["resnet50-synthetic"], "fastest_workloads": [],
                        # one steady epoch (4 steps) after the first, per process
                        "real_size_params": {"epochs": 2}}},
    "full": {"epochs": {"mlp-digits": 30, "cnn-digits": 20, "cnn-synthetic": 8,
                        "resnet-synthetic": 4, "transformer-tokens": 4, "lstm-tokens": 4},
             "data_size": "large",
             # the ResNet-20 at batch 32 on a CPU: the same rate as standard's, same reason;
             # and the real-size models' time per training step (standard's 150 minutes on 2
             # CPU cores are spent on their inference and deployment runtimes)
             "cpu": {"learning_rates": {"resnet-synthetic": 0.025},
                     "real_size": list(REAL_SIZE_WORKLOADS)}},
}
DEFAULT_EPOCHS = 10


def training_modes(request: RunRequest, framework: FrameworkId, workload: str,
                   grid: dict) -> list[str]:
    """The quick suite trains in the default (plain) mode only; standard and full add the
    production one, on the workloads the grid's "fastest_workloads" names (all when it names
    none), unless the default's cell measures it (dlbench.core.declarations.modes.SAME_AS)."""
    if request.suite == "quick":
        return ["default"]
    wanted = [mode for mode in modes("training", framework.framework)
              if mode == "default" or not outside_fastest_workloads(
                  grid, workload, "training", framework.framework, mode)]
    return measured("training", framework.name, request.device, wanted)


def plan(request: RunRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode, fp32, the workload's batch size (a
    dlbench.runner.models workload's at the device's size profile); a mode too slow for the suite
    on this device is a cell that says so (not measured)."""
    from dlbench.runner.workloads.catalog import device_profile, get_workload

    grid = suite_grid(GRID, request)
    names = request.workloads or [*grid.get("workloads", list(grid["epochs"])),
                                  *grid.get("real_size", [])]
    cells = []
    for name in names:
        workload = get_workload(name)
        if real_size.is_real_size(name):
            cells += _real_size_cells(request, name, grid)
            continue
        profile = grid.get("profiles", {}).get(name, "")
        batch_size = (device_profile(workload, request.device, profile).batch_size
                      if workload.profiles else workload.batch_size)
        params = {"epochs": grid["epochs"].get(name, DEFAULT_EPOCHS)}
        if name in grid.get("learning_rates", {}):
            params["learning_rate"] = grid["learning_rates"][name]
        if profile:
            params["profile"] = profile
        if workload.dataset == "synthetic-images" and "data_size" in grid:
            params["data_size"] = grid["data_size"]
        if workload.profiles and "model_data_size" in grid and not profile:
            params["data_size"] = grid["model_data_size"]
        for framework in request.systems:
            cells += [request.cell(
                "training", name, framework, timeout_s=600.0, mode=mode, batch_size=batch_size,
                params=params | not_measured_params(request, framework, mode, "training", name),
            ) for mode in training_modes(request, framework, name, grid)]
    return cells


def _real_size_cells(request: RunRequest, name: str, grid: dict) -> list[CellSpec]:
    """A real-size model's training cells: time per step over a few steady steps after
    warm-up, at its CPU profile's batch, in every mode the suite trains in."""
    from dlbench.runner.workloads.catalog import device_batch_size, get_workload

    batch_size = device_batch_size(get_workload(name), request.device)
    return [request.cell("training", name, framework, timeout_s=real_size.TIMEOUT_S, mode=mode,
                         batch_size=batch_size,
                         params=real_size.training_params(name) | grid.get("real_size_params", {}))
            for framework in request.systems
            for mode in training_modes(request, framework, name, grid)]


EXPERIMENT = Experiment("training", plan)
