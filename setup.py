"""The package list, found from the folders instead of written out: dlbench/ and each folder
pyproject's package-dir installs under another name (runner/ as dlbench.runner, ...), with
every subfolder (a data folder such as templates/assets/ too: its files are package data),
so a package moved or added needs no edit here. Everything else is in pyproject.toml."""

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).resolve().parent
CACHES = ("__pycache__", "*.__pycache__")


def installed_packages() -> list[str]:
    """Every package by its installed name: dlbench, the folders package-dir maps, and every
    folder below them but caches."""
    settings = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages = []
    for package, folder in {"dlbench": "dlbench", **settings["package-dir"]}.items():
        below = find_namespace_packages(str(HERE / folder), exclude=CACHES)
        packages += [package, *(f"{package}.{name}" for name in below)]
    return sorted(packages)


if __name__ == "__main__":
    setup(packages=installed_packages())
