"""Shared set-up of the site tests: the golden results, a mkdocs config, published releases."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from dlbench.report.site.build import build_site
from dlbench.report.pages.cite import Citation
from dlbench.report.site.errata import Erratum, append_erratum
from dlbench.report.site.publish import mike_deploy
from dlbench.core.releases import freeze_release
from dlbench.report.inputs.source import load_release

ROOT = Path(__file__).parent.parent
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
