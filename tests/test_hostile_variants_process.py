"""New variants of issue 65's attacks on signals, terminals, child processes, dates, exports
and `serve` (parts 6, 8, 9 and 10): each a different signal, control sequence, process
shape, digit set, path, disk state, connection or file than the case it varies, through
the real CLI, build, server or check. Each holds: one clear line (or a quiet end), every
folder as it was or whole, nothing left running."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from dlbench.cli import main
from dlbench.report.site.outputs import MARKER
from tests.site_fixtures import ROOT, RUN_A, RUN_B, freeze, golden_results
from tests.test_child_processes import _ended, _pid_in
from tests.test_export_faults import (RUN, _export, _refused, _small_disk, export_stopped,
                                      results)  # noqa: F401
from tests.test_hostile_runs import _erratum, failure_summary
from tests.test_serve_load import served  # noqa: F401
from tests.test_stop_leaves_whole import serve_stopped

def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


# --- part 6: a stop leaves every folder as it was or whole -----------------------------

def test_ctrl_c_before_the_tree_is_swapped_in_leaves_the_last_build_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """The case stops right after the swap; this stops just before it, over an earlier
    build: that build stays, marked, and no staging folder is left beside it."""
    from dlbench.report.site import cache

    results = golden_results(tmp_path)
    out = tmp_path / "out"
    argv = ["build", "--run", RUN_A, "--results-dir", str(results), "--out", str(out),
            "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 0
    before = _tree(out)

    def stopped_before_swap(out_dir: Path, staging: Path) -> None:
        assert staging.is_dir() and (staging / "index.md").is_file()
        raise KeyboardInterrupt

    monkeypatch.setattr(cache, "swap_in", stopped_before_swap)
    assert main([*argv[:2], RUN_B, *argv[3:]]) == 130  # another run: a tree to swap in
    assert _tree(out) == before and (out / MARKER).is_file()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    capsys.readouterr()


def test_a_closed_terminal_sighup_to_serve_leaves_no_temporary_site(tmp_path: Path) -> None:
    """The case sends SIGTERM; closing the terminal `serve` runs in sends SIGHUP."""
    serve_stopped(tmp_path, signal.SIGHUP)


# --- part 8: terminal text and child processes -------------------------------------------

def test_a_failure_message_that_moves_the_cursor_or_erases_is_shown_inert(
        tmp_path: Path, capsys) -> None:
    """The case's escape sets the window title (OSC); these are CSI sequences (erase the
    screen, move the cursor), an 8-bit CSI, a carriage return and backspaces that would
    overwrite what the line says."""
    reason = "boom\x1b[2J\x1b[H\x9b31mred\rall cells ok\x08\x08\x08\x1b[8m"
    shown = failure_summary(tmp_path, reason, capsys)
    for raw in ("\x1b[2J", "\x1b[H", "\x9b", "\r", "\x08", "\x1b[8m"):
        assert raw not in shown, (raw, shown)
    assert "boom" in shown and "all cells ok" in shown


def test_help_to_a_reader_gone_away_ends_quietly() -> None:
    """The case is `dlbench code latest | head -1`; this is a command's --help, which
    argparse prints and exits on before any command runs, to a reader already gone."""
    reader = subprocess.Popen([sys.executable, "-m", "dlbench.cli", "publish", "--help"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    reader.stdout.close()
    with reader.stderr:
        error = reader.stderr.read().decode()
    assert reader.wait(timeout=60) == 0, error
    assert "Traceback" not in error and "BrokenPipe" not in error, error


def test_a_builders_child_that_ignores_sigterm_and_hangup_is_ended(tmp_path: Path) -> None:
    """The case's child just sleeps; this one ignores the polite signals, as a daemon
    would."""
    from dlbench.runner.driver.user_model.preparation import run_in_own_group

    pidfile = tmp_path / "child.pid"
    script = f"sh -c \"trap '' TERM HUP INT; sleep 300\" & echo $! > {pidfile}; echo built"
    started = time.monotonic()
    output = run_in_own_group(["sh", "-c", script], dict(os.environ), tmp_path, 30,
                              tmp_path / "log.txt")
    assert output == "built\n" and time.monotonic() - started < 20
    assert _ended(_pid_in(pidfile))


def test_a_builders_grandchild_orphaned_to_init_is_ended(tmp_path: Path) -> None:
    """The case's child is the builder's own; here the child forks a grandchild and exits,
    so the grandchild is init's, no longer the builder's descendant."""
    from dlbench.runner.driver.user_model.preparation import run_in_own_group

    pidfile = tmp_path / "grandchild.pid"
    script = (f"(sh -c 'sleep 300 & echo $! > {pidfile}; wait' &); "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done; echo built")
    output = run_in_own_group(["sh", "-c", script], dict(os.environ), tmp_path, 30,
                              tmp_path / "log.txt")
    assert output == "built\n"
    assert _ended(_pid_in(pidfile))


# --- part 9: dates and exports -------------------------------------------------------------

ARABIC_INDIC = "\u0662\u0660\u0662\u0666-\u0661\u0662-\u0660\u0661"  # 2026-12-01
FULLWIDTH = "\uff12\uff10\uff12\uff17-\uff10\uff11-\uff10\uff11"  # 2027-01-01


def test_an_erratum_dated_in_other_digits_is_refused(tmp_path: Path, capsys) -> None:
    """The case's date is '20261201'; this one is YYYY-MM-DD in Arabic-Indic digits, which a
    regular expression's \\d takes."""
    results = golden_results(tmp_path)
    freeze(results, "2026.12", [RUN_A], "2026-12-01")
    errata = results / "releases" / "2026.12" / "errata.yml"
    before = errata.read_bytes() if errata.exists() else None
    error = _refused(_erratum(results, "--date", ARABIC_INDIC), capsys)
    assert "is not YYYY-MM-DD" in error, error
    assert (errata.read_bytes() if errata.exists() else None) == before


def test_publish_dated_in_fullwidth_digits_is_refused(tmp_path: Path, capsys) -> None:
    results = golden_results(tmp_path)
    error = _refused(["publish", "2027.01", "--run", RUN_A, "--date", FULLWIDTH, "--local",
                      "--results-dir", str(results), "--out", str(tmp_path / "out"),
                      "--pages-repo", str(tmp_path / "pages")], capsys)
    assert "expected YYYY-MM-DD" in error, error
    assert not (results / "releases").exists() or not list((results / "releases").iterdir())
    assert not (tmp_path / "out").exists()


def test_out_through_a_link_into_the_run_is_refused(results: Path, tmp_path: Path,
                                                    capsys) -> None:
    """The case names a folder inside the run; this --out is a link outside it that leads
    into it."""
    run = results / "runs" / RUN
    before = _tree(run)
    link = tmp_path / "exports"
    link.symlink_to(run / "processes", target_is_directory=True)
    error = _refused(_export(results, link), capsys)
    assert "own folder" in error, error
    assert _tree(run) == before


def test_an_out_to_be_made_on_a_read_only_disk_is_one_line(results: Path, tmp_path: Path,
                                                            capsys) -> None:
    """The case's --out is a read-only folder; this one does not exist yet, below one, so
    making it fails first."""
    with _small_disk(tmp_path / "ro", "64k", read_only=True) as disk:
        error = _refused(_export(results, disk.root / "new" / "exports"), capsys)
        assert "Read-only file system" in error, error
        assert not list(disk.root.iterdir())


def test_a_disk_with_room_for_part_of_the_archive_leaves_none(results: Path, tmp_path: Path,
                                                              capsys) -> None:
    """The case's disk is full; this one has room for half the archive, so the write starts
    and fails part-way."""
    whole = tmp_path / "whole"
    assert main(_export(results, whole)) == 0
    size = (whole / f"{RUN}.tar.gz").stat().st_size
    capsys.readouterr()
    with _small_disk(tmp_path / "disk", "1m") as disk:
        _fill_leaving(disk.root / "ballast", size // 2)
        error = _refused(_export(results, disk.root), capsys)
        assert "No space left" in error, error
        assert sorted(p.name for p in disk.root.iterdir()) == ["ballast"]


def _fill_leaving(ballast: Path, room: int) -> None:
    """Write `ballast` until the filesystem has about `room` bytes free."""
    free = os.statvfs(ballast.parent)
    with ballast.open("ab") as out:
        out.write(b"\0" * max(0, free.f_bavail * free.f_frsize - room))


def test_sigint_to_export_run_leaves_no_temporary_file(results: Path, tmp_path: Path) -> None:
    """The case is SIGTERM; this is Ctrl-C, while the archive is packed."""
    export_stopped(results, tmp_path, signal.SIGINT)


# --- part 10: serve under load, and what a run or a --data file may hold ------------------

def _get(port: int, path: str, timeout: float = 10) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as client:
        client.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        reply = b""
        while chunk := client.recv(65536):
            reply += chunk
    return reply


def test_idle_connections_keep_no_reader_waiting(served: int) -> None:
    """The case's 300 readers each ask at once; here 200 connections ask nothing and hold
    their place (a slow or idle client), and a reader after them is still answered."""
    idle = [socket.create_connection(("127.0.0.1", served), timeout=10) for _ in range(200)]
    try:
        started = time.perf_counter()
        assert _get(served, "/").startswith(b"HTTP/1.0 200")
        assert time.perf_counter() - started < 2.0
    finally:
        for client in idle:
            client.close()


def test_300_readers_of_a_missing_page_each_get_the_sites_404(served: int) -> None:
    """The case's readers ask for a page that is there; these ask for one that is not, so
    each reply is the site's own 404 page, found through no link."""
    barrier = threading.Barrier(300)

    def missing(index: int) -> tuple[float, bytes]:
        barrier.wait(timeout=30)
        started = time.perf_counter()
        reply = _get(served, f"/nothing-{index}/", timeout=20)
        return time.perf_counter() - started, reply

    with ThreadPoolExecutor(300) as pool:
        replies = list(pool.map(missing, range(300)))
    assert all(r.startswith(b"HTTP/1.0 404") and b"our own not found" in r for _, r in replies)
    assert max(seconds for seconds, _ in replies) < 10.0


def test_a_reader_that_resets_mid_request_leaves_no_traceback(served: int, capsys) -> None:
    """The case resets mid-download; this client resets while still sending its request
    line and headers."""
    for partial in (b"GET /ind", b"GET / HTTP/1.0\r\nHost: 127.0", b"G"):
        client = socket.create_connection(("127.0.0.1", served), timeout=10)
        client.sendall(partial)
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()
    time.sleep(0.5)
    assert _get(served, "/").startswith(b"HTTP/1.0 200")
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out, captured.err[-500:]


def _lying_npz(path: Path) -> Path:
    """A .npz of 2 kB whose x and y headers declare 32 GiB of float64 each."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (1 << 28, 16)})
    with zipfile.ZipFile(path, "w") as archive:
        for name in ("x.npy", "y.npy"):
            archive.writestr(name, header.getvalue() + b"\0" * 128)
    return path


def test_a_data_file_whose_headers_declare_more_than_it_holds_is_refused(
        tmp_path: Path, capsys) -> None:
    """The case's arrays truly unpack to gigabytes; these hold 128 bytes each while their
    .npy headers declare 32 GiB, which loading them would allocate."""
    model = tmp_path / "model.py"
    model.write_text("def build():\n    raise SystemExit('never built')\n")
    error = _refused(["run", "--model", f"{model}:build", "--data", str(_lying_npz(tmp_path / "x.npz")),
                      "--results-dir", str(tmp_path / "results"), "--no-progress"], capsys)
    assert "declares 34359738368 bytes but holds 128" in error and "x.npz" in error, error
    assert not (tmp_path / "results").exists()
    from dlbench.runner.cell.model_source import npz_shapes

    for save in (np.savez, np.savez_compressed):  # what numpy writes passes the check
        save(tmp_path / "real.npz", x=np.zeros((64, 16), np.float32), y=np.arange(64))
        assert npz_shapes(tmp_path / "real.npz") == {"x": (64, 16), "y": (64,)}


def _with_environment(results: Path, tmp_path: Path, environment: dict) -> Path:
    from dlbench.core.storage.run_archive import pack_run

    run = results / "runs" / RUN
    (run / "environment.json").write_text(json.dumps(environment))
    return pack_run(run, tmp_path / "packed")


@pytest.mark.parametrize("environment, expected", [
    ({"cpu": {"model": "x", "k" * 10_000: "1"}}, "a key of 10000 characters"),
    ({"cpu": {"model": "x"}, "frameworks": {"torch": "2", "t" * 10_000: "1"}},
     "a key of 10000 characters"),
])
def test_a_long_key_deeper_in_the_environment_is_refused(results: Path, tmp_path: Path, capsys,
                                                         environment: dict,
                                                         expected: str) -> None:
    """The case's long key is a package's name; these sit in the CPU's facts and in the
    frameworks' table, one level deeper."""
    archive = _with_environment(results, tmp_path, environment)
    error = _refused(["import-run", str(archive), "--results-dir", str(tmp_path / "in")],
                     capsys)
    assert expected in error, error
    assert not (tmp_path / "in" / "runs").exists() or not list((tmp_path / "in" / "runs").iterdir())


def test_a_signal_ignored_at_the_start_stays_ignored() -> None:
    """`nohup dlbench serve &` ignores SIGHUP: closing the terminal must not end it, while
    SIGTERM still ends it as Ctrl-C does."""
    from dlbench.cli.signals import terminate_as_interrupt

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with terminate_as_interrupt("serve"):
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            with pytest.raises(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)
