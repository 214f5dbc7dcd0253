"""The page registry: each page module declares the site pages it renders (`@page(path)`),
and the build renders every declared page; no list of pages is kept anywhere else.

Pages that need no verdict (the experiment pages) are declared with
`@pages_before_verdicts(folder)`: the build renders them first, so their charts render while
the verdicts are judged. The errata are the build's own: files beside a page (a banner and a
download), not one page.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import jinja2
import pandas as pd

from dlbench.report.pages.cite import Citation
from dlbench.report.render.jinja import ChartBlock
from dlbench.report.inputs.source import Source, newest_release
from dlbench.report.verdicts.verdict_table import Calibration, judged_table
from dlbench.report.verdicts.answers import Verdicts


@dataclass(frozen=True)
class PageInputs:
    """What any page may read, computed once per build."""

    source: Source
    summary: pd.DataFrame
    env: jinja2.Environment
    questions: dict[str, dict]
    judged: Verdicts
    calibration: Calibration
    cite: Citation
    results_dir: Path | None  # where the other releases are; None: no comparison

    @cached_property
    def verdicts(self) -> pd.DataFrame:
        """This build's verdicts table (answers, pairs, the answers of their own rules, A/A
        controls), judged once per build: the home and claims pages and the download read
        the same one."""
        return judged_table(self.judged, self.summary, self.source.observations,
                            self.source.cells)

    @cached_property
    def beside_release(self) -> Source | None:
        """The release a draft's machine is placed beside (the newest), read once per build;
        None for a release or where there is none."""
        return newest_release(self.source, self.results_dir)

    @property
    def common(self) -> dict:
        """The context every page template gets."""
        return {"source": self.source, "cite": self.cite}


@dataclass(frozen=True)
class SourceInputs:
    """What a page rendered before the verdicts may read."""

    source: Source
    summary: pd.DataFrame
    env: jinja2.Environment
    past: pd.DataFrame | None  # every release's results; None: no comparison


@dataclass(frozen=True)
class Page:
    """A rendered page and the charts it shows that the build has not rendered yet."""

    text: str
    charts: tuple[ChartBlock, ...] = field(default=())


Renderer = Callable[[PageInputs], Page | None]  # None: this source has no such page
PAGES: dict[str, Renderer] = {}
#: folder -> the function rendering every page in it that needs no verdict, by path
EarlyRenderer = Callable[[SourceInputs], dict[str, Page]]
EARLY_PAGES: dict[str, EarlyRenderer] = {}


def page(path: str) -> Callable[[Renderer], Renderer]:
    """Declare the function that renders the page at `path` (relative to site_src/)."""
    return lambda render: _declare(PAGES, path, render)


def pages_before_verdicts(folder: str) -> Callable[[EarlyRenderer], EarlyRenderer]:
    """Declare the function that renders every page under `folder` (e.g. experiments/)
    from the source alone, before the verdicts are judged."""
    return lambda render: _declare(EARLY_PAGES, folder, render)


def _declare(table: dict, path: str, render: Callable) -> Callable:
    """`render` as the one renderer of `path` in `table`; ValueError naming both where
    another module declared it first."""
    if table.get(path, render) is not render:
        raise ValueError(f"page {path} is declared twice: by {table[path].__module__} "
                         f"and {render.__module__}; each page has one renderer")
    table[path] = render
    return render


def declared_pages() -> dict[str, Renderer]:
    """Every declared page by path, once every module of this package has declared its own."""
    package = importlib.import_module(__package__)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{__package__}.{module.name}")
    return dict(sorted(PAGES.items()))


def render_pages(inputs: PageInputs) -> dict[str, Page]:
    """Every declared page this source has, rendered, by path."""
    rendered = {path: render(inputs) for path, render in declared_pages().items()}
    return {path: done for path, done in rendered.items() if done is not None}


def render_pages_before_verdicts(inputs: SourceInputs) -> dict[str, Page]:
    """Every page declared to need no verdict, rendered, by path."""
    declared_pages()  # every module of this package has declared its own
    pages: dict[str, Page] = {}
    for folder, render in sorted(EARLY_PAGES.items()):
        pages |= render(inputs)
    return pages
