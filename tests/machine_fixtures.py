"""Runs of several machine kinds for the tests: a golden run copied under a new run ID with its
machine record varied (and, where a test needs a winner to change, one system's times
scaled), as a run measured on another CPU would arrive."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from dlbench.core.storage.layout import run_dir
from dlbench.core.storage.tables import read_table, write_table

#: Machine records of the three CPU kinds this project's machines have been.
INTEL_AMX = {"model": "Intel(R) Xeon(R) Processor", "logical_cores": 2, "usable_cores": 2,
             "avx512f": True, "avx512_bf16": True, "avx512_vnni": True, "avx_vnni": True,
             "amx": True}
AMD_AVX512 = {"model": "AMD EPYC 9B14", "logical_cores": 2, "usable_cores": 2,
              "avx512f": True, "avx512_bf16": True, "avx512_vnni": True, "avx_vnni": True,
              "amx": False}
AMD_AVX2 = {"model": "AMD EPYC 7B13", "logical_cores": 2, "usable_cores": 2,
            "avx512f": False, "avx512_bf16": False, "avx512_vnni": False, "avx_vnni": False,
            "amx": False}


def machine_run(results: Path, source_run: str, new_run: str, cpu: dict,
                scale: dict[str, float] | None = None) -> str:
    """Copy run `source_run` to `new_run` with `cpu` as its machine record; `scale` multiplies
    each named framework's times by its factor (framework -> factor), as a CPU on which that
    framework is slower would measure them."""
    source, target = run_dir(results, source_run), run_dir(results, new_run)
    shutil.copytree(source, target)
    info = json.loads((target / "run.json").read_text())
    (target / "run.json").write_text(json.dumps(info | {"run_id": new_run}, indent=2))
    environment = json.loads((target / "environment.json").read_text())
    environment["cpu"] = cpu
    (target / "environment.json").write_text(json.dumps(environment, indent=2))
    for kind in ("cells", "observations"):
        frame = read_table(target / f"{kind}.parquet", kind).assign(run_id=new_run)
        if kind == "observations":
            for framework, factor in (scale or {}).items():
                frame = _slower(frame, framework, factor)
        write_table(frame, target / kind, kind)
    return new_run


def _slower(frame: pd.DataFrame, framework: str, factor: float) -> pd.DataFrame:
    """`framework`'s times multiplied by `factor` and its rates divided by it."""
    mine = frame["framework"] == framework
    times = mine & frame["unit"].isin(["s", "ms"])
    rates = mine & frame["unit"].astype(str).str.endswith("/s")
    frame = frame.copy()
    frame.loc[times, "value"] = frame.loc[times, "value"] * factor
    frame.loc[rates, "value"] = frame.loc[rates, "value"] / factor
    return frame
