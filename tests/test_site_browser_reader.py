"""The reader's questions on the committed releases in headless Chromium at 1280 and 390 px
(issue 53): the runtime and compile answers with the best's own value and names in words,
every label's batch the one its value was measured at, claims that say what was not measured,
no placeholder address cited, no raw identifier or wall of text and one count of tested
answers on any release's pages, A/A twins labelled, a version switch that lands on the same
row and says when the other release measured it on another machine or not at all, and a
version selector a phone can see and use. Screenshots of the home page's first screen and of
the two answers go to $DLBENCH_SCREENSHOTS, else build/screenshots."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from tests.site_fixtures import ROOT
from tests.test_site_browser_releases import (CHROMIUM, RAW_IDS, RELEASES, SHOTS, released,
                                              walked)

pytestmark = pytest.mark.browser
#: the module fixtures: the committed releases deployed and served, and their pages' walks
__all__ = ["released", "walked"]
WIDTHS = {1280: 800, 390: 844}
#: Runtimes, paths and modes by their keys: never visible text.
RAW_NAMES = re.compile(r"(?<![\w./`-])(onnx-dynamo|onnx-openvino|savedmodel|tflite|"
                       r"jit_compile|inference_mode|run_eagerly|compute_peak[\w.]*)(?![\w/-])")


#: The text of a section: from the heading that starts with the given words to the next one.
SECTION = """(start) => { const heads = [...document.querySelectorAll('article h2, article h3')];
  const head = heads.find(h => h.innerText.trim().startsWith(start));
  if (!head) return null;
  let text = '', node = head.nextElementSibling;
  while (node && !/^H[23]$/.test(node.tagName)) { text += node.innerText + '\\n';
    node = node.nextElementSibling; }
  return text; }"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _page(browser, width: int):
    SHOTS.mkdir(parents=True, exist_ok=True)
    return browser.new_context(viewport={"width": width, "height": WIDTHS[width]}).new_page()


def _section(page, heading: str):
    """The answer table below the heading that starts with `heading`."""
    return page.locator(f'xpath=//h2[starts-with(normalize-space(.), "{heading}")]'
                        "/following::div[contains(@class,'dlbench-answers')][1]")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_runtime_and_compile_answers_name_runtimes_in_words_beside_the_best_value(
        released, browser, width):
    page = _page(browser, width)
    page.goto(f"{released}2027.03/")
    page.screenshot(path=str(SHOTS / f"h53-home-first-screen-{width}.png"))
    runtime = _section(page, "Runtime or framework")
    runtime.scroll_into_view_if_needed()
    text = runtime.text_content()  # on a phone the headers are each card's labels
    for words in ("ONNX Runtime", "OpenVINO", "LiteRT", "SavedModel", "framework, plain",
                  "framework, production", "Best (samples/s)", "21.5", "20.5"):  # geometric means
        assert words in text, words
    assert not RAW_NAMES.search(text)
    assert "Judged at this build by today's rule" in page.locator("article").inner_text()
    runtime.screenshot(path=str(SHOTS / f"h53-runtime-answer-{width}.png"))
    compile_answer = _section(page, "Compile or not: does a framework's compiled (production) "
                                    "path answer one request")
    compile_answer.scroll_into_view_if_needed()
    text = compile_answer.text_content()
    assert "First call (s)" in text and re.search(r"about [\d,]+ requests", text)
    assert "Best (ms)" in text and "production" in text
    compile_answer.screenshot(path=str(SHOTS / f"h53-compile-answer-{width}.png"))
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_throughput_is_labelled_at_the_serving_batch_and_latency_at_batch_1(released, browser,
                                                                           width):
    page = _page(browser, width)
    page.goto(f"{released}2027.03/experiments/inference/")
    throughput = page.evaluate(SECTION, "Inference throughput")
    latency = page.evaluate(SECTION, "Median latency")
    assert re.search(r"batch (4|8|128)\b", throughput) and not re.search(r"batch 1\b", throughput)
    assert "batch 1" in latency and not re.search(r"batch (4|8|128)\b", latency)
    page.goto(f"{released}2027.03/experiments/export/")
    artifact = page.evaluate(SECTION, "Artifact latency")
    assert "batch 1" in artifact and "batch 8" not in artifact
    assert "A/A control" in page.evaluate(SECTION, "Artifact throughput")
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_claims_say_what_was_not_measured_and_no_page_cites_the_placeholder(released, browser,
                                                                           width):
    page = _page(browser, width)
    page.goto(f"{released}2027.03/claims/")
    fp16 = page.locator("xpath=//h2[contains(., 'computes faster than FP32')]"
                        "/following::p[1]").inner_text()
    assert "not measured in this release" in fp16
    for release in RELEASES:  # served at a configured address: that one is cited
        page.goto(f"{released}{release}/cite/")
        text = page.locator("article").inner_text()
        assert "example.org" not in text and f"{released}{release}/" in text
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_no_raw_identifier_no_wall_of_text_and_one_count_of_tested_answers(walked, width):
    """Every page of every committed release but Downloads (the errata page included: each
    record in short parts, in words), as each is served today: its text as it loads, read by
    the walk of test_site_browser_releases (one walk a session for every check)."""
    raw, long, counts = {}, {}, {}
    texts = walked(width)["texts"]
    assert {where.split("/", 1)[0] for where in texts} == set(RELEASES)
    for where, (text, lengths) in texts.items():
        found = RAW_IDS.findall(text) + RAW_NAMES.findall(text)
        if found:
            raw[where] = found[:5]
        over = [n for n in lengths if n > 500]
        if over:
            long[where] = over
        stated = set(re.findall(r"(\d+) tested answers?", text))
        if len(stated) > 1:
            counts[where] = sorted(stated)
        if where.endswith("/home"):
            assert stated, where  # the home page states its count
    assert raw == {} and long == {} and counts == {}


#: Two committed releases measured on different machine kinds (AVX-512 BF16 and not).
NEWER, OLDER = "2027.03", "2027.02"
SWITCH_PAGE = "experiments/inference/"


def _kinds(release: str) -> list[str]:
    """The machine kinds a committed release's runs were measured on, in words."""
    from dlbench.core.machine.machines import machine_kind
    from dlbench.report.inputs.source import load_release

    return [machine_kind(run.environment).words
            for run in load_release(ROOT / "results", release).runs]


def _rows_to_switch_from(page) -> tuple[str, str]:
    """On NEWER's page: the result ID of a row OLDER measured too, and of one it did not."""
    from dlbench.report.pages.experiment import FASTEST_ONLY, cell_anchor

    ids = pd.read_csv(ROOT / "results" / "releases" / OLDER / "result_ids.csv")
    older = {cell_anchor(c, m): m for c, m in zip(ids["cell_id"], ids["metric"], strict=True)}
    rows = page.evaluate("() => [...document.querySelectorAll('.dlbench-cell[id]')]"
                         ".map(c => [c.id, c.closest('tr').querySelector('a[id^=r-]').id])")
    shared = next(r for c, r in rows if older.get(c, FASTEST_ONLY[0]) not in FASTEST_ONLY)
    missing = next(r for c, r in rows if c not in older)
    return shared, missing


def _switch(page, width: int, release: str) -> None:
    """Switch to `release` as a reader does: the header's selector on a desktop, the
    navigation drawer's list of releases on a phone."""
    if width >= 1280:
        page.locator(".md-version").hover()  # the list opens over the selector
        page.locator(".md-version__link", has_text=release).click()
        return
    page.locator("label.md-header__button[for='__drawer']").click()
    link = page.locator(".dlbench-drawer-versions .dlbench-version-link", has_text=release)
    link.wait_for(state="visible")
    link.click()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_version_switch_lands_on_the_row_and_says_the_machine_differs(released, browser,
                                                                         width):
    from playwright.sync_api import expect

    page = _page(browser, width)
    page.goto(f"{released}{NEWER}/{SWITCH_PAGE}")
    shared, _ = _rows_to_switch_from(page)
    page.goto(f"{released}{NEWER}/{SWITCH_PAGE}#{shared}")
    page.wait_for_load_state("networkidle")
    page.evaluate("window.scrollTo(0, 0)")  # back up to the header, as a reader would
    _switch(page, width, OLDER)
    page.wait_for_url(f"**/{OLDER}/{SWITCH_PAGE}#c-*")
    anchor = page.url.split("#")[1]
    expect(page.locator("tr", has=page.locator(f"[id='{anchor}']"))).to_be_in_viewport()
    note = page.locator(".dlbench-unlike")
    expect(note).to_contain_text("on another machine")
    page.wait_for_timeout(1500)  # the page says it again a second later: still in view
    expect(note).to_be_in_viewport()  # on a phone too, where the table is a column of cards
    header = page.locator("header.md-header").bounding_box()
    box = note.bounding_box()
    assert box["y"] >= header["y"] + header["height"] - 1  # not under the header
    top = page.locator(".md-top")  # nor under the back-to-top button
    if top.count() and top.get_attribute("hidden") is None:
        button = top.bounding_box()
        assert (button["y"] >= box["y"] + box["height"]
                or button["y"] + button["height"] <= box["y"]), (button, box)
    expect(page.locator("tr", has=page.locator(f"[id='{anchor}']"))).to_be_in_viewport()
    text = note.inner_text()
    older, newer = _kinds(OLDER), _kinds(NEWER)
    assert older != newer and older[0] in text and newer[0] in text, text
    assert f"than in release {NEWER}, which you came from" in text  # the name, no alias
    page.screenshot(path=str(SHOTS / f"h53-switch-row-{width}.png"))
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_version_switch_from_a_row_the_other_release_lacks_says_it_was_not_measured(
        released, browser, width):
    from playwright.sync_api import expect

    page = _page(browser, width)
    page.goto(f"{released}{NEWER}/{SWITCH_PAGE}")
    _, missing = _rows_to_switch_from(page)
    page.goto(f"{released}{NEWER}/{SWITCH_PAGE}#{missing}")
    page.wait_for_load_state("networkidle")
    page.evaluate("window.scrollTo(0, 0)")
    _switch(page, width, OLDER)
    page.wait_for_url(f"**/{OLDER}/{SWITCH_PAGE}")
    note = page.locator(".dlbench-unmeasured")
    expect(note).to_contain_text(f"was not measured in release {OLDER}")
    expect(note).to_be_in_viewport()
    assert "#" not in page.url  # no dead anchor
    machines = page.locator(".dlbench-other-machines").inner_text()
    assert _kinds(OLDER)[0] in machines and _kinds(NEWER)[0] in machines, machines
    page.screenshot(path=str(SHOTS / f"h53-switch-unmeasured-{width}.png"))
    page.context.close()


def test_the_version_selector_is_in_the_phones_header_and_its_drawer(released, browser):
    from playwright.sync_api import expect

    page = _page(browser, 390)
    page.goto(f"{released}{NEWER}/")
    current = page.locator(".md-version__current")
    current.wait_for(state="visible")
    header = page.locator("header.md-header").bounding_box()
    box = current.bounding_box()
    assert box["y"] >= header["y"] and box["y"] + box["height"] <= header["y"] + header[
        "height"] + 1 and box["x"] + box["width"] <= 390, (box, header)  # on the header's colour
    assert page.locator(".md-header__topic .md-ellipsis").first.bounding_box()["width"] >= 50
    current.focus()  # as a tap does: the list opens over the selector
    page.locator(".md-version__link", has_text=OLDER).click()
    page.wait_for_url(f"**/{OLDER}/")
    page.goto(f"{released}{NEWER}/")
    page.locator("label.md-header__button[for='__drawer']").click()
    links = page.locator(".dlbench-drawer-versions .dlbench-version-link")
    expect(links.first).to_be_visible()
    assert all(any(r in t for t in links.all_inner_texts()) for r in RELEASES)
    expect(page.locator(".dlbench-version-link[aria-current]")).to_contain_text(NEWER)
    page.screenshot(path=str(SHOTS / "h53-phone-drawer-releases.png"))
    page.set_viewport_size({"width": 1280, "height": 800})  # a desktop: the header's only
    expect(page.locator(".dlbench-drawer-versions")).to_be_hidden()
    page.context.close()
