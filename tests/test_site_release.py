"""Releases: frozen with checksums, never rewritten; citation files valid CFF 1.2.0."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
import yaml

from dlbench.cli import main
from dlbench.core.storage.releases import ReleaseError, freeze_release, verify_manifest
from dlbench.core.storage.releases import release_names
from dlbench.report.inputs.source import SourceError, load_release
from tests.site_fixtures import (
    ROOT, RUN_A, RUN_B, SITE_URL, freeze, golden_results, site_config,
)

SCHEMA = Path(__file__).parent / "data" / "cff-1.2.0.schema.json"


def _validate_cff(path: Path) -> dict:
    document = yaml.safe_load(path.read_text())
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()),
                                           format_checker=jsonschema.FormatChecker())
    errors = [e.message for e in validator.iter_errors(document)]
    assert not errors, errors
    return document


def test_release_freezes_runs_with_manifest_and_ids(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A, RUN_B], "2026-12-01")
    manifest = json.loads((root / "MANIFEST.json").read_text())
    assert f"runs/{RUN_A}/observations.parquet" in manifest["files"]
    assert {"observations.parquet", "cells.parquet"} <= set(manifest["files"])  # all runs
    assert {"observations.csv", "cells.csv"} <= set(manifest["derived"])  # built from them
    source = load_release(results, "2026.12")
    ids = list(source.result_ids["result_id"])
    assert ids[0] == "2026.12-0001" and len(ids) == len(set(ids))
    # run A's results come first, so a release that adds run B renumbers none of them
    first = freeze(results, "2026.11", [RUN_A], "2026-11-30")
    assert (first / "result_ids.csv").read_text().replace("2026.11", "X") in (
        root / "result_ids.csv").read_text().replace("2026.12", "X")
    assert release_names(results) == ["2026.11", "2026.12"]


def test_publishing_an_existing_release_again_is_refused(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A], "2026-12-01")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with pytest.raises(ReleaseError, match="already exists"):
        freeze(results, "2026.12", [RUN_A, RUN_B], "2026-12-02")
    assert before == {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_publish_command_refuses_bad_input_with_one_line(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    results = golden_results(tmp_path)
    base = ["--results-dir", str(results), "--config", str(ROOT / "mkdocs.yml"),
            "--out", str(tmp_path / "site_src")]
    pages = ["--pages-repo", str(tmp_path / "pages"), "--local"]
    for argv, message in (
        (["publish", "bad/name", "--run", RUN_A, *pages], "invalid release name"),
        (["publish", "2026.12", "--run", "nope", *pages], "unknown run 'nope'"),
        (["publish", "2026.12", "--run", RUN_A, "--date", "December", *pages],
         "invalid --date"),
        (["build", "--release", "9999"], "unknown release '9999'"),
        (["build", "--run", "nope"], "unknown run 'nope'"),
    ):
        assert main(argv + base) == 2
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1, error
    assert not (results / "releases").exists() or not any((results / "releases").iterdir())


def test_a_changed_release_file_is_detected(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A], "2026-12-01")
    with (root / "runs" / RUN_A / "observations.parquet").open("a") as handle:
        handle.write("tampered\n")
    with pytest.raises(SourceError, match="differ from MANIFEST.json"):
        load_release(results, "2026.12")


def test_freeze_without_runs_writes_nothing(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    with pytest.raises(ReleaseError, match="at least one run"):
        freeze_release(results, "2026.12", [], "2026-12-01", "t", "")
    assert not (results / "releases" / "2026.12").exists()


def test_release_citation_is_valid_cff(tmp_path: Path) -> None:
    root = freeze(golden_results(tmp_path), "2026.12", [RUN_A], "2026-12-01")
    document = _validate_cff(root / "CITATION.cff")
    assert document["version"] == "2026.12"
    assert "url" not in document  # the placeholder address is never cited


def test_root_citation_is_valid_cff() -> None:
    path = ROOT / "CITATION.cff"
    if not path.exists():
        pytest.fail("CITATION.cff is missing at the project root")
    assert _validate_cff(path)["cff-version"] == "1.2.0"


def test_build_and_deploy_say_when_there_is_nothing_to_show(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    empty = ["--results-dir", str(tmp_path / "results"), "--out", str(tmp_path / "out")]
    assert main(["build", *empty]) == 2
    assert "nothing to build" in capsys.readouterr().err
    assert main(["deploy", *empty, "--pages-repo", str(tmp_path / "pages")]) == 2
    assert "no release" in capsys.readouterr().err
    assert main(["export", str(tmp_path / "x"), "--pages-repo", str(tmp_path / "pages")]) == 2
    assert "nothing deployed" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "x").exists()


def test_build_command_takes_the_newest_run_as_latest(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    out = tmp_path / "site_src"
    argv = ["build", "--run", "latest", "--results-dir", str(results), "--out", str(out),
            "--config", str(ROOT / "mkdocs.yml"), "--templates", str(ROOT / "templates"),
            "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == 0
    assert sorted(p.name for p in (out / "experiments").iterdir()) == ["precision.md"]
    assert RUN_B in (out / "environment.md").read_text()


def test_before_the_first_release_serve_shows_the_draft(tmp_path: Path) -> None:
    import re
    import subprocess
    import sys
    import urllib.request

    from dlbench.report.site.build import build_site
    from dlbench.report.inputs.source import load_draft
    from tests.site_fixtures import GOLDEN, SITE_URL, TEMPLATES, site_config

    docs = tmp_path / "site_src"
    build_site(load_draft(GOLDEN, [RUN_A]), docs, TEMPLATES, SITE_URL)
    command = [sys.executable, "-m", "dlbench.cli", "serve", "--port", "0",
               "--results-dir", str(tmp_path / "results"), "--pages-repo", str(tmp_path / "p"),
               "--config", str(site_config(tmp_path, docs))]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        assert "the draft site (no release yet)" in line
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        with urllib.request.urlopen(url + "experiments/training/", timeout=10) as response:
            assert response.status == 200 and b"dlbench-chart" in response.read()
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stdout.close()


def _publish(tmp_path: Path, results: Path, *extra: str,
             site_url: str = SITE_URL) -> list[str]:
    docs = tmp_path / "site_src"
    config = site_config(tmp_path, docs, site_url)
    return ["publish", "2026.12", "--run", RUN_A, "--results-dir", str(results),
            "--config", str(config), "--out", str(docs), "--templates", str(ROOT / "templates"),
            "--pages-repo", str(tmp_path / "pages"), "--cache-dir", str(tmp_path / "cache"),
            *extra]


def _as_quick_run(results: Path) -> None:
    path = results / "runs" / RUN_A / "run.json"
    info = json.loads(path.read_text())
    path.write_text(json.dumps(info | {"request": {"suite": "quick"}}))


def test_publish_refuses_the_placeholder_address_and_a_quick_run_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = golden_results(tmp_path)
    assert main(_publish(tmp_path, results)) == 2
    error = capsys.readouterr().err
    assert "site_url is still the placeholder https://dlbench.example.org/" in error
    assert "--site-url URL" in error and "--local" in error and error.count("\n") == 1
    for extra, message in ((["--site-url", "bench.example.com"], "must be an http(s) address"),
                           (["--site-url", "https://a.example.com/", "--local"], "disagree")):
        assert main(_publish(tmp_path, results, *extra)) == 2
        error = capsys.readouterr().err
        assert message in error and "--site-url" in error and error.count("\n") == 1, error
    _as_quick_run(results)
    assert main(_publish(tmp_path, results, "--local")) == 2
    error = capsys.readouterr().err
    assert f"run {RUN_A} measured the quick suite" in error and "--preview" in error
    assert error.count("\n") == 1
    assert not (results / "releases").exists() and not (tmp_path / "pages").exists()


def test_a_local_preview_release_says_so_in_every_citation(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    _as_quick_run(results)
    assert main(_publish(tmp_path, results, "--local", "--preview")) == 0
    root = results / "releases" / "2026.12"
    meta = json.loads((root / "release.json").read_text())
    assert meta["local"] is True and meta["preview"] is True
    document = _validate_cff(root / "CITATION.cff")
    assert "not citable" in document["message"] and "local release" in document["message"]
    cite = (tmp_path / "site_src" / "cite.md").read_text()
    assert '!!! warning "Not citable: a preview"' in cite
    assert "a local release, not published at a permanent address" in cite  # BibTeX, APA too
    assert cite.count("not citable") >= 3


def test_publish_freezes_the_configured_address_into_the_citation(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    assert main(_publish(tmp_path, results, site_url="https://bench.example.com/dl/")) == 0
    root = results / "releases" / "2026.12"
    document = _validate_cff(root / "CITATION.cff")
    assert document["url"] == "https://bench.example.com/dl/2026.12/"
    assert document["message"].startswith("If you use these measurements")
    info = json.loads((root / "release.json").read_text())
    assert "local" not in info and info["site_url"] == "https://bench.example.com/dl/"
    cite = (tmp_path / "site_src" / "cite.md").read_text()
    assert "<https://bench.example.com/dl/2026.12/>" in cite and "!!! warning" not in cite


def test_publish_records_the_address_given_by_site_url(tmp_path: Path) -> None:
    """--site-url names the address while mkdocs.yml still holds the placeholder: the release,
    its citations and the deployed version's canonical links all take it."""
    import subprocess

    results = golden_results(tmp_path)
    url = "https://bench.example.com/dl/"
    assert main(_publish(tmp_path, results, "--site-url", url.rstrip("/"))) == 0
    root = results / "releases" / "2026.12"
    assert json.loads((root / "release.json").read_text())["site_url"] == url
    assert _validate_cff(root / "CITATION.cff")["url"] == f"{url}2026.12/"
    assert f"<{url}2026.12/>" in (tmp_path / "site_src" / "cite.md").read_text()
    page = subprocess.run(["git", "show", "gh-pages:2026.12/index.html"], cwd=tmp_path / "pages",
                          capture_output=True, text=True, check=True).stdout
    assert f'rel="canonical" href="{url}' in page
    assert not list(tmp_path.glob(".mkdocs-*.yml"))  # the copied config is gone


def test_the_root_citation_names_the_configured_address() -> None:
    from dlbench.report.pages.cite import configured_site_url

    document = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert document["url"] == configured_site_url(ROOT / "mkdocs.yml")


def test_release_notes_are_frozen_and_shown_on_the_release_home_page(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = golden_results(tmp_path)
    notes = tmp_path / "notes.md"
    assert main(_publish(tmp_path, results, "--local", "--notes", str(tmp_path / "none"))) == 2
    error = capsys.readouterr().err
    assert "cannot read --notes" in error and error.count("\n") == 1
    notes.write_text("  \n")
    assert main(_publish(tmp_path, results, "--local", "--notes", str(notes))) == 2
    assert "is empty" in capsys.readouterr().err
    assert not (results / "releases").exists()
    notes.write_text("- Each repeat is its own **worker process**.\n")
    assert main(_publish(tmp_path, results, "--local", "--notes", str(notes))) == 0
    root = results / "releases" / "2026.12"
    assert json.loads((root / "release.json").read_text())["notes"] == notes.read_text().strip()
    assert load_release(results, "2026.12").notes.startswith("- Each repeat")
    # the release's verdicts are stored with it and covered by its manifest
    assert "verdicts.csv" in json.loads((root / "MANIFEST.json").read_text())["files"]
    assert (root / "verdicts.csv").read_text().startswith("row,question,")
    verify_manifest(root)
    home = (tmp_path / "site_src" / "index.md").read_text()
    assert "## What changed since the previous release" in home
    # Markdown rendered to sanitised HTML (dlbench.report.render.user_text): in short on the
    # home page (its first item), whole on the notes page (issue 66)
    assert "Each repeat is its own <strong>worker process</strong>." in home
    assert "(notes.md)" in home
    whole = (tmp_path / "site_src" / "notes.md").read_text()
    assert "<li>Each repeat is its own <strong>worker process</strong>.</li>" in whole


def _no_release_and_no_staging(results: Path) -> bool:
    releases = results / "releases"
    return not releases.exists() or not list(releases.iterdir())


@pytest.mark.parametrize("link", ["to a file outside", "dangling", "a FIFO"])
def test_publish_copies_nothing_a_link_leads_to(tmp_path: Path, capsys, link: str) -> None:
    import os

    results = golden_results(tmp_path)
    (tmp_path / "secret.txt").write_text("outside the run")
    notes = results / "runs" / RUN_A / "notes.txt"
    if link == "a FIFO":
        os.mkfifo(notes)
    else:
        notes.symlink_to(tmp_path / ("secret.txt" if link != "dangling" else "gone.txt"))
    assert main(_publish(tmp_path, results, "--local")) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "notes.txt" in error, error
    assert ("is a link" if link != "a FIFO" else "is not a regular file") in error
    assert _no_release_and_no_staging(results)


@pytest.mark.parametrize("notes, expected", [
    ("/dev/zero", "is not a regular file"), ("fifo", "is not a regular file"),
    ("big", "is over 262144 bytes"), ("missing", "No such file or directory"),
])
def test_publish_notes_are_a_bounded_regular_file(tmp_path: Path, capsys, notes: str,
                                                  expected: str) -> None:
    import os

    results = golden_results(tmp_path)
    path = Path(notes) if notes.startswith("/") else tmp_path / notes
    if notes == "fifo":
        os.mkfifo(path)
    elif notes == "big":
        path.write_text("x" * (300 << 10))
    assert main(_publish(tmp_path, results, "--local", "--notes", str(path))) == 2
    error = capsys.readouterr().err
    assert expected in error and error.count("\n") == 1, error
    assert _no_release_and_no_staging(results)


def test_publish_to_a_read_only_pages_repo_is_one_line_before_freezing(tmp_path: Path,
                                                                       capsys) -> None:
    from tests.small_disk import SmallDisk

    disk = SmallDisk(tmp_path / "ro", "1m", read_only=True)
    try:
        if not disk.mounted:
            pytest.skip("needs a read-only tmpfs mount (root)")
        results = golden_results(tmp_path)
        command = _publish(tmp_path, results, "--local")
        command[command.index("--pages-repo") + 1] = str(disk.root / "pages")
        assert main(command) == 2
        error = capsys.readouterr().err
        assert "is not writable" in error and error.count("\n") == 1, error
        assert _no_release_and_no_staging(results)
    finally:
        disk.close()


def test_export_from_a_pages_branch_holding_links_is_one_line(tmp_path: Path, capsys) -> None:
    import subprocess

    pages = tmp_path / "pages"
    pages.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run([*git, "init", "-q", "-b", "gh-pages"], cwd=pages, check=True)
    (pages / "versions.json").write_text('[{"version": "2026.12", "title": "x", '
                                         '"aliases": ["latest"]}]')
    (pages / "2026.12").mkdir()
    (pages / "2026.12" / "passwd").symlink_to("/etc/passwd")
    subprocess.run([*git, "add", "-A"], cwd=pages, check=True)
    subprocess.run([*git, "commit", "-qm", "links"], cwd=pages, check=True)
    target = tmp_path / "exported"
    assert main(["export", str(target), "--pages-repo", str(pages)]) == 2
    error = capsys.readouterr().err
    assert "holds what a site never does" in error and error.count("\n") == 1, error
    assert not target.exists() and not list(tmp_path.glob(".exported*"))


def test_an_interrupted_publish_leaves_no_half_release_and_says_what_to_run(
        tmp_path: Path, capsys, monkeypatch) -> None:
    from dlbench.core.storage.releases import verify_manifest
    from dlbench.report.site import commands

    results = golden_results(tmp_path)

    def interrupted_while_judging(*args: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(commands, "store_staged_verdicts", interrupted_while_judging)
        assert main(_publish(tmp_path, results, "--local")) == 130
    error = capsys.readouterr().err
    assert "release 2026.12 was not frozen and nothing of it was written" in error
    assert "run the same `dlbench publish` again" in error
    assert _no_release_and_no_staging(results)
    with monkeypatch.context() as patch:
        patch.setattr(commands, "_deploy", interrupted_while_judging)
        assert main(_publish(tmp_path, results, "--local")) == 130
    error = capsys.readouterr().err
    assert "release 2026.12 is frozen, whole, with its verdicts" in error
    assert "deploy it with `dlbench deploy 2026.12`" in error
    root = results / "releases" / "2026.12"
    verify_manifest(root)
    assert (root / "verdicts.csv").is_file()
    assert main(_publish(tmp_path, results, "--local")) == 2  # again: the release is there
    assert "deploy it with `dlbench deploy 2026.12`" in capsys.readouterr().err


@pytest.mark.parametrize("stop", ["SIGINT", "SIGTERM"])
def test_a_signal_during_publish_leaves_the_release_whole_or_absent(tmp_path: Path,
                                                                    stop: str) -> None:
    import signal
    import subprocess
    import sys
    import time

    from dlbench.core.storage.releases import verify_manifest

    from dlbench.report.site.cache import SHARED_BLOBS

    results = golden_results(tmp_path)
    # as a first publish: its charts rendered, not the session's (the signal lands mid-way)
    alone = {k: v for k, v in os.environ.items() if k != SHARED_BLOBS}
    driver = subprocess.Popen([sys.executable, "-m", "dlbench.cli",
                               *_publish(tmp_path, results, "--local")], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True, env=alone)
    releases, deadline = results / "releases", time.monotonic() + 120
    while time.monotonic() < deadline and driver.poll() is None and not (
            releases.is_dir() and list(releases.iterdir())):
        time.sleep(0.005)
    driver.send_signal(getattr(signal, stop))
    error = driver.communicate(timeout=300)[1]
    root = releases / "2026.12"
    if driver.returncode == 0:
        pytest.skip("publish finished before the signal arrived")
    assert driver.returncode == 130 and error.count("\n") == 1, error
    assert not [p for p in releases.iterdir() if p.name.startswith(".")]  # no staging left
    if root.exists():
        verify_manifest(root)
        assert (root / "verdicts.csv").is_file()
        assert "deploy it with `dlbench deploy 2026.12`" in error
    else:
        assert "run the same `dlbench publish` again" in error
        assert main(_publish(tmp_path, results, "--local")) == 0
        verify_manifest(root)
