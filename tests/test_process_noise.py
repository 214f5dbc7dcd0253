"""benchmarks/process_noise.py works (no figure is asserted): a cell through the real worker
path under a few suspects, two processes each, and the spread line's arithmetic."""

from __future__ import annotations

import importlib.util
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "process_noise.py"


def benchmark():
    spec = importlib.util.spec_from_file_location("benchmark_process_noise", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_spread_line_counts_processes_over_1_25x_the_best():
    line = benchmark().spread_line("baseline", np.array([1.0, 1.1, 1.3, 2.0]), True)
    assert "share > 1.25x best: 50%" in line and "slowest/best 2.00x" in line
    higher = benchmark().spread_line("x", np.array([100.0, 50.0]), False)
    assert "share > 1.25x best: 50%" in higher  # for throughput the lower value is slower
    assert f"{np.std(np.log([1.0, 1.1, 1.3, 2.0]), ddof=1):.3f}" in line


def test_a_suspect_whose_library_is_absent_says_which_package(monkeypatch):
    module = benchmark()
    monkeypatch.setitem(module.LIBRARIES, "jemalloc", ("/nonexistent/libjemalloc.so.2",
                                                      "libjemalloc2"))
    assert "apt-get install libjemalloc2" in module.missing("jemalloc")
    assert module.missing("baseline") == ""


@pytest.mark.slow
def test_the_suspects_launch_the_cell_through_the_worker():
    """One launch with every kind of change a suspect makes (a command prefix, a preexec
    prctl, an environment rewrite), two processes: the worker path still measures."""
    module = benchmark()
    suspects = module.launches()
    launch = replace(suspects["aslr-off"], thp_disabled=True,
                     environment=suspects["small-env"].environment)
    cell = module.the_cell("mlp-latency", "pytorch", 2)
    small = replace(cell, params=cell.params | {"warmup_calls": 2, "latency_calls": 20,
                                                "throughput_batch": 16,
                                                "throughput_samples": 1})
    values = np.asarray([module.measure_once(small, "latency_p50", launch, index)[0]
                         for index in range(2)])
    assert values.shape == (2,) and np.all(values > 0) and not np.any(np.isnan(values))
    assert math.isfinite(float(np.std(np.log(values), ddof=1)))
