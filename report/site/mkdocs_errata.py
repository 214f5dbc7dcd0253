"""mkdocs hook: hand the release's errata, which `dlbench build` wrote, to the banner template."""

from __future__ import annotations

from pathlib import Path

import yaml

BANNER_FILE = ".errata.yml"


def on_config(config):  # noqa: ANN001, ANN201 - mkdocs hook signature
    """Set `extra.errata` (release, titles, superseded_by) from site_src/.errata.yml, if any."""
    path = Path(config["docs_dir"]) / BANNER_FILE
    config["extra"]["errata"] = yaml.safe_load(path.read_text()) if path.is_file() else None
    return config
