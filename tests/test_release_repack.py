"""The committed releases after their code record was repacked into code.tar (issue 51,
a one-off script, in git history): no .py file under results/, each release verifies, and its
MANIFEST.json keeps the published checksums of the removed files, which the archive must
match: a tampered entry or an archive that disagrees with them is refused in one line."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from tests.test_code_archive import published_older_form

from dlbench.core.storage.code_archive import ARCHIVE, pack, read_code_record
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.releases import REPACKED, checksums, verify_manifest

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "results" / "releases"
COMMITTED = ["2026.12", "2027.01", "2027.02", "2027.03"]


def manifest_of(release: Path) -> dict:
    return json.loads((release / "MANIFEST.json").read_text())


def write_manifest(release: Path, manifest: dict) -> None:
    (release / "MANIFEST.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))


def test_no_python_file_is_tracked_under_results():
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.splitlines()
    assert tracked and [path for path in tracked if path.endswith(".py")] == []


@pytest.mark.parametrize("name", COMMITTED)
def test_each_committed_release_verifies_and_keeps_its_published_code_checksums(
        name, tmp_path):
    release = RELEASES / name
    verify_manifest(release)  # files and the repacked entries against each run's code.tar
    manifest = manifest_of(release)
    repacked = manifest[REPACKED]
    assert repacked["note"].startswith("The code record (code/ and code-objects/) was "
                                       "repacked into code.tar with every file's hash unchanged")
    for run in sorted((release / "runs").iterdir()):
        published = {k: v for k, v in repacked["files"].items()
                     if k.startswith(f"runs/{run.name}/")}
        objects = any("/code-objects/" in k for k in published)
        older = published_older_form(run, tmp_path / run.name, objects)  # as published
        kept = {k: v for k, v in manifest["files"].items()
                if k.startswith(f"runs/{run.name}/") and k != f"runs/{run.name}/{ARCHIVE}"}
        assert published and checksums(older) == {
            k.removeprefix(f"runs/{run.name}/"): v for k, v in (kept | published).items()}


@pytest.fixture
def release_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "2026.12"
    shutil.copytree(RELEASES / "2026.12", copy)
    return copy


def a_view(manifest: dict) -> str:
    return next(k for k in sorted(manifest[REPACKED]["files"]) if "/code/" in k)


def test_a_tampered_repacked_entry_is_refused(release_copy):
    manifest = manifest_of(release_copy)
    manifest[REPACKED]["files"][a_view(manifest)] = "0" * 64
    write_manifest(release_copy, manifest)
    with pytest.raises(ResultsFileError, match="with another hash than the published"):
        verify_manifest(release_copy)


def test_a_dropped_repacked_entry_is_refused(release_copy):
    manifest = manifest_of(release_copy)
    del manifest[REPACKED]["files"][a_view(manifest)]
    write_manifest(release_copy, manifest)
    with pytest.raises(ResultsFileError, match="disagree on which code files it holds"):
        verify_manifest(release_copy)


def test_an_archive_disagreeing_with_the_repacked_entries_is_refused(release_copy):
    """Even with its checksum in "files" updated, code.tar must hold the published code."""
    run = next((release_copy / "runs").iterdir())
    record = read_code_record(run)
    path = sorted(record.files)[0]
    archive = pack(record.with_file(path, b"# not the published code\n"))
    (run / ARCHIVE).write_bytes(archive)
    manifest = manifest_of(release_copy)
    manifest["files"][f"runs/{run.name}/{ARCHIVE}"] = hashlib.sha256(archive).hexdigest()
    write_manifest(release_copy, manifest)
    with pytest.raises(ResultsFileError, match="disagree on code object") as refused:
        verify_manifest(release_copy)
    assert len(str(refused.value).splitlines()) == 1


def test_a_repacked_entry_still_present_is_refused(release_copy):
    manifest = manifest_of(release_copy)
    entry = f"runs/{next((release_copy / 'runs').iterdir()).name}/{ARCHIVE}"
    manifest[REPACKED]["files"][entry] = manifest["files"][entry]
    write_manifest(release_copy, manifest)
    with pytest.raises(ResultsFileError, match="as repacked; a repacked entry is a removed"):
        verify_manifest(release_copy)
