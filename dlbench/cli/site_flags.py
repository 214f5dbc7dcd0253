"""The site commands' parsed flags as the typed requests report/ takes (dlbench.report.site.requests).

Only a site command imports this: the run path (and the GPU machine, which has no report/)
never does.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

from dlbench.cli.bounds import MAX_PORT, bounded_int
from dlbench.core.text.errors import UsageError
from dlbench.report.site.requests import (BuildRequest, DeployRequest, ErratumRequest,
                                          ExportRequest, PublishRequest, ServeRequest, SitePaths)


def site_paths(args: argparse.Namespace) -> SitePaths:
    """The path flags a command has (--results-dir, --out, ..., --pages-repo); the defaults
    for those it has not or left unset (the project's templates and mkdocs config)."""
    given = vars(args)
    return SitePaths(**{f.name: Path(given[f.name]) for f in fields(SitePaths)
                        if given.get(f.name) is not None})


def build_request(args: argparse.Namespace) -> BuildRequest:
    return BuildRequest(release=args.release, runs=tuple(args.run), paths=site_paths(args))


def publish_request(args: argparse.Namespace) -> PublishRequest:
    return PublishRequest(release=args.release, runs=tuple(args.run), title=args.title,
                          date=args.date, notes=Path(args.notes) if args.notes else None,
                          site_url=args.site_url, local=args.local, preview=args.preview,
                          paths=site_paths(args))


def deploy_request(args: argparse.Namespace) -> DeployRequest:
    return DeployRequest(releases=tuple(args.releases), paths=site_paths(args))


def erratum_request(args: argparse.Namespace) -> ErratumRequest:
    return ErratumRequest(release=args.release, title=args.title, wrong=args.wrong,
                          correction=args.correction, superseded_by=args.superseded_by,
                          date=args.date, results_dir=Path(args.results_dir))


def export_request(args: argparse.Namespace) -> ExportRequest:
    return ExportRequest(target=Path(args.dir), pages_repo=Path(args.pages_repo))


def serve_request(args: argparse.Namespace) -> ServeRequest:
    """The request of `dlbench serve`; UsageError for a bad port, an empty host or site."""
    bounded_int("--port", args.port, 0, MAX_PORT)
    if not args.host.strip():
        raise UsageError("--host is empty; expected an address to listen on (127.0.0.1, the "
                         "default, for this machine only; 0.0.0.0 for every interface)")
    if args.site is not None and not args.site.strip():
        raise UsageError("--site is empty; expected a built site's folder (e.g. site)")
    return ServeRequest(port=args.port, host=args.host,
                        site=Path(args.site) if args.site is not None else None,
                        paths=site_paths(args))


#: Each site command's request, made from its parsed flags.
SITE_REQUESTS: dict[str, Callable[[argparse.Namespace], object]] = {
    "build": build_request, "publish": publish_request, "deploy": deploy_request,
    "erratum": erratum_request, "export": export_request, "serve": serve_request,
}
