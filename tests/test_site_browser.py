"""The versioned site in headless Chromium: offline, charts drawn, selector, tabs, anchors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from dlbench.report.site.publish import export_site
from dlbench.report.site.static_server import make_server
from tests.site_fixtures import publish_golden

pytestmark = pytest.mark.browser
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
PAGES = ("", "experiments/training/", "experiments/precision/", "environment/", "claims/",
         "compare/", "methodology/", "downloads/", "cite/")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The golden releases deployed with mike, exported, served on localhost.

    The site is built for the address it is served at: Material's instant navigation only
    takes over links that its sitemap (written from site_url) lists.
    """
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed (apt-get install chromium)")
    tmp = tmp_path_factory.mktemp("site")
    root = tmp / "export"
    root.mkdir()
    server = make_server(root, 0)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = publish_golden(tmp, url)
    export_site(pages, root)
    assert not any(p.is_symlink() for p in root.rglob("*"))  # plain files for any host
    (tmp_path_factory.getbasetemp() / "pages-repo").write_text(str(pages))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, site: str) -> Iterator[object]:
    """A page that records page errors and aborts (and records) any request off localhost."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error"
            else None)

    def guard(route) -> None:
        host = urlparse(route.request.url).hostname
        if host != "127.0.0.1":
            problems.append(f"request to another host: {route.request.url}")
            route.abort()
        else:
            route.continue_()

    context.route("**/*", guard)
    page.problems = problems
    yield page
    context.close()
    assert not problems, problems


def _settled_box(page, svg, tries: int = 50) -> dict | None:
    """The svg's box once it is in the layout: a chart that vega redraws (on a resize, or
    after an instant navigation) is briefly detached, and its box then reads None."""
    for _ in range(tries):
        svg.wait_for(state="visible")
        box = svg.bounding_box()
        if box:
            return box
        page.wait_for_timeout(100)
    return None


def _charts_drawn(page, at_least: int = 1) -> None:
    """Wait until the page's charts (at least `at_least`) are drawn; check their marks."""
    page.wait_for_function(
        "n => { const charts = [...document.querySelectorAll('div.dlbench-chart')];"
        " return charts.length >= n && charts.every("
        "d => d.dataset.state === 'drawn' || d.dataset.state === 'failed'); }",
        arg=at_least, timeout=20000)
    charts = page.locator("div.dlbench-chart")
    for index in range(charts.count()):
        chart = charts.nth(index)
        assert chart.get_attribute("data-state") == "drawn", chart.get_attribute("id")
        marks = chart.locator("svg g[class*='mark-'] path, svg g[class*='mark-'] line")
        assert marks.count() > 0, f"{chart.get_attribute('id')} drew no marks"
        box = _settled_box(page, chart.locator("svg").first)
        assert box and box["width"] > 200 and box["height"] > 50
        frame = chart.bounding_box()  # nothing sticks out of the chart's place in the page
        assert box["x"] >= frame["x"] - 1 and box["x"] + box["width"] <= frame["x"] + frame[
            "width"] + 1, (chart.get_attribute("id"), box, frame)


def test_every_page_renders_offline_with_its_charts(page, site: str) -> None:
    total = 0
    for path in PAGES:
        page.goto(f"{site}latest/{path}")
        page.wait_for_load_state("networkidle")
        _charts_drawn(page, at_least=1 if path.startswith("experiments/") else 0)
        total += page.locator("div.dlbench-chart").count()
        assert page.locator("article h1").count() == 1
    assert total >= 10


def test_version_selector_lists_every_release(page, site: str) -> None:
    page.goto(site)  # the root redirects to latest
    page.wait_for_url("**/latest/**")
    page.wait_for_selector(".md-version__list", state="attached")
    versions = page.locator(".md-version__list .md-version__link").all_text_contents()
    assert any("2026.12" in v for v in versions) and any("2026.11" in v for v in versions)
    assert "2026.12" in page.locator(".md-version__current").inner_text()


def test_code_tabs_switch(page, site: str) -> None:
    page.goto(f"{site}latest/experiments/training/")
    tabs = page.locator(".tabbed-set").first
    labels = tabs.locator(".tabbed-labels label")
    assert labels.count() == 3
    blocks = tabs.locator(".tabbed-block")
    assert blocks.nth(0).is_visible() and not blocks.nth(1).is_visible()
    labels.nth(1).click()
    assert blocks.nth(1).is_visible() and not blocks.nth(0).is_visible()
    assert "def train" in blocks.nth(1).inner_text()


def test_result_id_anchor_resolves_to_its_row(page, site: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{site}2026.12/")
    page.locator("details summary").first.click()  # the evidence behind the first answers
    link = page.locator("a[href*='#r-2026.12-']").first
    target = link.get_attribute("href").split("#")[1]
    link.click()
    page.wait_for_url(f"**#{target}")
    row_anchor = page.locator(f"[id='{target}']")
    row_anchor.wait_for(state="attached")  # instant navigation swaps the content in later
    assert row_anchor.count() == 1
    expect(row_anchor).to_be_in_viewport()  # the page scrolled to the row
    assert row_anchor.inner_text() == target.removeprefix("r-")
    row = page.locator("tr", has=row_anchor)
    assert re.search(r"\t\d[\d.,]*\t", row.inner_text())  # the row holds the median
    table = page.locator("table", has=row_anchor)
    assert re.search(r"\((s|MiB|fraction|samples/s)\)", table.locator("thead").inner_text())


def _swapped_in(page, title: str) -> None:
    """Instant navigation changes the address before it swaps the article in: wait for it."""
    from playwright.sync_api import expect

    expect(page.locator("article h1").first).to_contain_text(title)


def test_instant_navigation_away_and_back_still_draws_charts(page, site: str) -> None:
    page.goto(f"{site}2026.12/experiments/training/")
    _charts_drawn(page)
    page.evaluate("window.dlbenchSamePage = true")  # survives only an instant navigation
    page.locator("nav.md-nav--primary a", has_text="Environment").first.click()
    page.wait_for_url("**/2026.12/environment/")
    _swapped_in(page, "Environment")
    page.locator("nav.md-nav--primary a", has_text="Training").first.click()
    page.wait_for_url("**/2026.12/experiments/training/")
    _swapped_in(page, "Training")
    _charts_drawn(page)
    page.go_back()
    page.wait_for_url("**/2026.12/environment/")
    _swapped_in(page, "Environment")
    page.go_back()
    page.wait_for_url("**/2026.12/experiments/training/")
    _swapped_in(page, "Training")
    _charts_drawn(page)
    assert page.evaluate("window.dlbenchSamePage === true"), "navigation reloaded the page"
    assert page.locator("div.dlbench-chart").count() >= 10


def test_serve_command_serves_the_versioned_site(site: str,
                                                 tmp_path_factory: pytest.TempPathFactory) -> None:
    pages = (tmp_path_factory.getbasetemp() / "pages-repo").read_text()
    command = [sys.executable, "-m", "dlbench.cli", "serve", "--port", "0", "--pages-repo", pages]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        for path in ("", "2026.11/", "2026.12/experiments/training/", "versions.json"):
            with urllib.request.urlopen(url + path, timeout=10) as response:
                assert response.status == 200
        with urllib.request.urlopen(url + "versions.json", timeout=10) as response:
            versions = [v["version"] for v in json.loads(response.read())]
        assert versions == ["2026.12", "2026.11"]
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stdout.close()


def test_tables_sort_by_a_clicked_column(page, site: str) -> None:
    page.goto(f"{site}2026.12/experiments/training/")
    table = page.locator("article table", has=page.locator("th", has_text="Median (")).first
    header = table.locator("th", has_text="Median (")
    headers = [h.strip() for h in table.locator("th").all_inner_texts()]
    column = next(i for i, h in enumerate(headers) if h.startswith("Median ("))

    def values() -> list[float]:
        cells = table.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts()
        return [float(c.split()[0].replace(",", "")) for c in cells]

    header.click()
    assert values() == sorted(values())
    header.click()
    assert values() == sorted(values(), reverse=True)


def test_search_runs_from_the_site_itself(page, site: str) -> None:
    page.goto(f"{site}2026.12/")
    page.wait_for_load_state("networkidle")
    page.keyboard.press("/")  # Material's shortcut to the search box
    page.keyboard.type("fairness")
    page.wait_for_selector(".md-search-result__item", timeout=20000)
    assert page.locator(".md-search-result__item").count() > 0


def test_a_release_with_errata_shows_its_banner_on_every_page(page, site: str) -> None:
    from playwright.sync_api import expect

    for path in ("", "experiments/training/", "cite/"):
        page.goto(f"{site}2026.11/{path}")
        banner = page.locator(".md-banner .dlbench-errata")
        expect(banner).to_be_visible()
        assert "Errata for release 2026.11" in banner.inner_text()
        assert "fixture erratum" in banner.inner_text()
    banner.locator("a", has_text="What is wrong").click()
    page.wait_for_url("**/2026.11/errata/")
    expect(page.locator("article")).to_contain_text("the fixture's numbers are made up")
    page.goto(f"{site}2026.12/")
    page.wait_for_load_state("networkidle")
    assert page.locator(".dlbench-errata").count() == 0
