"""Steal over the timed window (runner/worker/timed_window.py) and the runner's rule on it
(dlbench.runner.driver.machine.load.with_timed_steal); the latency loop's own cost, subtracted."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.runner.worker.harness.inference import loop_overhead_ms, timed_calls
from dlbench.runner.worker.timed_window import TimedWindow, cpu_ticks
from dlbench.runner.driver.machine.load import MAX_TIMED_STEAL_SHARE, timed_steal_share, with_timed_steal


def write_stat(path: Path, steal: int, idle: int) -> None:
    # user nice system idle iowait irq softirq steal
    path.write_text(f"cpu  100 0 50 {idle} 0 0 0 {steal} 0 0\nprocs_running 1\n")


def test_the_window_sums_steal_over_its_regions_only(tmp_path):
    stat = tmp_path / "stat"
    window = TimedWindow(stat)
    write_stat(stat, steal=0, idle=1000)
    with window:
        write_stat(stat, steal=3, idle=1097)  # 100 ticks, 3 of them stolen
    write_stat(stat, steal=50, idle=2000)  # between regions: not counted
    window.start()
    write_stat(stat, steal=51, idle=2099)
    window.stop()
    assert window.regions == 2 and window.total == 200 and window.steal == 4
    assert window.details() == {"steal_share": 0.02, "regions": 2, "ticks": 200}


def test_no_readable_stat_gives_no_share(tmp_path):
    window = TimedWindow(tmp_path / "absent")
    with window:
        pass
    assert cpu_ticks(tmp_path / "absent") == (0, 0)
    assert window.steal_share is None and window.details()["steal_share"] is None


def test_steal_above_the_limit_in_the_timed_window_makes_a_process_busy():
    details = {"sampling": {"timed_window": {"steal_share": MAX_TIMED_STEAL_SHARE * 2}}}
    machine = with_timed_steal({"busy": [], "steal_share": 0.0}, details)
    assert machine["timed_steal_share"] == pytest.approx(MAX_TIMED_STEAL_SHARE * 2)
    assert len(machine["busy"]) == 1 and "in the timed window" in machine["busy"][0]
    quiet = with_timed_steal({"busy": []}, {"sampling": {"timed_window": {"steal_share": 0.0}}})
    assert quiet["busy"] == [] and quiet["timed_steal_share"] == 0.0
    assert with_timed_steal({"busy": []}, {}) == {"busy": []}  # older workers: no reading
    assert timed_steal_share({}) is None


def test_every_call_is_timed_alone_and_the_empty_loop_costs_little():
    seen = []
    times = timed_calls(seen.append, ["a", "b"], 5, budget_s=10.0)
    assert seen == ["a", "b", "a", "b", "a"] and len(times) == 5
    assert all(t >= 0 for t in times)
    overhead = loop_overhead_ms(["a"], calls=200)
    assert 0 <= overhead < min(times) + 1.0  # an empty call costs no more than a real one
