"""Progress lines for a log: one line per finished process with what remains, throttled,
and printed by a real run whose stdout is not a terminal."""

from __future__ import annotations

import io
from dataclasses import replace

from dlbench.runner.cell.outcome import failed, skipped
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.commands.progress_lines import ProgressLines, lines_wanted, remaining_words
from dlbench.runner.driver.store.run_store import CellRecord


def record(workload: str, status=skipped, wall: float = 3.25, index: int = 0) -> CellRecord:
    spec = CellSpec("training", workload, "pytorch", "", "cpu", repeats=3, repeat_index=index)
    return CellRecord(spec, status("why"), "2026-01-01T00:00:00Z", wall, "", "x.py", "0")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_each_finished_process_is_told_with_what_remains_at_most_every_few_seconds():
    stream, clock = io.StringIO(), Clock()
    lines = ProgressLines(total=5, done=1, stream=stream, min_interval_s=5.0, clock=clock)
    lines.finished([record("mlp-digits")], remaining_s=600)
    first = stream.getvalue()
    assert first == ("[2/5] training:mlp-digits:pytorch:fp32-default-b0:cpu process 0: "
                     "skipped in 3.2 s; about 10 min left\n")
    clock.now = 2.0  # within the interval: held back
    lines.finished([record("cnn-digits", failed, index=1)], remaining_s=300)
    clock.now = 4.0
    lines.finished([record("lstm-tokens", index=2)], remaining_s=30)
    assert stream.getvalue() == first
    clock.now = 9.0
    lines.finished([record("mlp-digits", index=1)], remaining_s=0)
    second = stream.getvalue()[len(first):]
    assert second.startswith("[5/5] 3 processes finished (1 failed, 2 skipped), the last "
                             "training:mlp-digits")
    assert second.endswith("process 1: skipped in 3.2 s; nothing left to measure\n")
    lines.flush()  # nothing held: nothing more
    assert stream.getvalue() == first + second


def test_the_last_held_processes_are_told_when_the_run_ends():
    stream, clock = io.StringIO(), Clock()
    lines = ProgressLines(total=2, done=0, stream=stream, clock=clock)
    lines.finished([record("mlp-digits")], remaining_s=90)
    lines.finished([record("cnn-digits")], remaining_s=0)
    assert stream.getvalue().count("\n") == 1
    lines.flush()
    assert stream.getvalue().splitlines()[-1].startswith("[2/2] training:cnn-digits")


def test_lines_are_printed_where_no_bar_is_drawn():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert lines_wanted(True, io.StringIO())  # a file or a pipe
    assert not lines_wanted(True, Terminal())  # the bar shows progress
    assert lines_wanted(False, Terminal())  # --no-progress
    assert remaining_words(59) == "under a minute left"
    assert remaining_words(150) == "about 2 min left"


def test_a_run_into_a_pipe_prints_a_line_per_process(tmp_path, capsys):
    """The unsupported Keras-on-torch data-parallel cell: recorded without a worker."""
    from dlbench.runner.driver.commands.run import run_cells
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.driver.store.run_store import RunStore

    request = RunRequest(suite="quick", experiments=["data-parallel"], workloads=[],
                         frameworks=["keras-torch"], device="cpu", repeats=2, threads=1,
                         timeout_s=None, data_dir="")
    cells = plan_cells(request, "cpu")
    store = RunStore(tmp_path / "runs" / "20260101T000000Z-cpu")
    store.root.mkdir(parents=True)
    run_cells(store, request, "cpu", [replace(c, repeats=2) for c in cells], progress=True,
              busy_retries=0, seed=1)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[1/2] data-parallel:mlp-digits:keras-torch:")
    assert out[0].endswith("process 0: unsupported in 0.0 s; nothing left to measure")
    assert out[1].startswith("[2/2] data-parallel:mlp-digits:keras-torch:")
    assert out[1].endswith("process 1: unsupported in 0.0 s; nothing left to measure")
