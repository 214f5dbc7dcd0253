"""A model's child processes end with it: a worker whose forward forked leaves nothing alive
after its cell, and a model builder whose child holds its output is neither misreported as
a timeout nor left running."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _ended(pid: int) -> bool:
    """Whether process `pid` is gone (or a zombie) within a few seconds."""
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _pid_in(path: Path) -> int:
    deadline = time.monotonic() + 10
    while not path.is_file() or not path.read_text().strip():
        assert time.monotonic() < deadline, "the child never started"
        time.sleep(0.05)
    return int(path.read_text())


def test_a_worker_that_forked_leaves_no_process_behind(tmp_path: Path) -> None:
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.driver.launch.execute import Launch, _run_worker

    pidfile = tmp_path / "child.pid"
    launch = Launch(prefix=("sh", "-c", f'sleep 300 & echo $! > {pidfile}; exec "$@"', "sh"))
    spec = CellSpec("no-such-experiment", "mlp-digits", "pytorch", "pytorch", "cpu",
                    repeats=1, timeout_s=60)
    ((outcome, _),) = _run_worker([spec], launch)
    assert outcome.status.value == "failed"
    assert _ended(_pid_in(pidfile)), "the worker's child outlived its cell"


def test_a_builder_whose_child_holds_its_output_is_not_a_timeout(tmp_path: Path) -> None:
    from dlbench.runner.driver.user_model.preparation import run_in_own_group

    pidfile = tmp_path / "child.pid"
    started = time.monotonic()
    output = run_in_own_group(["sh", "-c", f"sleep 300 & echo $! > {pidfile}; echo built"],
                              dict(os.environ), tmp_path, 30, tmp_path / "log.txt")
    assert output == "built\n" and time.monotonic() - started < 20
    assert _ended(_pid_in(pidfile))
    assert run_in_own_group([sys.executable, "-c", "import time; time.sleep(60)"],
                            dict(os.environ), tmp_path, 1, tmp_path / "log.txt") is None


def test_a_model_whose_build_forks_a_child_is_refused_with_its_own_error(
        tmp_path: Path) -> None:
    """Through `prepare_model`, as `dlbench run --model` builds: the model's build() starts
    a child that inherits the builder's output and then fails. The builder's own error is
    reported at once (not 'took more than 30 s'), and the child is ended with it."""
    import pytest

    from dlbench.core.text.errors import UsageError
    from dlbench.runner.cell.model_source import model_request
    from dlbench.runner.driver.user_model.preparation import prepare_model

    pidfile = tmp_path / "child.pid"
    model = tmp_path / "forking.py"
    model.write_text("import subprocess\n\n\ndef build():\n"
                     "    child = subprocess.Popen(['sleep', '300'])\n"
                     f"    open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
                     "    raise RuntimeError('no model in this file')\n")
    started = time.monotonic()
    with pytest.raises(UsageError, match="no model in this file"):
        prepare_model(model_request(f"{model}:build", "4", "float32", "", 8), 1, 30)
    assert time.monotonic() - started < 25
    assert _ended(_pid_in(pidfile))
