"""mkdocs hook: hand the release's name and machines, which `dlbench build` wrote, to every
page's head, where the version selector's script reads them (templates/overrides/main.html,
templates/assets/javascripts/versions.js)."""

from __future__ import annotations

from pathlib import Path

import yaml

RELEASE_FILE = ".release.yml"


def on_config(config):  # noqa: ANN001, ANN201 - mkdocs hook signature
    """Set `extra.release` (name, machines in words) from site_src/.release.yml, if any."""
    path = Path(config["docs_dir"]) / RELEASE_FILE
    config["extra"]["release"] = yaml.safe_load(path.read_text()) if path.is_file() else None
    return config
