"""The project's data files that ship inside the package, found through its resources
(importlib.resources), so a checkout's editable install and an installed wheel read the same
files wherever a command runs: the site's sources (templates/, installed as
dlbench.templates, with the mkdocs config) and the user-facing listings (listings/,
installed as dlbench.listings)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

TEMPLATES_PACKAGE = "dlbench.templates"
LISTINGS_PACKAGE = "dlbench.listings"


def package_folder(package: str) -> Path:
    """The folder of an installed data package, as a path (jinja2 and mkdocs read folders)."""
    folder = resources.files(package)
    if not isinstance(folder, Path):
        raise RuntimeError(f"{package} is not installed as plain files ({folder!r}); install "
                           "dlbench unpacked (pip install, not a zip)")
    return folder


def templates_dir() -> Path:
    """The page templates, assets and theme overrides of the site (`dlbench build`)."""
    return package_folder(TEMPLATES_PACKAGE)


def mkdocs_config() -> Path:
    """The project's mkdocs config: its real file, so the paths in it (docs_dir, custom_dir,
    hooks) resolve beside it in a checkout."""
    return (templates_dir() / "mkdocs.yml").resolve()


def listings_dir() -> Path:
    """The user-facing listings, one model definition and training step per framework."""
    return package_folder(LISTINGS_PACKAGE)
