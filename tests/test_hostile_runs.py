"""A run from elsewhere changes nothing it should not: its keys as well as its values stay text
on every page, a draft's date is a date, a run is resumed only on its own machine kind and
by its own code, and what is appended to a release (an erratum) or frozen with it (its date
and title) is checked first."""

from __future__ import annotations

import io
import json
import tarfile
from html.parser import HTMLParser
from pathlib import Path

import markdown
import pytest

from dlbench.cli import main
from dlbench.core.text.errors import ResultsFileError
from tests.site_fixtures import RUN_A, RUN_B, golden_results

#: Keys of a run's JSON that Python-Markdown's attribute lists would read as attributes.
LIVE_KEYS = ("zz onclick=alert(9) q", "autofocus onfocus=alert(8) x", "a} # b {",
             "x\n# alert(7) heading", "<b>k</b>", "_", "")


class Attributes(HTMLParser):
    """Every attribute of a rendered page, and the text of its headings."""

    def __init__(self) -> None:
        super().__init__()
        self.attributes: list[tuple[str, str]] = []
        self.headings: list[str] = []
        self._in: str = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += [(name, value or "") for name, value in attrs]
        self._in = tag if tag in ("h1", "h2", "h3") else ""

    def handle_data(self, data: str) -> None:
        if self._in:
            self.headings.append(f"{self._in}:{data}")


def _environment_html(results: Path, tmp_path: Path) -> str:
    """The environment page of a draft of RUN_A, rendered by Python-Markdown with the
    extensions the site uses for headings (attribute lists, tables)."""
    out = tmp_path / "site_src"
    assert main(["build", "--run", RUN_A, "--results-dir", str(results), "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    text = (out / "environment.md").read_text()
    return markdown.markdown(text, extensions=["attr_list", "tables", "toc"])


def test_a_runs_keys_make_no_attribute_and_no_heading(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    run = results / "runs" / RUN_A
    environment = json.loads((run / "environment.json").read_text())
    environment |= {key: {"model": "m"} for key in LIVE_KEYS}
    environment["cpu"] = dict(environment.get("cpu") or {}) | {"vendor": "V\n# alert(6) h1"}
    (run / "environment.json").write_text(json.dumps(environment))
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"zz onclick=alert(5) q": {"k": 1}}))
    parser = Attributes()
    parser.feed(_environment_html(results, tmp_path))
    names = {name for name, _ in parser.attributes}
    assert not {name for name in names if name.startswith("on") or name == "autofocus"}, names
    ids = [value for name, value in parser.attributes if name == "id"]
    assert all(value.replace("-", "").isalnum() for value in ids), ids  # slugs only
    assert len(ids) == len(set(ids))  # keys that make one slug get one anchor each
    assert not [h for h in parser.headings if h.startswith("h1:") and "alert" in h]
    assert any("alert(9)" in h for h in parser.headings)  # the key, shown as text


def test_a_runs_live_key_stays_text_in_a_release_too(tmp_path: Path) -> None:
    """Frozen into a release (the pages a release and `latest` serve), not only a draft."""
    from tests.site_fixtures import freeze

    results = golden_results(tmp_path)
    path = results / "runs" / RUN_A / "environment.json"
    environment = json.loads(path.read_text())
    path.write_text(json.dumps(environment | {key: {"model": "m"} for key in LIVE_KEYS}))
    freeze(results, "2026.12", [RUN_A], "2026-12-01")
    out = tmp_path / "site_src"
    assert main(["build", "--release", "2026.12", "--results-dir", str(results), "--out",
                 str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    parser = Attributes()
    parser.feed(markdown.markdown((out / "environment.md").read_text(),
                                  extensions=["attr_list", "tables", "toc"]))
    names = {name for name, _ in parser.attributes}
    assert not {name for name in names if name.startswith("on") or name == "autofocus"}, names
    assert any("alert(9)" in h for h in parser.headings)  # the key, shown as text


def test_a_line_break_in_the_cpu_vendor_adds_no_heading_to_any_page(tmp_path: Path) -> None:
    """The machine's vendor reaches several pages (home, environment, experiments): none
    gains a heading from it."""
    import re

    results = golden_results(tmp_path)
    path = results / "runs" / RUN_A / "environment.json"
    environment = json.loads(path.read_text())
    environment["cpu"] = dict(environment["cpu"]) | {"vendor": "V\n# alert(6) h1"}
    path.write_text(json.dumps(environment))
    out = tmp_path / "site_src"
    assert main(["build", "--run", RUN_A, "--results-dir", str(results), "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    headings = [f"{page.name}: {line}" for page in out.rglob("*.md")
                for line in page.read_text().splitlines() if re.match(r"#+ .*alert\(6\)", line)]
    assert not headings, headings[:5]
    assert any("alert(6)" in page.read_text() for page in out.rglob("*.md"))  # shown as text


def test_a_line_break_in_a_runs_text_stays_on_its_line() -> None:
    from dlbench.report.render.user_text import inert_record, inert_text

    assert "\n" not in inert_text("AMD\n# heading\tx") and "# heading" in inert_text("a\n# heading")
    assert inert_record({"a\nb": ["c\n=="]}) == {"a b": ["c =="]}
    assert inert_text("Intel(R) Xeon(R)") == "Intel(R) Xeon(R)"  # plain text untouched


@pytest.mark.parametrize("started", ["<i id=PWN>", "<!--", "20261201T000000", "soon"])
def test_a_drafts_date_is_a_date_or_no_draft(tmp_path: Path, capsys, started: str) -> None:
    results = golden_results(tmp_path)
    run = results / "runs" / RUN_B
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"started_at": started}))
    assert main(["build", "--run", RUN_A, "--run", RUN_B, "--results-dir", str(results),
                 "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "is not an ISO time" in error, error
    assert not (tmp_path / "out" / "index.md").exists()


def _erratum(results: Path, *changes: str) -> list[str]:
    fields = {"--title": "t", "--wrong": "w", "--correction": "c", "--date": "2026-12-02"}
    for flag, value in zip(changes[::2], changes[1::2]):
        fields[flag] = value
    return ["erratum", "2026.12", "--results-dir", str(results),
            *[item for pair in fields.items() for item in pair]]


@pytest.fixture
def released(tmp_path: Path) -> Path:
    from tests.site_fixtures import freeze

    results = golden_results(tmp_path)
    freeze(results, "2026.12", [RUN_A], "2026-12-01")
    return results


def erratum_refused(released: Path, capsys, flag: str, value: str) -> str:
    """The one line refusing an erratum of 2026.12 with `flag` set to `value`, after
    checking that its errata file was left as it was."""
    errata = released / "releases" / "2026.12" / "errata.yml"
    before = errata.read_bytes() if errata.exists() else None
    assert main(_erratum(released, flag, value)) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert (errata.read_bytes() if errata.exists() else None) == before
    return error


@pytest.mark.parametrize("flag, value, expected", [
    ("--title", "bad \udcff\udcfe", "holds bytes that are not text"),
    ("--wrong", "\ud800", "holds bytes that are not text"),
    ("--correction", "x\udcc3", "holds bytes that are not text"),
    ("--date", "20261201", "is not YYYY-MM-DD"),
    ("--date", "2026-W49-1", "is not YYYY-MM-DD"),
    ("--date", "2026-12-01T10:00", "is not YYYY-MM-DD"),
    ("--date", "2026-02-30", "is not YYYY-MM-DD"),
])
def test_an_erratum_is_checked_before_it_is_appended(released: Path, capsys, flag: str,
                                                     value: str, expected: str) -> None:
    assert expected in erratum_refused(released, capsys, flag, value)
    errata = released / "releases" / "2026.12" / "errata.yml"
    assert main(_erratum(released)) == 0  # the release still takes a good one after
    errata.read_text(encoding="utf-8")


@pytest.mark.parametrize("date", ["20261201", "2026-12-1", "2026-13-01"])
def test_publish_takes_iso_dates_only(released: Path, tmp_path: Path, capsys,
                                      date: str) -> None:
    assert main(["publish", "2027.01", "--run", RUN_A, "--date", date, "--local",
                 "--results-dir", str(released), "--out", str(tmp_path / "out"),
                 "--pages-repo", str(tmp_path / "pages")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "expected YYYY-MM-DD" in error, error
    assert not (released / "releases" / "2027.01").exists()


def test_publish_refuses_a_title_that_is_not_text(released: Path, tmp_path: Path,
                                                  capsys) -> None:
    assert main(["publish", "2027.01", "--run", RUN_A, "--title", "t\udcff", "--date",
                 "2027-01-01", "--local", "--results-dir", str(released), "--out",
                 str(tmp_path / "out"), "--pages-repo", str(tmp_path / "pages")]) == 2
    assert "holds bytes that are not text" in capsys.readouterr().err
    assert not (released / "releases" / "2027.01").exists()


def _chained(kind: bytes, count: int) -> bytes:
    """A tar stream of `count` extended headers of `kind` chained before one member."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo("r/" + "n" * 120)
        tar.addfile(info, io.BytesIO(b""))
    data = out.getvalue()
    header, rest = data[:1024], data[1024:]  # the long-name header and its one data block
    if kind == b"x":
        body = b"27 path=r/aaaaaaaaaaaaaaaa\n"
        block = tarfile.TarInfo("././@PaxHeader")
        block.type, block.size = tarfile.XHDTYPE, len(body)
        header = block.tobuf(tarfile.USTAR_FORMAT) + body.ljust(512, b"\0")
    return header * count + rest


@pytest.mark.parametrize("kind", [b"L", b"x"])
def test_chained_extended_headers_are_refused_without_recursion(tmp_path: Path, kind) -> None:
    from dlbench.core.storage.code_archive import unpack

    stream = _chained(kind, 3000)
    assert len(stream) < 4 << 20
    with pytest.raises(ResultsFileError, match="extended .* headers before one member"):
        unpack(stream, "code.tar")
    import gzip

    archive = tmp_path / "run.tar.gz"
    archive.write_bytes(gzip.compress(stream))
    from dlbench.core.storage.run_archive import extract_run

    with pytest.raises(ResultsFileError, match="extended .* headers before one member"):
        extract_run(archive, tmp_path)
    with pytest.raises(ResultsFileError, match="extended"):
        unpack(_chained(kind, 4), "code.tar")  # more than tarfile ever writes for one member


RESUMED = "20261201T120000Z-cpu"
REQUEST = {"suite": "quick", "experiments": ["parity"], "workloads": ["mlp-digits"],
           "frameworks": ["pytorch"], "device": "cpu", "repeats": 1, "threads": 1,
           "timeout_s": None, "data_dir": "", "plan": []}


def _interrupted_run(results: Path, cpu: dict, code_files: dict[str, str]) -> Path:
    """An interrupted run of one parity cell with one process recorded: its machine's CPU
    record and the code files that process imported."""
    from dlbench.runner.cell.outcome import skipped
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.driver.store.record import CellRecord
    from dlbench.runner.driver.store.run_store import RunStore

    store = RunStore(results / "runs" / RESUMED)
    (store.root / "processes").mkdir(parents=True)
    store.save_run_info({"run_id": RESUMED, "started_at": "2026-12-01T12:00:00+00:00",
                         "device": "cpu", "status": "interrupted", "request": REQUEST})
    store.save_environment({"cpu": cpu})
    spec = CellSpec("parity", "mlp-digits", "pytorch", "pytorch", "cpu", repeats=2)
    outcome = skipped("recorded elsewhere")
    store.save_record(CellRecord(spec, type(outcome)(outcome.status, reason=outcome.reason,
                                                     code_files=code_files),
                                 "2026-12-01T12:00:01+00:00", 1.0, "", "", ""))
    return store.root


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _resume_refused(results: Path, capsys, *flags: str) -> str:
    run = results / "runs" / RESUMED
    before = _files(run)
    assert main(["run", *flags, "--results-dir", str(results), "--no-progress",
                 "--busy-retries", "0"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert _files(run) == before  # nothing measured into it, nothing rewritten
    return error


def _this_cpu() -> dict:
    from dlbench.runner.driver.commands.resume_checks import this_machine_cpu

    return this_machine_cpu()


@pytest.mark.parametrize("flags", [("--resume", RESUMED), ("--resume", "latest"),
                                   ("--remeasure", RESUMED, "--cell",
                                    "parity:mlp-digits:pytorch:fp32-default-b0:cpu",
                                    "--reason", "why")])
def test_a_run_of_another_machine_kind_is_not_resumed_here(tmp_path: Path, capsys,
                                                           flags) -> None:
    arm = {"vendor": "ARM", "model": "Neoverse-V2", "arch": "ARM_8", "sve": True}
    intel = {"vendor": "Intel", "model": "Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz",
             "arch": "X86_64", "amx": True, "avx512_bf16": True, "avx2": True}
    here = _this_cpu()
    other = arm if here.get("arch", "").upper().startswith("X86") else intel
    _interrupted_run(tmp_path / "results", other, {})
    error = _resume_refused(tmp_path / "results", capsys, *flags)
    assert f"run {RESUMED} was recorded on" in error and "this machine is" in error, error
    assert "own machine kind" in error


def test_a_run_measured_by_other_code_is_not_resumed(tmp_path: Path, capsys) -> None:
    _interrupted_run(tmp_path / "results", _this_cpu(),
                     {"dlbench/__init__.py": "0" * 64, "runner/worker/gone.py": "1" * 64,
                      "../../../../dev/zero": "2" * 64})
    error = _resume_refused(tmp_path / "results", capsys, "--resume", RESUMED)
    assert "was measured by other code than this checkout's" in error, error
    assert "dlbench/__init__.py" in error and "runner/worker/gone.py" in error


def test_a_run_of_this_machine_and_code_is_still_resumed_past_the_check(tmp_path: Path) -> None:
    import hashlib

    from dlbench.runner import PROJECT_ROOT
    from dlbench.runner.driver.commands.resume_checks import refuse_foreign_run
    from dlbench.runner.driver.store.run_store import RunStore

    digest = hashlib.sha256((PROJECT_ROOT / "dlbench/__init__.py").read_bytes()).hexdigest()
    root = _interrupted_run(tmp_path / "results", _this_cpu(), {"dlbench/__init__.py": digest})
    refuse_foreign_run(RunStore(root))  # no refusal


def failure_summary(tmp_path: Path, reason: str, capsys) -> str:
    """What `dlbench run` prints at its end (stderr) for one cell that failed with `reason`."""
    from dlbench.runner.cell.outcome import failed
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.driver.commands.run import print_summary
    from dlbench.runner.driver.store.record import CellRecord
    from dlbench.runner.driver.store.run_store import RunStore

    store = RunStore(tmp_path / "runs" / RESUMED)
    store.root.mkdir(parents=True)
    store.save_run_info({"run_id": RESUMED, "device": "cpu"})
    spec = CellSpec("parity", "mlp-digits", "pytorch", "pytorch", "cpu", repeats=1)
    print_summary(store, [CellRecord(spec, failed(reason), "2026-12-01T12:00:01+00:00", 1.0,
                                     "", "", "")])
    return capsys.readouterr().err


def test_a_models_failure_message_is_never_read_as_markup(tmp_path: Path, capsys) -> None:
    reason = "\x1b]0;owned\x07 [link=https://evil.example]click[/link] [bold]b[/bold] [/nope]"
    shown = failure_summary(tmp_path, reason, capsys)
    assert "\x1b]0;owned" not in shown and "\\x1b]0;owned\\x07" in shown, shown
    assert "[link=https://evil.example]click[/link]" in shown and "[/nope]" in shown


@pytest.mark.parametrize("reason, raw, shown_as", [
    ("\x1b]0;owned\x07 stop", "\x1b]0;owned", "\\x1b]0;owned\\x07"),  # sets the title
    ("see [link=https://evil.example]this[/link]", None,
     "[link=https://evil.example]this[/link]"),  # read as a link
    ("closing [/nope] tag", None, "[/nope]"),  # MarkupError ended the run
])
def test_each_kind_of_markup_in_a_failure_message_is_shown_as_text(
        tmp_path: Path, capsys, reason: str, raw: str | None, shown_as: str) -> None:
    """Issue 65's three, one at a time: an escape, a link, a closing tag."""
    shown = failure_summary(tmp_path, reason, capsys)
    assert shown_as in shown and (raw is None or raw not in shown), shown


def test_a_reader_that_stops_early_ends_no_command_in_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    from dlbench.core.storage.code_archive import CodeRecord, write_code_record

    results = golden_results(tmp_path)
    run = results / "runs" / RUN_A
    data = {f"runner/module_{i}.py": b"x = %d\n" % i for i in range(4000)}  # a long listing
    digests = {path: __import__("hashlib").sha256(d).hexdigest() for path, d in data.items()}
    write_code_record(run, CodeRecord({path: (digests[path],) for path in data},
                                      {digests[path]: d for path, d in data.items()}))
    reader = subprocess.Popen([sys.executable, "-m", "dlbench.cli", "code", RUN_A,
                               "--results-dir", str(results)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout.readline()
    reader.stdout.close()  # as `| head -1` does
    with reader.stderr:
        error = reader.stderr.read().decode()
    assert reader.wait(timeout=60) == 0, error
    assert "Traceback" not in error and "BrokenPipe" not in error, error


def test_a_data_file_that_unpacks_past_the_limit_is_refused_unread(tmp_path: Path,
                                                                     monkeypatch) -> None:
    import numpy as np

    from dlbench.core.text.errors import UsageError
    from dlbench.runner.cell import model_source

    bomb = tmp_path / "bomb.npz"
    np.savez_compressed(bomb, x=np.zeros((1024, 1024)), y=np.zeros(1024))  # 8 MB in 10 kB
    assert bomb.stat().st_size < 100_000
    # raising=False: a runner without the bound shows as reading the arrays, not as a typo
    monkeypatch.setattr(model_source, "MAX_DATA_BYTES", 1 << 20, raising=False)
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("the arrays were read"))
    with pytest.raises(UsageError, match="unpack to .* bytes, over the limit of 1048576"):
        model_source._check_data(bomb)
    monkeypatch.setattr(model_source, "MAX_DATA_BYTES", 1 << 30, raising=False)
    assert model_source._check_data(bomb) == bomb.resolve()  # shapes from the headers alone
