"""`dlbench import-run` takes a run as one consistent whole: its tables are the tables its
process records build (no row counted twice), its code record holds exactly what those
records say the processes imported, and every field a later command reads is of its type.
Each case is a real measured run, changed the way a stranger could change it, refused in
one line with nothing written."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dlbench.core.storage.code_archive import CodeRecord, pack, unpack
from dlbench.core.storage.run_archive import pack_run
from tests.test_import_run import (_changed_json, _changed_table, _repack, _set,  # noqa: F401
                                   measured_run, refused_here)

ENTRY = "runner/worker/entry.py"


@pytest.fixture
def archive(measured_run, tmp_path) -> Path:
    return pack_run(measured_run, tmp_path / "out")


def _both(*changes):
    """One member change made of several, applied in turn."""
    def member(name: str, data: bytes) -> tuple[str, bytes]:
        for change in changes:
            name, data = change(name, data)
        return name, data
    return member


def _records(change):
    """A member change for _repack: every process record through `change(record)`."""
    def member(name: str, data: bytes) -> tuple[str, bytes]:
        if "/processes/" in name and name.endswith(".json"):
            return name, json.dumps(change(json.loads(data))).encode()
        return name, data
    return member


def _code(change):
    """A member change for _repack: the run's code record through `change(record)`."""
    def member(name: str, data: bytes) -> tuple[str, bytes]:
        if name.endswith("/code.tar"):
            return name, pack(change(unpack(data, "test")))
        return name, data
    return member


def _changed_file(record: CodeRecord, path: str = ENTRY, extra: bool = False) -> CodeRecord:
    """`record` with `path` changed by one line: in place of its version, or (`extra`) as a
    first version beside it, the one the site would show."""
    data = record.data(path) + b"\nCHANGED = True\n"
    digest = hashlib.sha256(data).hexdigest()
    versions = (digest, *record.files[path]) if extra else (digest,)
    return _pruned({**record.files, path: versions}, {**record.objects, digest: data})


def _pruned(files: dict, objects: dict) -> CodeRecord:
    """A code record of `files`, holding only the objects they name (as an archive does)."""
    named = {digest for versions in files.values() for digest in versions}
    return CodeRecord(files, {d: data for d, data in objects.items() if d in named})


def _set_detail(record: dict, key: str, value) -> dict:
    record["outcome"]["details"][key] = value
    return record


def _set_spec(record: dict, key: str, value) -> dict:
    record["spec"][key] = value
    return record


def _code_files_json(frame, pd):
    """The processes table's code record naming entry.py at the changed file's hash."""
    def changed(text: str) -> str:
        files = json.loads(text)
        if ENTRY in files:
            files[ENTRY] = "f" * 64
        return json.dumps(files, sort_keys=True)
    frame["code_files_json"] = [changed(t) for t in frame["code_files_json"]]
    return frame


#: What is wrong with the run, and the words its one line must hold.
WHOLE_CASES = {
    # 3: tables counted twice, or not the records' tables
    "cells and observations duplicated": (_both(
        _changed_table("cells", lambda f, pd: pd.concat([f] * 2)),
        _changed_table("observations", lambda f, pd: pd.concat([f] * 4))), "more than once"),
    "observations duplicated": (_changed_table("observations", lambda f, pd: pd.concat(
        [f, f])), "observations.parquet holds cell_id"),
    "processes duplicated": (_changed_table("processes", lambda f, pd: pd.concat([f, f])),
                             "processes.parquet holds cell_id"),
    "a value changed": (_changed_table("observations", lambda f, pd: _set(
        f, "value", f["value"] * 0.5)), "observations.parquet does not match the run's"),
    "a row dropped": (_changed_table("observations", lambda f, pd: f.iloc[1:]),
                      "rows where the records make"),
    "repeats raised": (_changed_table("cells", lambda f, pd: _set(f, "repeats", 12)),
                       "column repeats"),
    # 4: the code record bypass
    "code.tar and table changed, records claim the base": (_both(
        _code(_changed_file), _changed_table("processes", _code_files_json)),
        "does not match the run's process records"),
    "code.tar changed alone": (_code(_changed_file), "which code.tar does not hold"),
    "code.tar holds a second version first": (_code(lambda r: _changed_file(r, extra=True)),
                                              "which no process record names"),
    # 7: what a later command would crash on
    "config_json not JSON": (_changed_table("cells", lambda f, pd: _set(
        f, "config_json", "{nope")), "column config_json"),
    "fairness_json a list": (_changed_table("cells", lambda f, pd: _set(
        f, "fairness_json", "[1, 2]")), "column fairness_json"),
    "an empty batch_size": (_changed_table("cells", lambda f, pd: _set(
        f, "batch_size", None)), "column batch_size"),
    "code_files_json not JSON": (_changed_table("processes", lambda f, pd: _set(
        f, "code_files_json", "not json")), "column code_files_json"),
    "flops_per_sample as text": (_records(lambda r: _set_detail(r, "flops_per_sample", "many")),
                                 "flops_per_sample is 'many'"),
    "batch_size '' in a record": (_records(lambda r: _set_spec(r, "batch_size", "")),
                                  "record.spec.batch_size is"),
    "an observation's value as text": (_records(lambda r: r | {"outcome": r["outcome"] | {
        "observations": [o | {"value": "x"} for o in r["outcome"]["observations"]]}}),
        "value is 'x'"),
    "an outcome stored as pairs": (_records(lambda r: r | {"outcome": [
        list(item) for item in r["outcome"].items()]}), "never does"),
    "a record with an extra field": (_records(lambda r: r | {"by": "hand"}), "never does"),
    "processes_policy looks [5, 3]": (_changed_json("run.json", lambda i: json.dumps(i | {
        "processes_policy": {"design": {"looks": [5, 3], "alphas": [0.02, 0.02]}}})),
        "processes_policy holds no design"),
    "a request with an extra key": (_changed_json("run.json", lambda i: json.dumps(i | {
        "request": i["request"] | {"extra": 1}})), "request is not one the runner records"),
    "a request's repeats as text": (_changed_json("run.json", lambda i: json.dumps(i | {
        "request": i["request"] | {"repeats": "3"}})), "request.repeats is"),
    "a run.json without a device": (_changed_json("run.json", lambda i: json.dumps(
        {k: v for k, v in i.items() if k != "device"})), "device is"),
    "a started_at that is no time": (_changed_json("run.json", lambda i: json.dumps(i | {
        "started_at": "<i id=PWN>"})), "started_at is"),
    "a text probe value": (_changed_json("environment.json", lambda e: json.dumps(e | {
        "compute_peak": {"probes": {"torch_fp32_flops": "fast"}}})), "is str, expected"),
    "a 10 kB key in packages": (_changed_json("environment.json", lambda e: json.dumps(e | {
        "packages": {"k" * 10_000: "1"}})), "a key of 10000 characters"),
}


@pytest.mark.parametrize("case", sorted(WHOLE_CASES))
def test_a_run_that_is_not_one_whole_is_refused(archive, tmp_path, capsys, case):
    change, expected = WHOLE_CASES[case]
    bad = _repack(archive, tmp_path / "bad.tar.gz", change)
    error = refused_here(bad, tmp_path / "results", capsys)
    assert expected in error, error


def test_a_non_utf8_code_file_is_refused_even_when_records_agree(archive, tmp_path, capsys):
    """The records, the processes table and code.tar all name the same non-text file."""
    bad_bytes = b"\xff\xfe not text"
    digest = hashlib.sha256(bad_bytes).hexdigest()

    def code(record: CodeRecord) -> CodeRecord:
        return _pruned({**record.files, ENTRY: (digest,)}, {**record.objects, digest: bad_bytes})

    def records(record: dict) -> dict:
        files = record["outcome"]["code_files"]
        if ENTRY in files:
            files[ENTRY] = digest
        return record

    def table(frame, pd):
        frame["code_files_json"] = [json.dumps(json.loads(t) | {ENTRY: digest}, sort_keys=True)
                                    if ENTRY in json.loads(t) else t
                                    for t in frame["code_files_json"]]
        return frame

    bad = _repack(archive, tmp_path / "bad.tar.gz",
                  _both(_code(code), _records(records), _changed_table("processes", table)))
    error = refused_here(bad, tmp_path / "results", capsys)
    assert "not UTF-8 text" in error, error



@pytest.mark.parametrize("model, expected", [
    (b"[1, 2]", "expected a JSON object"),
    (b'{"request": {"path": "m.py"}, "facts": {}}', "no facts.kind"),
    (json.dumps({"request": {"path": "m.py"}, "facts": {
        "kind": "keras", "model_id": "m", "batch_size": "big", "batch_chosen": True,
        "input_shape": [6], "input_dtype": "float32", "output_shape": [3], "parameters": 10,
        "repeat_max_abs": 0.0, "trains": False, "no_training": "x", "flops_per_sample": 1,
        "flops_note": "", "class_name": "M"}}).encode(), "facts.batch_size is str"),
])
def test_a_garbage_model_file_is_refused(archive, tmp_path, capsys, model, expected):
    import tarfile

    from tests.test_import_run import _with_member

    info = tarfile.TarInfo(f"{archive.name.split('.')[0]}/model.json")
    info.size = len(model)
    bad = _with_member(archive, tmp_path / "bad.tar.gz", info, model)
    error = refused_here(bad, tmp_path / "results", capsys)
    assert expected in error, error
