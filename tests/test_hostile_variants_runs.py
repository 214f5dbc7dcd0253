"""Issue 65, parts 1-5 and 7, tried again by other roads: a run's keys nested deeper, its
text broken by other line breaks, its start time a date with markup after it; a resume
refused for another ISA tier, an older record form and a remeasure; tables counted twice in
other tables and under renumbered repeats; code records that disagree another way; errata
and notes in other fields and digits, and an errata file holding what no erratum may; and
what later commands would crash on, in other columns, files and tar headers. Each one a real
build, run, erratum, publish or import: refused in one line with nothing written, or
rendered inert."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.core.text.errors import ResultsFileError
from tests.site_fixtures import RUN_A, golden_results
from tests.test_hostile_runs import (RESUMED, Attributes, _environment_html, _interrupted_run,
                                     _resume_refused, _this_cpu, erratum_refused,
                                     released)  # noqa: F401
from tests.test_import_run import (_changed_json, _changed_table, _repack, _set,
                                   measured_run, refused_here)  # noqa: F401
from tests.test_import_whole import (ENTRY, _both, _code, _pruned, _records,
                                     archive)  # noqa: F401

CELL = "parity:mlp-digits:pytorch:fp32-default-b0:cpu"


def _live(html: str) -> set[str]:
    """The attributes of a page that would run script, and the tags no run's text makes."""
    parser = Attributes()
    parser.feed(html)
    names = {name for name, _ in parser.attributes}
    return {name for name in names if name.startswith("on") or name in ("autofocus", "src")}


# 1: a run's keys and text stay text

def test_keys_nested_in_a_runs_records_make_no_attribute_or_tag(tmp_path: Path) -> None:
    """Keys one level down (a package, an environment variable, a CPU flag), not top-level."""
    results = golden_results(tmp_path)
    path = results / "runs" / RUN_A / "environment.json"
    environment = json.loads(path.read_text())
    environment["packages"] = dict(environment.get("packages") or {}) | {
        "torch{: onclick=alert(1) }": "2.0", "<img src=x onerror=alert(2)>": "1"}
    environment["environment_variables"] = {"X {: autofocus onfocus=alert(3) }": "1"}
    environment["cpu"] = dict(environment["cpu"]) | {"<svg onload=alert(4)>": True}
    path.write_text(json.dumps(environment))
    html = _environment_html(results, tmp_path)
    assert not _live(html), _live(html)
    assert "<img" not in html and "<svg" not in html
    assert "onerror=alert(2)" in html  # the key, shown as text


#: Line breaks other than '\n', each in a field of its own.
BREAKS = {"model": "\r", "arch": "\r\n", "vendor": "\u2028"}
PACKAGE_BREAKS = {"numpy": "\x85", "scipy": "\x0b", "pandas": "\x0c"}


def test_other_line_breaks_in_a_runs_text_add_no_heading(tmp_path: Path) -> None:
    """Not only '\\n': a carriage return, CRLF, a Unicode line separator, NEL, vertical tab
    and form feed."""
    results = golden_results(tmp_path)
    path = results / "runs" / RUN_A / "environment.json"
    environment = json.loads(path.read_text())
    environment["cpu"] = dict(environment["cpu"]) | {
        key: f"X{brk}# alert({key}) h1" for key, brk in BREAKS.items()}
    environment["packages"] = {key: f"1{brk}## alert({key}) h2"
                               for key, brk in PACKAGE_BREAKS.items()}
    path.write_text(json.dumps(environment))
    parser = Attributes()
    parser.feed(_environment_html(results, tmp_path))
    assert not [h for h in parser.headings if "alert" in h], parser.headings


def test_a_start_time_with_a_date_and_markup_after_it_stays_text(tmp_path: Path) -> None:
    """Its first ten characters are a date (the caption's), the markup after them reaches
    no page live."""
    results = golden_results(tmp_path)
    path = results / "runs" / RUN_A / "run.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {
        "started_at": "2026-12-01T10:00:00<i id=PWN><!--"}))
    out = tmp_path / "out"
    assert main(["build", "--run", RUN_A, "--results-dir", str(results), "--out", str(out),
                 "--cache-dir", str(tmp_path / "c")]) == 0
    pages = {p.name: p.read_text() for p in out.rglob("*.md")}
    assert "2026-12-01" in pages["index.md"]
    assert not [name for name, text in pages.items() if "<i id=PWN" in text or "<!--" in text]


# 2: a resume stays on its machine and its code

def test_a_run_of_this_family_but_another_isa_tier_is_not_resumed(tmp_path: Path,
                                                                   capsys) -> None:
    """Same vendor and model as this machine; only its kernel-deciding flags differ."""
    here = _this_cpu()
    flags = ("amx", "amx_bf16", "avx512_bf16", "avx512f", "avx512_vnni", "avx_vnni", "sve")
    lower = {**here, **{flag: False for flag in flags}, "avx2": not here.get("avx2", False)}
    if not here.get("arch", "").upper().startswith("X86"):
        lower = {**here, "sve": not here.get("sve"), "neon": True}
    _interrupted_run(tmp_path / "results", lower, {})
    error = _resume_refused(tmp_path / "results", capsys, "--resume", RESUMED)
    assert "own machine kind" in error, error


def test_a_run_in_the_older_record_form_by_other_code_is_not_resumed(tmp_path: Path,
                                                                     capsys) -> None:
    """Records before 2027.03 name one code_path and code_sha256, no code_files."""
    from dlbench.runner.driver.store.run_store import RunStore

    root = _interrupted_run(tmp_path / "results", _this_cpu(), {})
    store = RunStore(root)
    (path,) = store.processes_dir.glob("*.json")
    record = json.loads(path.read_text())
    path.write_text(json.dumps(record | {"code_path": ENTRY, "code_sha256": "e" * 64}))
    error = _resume_refused(tmp_path / "results", capsys, "--resume", RESUMED)
    assert "other code than this checkout's" in error and ENTRY in error, error


def test_a_remeasure_by_other_code_is_refused(tmp_path: Path, capsys) -> None:
    _interrupted_run(tmp_path / "results", _this_cpu(), {ENTRY: "0" * 64})
    error = _resume_refused(tmp_path / "results", capsys, "--remeasure", RESUMED, "--cell",
                            CELL, "--reason", "why")
    assert "other code" in error and "re-measured only by the code" in error, error


# 3: tables that cannot be counted twice (more in IMPORT_CASES)

def _renumbered(frame, pd):
    """Every observation twice, the copies under repeat numbers no process had."""
    copy = frame.copy()
    copy["repeat"] = copy["repeat"] + 100
    return pd.concat([frame, copy])


def test_a_process_record_copied_under_a_second_name_is_refused(archive, tmp_path,
                                                                capsys) -> None:
    with tarfile.open(archive, "r:gz") as source, \
            tarfile.open(tmp_path / "bad.tar.gz", "w:gz") as tar:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
            if "/processes/" in member.name and member.name.endswith(".json"):
                copy = tarfile.TarInfo(member.name[:-5] + "-copy.json")
                copy.size = len(data)
                tar.addfile(copy, io.BytesIO(data))
    error = refused_here(tmp_path / "bad.tar.gz", tmp_path / "results", capsys)
    assert "process record" in error or "more than once" in error, error


# 4: the code record proves itself (its cases in IMPORT_CASES)

def _extra_file(record):
    data = b"print('never imported')\n"
    digest = __import__("hashlib").sha256(data).hexdigest()
    return _pruned({**record.files, "runner/worker/extra.py": (digest,)},
                   {**record.objects, digest: data})


def _records_claim_changed(record: dict) -> dict:
    """Each record naming entry.py at the hash of the changed file _changed_file makes."""
    files = record["outcome"]["code_files"]
    if ENTRY in files:
        files[ENTRY] = "a" * 64
    return record


# 5: errata and notes checked before anything is appended or frozen

@pytest.mark.parametrize("flag, value, expected", [
    ("--superseded-by", "2027.\udcff", "holds bytes that are not text"),
    ("--date", "\uff12\uff10\uff12\uff16-12-02", "is not YYYY-MM-DD"),
    ("--date", "\u0662\u0660\u0662\u0666-\u0661\u0662-\u0660\u0662", "is not YYYY-MM-DD"),
], ids=["superseded-by not text", "full-width digits", "Arabic-Indic digits"])
def test_an_erratum_in_another_field_or_digits_is_refused(released: Path, capsys, flag: str,
                                                          value: str, expected: str) -> None:
    assert expected in erratum_refused(released, capsys, flag, value)


def test_an_errata_file_holding_escaped_surrogates_is_one_line_not_a_crash(
        released: Path, tmp_path: Path, capsys) -> None:
    """Not typed at `dlbench erratum` but arriving in the file itself (a YAML escape), as a
    pull of someone else's commit would bring it: the build and the next erratum refuse
    it in one line, and the file is left as it came."""
    errata = released / "releases" / "2026.12" / "errata.yml"
    errata.write_text('- date: "2026-12-02"\n  title: "bad \\uDCFF"\n  wrong: w\n'
                      '  correction: c\n')
    before = errata.read_bytes()
    assert main(["build", "--release", "2026.12", "--results-dir", str(released), "--out",
                 str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "holds bytes that are not text" in error, error
    assert "not text" in erratum_refused(released, capsys, "--title", "t")
    assert errata.read_bytes() == before


def test_notes_that_are_not_text_freeze_no_release(released: Path, tmp_path: Path,
                                                   capsys) -> None:
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"# What changed\n\xff\xfe bad\n")
    assert main(["publish", "2027.01", "--run", RUN_A, "--notes", str(notes), "--date",
                 "2027-01-01", "--local", "--results-dir", str(released), "--out",
                 str(tmp_path / "out"), "--pages-repo", str(tmp_path / "pages")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "UTF-8" in error, error
    assert not (released / "releases" / "2027.01").exists()


# 7: what a later command would crash on is refused at the door

def _request(key: str, value):
    return _changed_json("run.json", lambda i: json.dumps(i | {
        "request": i["request"] | {key: value}}))


#: Parts 3, 4 and 7 by other roads: what is wrong with an archived run, and the words of the
#: one line that refuses it.
IMPORT_CASES = {
    # 3: tables counted twice, another way
    "cells alone three times": (_changed_table("cells", lambda f, pd: pd.concat([f, f, f])),
                                "cells.parquet holds"),
    "observations under new repeats": (_changed_table("observations", _renumbered),
                                       "rows where the records make"),
    "processes and observations under new repeats": (_both(
        _changed_table("processes", _renumbered), _changed_table("observations", _renumbered)),
        "rows where the records make"),
    # 4: the code record, disagreeing another way
    "code.tar holds a file no process imported": (_code(_extra_file),
                                                  "which no process record names"),
    "records changed, processes table still the base's": (_records(_records_claim_changed),
                                                          "processes.parquet does not match"),
    # 7: what a later command would crash on, in other columns, files and fields
    "config_json a list": (_changed_table("cells", lambda f, pd: _set(
        f, "config_json", "[1, 2]")), "column config_json"),
    "fairness_json not JSON": (_changed_table("cells", lambda f, pd: _set(
        f, "fairness_json", "{nope")), "column fairness_json"),
    "request frameworks as text": (_request("frameworks", "pytorch"), "request.frameworks is"),
    "usable cores as text": (_changed_json("environment.json", lambda e: json.dumps(e | {
        "cpu": e["cpu"] | {"usable_cores": "16"}})), "environment.json.cpu.usable_cores is str"),
    "a process's wall time as text": (_records(lambda r: r | {"wall_time_s": "1.5"}),
                                      "holds what a process record never does"),
    "processes_policy looks as text": (_changed_json("run.json", lambda i: json.dumps(i | {
        "processes_policy": {"design": {"looks": "5,3", "alphas": [0.02]}}})),
        "processes_policy holds no design"),
}


@pytest.mark.parametrize("case", sorted(IMPORT_CASES))
def test_a_run_wrong_another_way_is_refused_at_import(archive, tmp_path, capsys, case) -> None:
    change, expected = IMPORT_CASES[case]
    error = refused_here(_repack(archive, tmp_path / "bad.tar.gz", change),
                         tmp_path / "results", capsys)
    assert expected in error, error


def _chain(headers: list[bytes], count: int) -> bytes:
    """A tar stream of `headers` repeated `count` times, then one empty member 'r/f'."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        tar.addfile(tarfile.TarInfo("r/f"), io.BytesIO(b""))
    return b"".join(headers) * count + out.getvalue()


def _extended(kind: bytes, body: bytes) -> bytes:
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = kind, len(body)
    return info.tobuf(tarfile.USTAR_FORMAT) + body.ljust(512, b"\0")


@pytest.mark.parametrize("headers", [
    [_extended(b"K", b"r/target\0")],
    [_extended(b"L", b"r/n\0"), _extended(b"x", b"14 path=r/pa\n")],
    [_extended(b"X", b"14 path=r/pb\n")],
], ids=["GNU long link names", "long names and pax headers alternating", "Solaris pax"])
def test_other_chained_extended_headers_are_refused_without_recursion(tmp_path: Path,
                                                                      headers) -> None:
    from dlbench.core.storage.code_archive import unpack
    from dlbench.core.storage.run_archive import extract_run

    stream = _chain(headers, 3000)
    with pytest.raises(ResultsFileError, match="extended .* headers before one member"):
        unpack(stream, "code.tar")
    bad = tmp_path / "run.tar.gz"
    bad.write_bytes(gzip.compress(stream))
    with pytest.raises(ResultsFileError, match="extended .* headers before one member"):
        extract_run(bad, tmp_path / "into")
    assert not (tmp_path / "into").exists() or not list((tmp_path / "into").iterdir())
