"""The first-touch rate of fresh memory, read before every worker process and kept in the
processes table (runner/driver/machine/fresh_memory.py)."""

from __future__ import annotations

from dataclasses import replace

from dlbench.runner.driver.machine.fresh_memory import fresh_memory_rate
from dlbench.runner.driver.store.run_frames import processes_frame
from tests.test_record import shared_record


def test_the_rate_is_a_measured_positive_number_of_gib_per_second():
    rates = [fresh_memory_rate(16) for _ in range(3)]
    assert all(rate > 0 for rate in rates)
    assert len(set(rates)) > 1  # measured each time, not a constant


def test_the_processes_table_keeps_each_process_s_reading():
    records = [replace(shared_record(0), machine={"fresh_memory_gibs": 0.41}),
               replace(shared_record(1), machine={})]  # a record from before the reading
    frame = processes_frame(records, "r1")
    assert frame["fresh_memory_gibs"].tolist()[0] == 0.41
    assert frame["fresh_memory_gibs"].isna().tolist() == [False, True]
