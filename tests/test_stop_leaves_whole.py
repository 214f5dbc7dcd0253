"""A stop at any moment leaves every folder as it was or whole: a build's output holds its
marker from the moment the tree is in place (a later build or deploy takes it), SIGTERM
to `serve` leaves no temporary site behind, and SIGTERM while mike deploys (to dlbench or
to its whole group) leaves neither mike's configs nor its site."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.report.site.outputs import MARKER
from tests.site_fixtures import ROOT, RUN_A, freeze, golden_results, site_config


def test_a_stop_right_after_the_tree_is_swapped_in_leaves_it_marked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from dlbench.report.site import cache

    results = golden_results(tmp_path)
    out = tmp_path / "out"
    real = cache.swap_in

    def swapped_then_stopped(out_dir: Path, staging: Path) -> None:
        real(out_dir, staging)
        raise KeyboardInterrupt  # Ctrl-C the moment the tree is in place

    monkeypatch.setattr(cache, "swap_in", swapped_then_stopped)
    argv = ["build", "--run", RUN_A, "--results-dir", str(results), "--out", str(out),
            "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 130
    assert (out / "index.md").is_file() and (out / MARKER).read_text() == "build\n"
    monkeypatch.setattr(cache, "swap_in", real)
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err  # the folder is build's own


def test_sigterm_to_serve_leaves_no_temporary_site(tmp_path: Path) -> None:
    import signal

    serve_stopped(tmp_path, signal.SIGTERM)


def serve_stopped(tmp_path: Path, stop: int) -> None:
    """Start `dlbench serve` of a release, stop it with signal `stop` once it serves: no
    traceback, and the temporary site it served is gone."""
    results = golden_results(tmp_path)
    freeze(results, "2026.12", [RUN_A], "2026-12-01")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    command = [sys.executable, "-m", "dlbench.cli", "serve", "--port", "0",
               "--results-dir", str(results), "--pages-repo", str(tmp_path / "pages"),
               "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "site_src"),
               "--templates", str(ROOT / "templates"),
               "--config", str(site_config(tmp_path, tmp_path / "site_src"))]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path,
                              env=os.environ | {"PYTHONPATH": str(ROOT), "TMPDIR": str(temporary),
                                                "PATH": f"{Path(sys.executable).parent}:"
                                                        f"{os.environ.get('PATH', '')}"})
    try:
        line = next((text for text in server.stdout if "serving" in text), "")
        assert re.search(r"serving the versioned site at http://127\.0\.0\.1:\d+/", line), \
            server.stderr.read()
        assert list(temporary.iterdir())  # the site it serves is there while it serves
    finally:
        server.send_signal(stop)
        server.wait(timeout=30)
        error = server.stderr.read()
        server.stdout.close()
        server.stderr.close()
    assert "Traceback" not in error, error
    assert not list(temporary.iterdir()), list(temporary.iterdir())


@pytest.mark.parametrize("whom", ["dlbench", "group"])
def test_sigterm_while_mike_deploys_leaves_no_config_or_site_behind(tmp_path: Path,
                                                                   whom: str) -> None:
    """SIGTERM to dlbench alone, or to its whole process group as `timeout` or a service
    manager sends it (mike started by an unprotected deploy got it too, and its end was a
    traceback)."""
    import signal
    import time

    results = golden_results(tmp_path)
    freeze(results, "2026.12", [RUN_A], "2026-12-01")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    config = site_config(tmp_path, tmp_path / "site_src")
    command = [sys.executable, "-m", "dlbench.cli", "deploy", "--results-dir", str(results),
               "--pages-repo", str(tmp_path / "pages"), "--cache-dir", str(tmp_path / "cache"),
               "--out", str(tmp_path / "site_src"), "--templates", str(ROOT / "templates"),
               "--config", str(config)]
    deploy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path,
                              env=os.environ | {"PYTHONPATH": str(ROOT), "TMPDIR": str(temporary),
                                                "PATH": f"{Path(sys.executable).parent}:"
                                                        f"{os.environ.get('PATH', '')}"},
                              start_new_session=True)  # its own group, as a shell's job is
    deadline = time.monotonic() + 240
    while not list(config.parent.glob("mike-mkdocs*.yml")) and deploy.poll() is None:
        assert time.monotonic() < deadline, "mike never started"
        time.sleep(0.02)
    if whom == "dlbench":
        deploy.send_signal(signal.SIGTERM)  # to dlbench alone, while mike builds the site
    else:
        os.killpg(deploy.pid, signal.SIGTERM)
    with deploy.stderr:
        error = deploy.stderr.read()
    assert deploy.wait(timeout=60) == 130, error
    assert "Traceback" not in error, error
    left = (list(config.parent.glob("mike-mkdocs*.yml")),
            list(config.parent.glob(".mkdocs-*.yml")), list(temporary.iterdir()))
    assert left == ([], [], []), left  # configs beside the config, a site in the temp folder
