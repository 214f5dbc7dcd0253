"""Faults while saving: a disk that fills during a run ends it in one line with what was
saved kept, and `--resume` finishes it once space is free; results and release files get the
umask's mode; a full or read-only disk under `dlbench build` and `publish` is one line and
leaves the site and releases as they were."""

from __future__ import annotations

import json
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from dlbench.core.storage.tables import read_table
from tests.site_fixtures import GOLDEN, RUN_A, RUN_B, freeze, golden_results, site_config
from tests.small_disk import SmallDisk
from tests.test_processes import DLBENCH

ROOT = Path(__file__).resolve().parent.parent
TINY_RUN = ["run", "--experiment", "training", "--workload", "mlp-digits", "--framework",
            "pytorch", "--repeats", "3", "--threads", "1", "--device", "cpu",
            "--busy-retries", "0", "--no-progress"]
FULL = re.compile(
    r"dlbench: error: cannot save (?:the record of|the tables after|the code files of) process "
    r"training:\S+#\d to (?P<path>\S+): No space left on device \((?P<free>\S+ \S+) free "
    r"there\); kept (?P<kept>\d+) saved process(?:es)?: free space or make the folder "
    r"writable, then `dlbench run --resume (?P<run>\S+)`")


@pytest.fixture
def disk(tmp_path: Path):
    """A 4 MiB disk that a test can fill."""
    small = SmallDisk(tmp_path / "disk", "4m")
    yield small
    small.close()


def error_line(stderr: str) -> str:
    """The one line a failed command printed about its error: nothing else said 'error'."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if "error" in line.lower()]
    assert len(lines) == 1 and stderr.strip().endswith(lines[0]), stderr
    print(lines[0])  # as the user sees it (pytest -s)
    return lines[0]


def wait_for(condition, driver: subprocess.Popen, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert driver.poll() is None, driver.communicate()[1]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def modes(root: Path) -> set[str]:
    """The permission bits of every file and folder under `root` ('f644', 'd755')."""
    return {("d" if p.is_dir() else "f") + oct(stat.S_IMODE(p.stat().st_mode))[2:]
            for p in root.rglob("*")}


@pytest.mark.slow
def test_a_disk_full_mid_run_is_one_line_keeps_what_was_saved_and_resume_finishes(disk):
    results = disk.root / "results"
    driver = subprocess.Popen([*disk.command, *TINY_RUN, "--results-dir", str(results)],
                              cwd=ROOT, env=disk.env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True, umask=0o002)
    wait_for(lambda: list(results.glob("runs/*/processes/*.json")), driver)  # one process saved
    disk.fill()
    _, stderr = driver.communicate(timeout=300)
    assert driver.returncode == 2, stderr
    line = FULL.fullmatch(error_line(stderr))
    assert line and Path(line["path"]).is_relative_to(results), stderr
    assert line["free"] == "0 bytes" or not disk.mounted
    run = results / "runs" / line["run"]
    kept = sorted((run / "processes").glob("*.json"))
    assert len(kept) == int(line["kept"]) >= 1  # what was saved stays
    assert not [p for p in run.rglob("*") if p.name.endswith(".tmp")]  # nothing half-written
    started = {p.name: json.loads(p.read_text())["started_at"] for p in kept}

    disk.free()
    resumed = subprocess.run([*disk.command, "run", "--resume", run.name, "--no-progress",
                              "--busy-retries", "0", "--results-dir", str(results)],
                             cwd=ROOT, env=disk.env,
                             capture_output=True, text=True, timeout=300, umask=0o002)
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    assert sorted(read_table(run / "processes.parquet", "processes")["repeat"]) == [0, 1, 2]
    for name, when in started.items():  # kept, not measured again
        assert json.loads((run / "processes" / name).read_text())["started_at"] == when
    assert modes(run) == {"f664", "d775"}  # what umask 002 gives, shared with a group


def test_release_files_get_the_umasks_mode_even_from_private_run_files(tmp_path):
    results = golden_results(tmp_path)
    for path in (results / "runs").rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)  # as runs were written before
    done = subprocess.run(
        [*DLBENCH, "publish", "2026.12", "--run", RUN_A, "--run", RUN_B,
         "--local", "--preview", "--results-dir", str(results), "--out",
         str(tmp_path / "site_src"), "--config", str(site_config(tmp_path, tmp_path / "site_src")),
         "--pages-repo", str(tmp_path / "pages"), "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT, capture_output=True, text=True, timeout=600, umask=0o022)
    assert done.returncode == 0, done.stderr
    assert modes(results / "releases") == {"f644", "d755"}
    assert modes(tmp_path / "site_src") == {"f644", "d755"}


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def _build(disk: SmallDisk, results: Path, cache: Path, *runs: str
           ) -> subprocess.CompletedProcess:
    run_args = [arg for run in runs for arg in ("--run", run)]
    return subprocess.run([*disk.command, "build", *run_args, "--results-dir", str(results),
                           "--out", str(disk.root / "site_src"), "--cache-dir", str(cache)],
                          cwd=ROOT, env=disk.env, capture_output=True, text=True, timeout=300)


def test_a_build_on_a_full_disk_is_one_line_and_leaves_the_site_as_it_was(disk, tmp_path):
    results, cache = golden_results(tmp_path), tmp_path / "cache"
    assert _build(disk, results, cache, RUN_A).returncode == 0
    before = _tree(disk.root / "site_src")
    disk.fill()
    done = _build(disk, results, cache, RUN_A, RUN_B)
    assert done.returncode == 2
    site = re.escape(str(disk.root / "site_src"))
    assert re.fullmatch(rf"dlbench: error: cannot save the site to {site}/\S+: No space left "
                        rf"on device \(\S+ \S+ free there\); {site}/ is left as it was",
                        error_line(done.stderr))
    assert _tree(disk.root / "site_src") == before  # never half a site where mkdocs would publish it
    left = sorted(p.name for p in disk.root.iterdir() if p.name != "ballast")
    assert left == ["site_src"]  # no staged tree left beside it


def test_a_build_into_a_read_only_folder_is_one_line(tmp_path):
    read_only = SmallDisk(tmp_path / "ro", "1m", read_only=True)
    try:
        if not read_only.mounted:
            pytest.skip("no read-only tmpfs can be mounted here")
        done = _build(read_only, golden_results(tmp_path), tmp_path / "cache", RUN_A)
        assert done.returncode == 2
        site = re.escape(str(read_only.root / "site_src"))
        assert re.fullmatch(rf"dlbench: error: cannot save the site to {site}: Read-only file "
                            rf"system \(\S+ \S+ free there\); {site}/ is left as it was",
                            error_line(done.stderr))
    finally:
        read_only.close()


def test_publish_on_a_full_disk_is_one_line_and_leaves_no_release(disk, tmp_path):
    results = disk.root / "results"
    shutil.copytree(GOLDEN, results)
    config = site_config(tmp_path, tmp_path / "site_src")
    disk.fill()
    done = subprocess.run(
        [*disk.command, "publish", "2026.12", "--run", RUN_A, "--local", "--preview",
         "--results-dir", str(results), "--config", str(config), "--out",
         str(tmp_path / "site_src"), "--pages-repo", str(tmp_path / "pages")],
        cwd=ROOT, env=disk.env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    releases = results / "releases"
    where = re.escape(str(releases))
    assert re.fullmatch(rf"dlbench: error: cannot save release 2026.12 to {where}/2026.12/"
                        rf"\S+: No space left on device \(\S+ \S+ free there\); nothing of it "
                        rf"is left in {where}", error_line(done.stderr))
    assert not releases.exists() or not list(releases.iterdir())
    disk.free()
    assert freeze(results, "2026.12", [RUN_A], "2026-12-01").is_dir()  # and it can be made
