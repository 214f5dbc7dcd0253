"""The build step: deterministic pages from the golden results, labelled charts, IDs, code."""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dlbench.core.text.errors import SaveError
from dlbench.core.storage.layout import load_run
from dlbench.core.declarations.metrics import METRICS
from dlbench.report.site.build import build_site, renderer_version, site_files
from dlbench.report.site.cache import SHARED_BLOBS, SiteCache
from dlbench.report.inputs.source import load_draft, load_release
from tests.site_fixtures import (
    GOLDEN, RUN_A, RUN_B, SITE_URL, TEMPLATES, freeze, golden_results, site_config,
)

SPEC = re.compile(r'data-spec="([^"]*)"')


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    """Every file of the site for a draft of both golden runs."""
    return site_files(load_draft(GOLDEN, [RUN_A, RUN_B]), TEMPLATES, SITE_URL)


def _specs(page: bytes) -> list[dict]:
    return [json.loads(html.unescape(m)) for m in SPEC.findall(page.decode())]


def test_same_results_give_byte_identical_pages(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(SHARED_BLOBS, raising=False)  # each build renders its charts
    source = load_draft(GOLDEN, [RUN_A, RUN_B])
    first = build_site(source, tmp_path / "a", TEMPLATES, SITE_URL)
    again = build_site(source, tmp_path / "a", TEMPLATES, SITE_URL)
    assert first.written and not again.written and not again.removed
    build_site(source, tmp_path / "b", TEMPLATES, SITE_URL)
    a = {p.relative_to(tmp_path / "a"): p.read_bytes() for p in (tmp_path / "a").rglob("*")
         if p.is_file()}
    b = {p.relative_to(tmp_path / "b"): p.read_bytes() for p in (tmp_path / "b").rglob("*")
         if p.is_file()}
    assert a == b


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def test_a_rebuild_reuses_the_cache_until_data_or_templates_change(tmp_path: Path,
                                                                   monkeypatch) -> None:
    import shutil

    monkeypatch.delenv(SHARED_BLOBS, raising=False)  # this cache alone

    from dlbench.core.storage.tables import read_table, write_table

    results = golden_results(tmp_path)
    out, cache = tmp_path / "site_src", tmp_path / "cache"
    first = build_site(load_draft(results, [RUN_A, RUN_B]), out, TEMPLATES, SITE_URL,
                       cache_dir=cache)
    assert not first.cached and first.svgs_rendered > 0 and first.svgs_reused == 0
    assert SiteCache(cache).has("assets", renderer_version(), ".js")  # the Vega bundle kept
    assert not SiteCache(tmp_path / "empty").has("assets", renderer_version(), ".js")
    pages = _tree(out)
    again = build_site(load_draft(results, [RUN_A, RUN_B]), out, TEMPLATES, SITE_URL,
                       cache_dir=cache)
    assert again.cached and not again.written and not again.removed
    assert again.svgs_rendered == 0 and _tree(out) == pages
    build_site(load_draft(results, [RUN_A, RUN_B]), tmp_path / "plain", TEMPLATES, SITE_URL)
    assert _tree(tmp_path / "plain") == pages  # the cache gives what a build without it gives

    stem = results / "runs" / RUN_B / "observations"
    frame = read_table(stem.with_suffix(".parquet"), "observations")
    frame["value"] = frame["value"] * 1.5
    write_table(frame.drop(columns=["schema_version"]), stem, "observations")
    changed = build_site(load_draft(results, [RUN_A, RUN_B]), out, TEMPLATES, SITE_URL,
                         cache_dir=cache)
    assert not changed.cached and "experiments/precision.md" in changed.written
    assert "experiments/training.md" not in changed.written
    assert changed.svgs_rendered > 0 and changed.svgs_reused > 0  # training's charts reused

    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    with (templates / "cite.md.j2").open("a") as template:
        template.write("\nA changed template.\n")
    edited = build_site(load_draft(results, [RUN_A, RUN_B]), out, templates, SITE_URL,
                        cache_dir=cache)
    assert not edited.cached and edited.written == ("cite.md",)
    assert edited.svgs_rendered == 0


def test_builds_share_the_svgs_and_bundle_of_a_shared_folder(tmp_path: Path,
                                                              monkeypatch) -> None:
    """With SHARED_BLOBS (a test session), a build without a cache of its own keeps its SVGs
    and Vega bundle there, and the next build reuses them: the same files, nothing rendered."""
    monkeypatch.setenv(SHARED_BLOBS, str(tmp_path / "shared"))
    source = load_draft(GOLDEN, [RUN_A])
    first = build_site(source, tmp_path / "a", TEMPLATES, SITE_URL)
    assert first.svgs_rendered > 0 and first.svgs_reused == 0
    assert SiteCache(None).has("assets", renderer_version(), ".js")
    again = build_site(source, tmp_path / "b", TEMPLATES, SITE_URL)
    assert again.svgs_rendered == 0 and again.svgs_reused == first.svgs_rendered
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    monkeypatch.delenv(SHARED_BLOBS)
    assert not SiteCache(None).has("assets", renderer_version(), ".js")


@pytest.mark.parametrize("shared", [True, False], ids=["shared-folder", "own-cache"])
def test_a_chart_that_cannot_be_kept_names_the_folder_setting_to_change(
        tmp_path: Path, monkeypatch, shared: bool) -> None:
    """A blob that cannot be written says which setting names its folder: the shared folder's
    environment variable, or --cache-dir for the build's own cache."""
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("taken")
    if shared:
        monkeypatch.setenv(SHARED_BLOBS, str(blocked))
    else:
        monkeypatch.delenv(SHARED_BLOBS, raising=False)
    cache = SiteCache(None if shared else blocked)
    remedy = SHARED_BLOBS if shared else "--cache-dir"
    with pytest.raises(SaveError, match=re.escape(remedy)):
        cache.blob("svg", "a chart's spec", lambda: b"<svg/>", ".svg")


def test_adding_a_run_changes_only_what_depends_on_it(tmp_path: Path) -> None:
    """A run of another machine kind: a second run of the same kind would relabel the first
    run's rows everywhere ("(run 1)", report/inputs/labelled.py's told_apart)."""
    results = tmp_path / "results"
    shutil.copytree(GOLDEN, results)
    environment = results / "runs" / RUN_B / "environment.json"
    other_kind = json.loads(environment.read_text())
    other_kind["cpu"]["model"] = "Other Fixture CPU @ 3.0GHz"
    environment.write_text(json.dumps(other_kind))
    out = tmp_path / "site_src"
    build_site(load_draft(results, [RUN_A]), out, TEMPLATES, SITE_URL)
    report = build_site(load_draft(results, [RUN_A, RUN_B]), out, TEMPLATES, SITE_URL)
    changed = set(report.written) | set(report.removed)
    assert "experiments/precision.md" in changed
    assert "experiments/training.md" not in changed
    assert not [p for p in changed if p.startswith("charts/training-")]
    assert "assets/javascripts/vega-bundle.js" not in changed


def test_every_chart_is_labelled_with_unit_and_direction(files: dict[str, bytes]) -> None:
    specs = [s for path, data in files.items() if path.startswith("experiments/")
             for s in _specs(data)]
    assert len(specs) >= 10
    for spec in specs:
        layers = [spec, *spec.get("layer", [])]  # a layer may inherit the chart's encoding
        titles = [" ".join(t) if isinstance(t, list) else t  # a title wrapped into lines
                  for layer in layers for enc in layer.get("encoding", {}).values()
                  if isinstance(enc, dict) and (t := enc.get("title"))]
        assert any(re.search(r"\(.+, (lower|higher) is better\)", t) for t in titles), titles
        assert "lower is better" in str(spec["title"]) or "higher is better" in str(
            spec["title"])


def test_every_chart_is_a_valid_vega_lite_spec(files: dict[str, bytes]) -> None:
    from altair.utils.schemapi import validate_jsonschema
    from altair.vegalite.v6.schema.core import load_schema

    schema = load_schema()
    specs = [s for path, data in files.items() if path.endswith(".md") for s in _specs(data)]
    assert len(specs) >= 10
    for spec in specs:  # the build skips altair's validation, for speed; this is it
        validate_jsonschema(spec, schema, raise_error=True)


def test_every_chart_has_a_static_svg_without_external_urls(files: dict[str, bytes]) -> None:
    pages = b"".join(d for p, d in files.items() if p.endswith(".md")).decode()
    svgs = [p for p in files if p.startswith("charts/")]
    assert len(svgs) == len(SPEC.findall(pages))
    for path in svgs:
        assert f"../{path}" in pages or f"]({path})" in pages  # experiment pages or top pages
        text = files[path].decode()
        assert text.startswith("<svg") and "<path" in text
        assert "http" not in text.replace("http://www.w3.org", "")


def test_every_result_has_an_anchored_permanent_id(files: dict[str, bytes]) -> None:
    pages = files["experiments/training.md"].decode() + files["experiments/precision.md"].decode()
    results = pd.read_csv(pd.io.common.BytesIO(files["downloads/results.csv"]))
    assert results["result_id"].is_unique
    assert all(re.fullmatch(r"draft-\d{4}", i) for i in results["result_id"])
    for result_id in results["result_id"]:
        assert f'<a id="r-{result_id}" href="#r-{result_id}">{result_id}</a>' in pages
    home = files["index.md"].decode()
    assert re.search(r"\[draft-\d{4}\]\(experiments/training\.md#r-draft-\d{4}\)", home)


def _result_tables(page: str) -> list[tuple[str, list[dict]]]:
    """Each result table of a page with the sentence above it, rows keyed by header."""
    tables, lines = [], page.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("| Result ID |"):
            headers = [h.strip() for h in line.strip("|").split("|")]
            rows = []
            for row in lines[index + 2:]:
                if not row.startswith("| <a id="):
                    break
                rows.append(dict(zip(headers, [c.strip() for c in row.strip("|").split(" | ")],
                                     strict=True)))
            tables.append((lines[index - 2], rows))
    return tables


def test_every_number_states_spread_and_machine(files: dict[str, bytes]) -> None:
    tables = _result_tables(files["experiments/training.md"].decode())
    assert len(tables) == 5  # one per scalar metric
    interval = r"[\d.,]+–[\d.,]+"
    units = set()
    for above, rows in tables:
        assert rows
        for row in rows:
            machine = row.get("Machine") or above
            assert "cpu: Fixture CPU, 2 cores, AVX2 only" in machine
            median, ci, spread = (next(k for k in row if k.startswith(p))
                                  for p in ("Median (", "95% CI (", "Min–max ("))
            units.add(median.removeprefix("Median (").rstrip(")"))
            assert re.fullmatch(r"[\d.,]+", row[median]), row
            assert re.fullmatch(interval, row[ci]), row
            assert re.fullmatch(interval, row[spread]), row
            assert re.fullmatch(r"\d+", row["Processes"])
    assert units == {"s", "MiB", "fraction", "samples/s"}
    home = files["index.md"].decode()
    assert "95% CI" in home and "measured on <strong>Fixture CPU" in home


def test_code_tabs_show_the_recorded_snapshot_exactly(files: dict[str, bytes]) -> None:
    page = files["experiments/training.md"].decode()
    for framework in ("pytorch", "tensorflow", "keras"):
        assert f'=== "{framework}"' in page
        snapshot = load_run(GOLDEN / "runs" / RUN_A).code_text(
            f"runner/experiments/training/{framework}.py")
        indented = "\n".join(("    " + line).rstrip() for line in snapshot.rstrip().splitlines())
        assert indented in page
    assert "    ````python" in page  # the snapshot holds ```, so the fence is longer


def test_cells_without_results_are_listed_with_their_reason(files: dict[str, bytes]) -> None:
    page = files["experiments/training.md"].decode()
    assert "| CNN, 8x8 digits | Keras on torch |" in page and "fixture: not supported" in page


def test_data_dictionary_covers_every_metric_and_column(files: dict[str, bytes]) -> None:
    page = files["downloads.md"].decode()
    for name, metric in METRICS.items():
        assert f"| `{name}` | {metric.unit} | {metric.direction.phrase} |" in page
    assert "(undocumented column)" not in page
    for kind in ("results", "observations", "cells"):
        assert f"downloads/{kind}.csv" in files and f"downloads/{kind}.parquet" in files
    observations = pd.read_parquet(pd.io.common.BytesIO(files["downloads/observations.parquet"]))
    assert set(observations["run_id"]) == {RUN_A, RUN_B}


def test_nothing_is_fetched_from_another_host(files: dict[str, bytes]) -> None:
    for path, data in files.items():
        if path.endswith((".js", ".css")) and "vega-bundle" not in path:
            assert not re.search(rb"https?://", data), path
    bundle = files["assets/javascripts/vega-bundle.js"]
    assert bundle.startswith(b"(function () {") and b"window.vegaEmbed=" in bundle


def test_release_pages_are_built_from_the_frozen_copy(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A, RUN_B], "2026-12-01")
    files = site_files(load_release(results, "2026.12"), TEMPLATES, SITE_URL)
    assert files["downloads/observations.parquet"] == (root / "observations.parquet").read_bytes()
    published = json.loads((root / "MANIFEST.json").read_text())["derived"]["cells.csv"]
    assert hashlib.sha256(files["downloads/cells.csv"]).hexdigest() == published  # built
    assert "2026.12-0001" in files["experiments/training.md"].decode()
    cite = files["cite.md"].decode()
    # the fixture's site_url is the placeholder: no address is cited, the release name is
    assert "example.org" not in cite and "@misc{dlbench-2026-12," in cite
    assert "No public address yet: cite it by its release name, 2026.12" in cite
    real = site_files(load_release(results, "2026.12"), TEMPLATES, "https://bench.test/")
    assert "<https://bench.test/2026.12/>" in real["cite.md"].decode()
    assert "released 2026-12-01" in cite


def test_mkdocs_strict_build_passes_and_rejects_a_broken_anchor(tmp_path: Path) -> None:
    docs = tmp_path / "site_src"
    build_site(load_draft(GOLDEN, [RUN_A, RUN_B]), docs, TEMPLATES, SITE_URL)
    config = site_config(tmp_path, docs)
    command = [sys.executable, "-m", "mkdocs", "build", "-f", str(config)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "site" / "experiments" / "training" / "index.html").is_file()
    with (docs / "cite.md").open("a") as page:
        page.write("\n[broken](experiments/training.md#r-no-such-result)\n")
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode != 0 and "r-no-such-result" in done.stderr


def test_committed_releases_verify_and_build_strictly(served_committed_releases) -> None:
    import urllib.request

    import yaml

    from tests.site_fixtures import ROOT, committed_releases

    releases = committed_releases()
    if not releases:
        pytest.skip("no release committed under results/releases yet")
    assert yaml.safe_load((ROOT / "mkdocs.yml").read_text())["strict"] is True
    # each release verified as it is read, built, and deployed by mike, whose mkdocs build
    # takes the config's strict mode: a warning fails the deploy; the browser tests' site,
    # built once a session (tests/conftest.py)
    url = served_committed_releases(releases)
    for name in releases:
        with urllib.request.urlopen(f"{url}{name}/", timeout=30) as page:
            assert page.status == 200 and b"md-content" in page.read(), name


def test_numbers_show_three_significant_digits() -> None:
    from dlbench.report.inputs.labelled import format_number

    assert [format_number(v) for v in (0.012345, 4.567, 123.4, 1234.6, 0.0, -0.5)] == [
        "0.0123", "4.57", "123", "1,235", "0", "-0.500"]
    assert format_number(float("nan")) == "n/a"


def test_claims_page_gives_each_claim_a_verdict_with_evidence(files: dict[str, bytes]) -> None:
    from dlbench.report.claims.check import load_claims

    page = files["claims.md"].decode()
    for claim in load_claims():
        assert f"{{ #claim-{claim.id} }}" in page
    verdicts = re.findall(r"\): \*\*(supported|contradicted|inconclusive|not measurable here|"
                          r"not measured in this release)\*\*", page)
    assert len(verdicts) == len(load_claims())  # one verdict per claim on the one machine
    assert page.count('??? note "Details: ') == len(load_claims())
    assert re.search(r"\[draft-\d{4}\]\(experiments/training\.md#r-draft-\d{4}\)", page)
    assert '=== "pytorch"' in page and "loss.backward()" in page  # the counted listings


def test_compare_page_sets_a_release_against_the_previous_one(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    freeze(results, "2026.11", [RUN_A], "2026-11-30")
    freeze(results, "2026.12", [RUN_A, RUN_B], "2026-12-01")
    first = site_files(load_release(results, "2026.11"), TEMPLATES, SITE_URL, results)
    assert "Nothing to compare yet" in first["compare.md"].decode()
    page = site_files(load_release(results, "2026.12"), TEMPLATES, SITE_URL, results)[
        "compare.md"].decode()
    assert "## Release 2026.11 → release 2026.12" in page
    # the same run in both releases: every shared (cell, metric) is unchanged
    assert re.search(r"(\d+) \(cell, metric\) pairs measured on both sides: \1 no significant "
                     r"difference", page)
    # runs of one machine kind are its replicates, named by kind, never by run ID (issue 66)
    assert "## Fixture CPU, 2 cores, AVX2 only: run 2 against run 1 (replicates of one kind)" \
        in page


def test_home_page_opens_with_one_table_per_question_in_words(
        files: dict[str, bytes]) -> None:
    page = files["index.md"].decode()
    caption = page.index("measured on <strong>Fixture CPU")
    founding = page.index('<div class="dlbench-founding"')  # the founding questions first
    first_table = page.index("| Workload |")
    assert caption < founding < first_table < page.index("## How sure these answers are")
    rows = [line for line in page.splitlines() if line.startswith(("| MLP, 8x8 digits",
                                                                   "| CNN, 8x8 digits"))]
    assert rows and all(" | " in row for row in rows)
    bold = [row for row in rows if "**1.00**" in row]
    assert bold  # a decided best
    for row in bold:  # every other measured cell of a decided row lies beyond 5%
        lows = re.findall(r"<small>([\d.,]+)–", row)
        assert lows and all(float(low.replace(",", "")) > 1.05 for low in lows), row
    assert "steady_epoch_time" not in page.split("??? info")[0]  # words, not metric ids
    assert "pytorch" not in "\n".join(rows) and "mlp-digits" not in "\n".join(rows)
    assert "false winners to expect" in page
    assert "One interval level on this page, 95% per row" in page


def test_every_build_writes_its_verdicts_as_data(files: dict[str, bytes]) -> None:
    import io

    table = pd.read_csv(io.BytesIO(files["downloads/verdicts.csv"]))
    assert set(table["row"]) >= {"answer", "pair"}
    pairs = table[table["row"] == "pair"]
    assert pairs["result_id_a"].str.len().gt(0).all() and pairs["family_size"].ge(1).all()
    named = pairs[pairs["decision"].isin(["a better", "b better"])]
    assert ((named["ci_high"] < 1 / named["threshold"].add(1))
            | (named["ci_low"] > named["threshold"].add(1))).all()
    parquet = pd.read_parquet(io.BytesIO(files["downloads/verdicts.parquet"]))
    assert len(parquet) == len(table)


def test_the_build_step_imports_no_measurement_code() -> None:
    code = ("import sys, dlbench.report.site.build, dlbench.report.site.commands; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'torch', 'tensorflow', 'keras', 'jax'} | {m for m in sys.modules "
            "if m.startswith('dlbench.runner')}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
