"""The page registry: each page module declares its pages, and a path has one renderer."""

from __future__ import annotations

import pytest

from dlbench.report.pages.registry import PAGES, declared_pages, page


def test_every_single_page_of_the_site_is_declared_once():
    assert set(declared_pages()) == {"index.md", "environment.md", "methodology.md",
                                     "downloads.md", "cite.md", "claims.md", "compare.md",
                                     "model.md", "your-machine.md", "notes.md"}


def test_a_second_renderer_for_a_declared_path_is_refused():
    declared_pages()
    with pytest.raises(ValueError, match="index.md is declared twice"):
        page("index.md")(lambda inputs: None)
    assert PAGES["index.md"].__name__ == "home_page"
