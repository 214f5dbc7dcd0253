"""The site of the committed releases (2026.12 to 2027.03) and a draft in headless
Chromium: the first answer on the first screen, labels instead of identifiers, no blank chart,
every table within a desktop page, the anchor kept across versions, the site's own 404 page,
and a draft that asks for no versions.json. Screenshots go to $DLBENCH_SCREENSHOTS, else
build/screenshots."""

from __future__ import annotations

import os
import re
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dlbench.core.declarations.metrics import METRICS
from dlbench.report.site.build import build_site
from dlbench.report.site.publish import build_mkdocs
from dlbench.report.site.static_server import make_server
from dlbench.report.inputs.source import load_draft
from tests.site_fixtures import TEMPLATES, golden_results, site_config, RUN_A

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
RELEASES = ("2026.12", "2027.01", "2027.02", "2027.03")
SHOTS = Path(os.environ.get("DLBENCH_SCREENSHOTS")
             or Path(__file__).parent.parent / "build" / "screenshots")
#: A raw metric identifier as a word of visible text (code blocks are not visible text).
RAW = re.compile(r"\b(" + "|".join(sorted((m for m in METRICS if "_" in m), key=len,
                                         reverse=True)) + r")\b")

#: Every raw identifier of the committed releases a reader should never see as text:
#: system keys, workload IDs, cell IDs and metric keys.
RAW_IDS = re.compile(r"(?<![\w./-])(keras-(jax|tensorflow|torch)|mlp-digits|cnn-digits|"
                     r"cnn-synthetic|resnet-synthetic|transformer-tokens|lstm-tokens|"
                     r"(training|inference|precision|execution-mode|export|parity):[\w.:-]+|"
                     + RAW.pattern.strip("\\b()") + r")(?![\w/-])")


def _serve(root: Path) -> tuple[str, object]:
    server = make_server(root, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/", server


@pytest.fixture(scope="module")
def released(served_committed_releases) -> str:
    """The committed releases deployed with mike, exported and served on localhost (built
    once a session for every module that reads them: tests/conftest.py). The walks read
    RELEASES; the site holds every committed release, the one build they all share."""
    from tests.site_fixtures import committed_releases

    return served_committed_releases(committed_releases())


@pytest.fixture(scope="module")
def draft(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A draft of one golden run, built as `make site` builds it, served on localhost."""
    tmp = tmp_path_factory.mktemp("draft")
    results = golden_results(tmp)
    build_site(load_draft(results, [RUN_A]), tmp / "site_src", TEMPLATES,
               "http://127.0.0.1/", results)
    build_mkdocs(site_config(tmp, tmp / "site_src", "http://127.0.0.1/"), tmp / "built")
    url, server = _serve(tmp / "built")
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _page(browser, width: int = 1280, height: int = 800) -> object:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda error: page.problems.append(f"page error: {error}"))
    page.on("console", lambda m: page.problems.append(f"console: {m.text}")
            if m.type == "error" else None)
    return page


def _drawn(page) -> None:
    page.wait_for_function(
        "() => [...document.querySelectorAll('div.dlbench-chart')].every("
        "d => d.dataset.state === 'drawn' || d.dataset.state === 'failed')", timeout=30000)


def _visible_text(page) -> str:
    """The article's rendered text without code blocks (the code tabs are code)."""
    return page.evaluate("() => { const a = document.querySelector('article').cloneNode(true);"
                         " a.querySelectorAll('pre, code, .tabbed-set, details:not([open])')"
                         ".forEach(n => n.remove()); return a.innerText; }")


PAGES = ["experiments/training/", "experiments/inference/", "experiments/precision/",
         "experiments/execution-mode/", "experiments/data-parallel/", "experiments/export/",
         "experiments/parity/", "environment/", "methodology/", "compare/", "cite/", "claims/",
         "errata/"]


def test_no_raw_identifier_and_no_blank_chart(browser, released: str) -> None:
    page = _page(browser)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for path in PAGES:  # the environment page lists the cells 2027.01 re-measured: in words
        page.goto(f"{released}2027.01/{path}")
        page.wait_for_load_state("networkidle")
        _drawn(page)
        raw = sorted({m[0] for m in RAW_IDS.findall(_visible_text(page))})
        assert not raw, (path, raw)
        for chart in page.locator("div.dlbench-chart").all():
            assert chart.get_attribute("data-state") == "drawn", chart.get_attribute("id")
            marks = chart.locator("svg g[class*='mark-'] path, svg g[class*='mark-'] line, "
                                  "svg g[class*='mark-'] rect")
            assert marks.count() > 0, chart.get_attribute("id")
        page.screenshot(path=str(SHOTS / f"{path.strip('/').replace('/', '-')}.png"),
                        full_page=False)
    assert not page.problems, page.problems


def test_environment_page_shows_labels_and_units(browser, released: str) -> None:
    page = _page(browser)
    page.goto(f"{released}2027.01/environment/")
    text = _visible_text(page)
    assert "fp32 peak (GFLOP/s)" in text and "192.4" in text
    for raw in ("hostname_sha256", "fp32_flops", "192444370551", "None"):
        assert raw not in text


def test_accuracy_is_drawn_on_a_zero_to_one_axis(browser, released: str) -> None:
    page = _page(browser)
    page.goto(f"{released}2027.01/experiments/training/")
    _drawn(page)
    chart = page.locator("div.dlbench-chart[id*='test-accuracy']").first
    ticks = chart.evaluate("c => [...c.querySelectorAll('svg text')].map(t => t.textContent)")
    assert "1.0" in ticks or "1" in ticks, ticks


def test_version_selector_keeps_the_cell_where_the_other_release_has_it(
        browser, released: str) -> None:
    from playwright.sync_api import expect

    page = _page(browser)
    # mlp-digits, PyTorch, time per epoch: 2027.01-0557 is 2026.12-0819
    page.goto(f"{released}2027.01/experiments/training/#r-2027.01-0557")
    _drawn(page)
    # the header shows the page's title once the page scrolled to the row: click as the
    # reader does after scrolling back up, on the selector's own link
    page.locator(".md-version__link", has_text="2026.12").evaluate("link => link.click()")
    page.wait_for_url("**/2026.12/experiments/training/#c-*")
    _drawn(page)
    target = page.locator("tr", has=page.locator("[id='r-2026.12-0819']"))
    expect(target).to_be_in_viewport()
    # 2027.01 was measured on an Intel Xeon, 2026.12 on an AMD EPYC: the page says so
    expect(page.locator(".dlbench-unlike")).to_contain_text("on another machine")
    assert not page.problems, page.problems


def test_unknown_paths_get_the_sites_404_page(browser, released: str) -> None:
    for path in ("2027.01/no-such-page/", "no-such-version/x/"):
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(released + path, timeout=10)
        assert error.value.code == 404
        assert "md-content" in error.value.read().decode()  # the site's page, not Python's
    page = _page(browser)
    page.goto(f"{released}2027.01/no-such-page/")
    assert "404" in page.locator("article").inner_text()


def test_the_draft_has_no_version_selector_and_no_console_error(browser, draft: str) -> None:
    page = _page(browser)
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    for path in ("", "experiments/training/", "cite/"):
        page.goto(draft + path)
        page.wait_for_load_state("networkidle")
        _drawn(page)
    assert not [u for u in requests if u.endswith("versions.json")]
    assert page.locator(".md-version").count() == 0
    assert not page.problems, page.problems
    text = page.locator("article").inner_text()
    assert "provisional" in text and "always means the same measurement" not in text


def test_the_phone_layout_shows_the_site_title(browser, released: str) -> None:
    page = _page(browser, width=390)
    page.goto(f"{released}2027.01/experiments/training/")
    title = page.locator(".md-header__title .md-header__topic .md-ellipsis").first
    box = title.bounding_box()
    assert box and box["width"] >= 50, box  # "dlbench", not one clipped letter
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "phone-training.png"))


#: The height of one row of an answer table, in px: its top and one line of it must show.
LINE = 24
#: The first answer: the first founding question's answer line that is measured (issue 66:
#: the home page opens with the founding questions, each answered above the tables).
FIRST_ANSWER = ".dlbench-founding li:not(:has(.dlbench-not-measured))"


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_the_first_answer_is_on_the_first_screen_on_a_desktop_and_a_phone(
        browser, released: str, width: int, height: int) -> None:
    page = _page(browser, width, height)
    page.goto(f"{released}{RELEASES[-1]}/")
    page.wait_for_load_state("networkidle")
    top = page.evaluate(f"() => document.querySelector('{FIRST_ANSWER}')"
                        ".getBoundingClientRect().top + window.scrollY")
    text = page.locator(FIRST_ANSWER).first.inner_text()
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"home-{width}.txt").write_text(f"first answer at {width}x{height}: "
                                             f"y={top:.0f} px: {text[:80]}\n")
    assert top + LINE < height, (top, text)
    assert re.search(r"\d", text) and ": " in text, text  # a workload, then its answer
    page.screenshot(path=str(SHOTS / f"home-{width}.png"))
    assert not page.problems, page.problems


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_home_page_names_the_hardware_first_and_shows_every_number(
        browser, released: str, width: int, height: int) -> None:
    page = _page(browser, width, height)
    for release in RELEASES:
        page.goto(f"{released}{release}/")
        page.wait_for_load_state("networkidle")
        caption = page.locator(".dlbench-caption")
        box = caption.bounding_box()
        assert box and box["y"] + box["height"] <= height, (release, box)  # the first screen
        assert re.search(r"(\d+ cores?(, [^;·]+)?|GPU).*· PyTorch", caption.inner_text())
        assert not page.evaluate(OFF_SCREEN), (release, width)
        raw = sorted({m[0] for m in RAW_IDS.findall(_visible_text(page))})
        assert not raw, (release, raw)


#: Table cells (headers and values) shown right of the screen: a number a phone cannot see
#: without scrolling the table sideways.
OFF_SCREEN = """() => [...document.querySelectorAll('article table')]
  .filter(t => t.offsetParent !== null)
  .flatMap(t => [...t.querySelectorAll('th, td')].filter(c => {
    const box = c.getBoundingClientRect();
    return box.width > 0 && box.right > window.innerWidth + 1; }))
  .map(c => c.textContent.trim().slice(0, 40))"""
#: Charts wider than their column or whose drawing is wider than the chart (a title, legend or
#: label cut off), and axis or legend labels Vega cut short with an ellipsis (labelLimit).
CLIPPED = """() => [...document.querySelectorAll('div.dlbench-chart')].flatMap(c => {
  const s = c.querySelector('svg'); if (!s) return [];
  const box = s.getBoundingClientRect(), drawn = s.querySelector('g').getBBox();
  const cut = [...s.querySelectorAll('text')].filter(t => /…$/.test(t.textContent))
    .map(t => `${c.id}: label "${t.textContent}"`);
  return (box.width > c.clientWidth + 1 || box.right > window.innerWidth + 1
          || drawn.width > box.width + 1) ? [`${c.id}: clipped`, ...cut] : cut; })"""


#: Tables wider than the page's column: a desktop reader scrolls them sideways.
WIDER_THAN_PAGE = """() => { const width = document.querySelector('article').clientWidth;
  return [...document.querySelectorAll('article table')]
    .filter(t => t.offsetParent !== null && t.scrollWidth > width + 1)
    .map(t => `${t.scrollWidth} px: ${(t.querySelector('th') || t).textContent.trim()}`); }"""
#: The height of every walk's window: the walks' checks compare widths only.
WALK_HEIGHT = 844


#: The reader's text of a page (tests/test_site_browser_reader.py): the article's visible text
#: without code, code tabs and closed details.
VISIBLE = """() => { const a = document.querySelector('article').cloneNode(true);
  a.querySelectorAll('pre, code, .tabbed-set, details:not([open])').forEach(n => n.remove());
  return a.innerText; }"""
#: The length of every visible paragraph and list item (a wall of text is over 500).
LENGTHS = """() => [...document.querySelectorAll('article p, article li:not(:has(p))')]
  .filter(p => p.offsetParent !== null).map(p => p.innerText.length)"""


@pytest.fixture(scope="module")
def walked(browser, released: str, committed_release_walks: dict) -> Callable[[int], dict]:
    """walk(width): what every page of every release shows in a window that wide, each page
    visited once a session for every check that reads it (this module's and
    tests/test_site_browser_reader.py's): the visible text and paragraph lengths of each
    page that exists as it loads, then, its charts drawn, charts clipped and labels cut
    short, table cells right of the screen, tables wider than the page, and how many tables
    are shown as cards."""
    def walk(width: int) -> dict:
        if (released, width) not in committed_release_walks:
            page = _page(browser, width, WALK_HEIGHT)
            seen = {"clipped": [], "off_screen": [], "wider": [], "cards": 0, "texts": {}}
            for release in RELEASES:
                for path in ["", *PAGES]:
                    loaded = page.goto(f"{released}{release}/{path}")
                    if loaded.status != 404:
                        seen["texts"][f"{release}/{path or 'home'}"] = (
                            page.evaluate(VISIBLE), page.evaluate(LENGTHS))
                    page.wait_for_load_state("networkidle")
                    _drawn(page)
                    where = f"{release}/{path}"
                    seen["clipped"] += [f"{where} {problem}" for problem in page.evaluate(CLIPPED)]
                    seen["off_screen"] += [f"{where}: {cell}" for cell in page.evaluate(OFF_SCREEN)]
                    seen["wider"] += [f"{where}: {table}"
                                      for table in page.evaluate(WIDER_THAN_PAGE)]
                    seen["cards"] += page.locator("article table[data-cards]").count()
            page.context.close()
            committed_release_walks[(released, width)] = seen
        return committed_release_walks[(released, width)]

    return walk


@pytest.mark.parametrize("width", [1280, 390])
def test_no_chart_is_clipped_and_no_label_cut_short_on_any_page(walked, width: int) -> None:
    found = walked(width)["clipped"]
    assert not found, found


def test_every_table_shows_its_numbers_on_a_phone(browser, released: str, walked) -> None:
    phone = walked(390)
    assert not phone["off_screen"], phone["off_screen"]
    assert phone["cards"] > 0  # the wide result tables became cards: a phone reads row labels
    page = _page(browser, 390, 844)
    page.set_viewport_size({"width": 1280, "height": 800})  # a wide window: tables again
    page.goto(f"{released}{RELEASES[-1]}/environment/")
    page.wait_for_load_state("networkidle")
    assert page.locator("article table[data-cards]").count() < \
        page.locator("article table").count()


def test_every_table_fits_the_page_on_a_desktop(walked) -> None:
    wide = walked(1280)["wider"]
    assert not wide, wide


def test_a_draft_says_on_every_page_that_it_is_not_citable(browser, draft: str) -> None:
    page = _page(browser, 390, 844)
    for path in ("", "experiments/training/", "methodology/"):
        page.goto(draft + path)
        banner = page.locator(".dlbench-draft")
        assert banner.count() == 1 and "not citable" in banner.inner_text(), path
