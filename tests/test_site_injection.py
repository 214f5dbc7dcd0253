"""Stored script injection: everything a person types that reaches a page (release notes and
title, erratum fields, a re-measure reason, a run's recorded environment) is shown as text or
as sanitised Markdown; the real mkdocs build holds no live script, handler or javascript:
link made of it."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.core.storage.releases import freeze_release
from dlbench.report.pages.cite import Citation
from dlbench.report.site.publish import build_mkdocs
from tests.site_fixtures import ROOT, RUN_A, RUN_B, SITE_URL, golden_results, site_config

#: Each payload calls alert(N): its N says which field it came through.
PAYLOADS = ('<script>alert({n})</script>', '<img src=x onerror="alert({n})">',
            '<iframe src="javascript:alert({n})"></iframe>', '[x](javascript:alert({n}))',
            '</div><script>alert({n})</script>', '## y {{ onclick="alert({n})" }}',
            '<javascript:alert({n})>', '<a href="JaVaScRiPt:alert({n})">z</a>',
            '" onmouseover="alert({n})" x="', "' onfocus='alert({n})' y='",
            '<style>body{{display:none}}</style>', '\x1b]0;title\x07\u202e{n}')


def payload(n: int) -> str:
    return " ".join(p.format(n=n) for p in PAYLOADS)


class LiveCode(HTMLParser):
    """What a browser would run of a page: script bodies, on* handlers, javascript: URLs,
    frames."""

    def __init__(self) -> None:
        super().__init__()
        self.live: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.in_script = tag in ("script", "style")
        if tag in ("iframe", "frame", "object", "embed"):
            self.live.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on") or value.replace(" ", "").startswith("javascript:"):
                self.live.append(f"{tag} {name}={value}")

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and ("alert(" in data or "display:none" in data):
            self.live.append("alert: " + data.strip()[:80])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release whose every typed field carries the payloads, built by mkdocs."""
    tmp = tmp_path_factory.mktemp("injected")
    results = golden_results(tmp)
    run_json = results / "runs" / RUN_A / "run.json"
    info = json.loads(run_json.read_text())
    run_json.write_text(json.dumps(info | {"remeasured": [
        {"cells": ["x"], "reason": payload(1), "at": "2026-12-01T10:00:00+00:00"}]}))
    env_json = results / "runs" / RUN_A / "environment.json"
    env_json.write_text(json.dumps(json.loads(env_json.read_text()) | {"os": payload(2)}))
    title = payload(3)
    freeze_release(results, "2026.12", [RUN_A], "2026-12-01", title,
                   Citation("2026.12", "2026-12-01", SITE_URL).cff(), notes=payload(4))
    for flag, n in (("--title", 5), ("--wrong", 6), ("--correction", 7)):
        fields = {"--title": "t", "--wrong": "w", "--correction": "c"} | {flag: payload(n)}
        assert main(["erratum", "2026.12", "--results-dir", str(results), "--date",
                     "2026-12-02", *[item for pair in fields.items() for item in pair]]) == 0
    return _built_site(results, tmp)


def test_no_typed_field_becomes_live_code_in_the_built_site(built: Path) -> None:
    pages = sorted(built.rglob("*.html"))
    seen = " ".join(page.read_text() for page in pages)
    for n in (1, 2, 4, 5, 6, 7):  # every field that reaches a page did, as text (the
        # release's title is recorded in release.json, not shown)
        assert f"alert({n})" in seen, n
    for page in pages:
        parser = LiveCode()
        parser.feed(page.read_text())
        assert not [code for code in parser.live if "alert" in code], (page, parser.live)


def test_release_notes_keep_their_safe_markdown(tmp_path: Path) -> None:
    from dlbench.report.render.user_text import plain_text, safe_markdown

    html = safe_markdown("- a **bold** [link](https://example.org/)\n\n[bad](javascript:x)")
    assert "<strong>bold</strong>" in html and 'href="https://example.org/"' in html
    assert "javascript" not in html
    assert plain_text("a|b\n[c](d) <e>") == "a\\|b \\[c\\](d) &lt;e&gt;"
    assert plain_text("# x {#y}") == "\\# x \\{#y\\}"  # no heading, no attribute list


#: Columns of a run's tables that are the project's identifiers: checked against the
#: registry and catalog when a run is imported (tests/test_import_run.py), not free text.
IDENTIFIER_COLUMNS = {"schema_version", "run_id", "cell_id", "config_id", "experiment",
                      "workload", "framework", "backend", "precision", "mode", "export_format",
                      "device", "status", "metric", "unit", "code_sha256", "started_at",
                      "code_path"}


def _poisoned(value: object, n: int) -> object:
    """`value` with every string in it, at any depth, replaced by payload(n)."""
    if isinstance(value, str):
        return payload(n)
    if isinstance(value, dict):
        return {key: _poisoned(item, n) for key, item in value.items()}
    if isinstance(value, list):
        return [_poisoned(item, n) for item in value]
    return value


def poison_run(run_root: Path, n: int) -> None:
    """Payloads in every string field of a run's JSON files and of its tables' text and JSON
    columns; each file's payloads carry their own number from `n` on."""
    from dlbench.core.storage.tables import read_table, write_table

    info = json.loads((run_root / "run.json").read_text())
    cells = read_table(run_root / "cells.parquet", "cells")
    kept = {"run_id", "device", "started_at"}
    info = {key: value if key in kept else _poisoned(value, n) for key, value in info.items()}
    info |= {"suite": payload(n), "request": {"suite": payload(n)},
             "workload_words": {str(w): payload(n + 1) for w in set(cells["workload"])}}
    (run_root / "run.json").write_text(json.dumps(info))
    environment = json.loads((run_root / "environment.json").read_text())
    environment = _poisoned(environment, n + 2) | {
        "gpus": [{"model": payload(n + 3), "memory_gib": 80}],
        "packages": {"torch": payload(n + 2), "tensorflow": payload(n + 2)},
        "hostname_sha256": payload(n + 2)}
    (run_root / "environment.json").write_text(json.dumps(environment))
    for column in cells.columns:
        if column.endswith("_json"):
            cells[column] = [json.dumps(_poisoned(json.loads(text), n + 4) | {
                "notes": payload(n + 4)}) for text in cells[column]]
        elif column not in IDENTIFIER_COLUMNS and str(cells[column].dtype) == "string":
            cells[column] = payload(n + 5)
    write_table(cells, run_root / "cells", "cells")
    observations = read_table(run_root / "observations.parquet", "observations")
    write_table(observations, run_root / "observations", "observations")


def poison_model_file(run_root: Path, n: int) -> None:
    """A user model's model.json (its file's name, NAME, class, facts) carrying payloads."""
    facts = {"model_id": payload(n), "kind": "keras", "class_name": payload(n),
             "parameters": 10, "input_shape": [payload(n)], "input_dtype": payload(n),
             "output_shape": [3], "batch_size": 16, "batch_chosen": False, "trains": False,
             "no_training": payload(n), "flops_note": payload(n), "repeat_max_abs": 0.0}
    request = {"path": f"/tmp/{payload(n)}.py", "name": payload(n), "data_file": ""}
    (run_root / "model.json").write_text(json.dumps({"request": request, "facts": facts}))


@pytest.fixture(scope="module")
def built_from_poisoned_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both golden runs with payloads in every string they carry, released and built."""
    tmp = tmp_path_factory.mktemp("poisoned")
    results = golden_results(tmp)
    for number, run_id in ((10, RUN_A), (20, RUN_B)):
        poison_run(results / "runs" / run_id, number)
    poison_model_file(results / "runs" / RUN_B, 26)
    freeze_release(results, "2026.12", [RUN_A, RUN_B], "2026-12-01", "poisoned",
                   Citation("2026.12", "2026-12-01", SITE_URL).cff())
    return _built_site(results, tmp)


def test_no_string_a_run_carries_becomes_live_code_in_the_built_site(
        built_from_poisoned_runs: Path) -> None:
    pages = sorted(built_from_poisoned_runs.rglob("*.html"))
    seen = " ".join(page.read_text() for page in pages)
    for n in (10, 11, 12, 13, 14, 15, 22, 23, 26):  # run.json, words, machine, GPU,
        # fairness, reasons, a user model's names: each shown, as text
        assert f"alert({n})" in seen, n
    assert "\x1b" not in seen and "\u202e" not in seen  # controls made visible
    for page in pages:
        parser = LiveCode()
        parser.feed(page.read_text())
        assert not parser.live, (page, parser.live)


def test_a_runs_text_reaches_the_terminal_with_its_controls_visible(tmp_path: Path,
                                                                   capsys) -> None:
    from dlbench.core.storage.tables import read_table, write_table

    results = golden_results(tmp_path)
    run_root = results / "runs" / RUN_A
    cells = read_table(run_root / "cells.parquet", "cells")
    hostile = "\x1b]0;owned\x07\x1b[2J[bold red]X[/bold red]\u202eevil\x9b"
    cells["reason"] = hostile
    cells.loc[0, "status"] = "failed"
    write_table(cells, run_root / "cells", "cells")
    assert main(["results", "show", RUN_A, "--results-dir", str(results)]) == 0
    shown = capsys.readouterr().out
    assert not any(char in shown for char in "\x1b\x07\u202e\x9b"), repr(shown[:300])
    assert "\\x1b]0;owned\\x07" in shown and "[bold red]X[/bold red]" in shown
    assert "\\u202eevil\\x9b" in shown


def test_the_one_sanitiser_makes_text_inert_in_every_place_of_a_page() -> None:
    from dlbench.report.render.user_text import inert_frame, inert_record, inert_text

    text = inert_text('<b a="1" b=\'2\'>&amp; [l](javascript:x) {: #y } `c` | \x1b\u202e')
    assert not set(text) & set("<>&\"'`[]{}|\x1b\u202e"), text
    assert "\\x1b\\u202e" in text and "javascript:x" in text  # visible, as text
    assert inert_text("Intel(R) Xeon(R) 8481C @ 2.7GHz") == "Intel(R) Xeon(R) 8481C @ 2.7GHz"
    assert inert_record({"<k>": ["<v>", 1, {"x": "&"}]}) == {"‹k›": ["‹v›", 1, {"x": "＆"}]}
    import pandas as pd

    frame = pd.DataFrame({"reason": ["<a>", "ok"], "details_json": ['{"m": "<s>"}', "{}"]})
    inert = inert_frame(frame)
    assert list(inert["reason"]) == ["‹a›", "ok"]
    assert json.loads(inert["details_json"][0]) == {"m": "‹s›"}


def _built_site(results: Path, tmp: Path) -> Path:
    """Release 2026.12 of `results` built by `dlbench build` and mkdocs into tmp/site."""
    docs = tmp / "site_src"
    assert main(["build", "--release", "2026.12", "--results-dir", str(results), "--out",
                 str(docs), "--config", str(ROOT / "mkdocs.yml"), "--cache-dir",
                 str(tmp / "cache")]) == 0
    build_mkdocs(site_config(tmp, docs), tmp / "site")
    return tmp / "site"
