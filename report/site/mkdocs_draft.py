"""mkdocs hook: a draft (site_src/.draft, written by `dlbench build`) has no version selector
and says on every page that it is not citable (templates/overrides/partials/draft-banner.html)."""

from __future__ import annotations

from pathlib import Path

DRAFT_FILE = ".draft"


def on_config(config):  # noqa: ANN001, ANN201 - mkdocs hook signature
    """Drop `extra.version` for a draft, so no page asks for a versions.json it lacks, and
    set `extra.draft` for its banner."""
    draft = (Path(config["docs_dir"]) / DRAFT_FILE).is_file()
    if draft:
        config["extra"].pop("version", None)
    config["extra"]["draft"] = draft
    return config
