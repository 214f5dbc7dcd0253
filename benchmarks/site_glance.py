"""Count what makes the site of the committed releases hard to read, in headless Chromium at
390x844 (phone) and 1280x800 (desktop): clipped charts, tables whose numbers are off screen,
raw identifiers in visible text (with the page they are on), and the claims page's longest
paragraph (issue 34).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/site_glance.py [--shots DIR] [--release R...]

Builds every committed release with the checked-out code, deploys them with mike into a
temporary folder, serves them on localhost and prints one line per figure (and JSON with
--json). Takes a few minutes: one site build per release.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import threading
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RELEASES = sorted(p.name for p in (ROOT / "results" / "releases").iterdir() if p.is_dir())
WIDTHS = {"phone": (390, 844), "desktop": (1280, 800)}
PAGES = ["", "experiments/training/", "experiments/inference/", "experiments/precision/",
         "experiments/execution-mode/", "experiments/data-parallel/", "experiments/export/",
         "experiments/parity/", "environment/", "methodology/", "compare/", "cite/", "claims/",
         "errata/"]

#: Per page: charts wider than their column or whose drawing is wider than the chart (its
#: title, legend or labels cut off), tables wider than their container (and on a
#: phone: tables whose last column starts off screen), truncated axis labels.
LAYOUT = """() => {
  const article = document.querySelector('article');
  const width = article.clientWidth, right = article.getBoundingClientRect().right;
  const charts = [...document.querySelectorAll('div.dlbench-chart')];
  const clipped = charts.filter(c => { const s = c.querySelector('svg');
    if (!s) return false;
    const box = s.getBoundingClientRect(), content = s.querySelector('g').getBBox();
    return box.width > c.clientWidth + 1 || box.right > right + 1
      || content.width > box.width + 1; }).length;
  const tables = [...article.querySelectorAll('table')].filter(t => t.offsetParent !== null);
  const wide = tables.filter(t => t.scrollWidth > width + 1).length;
  const hidden = tables.filter(t => { const cells = t.querySelectorAll('tr:first-child > *');
    const last = cells[cells.length - 1];
    return last && last.getBoundingClientRect().left > window.innerWidth; }).length;
  const truncated = [...document.querySelectorAll('div.dlbench-chart svg text')]
    .filter(t => /…|\\.\\.\\.$/.test(t.textContent)).length;
  return {charts: charts.length, clipped, tables: tables.length, wide, hidden, truncated};
}"""
DRAWN = """() => [...document.querySelectorAll('div.dlbench-chart')]
  .every(d => d.dataset.state === 'drawn' || d.dataset.state === 'failed')"""
VISIBLE = """() => { const a = document.querySelector('article').cloneNode(true);
  a.querySelectorAll('pre, code, .tabbed-set, details:not([open])').forEach(n => n.remove());
  return a.innerText; }"""
PARAGRAPHS = """() => Math.max(0, ...[...document.querySelectorAll(
  'article p, article li:not(:has(p))')]
  .map(p => p.innerText.length))"""
#: Visible paragraphs and list items (not inside a closed details block) and their lengths.
LENGTHS = """() => [...document.querySelectorAll('article p, article li:not(:has(p))')]
  .filter(p => p.offsetParent !== null).map(p => p.innerText.length)"""
#: The chart texts cut short, for the examples.
TRUNCATED = """() => [...document.querySelectorAll('div.dlbench-chart svg text')]
  .map(t => t.textContent).filter(t => /…|\\.\\.\\.$/.test(t))"""
#: Longer than this, a visible paragraph is a wall of text (issue 53).
LONG_PARAGRAPH = 500
#: Counts of tested answers a page states ('27 tested answers').
TESTED = re.compile(r"(\d+) tested answers?")
#: A raw key in snake_case or dotted (`compute_peak.fp32_flops`, `jit_compile`), or a cell ID.
SNAKE = r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\.[a-z0-9_]+)*|[a-z0-9-]+(?::[\w.+-]+){3,4}"
#: Pages where identifiers are the point: the data dictionary.
RAW_ALLOWED = ("downloads/",)


def identifiers(releases_dir: Path) -> re.Pattern[str]:
    """Raw identifiers a reader should never see: system keys, workload IDs, metric keys
    with an underscore, and cell IDs, from the releases' own tables."""
    import pandas as pd

    from dlbench.core.declarations.metrics import METRICS

    from dlbench.core.declarations.systems import format_words

    # export formats by key ('onnx' alone is also a package's name, which the environment
    # page lists as it is)
    words: set[str] = {m for m in METRICS if "_" in m} | (set(format_words()) - {"onnx"})
    for release in releases_dir.iterdir():
        cells = pd.read_parquet(release / "cells.parquet").astype(str).replace("<NA>", "")
        words |= set(cells["workload"]) | set(cells["cell_id"])
        words |= {f"keras-{b}" for b in set(cells["backend"]) if b}
    pattern = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(r"(?<![\w./-])(" + pattern + "|" + SNAKE + r")(?![\w/-])")


def deploy(tmp: Path, names: list[str] | None = None) -> Path:
    """The committed releases built with this code, deployed with mike and exported."""
    from dlbench.report.inputs.source import load_release
    from dlbench.report.site.build import build_site
    from dlbench.report.site.publish import export_site, mike_deploy

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config |= {"site_url": "http://127.0.0.1/", "docs_dir": str(tmp / "site_src"),
               "site_dir": str(tmp / "site"),
               "hooks": [str(ROOT / h) for h in config.get("hooks", [])]}
    config["theme"]["custom_dir"] = str(ROOT / config["theme"]["custom_dir"])
    (tmp / "mkdocs.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    for name in names or RELEASES:
        build_site(load_release(ROOT / "results", name), tmp / "site_src", ROOT / "templates",
                   "http://127.0.0.1/", ROOT / "results")
        mike_deploy(tmp / "mkdocs.yml", tmp / "pages", name, name)
    return export_site(tmp / "pages", tmp / "export")


def count(url: str, release: str, raw: re.Pattern[str], shots: Path | None) -> dict:
    """Every figure of one release's pages at both widths."""
    from playwright.sync_api import sync_playwright

    totals: dict = {"raw_identifiers": 0, "raw_examples": set(), "claims_longest": 0,
                    "raw_per_page": {}, "long_paragraphs": {}, "tested_counts": {}}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=["--no-sandbox"])
        for kind, (width, height) in WIDTHS.items():
            page = browser.new_context(viewport={"width": width, "height": height}).new_page()
            for path in PAGES:
                if page.goto(f"{url}{release}/{path}").status == 404:
                    continue  # an experiment this release did not run
                page.wait_for_load_state("networkidle")
                page.wait_for_function(DRAWN, timeout=30000)
                for key, value in page.evaluate(LAYOUT).items():
                    totals[f"{kind}_{key}"] = totals.get(f"{kind}_{key}", 0) + value
                if kind == "desktop" and path not in RAW_ALLOWED:
                    text = page.evaluate(VISIBLE)
                    found = raw.findall(text)
                    totals["raw_identifiers"] += len(found)
                    totals["raw_per_page"][path or "home"] = len(found)
                    totals["raw_examples"] |= {f"{path or 'home'} {word}" for word in found[:5]}
                    long = [n for n in page.evaluate(LENGTHS) if n > LONG_PARAGRAPH]
                    totals["long_paragraphs"][path or "home"] = long
                    totals["tested_counts"][path or "home"] = sorted(set(TESTED.findall(text)))
                    cut = page.evaluate(TRUNCATED)
                    if cut:
                        totals.setdefault("truncated_examples", {})[path or "home"] = cut[:3]
                if path == "claims/" and kind == "desktop":
                    totals["claims_longest"] = page.evaluate(PARAGRAPHS)
                if path == "" and shots is not None:
                    shots.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(shots / f"home-{release}-{width}.png"))
            page.context.close()
        browser.close()
    totals["raw_examples"] = sorted(totals["raw_examples"])[:12]
    return totals


def main() -> None:
    """Build, serve and count; print one line per release."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=Path, help="folder for home-page screenshots")
    parser.add_argument("--release", action="append", help="count only these releases")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    from dlbench.report.site.static_server import make_server

    with tempfile.TemporaryDirectory() as tmp:
        root = deploy(Path(tmp), args.release)
        server = make_server(root, 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        figures = {r: count(url, r, identifiers(ROOT / "results" / "releases"), args.shots)
                   for r in (args.release or RELEASES)}
        server.shutdown()
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    for release, f in figures.items():
        print(f"{release}: phone: {f['phone_clipped']}/{f['phone_charts']} charts clipped, "
              f"{f['phone_wide']}/{f['phone_tables']} tables wider than the screen "
              f"({f['phone_hidden']} with their last column off screen); desktop: "
              f"{f['desktop_clipped']} charts clipped, {f['desktop_wide']} tables too wide, "
              f"{f['desktop_truncated']} truncated axis labels; {f['raw_identifiers']} raw "
              f"identifiers in visible text (e.g. {', '.join(f['raw_examples'][:5])}); "
              f"longest claims paragraph {f['claims_longest']} characters; raw identifiers "
              f"per page {f['raw_per_page']}; visible paragraphs over {LONG_PARAGRAPH} "
              f"characters {sum(map(len, f['long_paragraphs'].values()))} "
              f"({ {p: v for p, v in f['long_paragraphs'].items() if v} }); tested-answer "
              f"counts stated per page { {p: v for p, v in f['tested_counts'].items() if v} }; "
              f"truncated chart texts {f.get('truncated_examples', {})}")


if __name__ == "__main__":
    main()
