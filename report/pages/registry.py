"""The page registry: each page module declares the site pages it renders (`@page(path)`),
and the build renders every declared page; no list of pages is kept anywhere else.

The experiment pages and the errata are the build's own: the experiment pages are rendered
first so their charts render while the verdicts are judged, and the errata are files beside
a page (a banner and a download), not one page.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import pandas as pd

from report.pages.cite import Citation
from report.render.jinja import ChartBlock
from report.inputs.source import Source
from report.verdicts.data import Calibration
from report.verdicts.answers import Verdicts


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

    @property
    def common(self) -> dict:
        """The context every page template gets."""
        return {"source": self.source, "cite": self.cite}


@dataclass(frozen=True)
class Page:
    """A rendered page and the charts it shows that the build has not rendered yet."""

    text: str
    charts: tuple[ChartBlock, ...] = field(default=())


Renderer = Callable[[PageInputs], Page | None]  # None: this source has no such page
PAGES: dict[str, Renderer] = {}


def page(path: str) -> Callable[[Renderer], Renderer]:
    """Declare the function that renders the page at `path` (relative to site_src/)."""
    def declare(render: Renderer) -> Renderer:
        if PAGES.get(path, render) is not render:
            raise ValueError(f"page {path} is declared twice: by {PAGES[path].__module__} "
                             f"and {render.__module__}; each page has one renderer")
        PAGES[path] = render
        return render
    return declare


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
