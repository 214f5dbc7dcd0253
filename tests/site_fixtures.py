"""Shared set-up of the site tests: the golden results, a mkdocs config, published releases."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from dlbench.report.site.build import build_site, site_files
from dlbench.report.pages.cite import Citation
from dlbench.report.site.errata import Erratum, append_erratum
from dlbench.report.site.cache import SiteCache, write_tree
from dlbench.report.site.publish import export_site, mike_deploy
from dlbench.report.site.static_server import make_server
from dlbench.core.storage.releases import freeze_release
from dlbench.report.inputs.source import load_release

ROOT = Path(__file__).parent.parent


def committed_releases() -> tuple[str, ...]:
    """Every release committed under results/releases/, oldest first: the one site the
    browser modules and the strict build of every release share (tests/conftest.py builds
    it once a session for each tuple, so every reader asks for this one)."""
    from dlbench.core.storage.releases import release_names

    return tuple(release_names(ROOT / "results"))
GOLDEN = Path(__file__).parent / "data" / "golden"
TEMPLATES = ROOT / "templates"
RUN_A = "20261201T100000Z-fixture"  # training
RUN_B = "20261201T110000Z-fixture"  # precision
SITE_URL = "https://dlbench.example.org/"
#: Two releases: the second adds a run, as a real project would publish them.
RELEASES = (("2026.11", [RUN_A], "2026-11-30"), ("2026.12", [RUN_A, RUN_B], "2026-12-01"))
FIXTURE_ERRATUM = Erratum("2026-12-01", "fixture erratum", "the fixture's numbers are made up",
                          "none needed: they only test the site")


def golden_results(tmp: Path) -> Path:
    """A writable copy of the golden results directory."""
    target = tmp / "results"
    shutil.copytree(GOLDEN, target)
    return target


def site_config(tmp: Path, docs_dir: Path, site_url: str = SITE_URL) -> Path:
    """The project's mkdocs.yml, pointed at `docs_dir` and `site_url`, written under `tmp`."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["site_url"] = site_url
    config["hooks"] = [str(ROOT / hook) for hook in config.get("hooks", [])]
    config["theme"]["custom_dir"] = str(ROOT / config["theme"]["custom_dir"])
    config["docs_dir"] = str(docs_dir)
    config["site_dir"] = str(tmp / "site")
    path = tmp / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def freeze(results: Path, name: str, runs: list[str], date: str,
           site_url: str = SITE_URL) -> Path:
    """Freeze golden runs as a release."""
    cff = Citation(name, date, site_url).cff()
    return freeze_release(results, name, runs, date, f"fixture release {name}", cff)


def publish_golden(tmp: Path, site_url: str = SITE_URL) -> Path:
    """Freeze and deploy the golden releases; returns the pages repository."""
    results = golden_results(tmp)
    docs = tmp / "site_src"
    config = site_config(tmp, docs, site_url)
    pages = tmp / "pages"
    for name, runs, date in RELEASES:
        freeze(results, name, runs, date, site_url)
        if name == RELEASES[0][0]:  # the older release carries an erratum
            append_erratum(results, name, FIXTURE_ERRATUM)
        build_site(load_release(results, name), docs, TEMPLATES, site_url, results)
        mike_deploy(config, pages, name, f"{name} ({date})")
    return pages


@contextmanager
def served_releases(tmp: Path, releases: tuple[str, ...], cache: Path) -> Iterator[str]:
    """The committed `releases` (results/releases/) built, deployed with mike, exported and
    served on localhost while the block runs; yields the site's address. The builds share
    `cache` (the Vega bundle made once, a chart seen before not rendered again)."""
    root = tmp / "export"
    root.mkdir()
    server = make_server(root, 0)
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        config = site_config(tmp, tmp / "site_src", url)
        for name in releases:
            write_tree(tmp / "site_src", site_files(load_release(ROOT / "results", name),
                                                    TEMPLATES, url, ROOT / "results",
                                                    SiteCache(cache)))
            mike_deploy(config, tmp / "pages", name, name)
        export_site(tmp / "pages", root)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield url
        finally:
            server.shutdown()
    finally:
        server.server_close()
