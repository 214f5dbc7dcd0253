"""What the evidence of a verdict can show on its device: measurability and regime.

Pure functions over a run's environment record and its tables. A need that is not met gives
a reason (words for the page); a met need gives None.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping

import pandas as pd

from dlbench.core.judging.regime import Regime, regime_of
from dlbench.core.text.words import plural

#: The model's working memory; a run without it has only the process's high-water mark.
WORKING_MEMORY = "working_memory"

#: The model's own memory (runner: model_memory) must be at least this many times the
#: runtime overhead (working memory beyond it) for working memory to compare models.
MODEL_MEMORY_FACTOR = 10.0

#: CPU flags (environment.json cpu record) that give a CPU arithmetic units for a precision.
HALF_PRECISION_FLAGS = {"fp16": ("avx512_fp16", "amx_fp16"),
                        "bf16": ("avx512_bf16", "amx_bf16", "amx")}

OPTIONAL_PACKAGE = re.compile(r"needs the ([\w.-]+) package, which is not installed"
                              r"|No module named '([\w.]+)'")


class Need(enum.Enum):
    """What a rule needs of the device to be decidable there."""

    TWO_DEVICES = "two_devices"
    HALF_PRECISION_UNITS = "half_precision_units"
    WORKING_MEMORY = "working_memory"
    #: the model's own memory at least MODEL_MEMORY_FACTOR times the runtime overhead, for a
    #: question about the model's memory (a precision's), not about a framework's
    MODEL_MEMORY_DOMINATES = "model_memory_dominates"

#: The metric a MODEL_MEMORY_DOMINATES question also reads.
MODEL_MEMORY = "model_memory"


def two_devices_reason(device: str, environment: Mapping) -> str | None:
    """Why data parallelism cannot show here, or None with two real devices: two GPUs, or on
    a CPU two cores of its own (a physical core per worker: each of 2 workers of 1 thread has
    one, as the single worker of 2 threads it is compared with has both)."""
    if device == "cpu":
        cores = cpu_cores(environment)
        if cores >= 2:
            return None
        return (f"data parallelism needs 2 real devices; this CPU has {cores} physical "
                f"core{'' if cores == 1 else 's'} it may use, so 2 workers would share one")
    gpus = environment.get("gpus") or []
    if len(gpus) < 2:
        return f"data parallelism needs 2 real devices; this machine has {len(gpus)} GPU"
    return None


def cpu_cores(environment: Mapping) -> int:
    """The physical cores a run could use (environment.json cpu record): the usable logical
    cores, no more than the physical ones (SMT siblings share a core's units); 0 unknown."""
    cpu = environment.get("cpu") or {}
    counts = [int(cpu[key]) for key in ("usable_cores", "physical_cores", "logical_cores")
              if cpu.get(key)]
    return min(counts) if counts else 0


def half_precision_reason(precision: str, device: str, environment: Mapping) -> str | None:
    """Why `precision` cannot be faster on this CPU (no arithmetic units for it), or None."""
    flags = HALF_PRECISION_FLAGS.get(precision)
    if device != "cpu" or not flags:
        return None
    cpu = environment.get("cpu") or {}
    if any(cpu.get(flag) for flag in flags):
        return None
    return (f"this CPU has no {precision} arithmetic units (none of the CPU flags "
            f"{', '.join(flags)} is recorded), so {precision} is emulated in fp32")


def working_memory_reason(metrics: set[str]) -> str | None:
    """Why memory cannot be judged from these metrics, or None when working memory is there."""
    if WORKING_MEMORY in metrics:
        return None
    return ("only the process's peak memory was recorded (imports, data and model together), "
            "not the model's working memory")


def overhead_memory_reason(rows: pd.DataFrame) -> str | None:
    """Why working memory cannot compare these cells' models: a cell whose model memory is
    under MODEL_MEMORY_FACTOR times its runtime overhead (its working memory beyond the
    model's own), so the framework's overhead, not the model, decides; None otherwise."""
    wanted = rows[rows["metric"].isin([WORKING_MEMORY, "model_memory"])]
    per_cell = wanted.groupby(["cell_id", "metric"])["value"].median().unstack()
    if "model_memory" not in per_cell or per_cell["model_memory"].isna().any():
        return ("the model's own memory was not recorded with these cells, so whether the "
                "runtime overhead dominates their working memory is unknown")
    overhead = (per_cell[WORKING_MEMORY] - per_cell["model_memory"]).clip(lower=0)
    short = per_cell[per_cell["model_memory"] < MODEL_MEMORY_FACTOR * overhead]
    if short.empty:
        return None
    return (f"the model's own memory ({short['model_memory'].max():.2g} MiB of weights, "
            f"gradients and momentum) is under {MODEL_MEMORY_FACTOR:.0f}x the runtime overhead "
            f"(up to {overhead[short.index].max():.3g} MiB of working memory beyond it) in "
            f"{len(short)} of {plural(len(per_cell), 'cell')}: the working memory measures the "
            f"framework, not the model")


def optional_package(status: str, reason: str) -> str | None:
    """The optional package a cell lacked, when that is why it did not run; else None."""
    if status == "ok":
        return None
    found = OPTIONAL_PACKAGE.search(str(reason or ""))
    return (found.group(1) or found.group(2)) if found else None


def regime_of_cells(fractions: Mapping[tuple[str, str], float],
                    keys: list[tuple[str, str]]) -> tuple[Regime, float]:
    """The regime of a comparison: from the highest achieved fraction among its cells."""
    known = [fractions[k] for k in keys if k in fractions]
    if not known or len(known) < len(keys):
        return Regime.NOT_RECORDED, math.nan
    return regime_of(max(known)), max(known)
