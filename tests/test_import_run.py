"""`dlbench import-run`: a real tiny CPU run, packed the way scripts/gpu_run.py packs the GPU
run, imported into another results directory and shown; bad archives each refused with one
line, exit 2, and nothing written."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from dlbench.core.storage.code_archive import unpack
from dlbench.core.storage.run_archive import pack_run

ROOT = Path(__file__).resolve().parent.parent
DLBENCH = [sys.executable, "-m", "dlbench.cli"]


def dlbench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*DLBENCH, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env=env)


@pytest.fixture(scope="module")
def measured_run(tmp_path_factory) -> Path:
    """One real parity cell of PyTorch on the digits MLP, measured on the CPU."""
    results = tmp_path_factory.mktemp("measured")
    env = os.environ | {"DLBENCH_LOCK_FILE": str(results / "measure.lock")}
    done = dlbench("run", "--experiment", "parity", "--workload", "mlp-digits", "--framework",
                   "pytorch", "--device", "cpu", "--threads", "1", "--busy-retries", "0",
                   "--no-progress", "--results-dir", str(results), env=env)
    assert done.returncode == 0, done.stderr
    (run_root,) = (results / "runs").iterdir()
    return run_root


@pytest.fixture
def archive(measured_run, tmp_path) -> Path:
    return pack_run(measured_run, tmp_path / "out")


def refused(archive: Path, results: Path) -> str:
    """The one-line error of importing `archive`, after checking nothing was written."""
    done = dlbench("import-run", str(archive), "--results-dir", str(results))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    runs = results / "runs"
    assert not runs.exists() or not list(runs.iterdir())
    assert not results.exists() or not list(results.glob(".import-*"))
    return done.stderr


def test_an_archived_run_imports_into_another_results_dir_and_shows(measured_run, archive,
                                                                     tmp_path):
    results = tmp_path / "elsewhere"
    done = dlbench("import-run", str(archive), "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    imported = results / "runs" / measured_run.name
    assert json.loads((imported / "run.json").read_text())["run_id"] == measured_run.name
    assert sorted(p.relative_to(imported) for p in imported.rglob("*")) == sorted(
        p.relative_to(measured_run) for p in measured_run.rglob("*"))
    shown = dlbench("results", "show", measured_run.name, "--results-dir", str(results))
    assert shown.returncode == 0, shown.stderr
    assert f"run {measured_run.name}" in shown.stdout and "parity_pass" in shown.stdout


def test_the_same_run_twice_is_refused(archive, tmp_path):
    results = tmp_path / "results"
    assert dlbench("import-run", str(archive), "--results-dir", str(results)).returncode == 0
    done = dlbench("import-run", str(archive), "--results-dir", str(results))
    assert done.returncode == 2 and "already exists" in done.stderr
    assert len(list((results / "runs").iterdir())) == 1


def _repack(archive: Path, target: Path, change) -> Path:
    """A copy of `archive` whose members went through `change(name, data) -> (name, data)`
    (None drops the member)."""
    with tarfile.open(archive, "r:gz") as source, tarfile.open(target, "w:gz") as tar:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else b""
            changed = change(member.name, data)
            if changed is None:
                continue
            info = tarfile.TarInfo(changed[0])
            info.size = len(changed[1])
            tar.addfile(info, io.BytesIO(changed[1]))
    return target


def _edit_objects(code_tar: bytes) -> bytes:
    """A run's code.tar with a byte added to every file it holds (its manifest unchanged)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(code_tar)) as source, \
            tarfile.open(fileobj=out, mode="w") as tar:
        for member in source.getmembers():
            data = source.extractfile(member).read()
            data += b"#" if member.name.startswith("objects/") else b""
            info = tarfile.TarInfo(member.name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _as_older_form(archive: Path, target: Path, edit_a_view: bool = False) -> Path:
    """`archive` with its code.tar written as the tagged measurement code keeps a code
    record: code-objects/<sha256> and a code/<path> view of each file's first version."""
    with tarfile.open(archive, "r:gz") as source, tarfile.open(target, "w:gz") as tar:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else b""
            if not member.name.endswith("/code.tar"):
                tar.addfile(member, io.BytesIO(data) if member.isfile() else None)
                continue
            run = member.name.rsplit("/", 1)[0]
            record = unpack(data, "test")
            added = [(f"{run}/code-objects/{d}", blob) for d, blob in record.objects.items()]
            added += [(f"{run}/code/{path}", record.objects[versions[0]])
                      for path, versions in record.files.items()]
            if edit_a_view:
                added[-1] = (added[-1][0], added[-1][1] + b"# edited after the run\n")
            for name, blob in added:
                info = tarfile.TarInfo(name)
                info.size = len(blob)
                tar.addfile(info, io.BytesIO(blob))
    return target


def test_a_run_in_the_older_form_is_converted_on_import(measured_run, archive, tmp_path):
    older = _as_older_form(archive, tmp_path / "older.tar.gz")
    with tarfile.open(older, "r:gz") as tar:
        assert any("/code/" in name for name in tar.getnames())
    results = tmp_path / "elsewhere"
    done = dlbench("import-run", str(older), "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    imported = results / "runs" / measured_run.name
    assert (imported / "code.tar").read_bytes() == (measured_run / "code.tar").read_bytes()
    assert not (imported / "code").exists() and not (imported / "code-objects").exists()
    assert not list(imported.rglob("*.py"))


def _with_member(archive: Path, target: Path, info: tarfile.TarInfo, data: bytes = b"") -> Path:
    with tarfile.open(archive, "r:gz") as source, tarfile.open(target, "w:gz") as tar:
        for member in source.getmembers():
            tar.addfile(member, source.extractfile(member) if member.isfile() else None)
        tar.addfile(info, io.BytesIO(data) if data else None)
    return target


@pytest.mark.parametrize("case", ["corrupt", "no run.json", "traversal", "symlink",
                                  "bad table", "edited code", "edited old code", "bad record",
                                  "not gzip"])
def test_a_bad_archive_is_refused_with_one_line_and_nothing_written(archive, tmp_path, case):
    bad = tmp_path / "bad.tar.gz"
    if case == "corrupt":
        bad.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
        expected = "not a readable"
    elif case == "not gzip":
        bad.write_text("run.json")
        expected = "not a readable"
    elif case == "no run.json":
        _repack(archive, bad, lambda n, d: None if n.endswith("/run.json") else (n, d))
        expected = "no run.json"
    elif case == "traversal":
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 4
        _with_member(archive, bad, info, b"oops")
        expected = "escapes the archive"
    elif case == "symlink":
        info = tarfile.TarInfo(f"{archive.name.split('.')[0]}/link")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        _with_member(archive, bad, info)
        expected = "not a regular file"
    elif case == "bad table":
        _repack(archive, bad, lambda n, d: (n, b"PAR1 no" if n.endswith("/cells.parquet")
                                           else d))
        expected = "cells.parquet: not a readable Parquet file"
    elif case == "edited code":
        _repack(archive, bad, lambda n, d: (n, _edit_objects(d) if n.endswith("/code.tar")
                                           else d))
        expected = "does not match its content's hash"
    elif case == "edited old code":
        _as_older_form(archive, bad, edit_a_view=True)
        expected = "matches no code object"
    else:
        _repack(archive, bad, lambda n, d: (n, b"{}" if "/processes/" in n else d))
        expected = "not a dlbench process record"
    assert expected in refused(bad, tmp_path / "results")
    assert not (tmp_path / "escaped.txt").exists()


def test_a_missing_archive_is_refused(tmp_path):
    assert "no such archive file" in refused(tmp_path / "none.tar.gz", tmp_path / "results")


def _renamed(archive: Path, target: Path, run_id: str, keep_tables: bool = False) -> Path:
    """`archive` with its run directory, and run.json's run_id, renamed to `run_id` (with
    `keep_tables`, the tables still name the old run)."""
    old = archive.name.split(".")[0]

    def change(name: str, data: bytes) -> tuple[str, bytes]:
        if name.endswith("/run.json"):
            data = json.dumps(json.loads(data) | {"run_id": run_id}).encode()
        return run_id + name[len(old):], data

    return _repack(archive, target, change)


def refused_here(archive: Path, results: Path, capsys) -> str:
    """As refused(), in this process (no interpreter start per case)."""
    from dlbench.cli import main

    assert main(["import-run", str(archive), "--results-dir", str(results)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert not (results / "runs").exists() or not list((results / "runs").iterdir())
    assert not results.exists() or not list(results.glob(".import-*"))
    return error


def test_a_run_id_not_of_the_runners_form_is_refused(archive, tmp_path, capsys):
    for run_id in ["latest", "<script>alert(1)<", "a\nb", "-rf", ".hidden", "releases"]:
        bad = _renamed(archive, tmp_path / "bad.tar.gz", run_id)
        error = refused_here(bad, tmp_path / "results", capsys)
        assert "is not a run ID of the runner's form" in error and repr(run_id) in error


def test_tables_that_name_another_run_than_run_json_are_refused(archive, tmp_path, capsys):
    bad = _renamed(archive, tmp_path / "bad.tar.gz", "20990101T000000Z-other")
    assert "parquet names run(s)" in refused_here(bad, tmp_path / "results", capsys)


def test_a_member_over_the_size_limits_is_refused_before_anything_is_written(
        archive, tmp_path, monkeypatch):
    from dlbench.core.storage import run_archive
    from dlbench.core.text.errors import ResultsFileError

    for limit, expected in (("MAX_MEMBER_BYTES", "over the limit of 1000 for one file"),
                            ("MAX_TOTAL_BYTES", "bytes in all, over the limit of 1000")):
        with monkeypatch.context() as patch:
            patch.setattr(run_archive, limit, 1000)
            target = tmp_path / limit
            target.mkdir()
            with pytest.raises(ResultsFileError, match=expected):
                run_archive.extract_run(archive, target)
            assert not list(target.iterdir())


def test_a_bad_results_dir_is_one_line(archive, tmp_path, capsys):
    from dlbench.cli import main

    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n")
    assert main(["import-run", str(archive), "--results-dir", str(a_file)]) == 2
    error = capsys.readouterr().err
    assert "is a file, not a folder" in error and error.count("\n") == 1
    assert a_file.read_text() == "root:x:0:0\n"


@pytest.mark.parametrize("read_only", [False, True])
def test_a_full_or_read_only_disk_is_named_not_blamed_on_the_archive(archive, tmp_path,
                                                                     read_only, capsys):
    from dlbench.cli import main

    from tests.small_disk import SmallDisk

    disk = SmallDisk(tmp_path / "disk", "64k", read_only=read_only)
    try:
        if not disk.mounted:
            pytest.skip("needs a tmpfs mount (root): the ENOSPC stand-in covers atomic "
                        "writes only, and an import streams its members")
        results = disk.root / "results"
        assert main(["import-run", str(archive), "--results-dir", str(results)]) == 2
        error = capsys.readouterr().err
        assert error.count("\n") == 1, error
        reason = "Read-only file system" if read_only else "No space left on device"
        assert reason in error and "not a readable" not in error, error
        assert not (results / "runs").exists() or not list((results / "runs").iterdir())
        assert not list(results.glob(".import-*")) if results.exists() else True
    finally:
        disk.close()


def _header(name: bytes, kind: bytes, size: int) -> bytes:
    """One raw ustar header block (what tarfile would write), checksum included."""
    block = bytearray(512)
    block[:len(name)] = name[:100]
    block[100:108] = b"0000644\0"
    block[124:136] = f"{size:011o}\0".encode()
    block[136:148] = b"00000000000\0"
    block[148:156] = b" " * 8
    block[156:157] = kind
    block[257:263] = b"ustar\0"
    block[263:265] = b"00"
    block[148:156] = f"{sum(block):06o}\0 ".encode()
    return bytes(block)


def _raw_archive(target: Path, parts) -> Path:
    """A gzipped tar written block by block from `parts` (bytes, or callables writing
    to the stream), so a header may declare what no tar writer would."""
    import gzip

    with gzip.open(target, "wb", compresslevel=1) as stream:
        for part in parts:
            part(stream) if callable(part) else stream.write(part)
        stream.write(b"\0" * 1024)
    return target


def _filler(size: int, byte: bytes = b"a"):
    def write(stream) -> None:
        chunk = byte * (1 << 20)
        for start in range(0, size, len(chunk)):
            stream.write(chunk[: size - start])
    return write


RUN = "20261201T100000Z-cpu"


@pytest.mark.parametrize("case, expected", [
    ("200 MiB long name", "GNU long-name header of 209715201 bytes, over the limit"),
    ("100 MiB pax header", "pax header of 104857600 bytes, over the limit"),
    ("global pax header", "a global pax member"),
    ("sparse member", "a sparse member"),
    ("pax sparse", "a sparse member (pax 'GNU.sparse.size')"),
    ("2000-byte name", "has a name of 2021 bytes, over the limit of 1024"),
])
def test_archive_headers_are_bounded_before_they_are_read_whole(tmp_path, capsys, case,
                                                                expected):
    if case == "200 MiB long name":
        parts = [_header(b"././@LongLink", b"L", (200 << 20) + 1), _filler(200 << 20),
                 b"\0" * 512, _header(b"x", b"0", 0)]
    elif case == "100 MiB pax header":
        parts = [_header(b"PaxHeader", b"x", 100 << 20), _filler(100 << 20),
                 _header(b"x", b"0", 0)]
    elif case in ("global pax header", "sparse member"):
        parts = [_header(f"{RUN}/run.json".encode(), b"g" if "global" in case else b"S", 0)]
    elif case == "pax sparse":
        record = b"GNU.sparse.size=9\n"
        record = f"{len(record) + 3} ".encode() + record
        parts = [_header(b"PaxHeader", b"x", len(record)), record.ljust(512, b"\0"),
                 _header(f"{RUN}/run.json".encode(), b"0", 0)]
    else:
        name = f"{RUN}/{'n' * 2000}".encode()
        parts = [_header(b"././@LongLink", b"L", len(name) + 1),
                 (name + b"\0").ljust(2048, b"\0"), _header(name[:100], b"0", 0)]
    error = refused_here(_raw_archive(tmp_path / "bad.tar.gz", parts), tmp_path / "results",
                         capsys)
    assert expected in error, error
    assert len(error) < 400, len(error)  # a long name is cut in the line, not printed whole


def test_an_archive_of_more_members_than_a_run_holds_is_refused_at_the_limit(tmp_path, capsys):
    from dlbench.core.storage.run_archive import MAX_MEMBERS

    folder = _header(f"{RUN}/".encode(), b"5", 0)

    def members(stream) -> None:
        for _ in range(0, MAX_MEMBERS + 104, 1000):
            stream.write(folder * 1000)

    error = refused_here(_raw_archive(tmp_path / "bad.tar.gz", [members]),
                         tmp_path / "results", capsys)
    assert f"more than {MAX_MEMBERS} members" in error


def test_names_with_terminal_controls_are_shown_escaped_in_the_error_line(archive, tmp_path,
                                                                          capsys):
    hostile = f"{archive.name.split('.')[0]}/../\x1b]0;owned\x07\x1b[2J\u202etxt.exe"
    info = tarfile.TarInfo(hostile)
    info.size = 2
    error = refused_here(_with_member(archive, tmp_path / "bad.tar.gz", info, b"hi"),
                         tmp_path / "results", capsys)
    assert not any(char in error for char in "\x1b\x07\u202e"), repr(error)
    assert "\\x1b]0;owned\\x07" in error and "\\u202e" in error


def _table_bytes(frame, kind: str, version: bytes = b"2") -> bytes:
    """A Parquet table as dlbench labels one, holding whatever `frame` holds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({b"dlbench.table": kind.encode(),
                                           b"dlbench.schema_version": version})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _changed_table(stem: str, change, version: bytes = b"2"):
    """A member change for _repack: the `stem` table's frame through `change`."""
    import pandas as pd
    import pyarrow.parquet as pq

    def member(name: str, data: bytes) -> tuple[str, bytes]:
        if not name.endswith(f"/{stem}.parquet"):
            return name, data
        frame = pq.read_table(io.BytesIO(data)).to_pandas()
        frame = change(frame.astype({c: object for c in frame.columns
                                     if str(frame[c].dtype) == "string"}), pd)
        return name, _table_bytes(frame, stem, version)
    return member


def _changed_json(file: str, change):
    def member(name: str, data: bytes) -> tuple[str, bytes]:
        if name.endswith(f"/{file}"):
            return name, change(json.loads(data)).encode() if callable(change) else change
        return name, data
    return member


def _set(frame, column, value):
    frame[column] = value
    return frame


DEEP = b'{"cpu": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
#: A stranger's run: what is wrong with it, and the words its one line must hold.
STRANGER_CASES = {
    "all-NaN values": (_changed_table("observations", lambda f, pd: _set(f, "value", float(
        "nan"))), "has no value (all NaN)"),
    "an infinite value": (_changed_table("observations", lambda f, pd: _set(f, "value", float(
        "inf"))), "is infinite"),
    "empty observations": (_changed_table("observations", lambda f, pd: f.iloc[:0]),
                           "no observations"),
    "no framework column": (_changed_table("cells", lambda f, pd: f.drop(columns="framework")),
                            "cells.parquet: no column framework"),
    "no run_id column": (_changed_table("observations", lambda f, pd: f.drop(
        columns="run_id")), "observations.parquet: no column run_id"),
    "value 'fast'": (_changed_table("observations", lambda f, pd: _set(f, "value", "fast")),
                     "column value holds 'fast'; expected numbers"),
    "unit not in the registry": (_changed_table("observations", lambda f, pd: _set(
        f, "unit", "parsecs")), "has unit 'parsecs'; the registry says"),
    "metric not in the registry": (_changed_table("observations", lambda f, pd: _set(
        f, "metric", "speed<script>")), "is not in the metric registry"),
    "batch_size 'one'": (_changed_table("cells", lambda f, pd: _set(f, "batch_size", "one")),
                         "column batch_size holds 'one'; expected whole numbers"),
    "batch_size 1.5": (_changed_table("observations", lambda f, pd: _set(
        f, "batch_size", 1.5)), "column batch_size holds '1.5'; expected whole numbers"),
    "unknown framework": (_changed_table("cells", lambda f, pd: _set(f, "framework", "jax")),
                          "column framework holds 'jax'; accepted: pytorch"),
    "unknown status": (_changed_table("cells", lambda f, pd: _set(f, "status", "great")),
                       "column status holds 'great'"),
    "unknown device": (_changed_table("cells", lambda f, pd: _set(f, "device", "tpu")),
                       "column device holds 'tpu'"),
    "empty cell_id": (_changed_table("cells", lambda f, pd: _set(f, "cell_id", None)),
                      "column cell_id is empty in some rows"),
    "reason a number": (_changed_table("cells", lambda f, pd: _set(f, "reason", 7)),
                        "column reason holds int64 '7'; expected text"),
    "bad table version": (_changed_table("cells", lambda f, pd: f, b"two"),
                          "schema version 'two' is not a number"),
    "table version 0": (_changed_table("cells", lambda f, pd: f, b"0"),
                        "schema version 0 cannot be migrated"),
    "environment nested 200k deep": (_changed_json("environment.json", DEEP),
                                     "JSON nested deeper than 64 levels"),
    "run.json nested 200k deep": (_changed_json("run.json", lambda i: json.dumps(i)[:-1] + (
        ', "request": ' + "[" * 200_000 + "]" * 200_000 + "}")), "nested deeper than 64"),
    "cpu.model a list": (_changed_json("environment.json", lambda e: json.dumps(e | {"cpu": {
        "model": ["x"]}})), "environment.json.cpu.model is list, expected str"),
    "gpus of strings": (_changed_json("environment.json", lambda e: json.dumps(e | {
        "gpus": ["H100"]})), "environment.json.gpus[0] is str, expected an object"),
    "workload words a dict": (_changed_json("run.json", lambda i: json.dumps(i | {
        "workload_words": {"mlp-digits": {"a": 1}}})), "is dict, expected str"),
    "a 1 MB cpu.model": (_changed_json("environment.json", lambda e: json.dumps(e | {"cpu": {
        "model": "x" * (1 << 20)}})), "over the limit of 65536"),
}


@pytest.mark.parametrize("case", sorted(STRANGER_CASES))
def test_a_strangers_run_is_checked_like_a_form_before_it_is_stored(archive, tmp_path,
                                                                     capsys, case):
    change, expected = STRANGER_CASES[case]
    bad = _repack(archive, tmp_path / "bad.tar.gz", change)
    error = refused_here(bad, tmp_path / "results", capsys)
    assert expected in error, error


@pytest.mark.parametrize("extra", ["junk.txt", "code-objects/not-a-hash", "notes.txt",
                                   "processes/x.pkl", "cells/../../x", "deep/a/b.json"])
def test_a_member_a_run_does_not_hold_is_refused_by_name(archive, tmp_path, capsys, extra):
    info = tarfile.TarInfo(f"{archive.name.split('.')[0]}/{extra}")
    info.size = 2
    error = refused_here(_with_member(archive, tmp_path / "bad.tar.gz", info, b"hi"),
                         tmp_path / "results", capsys)
    assert "is not a file a run holds" in error or "escapes the archive" in error, error
    assert extra.split("/")[-1] in error


def _ctrl_c_as_in_a_terminal() -> None:
    """Give the child SIGINT's default handling: a suite started in the background (`make
    test &`) runs with SIGINT ignored, and a child inherits that, so Ctrl-C never reached it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
def test_a_signal_during_import_leaves_no_staging_folder(tmp_path, stop):
    import signal
    import time

    size = 60 << 20
    parts = []
    for index in range(6):  # large enough that the import is still reading when stopped
        parts += [_header(f"{RUN}/code-objects/{index:064x}".encode()[-100:], b"0", size),
                  _filler(size, b"\0")]
    archive = _raw_archive(tmp_path / "big.tar.gz", parts)
    results = tmp_path / "results"
    driver = subprocess.Popen([*DLBENCH, "import-run", str(archive), "--results-dir",
                               str(results)], cwd=ROOT, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_ctrl_c_as_in_a_terminal)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and driver.poll() is None and not (
            results.is_dir() and list(results.glob(".import-*"))):
        time.sleep(0.005)
    driver.send_signal(getattr(signal, stop))
    error = driver.communicate(timeout=120)[1]
    assert driver.returncode == 130, error
    assert error.strip() == "dlbench: interrupted"
    assert not list(results.glob(".import-*")) and not list((results / "runs").iterdir())


@pytest.mark.parametrize("record, expected", [
    (b"{}", "without the time it was superseded"),
    (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 64"),
])
def test_a_bad_superseded_record_is_one_line(archive, tmp_path, capsys, record, expected):
    info = tarfile.TarInfo(f"{archive.name.split('.')[0]}/superseded/x.json")
    info.size = len(record)
    error = refused_here(_with_member(archive, tmp_path / "bad.tar.gz", info, record),
                         tmp_path / "results", capsys)
    assert expected in error, error
