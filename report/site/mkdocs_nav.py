"""mkdocs hook: use the navigation `dlbench build` wrote to site_src/.nav.yml."""

from __future__ import annotations

from pathlib import Path

import yaml

NAV_FILE = ".nav.yml"


def on_config(config):  # noqa: ANN001, ANN201 - mkdocs hook signature
    """Set `nav` from the generated file unless mkdocs.yml sets one itself."""
    path = Path(config["docs_dir"]) / NAV_FILE
    if config["nav"] is None and path.is_file():
        config["nav"] = yaml.safe_load(path.read_text())
    return config
