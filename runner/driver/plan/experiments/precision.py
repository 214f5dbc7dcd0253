"""precision: what do bf16 and fp16 mixed precision change in speed, memory and accuracy, in
each framework's own API, and does the framework accept them at all?"""

from __future__ import annotations

from dataclasses import replace

from dlbench.core.machine.cpu_flags import NO_FP16_UNITS, cpu_flags, fp16_units, isa_features
from dlbench.runner.driver.plan.experiments import (MODEL_WORKLOADS, Experiment,
                                                    not_measured_params, suite_grid)
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import UNSUPPORTED, CellSpec
from dlbench.runner.workloads import real_size
from dlbench.runner.workloads.real_size import NO_ACCURACY_PARAM, REAL_SIZE_WORKLOADS

PRECISIONS = ("fp32", "bf16", "fp16")
#: The real-size models (on a CPU) in fp32 and the CPU's own reduced precision: fp16 matmuls
#: without native units would take a real-size process far past its time.
REAL_SIZE_PRECISIONS = ("fp32", "bf16")

#: Per suite (processes per cell: dlbench.runner.driver.plan.repeats): workloads with epochs, and the
#: inference calls per process. Standard (on a GPU) and full measure the ResNet, Transformer
#: and LSTM too. The quick suite is tiny (fp32 against bf16, the half precision these CPUs
#: have units for): half precision matmuls on a CPU without native support are very slow.
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"], "epochs": 2,
              "cpu": {"precisions": ("fp32", "bf16")},
              "params": {"warmup_calls": 5, "latency_calls": 50, "throughput_batch": 256,
                         "throughput_samples": 3, "train_samples": 640}},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
                 "epochs": 5,
                 "params": {"warmup_calls": 20, "latency_calls": 200, "throughput_batch": 1024,
                            "throughput_samples": 5},
                 # on 2 CPU cores: none. The digits MLP was measured here until 2026-12-05
                 # (13 of the 2027.03 run's 171 minutes) and answered nothing: its speed in
                 # bf16 is per-call overhead and, on a CPU without bf16 units, emulation, and
                 # its 0.2 MiB of weights are too small for memory to show. Precision on a
                 # CPU is the full suite's: the real-size models' memory in fp32 and bf16.
                 # Asked for by name (--workload mlp-digits), the MLP trains as it did: fp32
                 # and bf16 (fp16 is a GPU question) for the 20 epochs training gives it.
                 "cpu": {"workloads": [], "precisions": ("fp32", "bf16"), "epochs": 20}},
    # machine: bf16 against fp32 at real size, serving (batch 1 and the serving batch) and
    # training steps in every system, on whatever units the CPU has (a CPU without bf16
    # units says so: dlbench.core.machine.cpu_flags.bf16_units). BERT-base is planned and left to
    # the full suite (standard_cpu_cuts.MACHINE_CUTS: its time)
    "machine": {"workloads": [], "epochs": 20, "precisions": ("fp32", "bf16"),
                "params": {"warmup_calls": 20, "latency_calls": 200, "throughput_batch": 1024,
                           "throughput_samples": 5},
                "real_size": ["resnet50-synthetic", "bert-base-tokens"],
                # one steady epoch (4 steps) after the first, per process
                "real_size_params": {"epochs": 2}},
    # machine, accuracy loss: the digits MLP trained to its target in bf16 beside fp32 from
    # the same weights and order in the same process (accuracy_change_vs_fp32: paired by
    # seed), SEEDS processes per system; and fp16 at real size where the CPU has fp16 units

    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
             "epochs": 10,
             "data_size": "large",
             "params": {"warmup_calls": 50, "latency_calls": 500, "throughput_batch": 4096,
                        "throughput_samples": 10},
             # on a CPU, the real-size models in fp32 and bf16: working memory where the
             # model's own memory dominates the runtime's
             "cpu": {"real_size": list(REAL_SIZE_WORKLOADS)}},
}

GRID["machine"] |= {"workloads": ["mlp-digits"], "accuracy_precisions": ("bf16",), "seeds": 8,
                    "real_size_precisions": ("fp32", "bf16", "fp16")}


def fp16_unsupported(device: str, precision: str,
                     features: dict[str, bool] | None = None) -> dict:
    """{UNSUPPORTED: why} for an fp16 cell on a CPU without fp16 units (`features`: a CPU's
    isa_features; None: this machine's, as the plan is made where it is measured); {}
    otherwise."""
    if precision != "fp16" or device != "cpu":
        return {}
    features = isa_features(cpu_flags()) if features is None else features
    return {} if fp16_units(features) else {UNSUPPORTED: NO_FP16_UNITS}


def on_cpu(cells: list[CellSpec], features: dict[str, bool]) -> list[CellSpec]:
    """`cells` as a CPU with `features` would plan them: each CPU fp16 cell measured where
    that CPU has fp16 units, unsupported where it has none. A projection for another machine
    kind needs it: this machine's flags decided the plan (an AMD EPYC without AVX-512 FP16
    plans no fp16 cell; an Intel Xeon with it measures five ResNet-50 ones)."""
    planned = []
    for cell in cells:
        if cell.experiment == "precision" and cell.precision == "fp16":
            params = {k: v for k, v in cell.params.items()
                      if not (k == UNSUPPORTED and v == NO_FP16_UNITS)}
            if UNSUPPORTED not in params:
                params |= fp16_unsupported(cell.device, cell.precision, features)
            cell = replace(cell, params=params)
        planned.append(cell)
    return planned


def plan(request: RunRequest) -> list[CellSpec]:
    """One cell per workload, framework and precision, at the workload's batch size (a
    dlbench.runner.models workload's at the device's size profile, as in training)."""
    from dlbench.runner.workloads.catalog import device_batch_size, get_workload

    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or [*grid["workloads"], *grid.get("real_size", [])]:
        workload = get_workload(name)
        batch_size = device_batch_size(workload, request.device)
        params = dict(grid["params"], epochs=grid["epochs"])
        precisions = grid.get("accuracy_precisions") or grid.get("precisions", PRECISIONS)
        timeout_s, seeds = 600.0, grid.get("seeds")
        if real_size.is_real_size(name):  # few steps and test samples, the serving batch
            params = (real_size.inference_params(name) | real_size.training_params(name)
                      | {NO_ACCURACY_PARAM: True} | grid.get("real_size_params", {}))
            precisions = grid.get("real_size_precisions", REAL_SIZE_PRECISIONS)
            timeout_s, seeds = real_size.TIMEOUT_S, None
        elif workload.dataset == "synthetic-images" and "data_size" in grid:
            params["data_size"] = grid["data_size"]
        for framework in request.systems:
            for precision in precisions:
                mode = "mixed" if precision != "fp32" else "default"
                cell = request.cell(
                    "precision", name, framework, timeout_s=timeout_s, precision=precision,
                    mode=mode, batch_size=batch_size,
                    params=params | not_measured_params(request, framework, mode, "precision",
                                                        name)
                    | fp16_unsupported(request.device, precision))
                cells.append(replace(cell, repeats=seeds) if seeds and not request.repeats
                             else cell)
    return cells


EXPERIMENT = Experiment("precision", plan)
