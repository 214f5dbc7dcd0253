"""Errata: append-only, outside the frozen checksums, shown as a banner on every page."""

from __future__ import annotations

import posixpath
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.core.storage.releases import ERRATA
from dlbench.report.site.build import build_site
from dlbench.report.site.errata import Erratum, ErrataError, append_erratum, read_errata
from dlbench.report.inputs.source import SourceError, load_release
from tests.site_fixtures import (
    ROOT, RUN_A, RUN_B, SITE_URL, TEMPLATES, freeze, golden_results, site_config,
)

FIRST = Erratum("2026-12-02", "pseudo-replicated intervals", "repeats shared one process",
                "planned for the next release: one process per repeat")


def _two_releases(tmp_path: Path) -> Path:
    results = golden_results(tmp_path)
    freeze(results, "2026.11", [RUN_A], "2026-11-30")
    freeze(results, "2026.12", [RUN_A, RUN_B], "2026-12-01")
    return results


def test_appending_keeps_every_earlier_byte_and_the_manifest_verifies(tmp_path: Path) -> None:
    results = _two_releases(tmp_path)
    path = append_erratum(results, "2026.11", FIRST)
    before = path.read_bytes()
    later = Erratum("2026-12-03", "superseded", "all of the above", "re-measured",
                    superseded_by="2026.12")
    append_erratum(results, "2026.11", later)
    after = path.read_bytes()
    assert after.startswith(before) and len(after) > len(before)
    assert read_errata(results / "releases" / "2026.11") == (FIRST, later)
    load_release(results, "2026.11")  # the errata are not part of the frozen checksums
    with (results / "releases" / "2026.11" / "result_ids.csv").open("a") as handle:
        handle.write("tampered\n")
    with pytest.raises(SourceError, match="differ from MANIFEST.json"):
        load_release(results, "2026.11")  # ...but the frozen files still are


@pytest.mark.parametrize(("erratum", "message"), [
    (Erratum("2 Dec", "t", "w", "c"), "is not YYYY-MM-DD"),
    (Erratum("2026-12-02", "t", "", "c"), "'wrong' is empty"),
    (Erratum("2026-12-02", "", "w", "c"), "'title' is empty"),
    (Erratum("2026-12-01", "t", "w", "c"), "before the last erratum's"),
    (Erratum("2026-12-02", "t", "w", "c", superseded_by="2027.01"), "not another published"),
    (Erratum("2026-12-02", "t", "w", "c", superseded_by="2026.11"), "not another published"),
])
def test_a_bad_erratum_is_refused_and_nothing_changes(tmp_path: Path, erratum: Erratum,
                                                      message: str) -> None:
    results = _two_releases(tmp_path)
    path = append_erratum(results, "2026.11", FIRST)
    before = path.read_bytes()
    with pytest.raises(ErrataError, match=message):
        append_erratum(results, "2026.11", erratum)
    assert path.read_bytes() == before


def test_erratum_command_appends_or_says_what_is_wrong_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = _two_releases(tmp_path)
    base = ["--results-dir", str(results), "--title", "t", "--wrong", "w", "--correction", "c"]
    assert main(["erratum", "2026.11", *base, "--date", "2026-12-02"]) == 0
    assert "appended an erratum" in capsys.readouterr().out
    assert main(["erratum", "2025.01", *base]) == 2
    error = capsys.readouterr().err
    assert "unknown release '2025.01'" in error and error.count("\n") == 1
    assert not (results / "releases" / "2025.01").exists()
    assert len(read_errata(results / "releases" / "2026.11")) == 1


def test_an_edited_errata_file_that_is_not_well_formed_stops_the_build(tmp_path: Path) -> None:
    results = _two_releases(tmp_path)
    (results / "releases" / "2026.11" / ERRATA).write_text("- date: soon\n  wrong: x\n")
    with pytest.raises(ErrataError, match="entry 1"):
        build_site(load_release(results, "2026.11"), tmp_path / "out", TEMPLATES, SITE_URL)


def _html_pages(site: Path) -> dict[str, str]:
    return {p.relative_to(site).as_posix(): p.read_text() for p in site.rglob("index.html")}


def test_every_page_of_a_release_with_errata_shows_the_banner(tmp_path: Path) -> None:
    results = _two_releases(tmp_path)
    append_erratum(results, "2026.11", FIRST)
    append_erratum(results, "2026.11", Erratum("2026-12-03", "cached compile times", "w",
                                               "c", superseded_by="2026.12"))
    built = {}
    for name in ("2026.11", "2026.12"):
        docs = tmp_path / name / "site_src"
        build_site(load_release(results, name), docs, TEMPLATES, SITE_URL, results)
        config = site_config(tmp_path / name, docs)
        done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f", str(config)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-2000:]  # strict: every link resolves
        built[name] = _html_pages(tmp_path / name / "site")
    pages = built["2026.11"]
    assert {"index.html", "errata/index.html", "experiments/training/index.html"} <= set(pages)
    for path, page in pages.items():
        banner = re.search(r'<div class="dlbench-errata".*?</div>', page, re.S)
        assert banner, path
        text = banner.group(0)
        assert "Errata for release 2026.11" in text and "2 known problems" in text
        assert "pseudo-replicated intervals; cached compile times" in text
        assert "Superseded by" in text and "release 2026.12" in text
        links = [posixpath.normpath(posixpath.join("2026.11", posixpath.dirname(path), href))
                 for href in re.findall(r'href="([^"]+)"', text)]
        assert links == ["2026.12", "2026.11/errata"], (path, links)  # beside this version
    errata = pages["errata/index.html"]
    assert "repeats shared one process" in errata and "one process per repeat" in errata
    assert not any("dlbench-errata" in page for page in built["2026.12"].values())


def test_release_2026_12_lists_the_problems_found_in_review() -> None:
    errata = read_errata(ROOT / "results" / "releases" / "2026.12")
    titles = " / ".join(e.title for e in errata)
    for problem in ("pseudo-replicated intervals", "import footprint published as memory",
                    "cached compile times", "unmatched execution modes",
                    "claim rules that could only go one way", "per-call overhead",
                    "quick and standard runs compared"):
        assert problem in titles
    review = [e for e in errata if e.title != "Verdicts stored after publication"]
    assert len(review) == len(errata) - 1  # the one erratum not found in review
    assert all("2027.01" in e.correction for e in review)


def test_an_erratum_is_rendered_in_short_parts_with_its_answers_in_words() -> None:
    from dlbench.core.declarations.metrics import reader_label
    from dlbench.report.site.errata_page import LINE_CHARS, erratum_block

    long_clause = "the ResNet-50 answers read " + ", ".join(f"{n}.5%" for n in range(60, 130))
    erratum = Erratum(
        "2026-12-06", "Fraction of peak above 100%",
        "deploy-resnet50 and serve-resnet50 were published at 153.2%; keras-jax's "
        f"jit_compile cell too. The probe was no peak: {long_clause}. Not *bold* [a link](x).",
        "From dlbench commit 51839b2 the peak is an upper bound "
        "(benchmarks/regime_correction.py --release 2027.03, dlbench/core/machine/achieved.py). "
        "No verdict changed.")
    block = erratum_block(erratum, ["AMD EPYC, 2 cores, AVX2 only"])
    assert block["answers"][0].startswith("Which framework serves ResNet-50 fastest on a CPU")
    assert block["answers"][0].endswith(f"— {reader_label('latency_p50')}")  # its metric
    assert any(a.startswith("Which deployment runtime serves ResNet-50") for a in block["answers"])
    assert len(block["answers"]) == 3  # the deployment answer and serve-resnet50's two
    assert block["machines"] == ["AMD EPYC, 2 cores, AVX2 only"]
    published = block["published"][0]
    assert published.startswith("`deploy-resnet50` and `serve-resnet50` were published")
    assert "Keras on JAX" in published and "keras-jax" not in published
    assert "jit_compile" not in published.replace("`jit_compile`", "")
    why = block["why"]
    assert len(why) > 2 and all(len(line) <= LINE_CHARS for line in why)  # cut at clauses
    assert why[-1] == r"Not \*bold\* \[a link\](x)."  # Markdown typed in an erratum stays text
    assert block["corrected"] == [
        "From dlbench commit `51839b2` the peak is an upper bound "
        "(`benchmarks/regime_correction.py --release 2027.03`, "
        "`dlbench/core/machine/achieved.py`).",
        "No verdict changed."]


def test_the_committed_errata_pages_have_no_raw_identifier_and_no_wall_of_text() -> None:
    """Every committed release's errata as the page renders them, in HTML: no visible line
    over 500 characters and no raw identifier outside code (the browser tests read the
    served pages the same way)."""
    import html as html_module

    import markdown

    from dlbench.report.render.jinja import environment
    from dlbench.report.site.build import errata_files
    from tests.test_site_browser_releases import RAW_IDS

    for release in ("2026.12", "2027.01", "2027.02", "2027.03", "2027.04"):
        source = load_release(ROOT / "results", release)
        page = errata_files(source, environment(TEMPLATES), None)["errata.md"].decode()
        body = markdown.markdown(page)
        lines = re.findall(r"<(p|li)>(.*?)</\1>", body, re.S)
        assert len(lines) > 4 * len(read_errata(source.root)), release  # parts, each a line
        for _, line in lines:
            visible = html_module.unescape(re.sub(r"<code>.*?</code>|<[^>]+>", "", line))
            assert len(visible) <= 500, (release, visible[:80])
            assert not RAW_IDS.search(visible), (release, RAW_IDS.search(visible).group(0))
