"""Synthetic result tables in memory for the judging tests: cells, repeats, environments."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

CPU_ENV = {"cpu": {"avx512_bf16": True, "avx512f": True}, "gpus": []}


def bounded(fp32_flops: float, environment: dict = CPU_ENV) -> dict:
    """`environment` on one Intel AVX-512 core (64 fp32 FLOP a cycle, 128 bf16) whose
    measured clock makes its fp32 bound `fp32_flops` (dlbench.core.machine.fma_peak)."""
    cpu = environment["cpu"] | {"vendor": "Intel", "arch": "X86_64", "usable_cores": 1}
    return environment | {"cpu": cpu, "compute_peak": {
        "clock": {"ghz": fp32_flops / 64e9, "method": "test"}}}


def cell_id(experiment: str, workload: str, system: str, variant: str, device: str) -> str:
    """A cell ID in the project's form."""
    return f"{experiment}:{workload}:{system}:{variant}:{device}"


def tables(cells: list[dict], run_id: str = "r1") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Observations and cells tables from dicts: system, values {metric: [..]}, and optional
    experiment, workload, precision, mode, batch_size, workers, export_format, device,
    status, reason, details."""
    cell_rows, observation_rows = [], []
    for spec in cells:
        system = spec["system"]
        framework, _, backend = system.partition("-")
        backend = backend or framework
        key = {"run_id": run_id, "experiment": spec.get("experiment", "training"),
               "workload": spec.get("workload", "mlp-digits"), "framework": framework,
               "backend": backend, "precision": spec.get("precision", "fp32"),
               "mode": spec.get("mode", "default"), "batch_size": spec.get("batch_size", 32),
               "workers": spec.get("workers", 1), "export_format": spec.get("export_format", ""),
               "device": spec.get("device", "cpu")}
        variant = "-".join(str(key[c]) for c in ("precision", "mode", "export_format",
                                                   "workers") if key[c] not in ("", 1))
        variant += "-aa" if spec.get("control") else ""
        key["cell_id"] = cell_id(key["experiment"], key["workload"], system, variant,
                                 key["device"])
        cell_rows.append({**key, "status": spec.get("status", "ok"),
                          "reason": spec.get("reason", ""),
                          "details_json": json.dumps(spec.get("details", {})),
                          "config_json": json.dumps({"control": spec.get("control", "")})})
        for metric, values in spec.get("values", {}).items():
            observation_rows += [{**key, "repeat": i, "step": np.nan, "metric": metric,
                                  "value": float(v)} for i, v in enumerate(values)]
    observations = pd.DataFrame(observation_rows)
    if observations.empty:
        observations = pd.DataFrame(columns=[*cell_rows[0], "repeat", "step", "metric",
                                             "value"])
    return observations, pd.DataFrame(cell_rows)


def noisy(centre: float, seed: int = 0, n: int = 8, spread: float = 0.01) -> list[float]:
    """`n` values around `centre` with relative noise `spread`."""
    rng = np.random.default_rng(seed)
    return list(centre * (1 + rng.normal(0, spread, n)))
