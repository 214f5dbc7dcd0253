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
from dlbench.core.releases import freeze_release
from dlbench.report.pages.cite import Citation
from dlbench.report.site.publish import build_mkdocs
from tests.site_fixtures import ROOT, RUN_A, SITE_URL, golden_results, site_config

#: Each payload calls alert(N): its N says which field it came through.
PAYLOADS = ('<script>alert({n})</script>', '<img src=x onerror="alert({n})">',
            '<iframe src="javascript:alert({n})"></iframe>', '[x](javascript:alert({n}))',
            '</div><script>alert({n})</script>', '## y {{ onclick="alert({n})" }}',
            '<javascript:alert({n})>', '<a href="JaVaScRiPt:alert({n})">z</a>')


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
        self.in_script = tag == "script"
        if tag in ("iframe", "frame", "object", "embed"):
            self.live.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on") or value.replace(" ", "").startswith("javascript:"):
                self.live.append(f"{tag} {name}={value}")

    def handle_endtag(self, tag: str) -> None:
        self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and "alert(" in data:
            self.live.append(data.strip()[:80])


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
    docs = tmp / "site_src"
    assert main(["build", "--release", "2026.12", "--results-dir", str(results), "--out",
                 str(docs), "--config", str(ROOT / "mkdocs.yml"), "--cache-dir",
                 str(tmp / "cache")]) == 0
    build_mkdocs(site_config(tmp, docs), tmp / "site")
    return tmp / "site"


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
