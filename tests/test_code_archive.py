"""The code record as one content-addressed archive per run (dlbench/core/storage/code_archive.py):
it round-trips, keeps identical files once, is refused in one line when tampered with, reads
the older code/ and code-objects/ form the committed releases were published in, is what a
frozen release holds, and `dlbench code` prints a result's file from it."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
from tests.stats_fixtures import training_cells, write_run

from dlbench.cli import main
from dlbench.cli.code_output import shown_code
from dlbench.core.storage.code_archive import (
    ARCHIVE, CodeRecord, convert_legacy, pack, read_code_record, unpack,
)
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.layout import find_run, load_run, release_run_dir
from dlbench.core.storage.releases import freeze_release, verify_manifest
from dlbench.runner.driver.store.run_store import RunStore

ROOT = Path(__file__).resolve().parent.parent
RELEASES = ROOT / "results" / "releases"
RUN_2027_01 = RELEASES / "2027.01" / "runs" / "20261203T063157Z-cpu"
RUN_2027_03 = RELEASES / "2027.03" / "runs" / "20261205T143650Z-cpu"
TWICE = "runner/experiments/inference/__init__.py"  # 2027.01's run imported two versions


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_of(files: dict[str, bytes]) -> CodeRecord:
    record = CodeRecord()
    for path, data in files.items():
        record = record.with_file(path, data)
    return record


def members(archive: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers()}


def test_the_archive_round_trips_and_its_bytes_depend_on_the_record_alone():
    files = {"runner/b.py": b"print(2)\n", "runner/a.py": b"print(1)\n",
             "dlbench/x.py": "# \u00e9t\u00e9\n".encode()}
    record = record_of(files).with_file("runner/a.py", b"print(1.5)\n")  # a second version
    archive = pack(record)
    back = unpack(archive, "test")
    assert back == record and pack(back) == archive
    assert back.data("runner/a.py") == b"print(1)\n"  # the first version seen
    assert back.data("runner/a.py", sha(b"print(1.5)\n")) == b"print(1.5)\n"
    assert back.data("runner/a.py", sha(b"other")) is None and back.data("none.py") is None
    reordered = record_of(dict(reversed(list(files.items())))).with_file("runner/a.py",
                                                                         b"print(1.5)\n")
    assert pack(reordered) == archive  # the order files were added in changes nothing
    names = list(members(archive))
    assert names[0] == "manifest.json" and names[1:] == sorted(names[1:])
    assert not any(name.endswith(".py") for name in names)


def test_identical_files_are_stored_once_across_paths_and_processes(tmp_path):
    store = RunStore(tmp_path / "run")
    digest = store.save_code_file("runner/a.py", b"print(1)\n")
    assert store.save_code_file("runner/b.py", b"print(1)\n") == digest
    before = (store.root / ARCHIVE).stat().st_mtime_ns
    store.save_code_files({"runner/a.py": b"print(1)\n", "runner/b.py": b"print(1)\n"})
    assert (store.root / ARCHIVE).stat().st_mtime_ns == before  # nothing new: not rewritten
    stored = members((store.root / ARCHIVE).read_bytes())
    assert sorted(stored) == ["manifest.json", f"objects/{digest}"]
    manifest = json.loads(stored["manifest.json"])
    assert manifest["files"] == {"runner/a.py": [digest], "runner/b.py": [digest]}
    assert sorted(p.name for p in store.root.iterdir()) == [ARCHIVE]  # no .py, no views


def _tampered(archive: bytes, case: str) -> bytes:
    if case == "object edited":  # same length, so the tar headers still read
        at = archive.index(b"print(1)")
        return archive[:at] + b"print(9)" + archive[at + 8:]
    stored = members(archive)
    manifest = json.loads(stored.pop("manifest.json"))
    if case == "object missing":
        stored.clear()
    elif case == "path escapes":
        manifest["files"] = {"../outside.py": manifest["files"]["runner/a.py"]}
    elif case == "manifest not json":
        stored["manifest.json"] = b"{not json"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in {"manifest.json": json.dumps(manifest).encode(), **stored}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("case, expected", [
    ("object edited", "does not match its content's hash"),
    ("object missing", "which it holds no object of"),
    ("path escapes", "is not a relative project path"),
    ("manifest not json", "manifest.json is not JSON"),
    ("truncated", "code.tar"),
])
def test_a_tampered_archive_is_refused_with_one_line(tmp_path, capsys, case, expected):
    store = RunStore(tmp_path / "results" / "runs" / "20261201T100000Z-cpu")
    store.save_code_file("runner/a.py", b"print(1)\n")
    archive = store.root / ARCHIVE
    data = archive.read_bytes()
    archive.write_bytes(data[:700] if case == "truncated" else _tampered(data, case))
    with pytest.raises(ResultsFileError, match=expected.replace("(", r"\(")):
        read_code_record(store.root)
    (store.root / "run.json").write_text(json.dumps({"run_id": store.root.name}))
    assert main(["code", store.root.name, "runner/a.py", "--results-dir",
                 str(tmp_path / "results")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and expected in err


def published_older_form(run: Path, target: Path, objects: bool = True) -> Path:
    """A copy of the committed `run` as it was published: code/<path> (each path's first
    version) and code-objects/<sha256> (2026.12 kept none) in place of its code.tar."""
    shutil.copytree(run, target)
    record = read_code_record(run)
    (target / ARCHIVE).unlink()
    for path, versions in record.files.items():
        (target / "code" / path).parent.mkdir(parents=True, exist_ok=True)
        (target / "code" / path).write_bytes(record.objects[versions[0]])
    (target / "code-objects").mkdir()
    for digest, data in record.objects.items() if objects else ():
        (target / "code-objects" / digest).write_bytes(data)
    return target


def test_the_older_form_of_a_committed_release_reads_with_every_version(tmp_path):
    run = published_older_form(RUN_2027_01, tmp_path / RUN_2027_01.name)
    record = read_code_record(run)
    views = sorted(p.relative_to(run / "code").as_posix()
                   for p in (run / "code").rglob("*") if p.is_file())
    assert sorted(record.files) == views
    assert set(record.objects) == {p.name for p in (run / "code-objects").iterdir()}
    first, second = record.files[TWICE]  # the view shows the first; the record keeps both
    assert sha((run / "code" / TWICE).read_bytes()) == first != second
    assert load_run(run).code_text(TWICE) == (run / "code" / TWICE).read_text()


def test_the_older_form_converts_to_an_archive_checked_against_its_hashes(tmp_path):
    run = published_older_form(RUN_2027_01, tmp_path / RUN_2027_01.name)
    expected = read_code_record(run)
    assert convert_legacy(run, "test") and not convert_legacy(run, "test")
    assert read_code_record(run) == expected
    assert (run / ARCHIVE).read_bytes() == (RUN_2027_01 / ARCHIVE).read_bytes()
    assert not (run / "code").exists() and not (run / "code-objects").exists()
    assert not list(run.rglob("*.py"))
    edited = published_older_form(RUN_2027_01, tmp_path / "edited")
    (edited / "code" / TWICE).write_text("# edited after the run\n")
    with pytest.raises(ResultsFileError, match="matches no code object"):
        convert_legacy(edited, "test")
    assert (edited / "code").is_dir() and not (edited / ARCHIVE).exists()  # left as it was


def test_a_run_holding_both_forms_is_refused(tmp_path):
    store = RunStore(tmp_path / "run")
    store.save_code_file("runner/a.py", b"print(1)\n")
    (store.root / "code").mkdir()
    with pytest.raises(ResultsFileError, match="holds its code record twice"):
        read_code_record(store.root)


def test_a_release_frozen_from_an_older_run_holds_the_archive_and_no_python_file(tmp_path):
    results = tmp_path / "results"
    root = write_run(results, "20261201T100000Z-cpu",
                     training_cells(np.random.default_rng(1), {"pytorch": 1.0}))
    view = root / "code" / "runner" / "experiments" / "training" / "x.py"
    view.parent.mkdir(parents=True)
    view.write_bytes(b"def train():\n    pass\n")  # the form the tagged code writes
    (root / "code-objects").mkdir()
    (root / "code-objects" / sha(view.read_bytes())).write_bytes(view.read_bytes())
    release = freeze_release(results, "2026.12", [root.name], "2026-12-01", "t", "cff")
    verify_manifest(release)
    frozen = release_run_dir(release, root.name)
    digest = (frozen / "code.tar.sha256").read_text().strip()  # stored once, by content
    assert f"code-archives/{digest}.tar" in json.loads(
        (release / "MANIFEST.json").read_text())["files"]
    assert not list(release.rglob("*.py")) and not (frozen / ARCHIVE).exists()
    assert not root.exists() and find_run(results, root.name) == frozen  # stored once
    assert load_run(frozen).code_text("runner/experiments/training/x.py") == \
        "def train():\n    pass\n"
    stored = release / "code-archives" / f"{digest}.tar"
    stored.write_bytes(pack(record_of({"runner/experiments/training/x.py": b"#"})))
    with pytest.raises(ResultsFileError, match="differ from MANIFEST.json"):
        verify_manifest(release)  # the release's checksums cover its runs' code archives
    with pytest.raises(ResultsFileError, match="does not match its content's hash"):
        load_run(frozen).code_text("runner/experiments/training/x.py")


def test_code_lists_and_prints_a_runs_files_from_its_archive(tmp_path, capsys):
    results = tmp_path / "results"
    store = RunStore(results / "runs" / "20261201T100000Z-cpu")
    store.save_run_info({"run_id": store.run_id})
    store.save_code_files({"runner/a.py": b"a = 1\n", "runner/b.py": b"b = 2\nc = 3\n"})
    assert main(["code", "latest", "--results-dir", str(results)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith(f"run {store.run_id} (latest): 2 files")
    two_lines = b"b = 2\nc = 3\n"
    assert listed[2] == f"{sha(two_lines)[:12]}         2  runner/b.py"
    assert main(["code", store.run_id, "runner/b.py", "--results-dir", str(results)]) == 0
    assert capsys.readouterr().out == "b = 2\nc = 3\n"


def test_code_prints_the_file_a_published_result_ran(capsys):
    results = ROOT / "results"
    ids = (RELEASES / "2027.03" / "result_ids.csv").read_text().splitlines()
    result_id, _, cell_id, _ = ids[1].split(",")
    assert main(["code", result_id, "--results-dir", str(results)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert cell_id in listed[0] and len(listed) > 50  # every file its processes imported
    path = "runner/process/worker.py"  # the committed run's record names the layout it ran
    assert any(line.endswith(f"  {path}") for line in listed)
    assert main(["code", result_id, path, "--results-dir", str(results)]) == 0
    published = json.loads((RELEASES / "2027.03" / "MANIFEST.json").read_text())
    printed = capsys.readouterr().out.encode()  # the bytes published as code/<path>
    assert sha(printed) == published["repacked"]["files"][f"runs/{RUN_2027_03.name}/code/{path}"]


def test_a_result_whose_processes_recorded_no_imports_names_its_experiment_module(capsys):
    assert main(["code", "2026.12-0001", "--results-dir", str(ROOT / "results")]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert len(listed) == 2 and listed[1].split()[-1].startswith("runner/experiments/")
    assert "not kept" not in listed[1]


@pytest.mark.parametrize("args, expected", [
    (["2027.03-9999"], "unknown result ID '2027.03-9999'"),
    (["nothing"], "no run 'nothing'"),
    (["2027.03"], "is a release; name one of its runs (2027.03@20261205T143650Z-cpu)"),
    (["2027.03@20261201T000000Z-cpu"],
     "release '2027.03' holds no run '20261201T000000Z-cpu'; its runs: 20261205T143650Z-cpu"),
    (["2027.03-0002", "runner/none.py"], "ran no file 'runner/none.py'"),
    (["2027.03-0002", "runner/process/worker.py", "--sha256", "ffff"], "ran no version 'ffff'"),
    (["2027.01@20261203T063157Z-cpu", TWICE], "choose one with --sha256"),
])
def test_code_refuses_bad_input_with_one_line(capsys, args, expected):
    assert main(["code", *args, "--results-dir", str(ROOT / "results")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and expected in err, err


def test_code_chooses_a_version_by_its_hash(capsys):
    second = read_code_record(RUN_2027_01).files[TWICE][1]
    assert main(["code", "2027.01@20261203T063157Z-cpu", TWICE, "--sha256", second[:10],
                 "--results-dir", str(ROOT / "results")]) == 0
    assert sha(capsys.readouterr().out.encode()) == second


def test_code_shows_control_characters_as_escapes_only_on_a_terminal():
    data = b"x = '\x1b[31m'\n"
    assert shown_code(data, terminal=False) == data
    assert shown_code(data, terminal=True) == b"x = '\\x1b[31m'\n"
