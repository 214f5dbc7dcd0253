"""What each site command (build, publish, deploy, erratum, export, serve) was asked, as typed
values the CLI builds from its flags.

report/ never sees the command line; every default here is the flag's default. This module
imports nothing heavy, so the CLI can build a request before it loads the site's renderer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dlbench.core.storage.project_files import mkdocs_config, templates_dir


@dataclass(frozen=True)
class SitePaths:
    """Where a site command reads results and templates and writes pages, cache and versions."""

    results_dir: Path = Path("results")
    #: Generated Markdown.
    out: Path = Path("site_src")
    #: The project's page templates (dlbench.templates, wherever it is installed).
    templates: Path = field(default_factory=templates_dir)
    #: The mkdocs config, whose site_url the pages and citations use (the project's).
    config: Path = field(default_factory=mkdocs_config)
    #: Charts and pages of earlier builds, reused when unchanged.
    cache_dir: Path = Path("build/cache")
    #: The git repository holding the versioned site (branch gh-pages).
    pages_repo: Path = Path("build/pages")


@dataclass(frozen=True)
class BuildRequest:
    """`dlbench build`: a frozen release, or a draft of runs; neither: the newest release."""

    release: str | None = None
    #: Run IDs of a draft ('latest' works).
    runs: tuple[str, ...] = ()
    paths: SitePaths = field(default_factory=SitePaths)


@dataclass(frozen=True)
class PublishRequest:
    """`dlbench publish RELEASE --run ID...`: freeze runs as a release, then deploy it."""

    release: str
    runs: tuple[str, ...]
    title: str = ""
    #: YYYY-MM-DD; '': today.
    date: str = ""
    #: A Markdown file of what changed since the previous release; None: no notes.
    notes: Path | None = None
    #: The address the site is published at ('': mkdocs.yml's site_url).
    site_url: str = ""
    #: A release served on this machine only: no address; the citation says it is local.
    local: bool = False
    #: Allows a quick-suite run; the release is labelled not citable.
    preview: bool = False
    paths: SitePaths = field(default_factory=SitePaths)


@dataclass(frozen=True)
class DeployRequest:
    """`dlbench deploy [RELEASE...]`: (re)deploy frozen releases; none named: all of them."""

    releases: tuple[str, ...] = ()
    paths: SitePaths = field(default_factory=SitePaths)


@dataclass(frozen=True)
class ErratumRequest:
    """`dlbench erratum RELEASE ...`: what is known to be wrong with a published release."""

    release: str
    title: str
    wrong: str
    correction: str
    superseded_by: str = ""
    #: YYYY-MM-DD when it was found; '': today.
    date: str = ""
    results_dir: Path = Path("results")


@dataclass(frozen=True)
class ExportRequest:
    """`dlbench export DIR`: the versioned site in `pages_repo` as plain files in `target`."""

    target: Path
    pages_repo: Path = Path("build/pages")


@dataclass(frozen=True)
class ServeRequest:
    """`dlbench serve`: the versioned site (or before a release, the draft) on localhost."""

    port: int = 8000
    host: str = "127.0.0.1"
    #: An already built site to serve as it is; None: the versioned site.
    site: Path | None = None
    paths: SitePaths = field(default_factory=SitePaths)
