"""The site's subcommands: parse-free functions the CLI and the tests both call."""

from __future__ import annotations

import argparse
import datetime
import tempfile
from pathlib import Path

import yaml

from dlbench import layout
from dlbench.errors import UsageError
from dlbench.layout import LATEST, release_names, run_ids
from dlbench.releases import ReleaseError, freeze_release
from report.build import build_site
from report.cite import (
    PLACEHOLDER_SITE_URL, Citation, SiteUrlError, configured_site_url, release_citation,
    site_root,
)
from report.errata import Erratum, ErrataError, append_erratum
from report.publish import (
    PublishError, build_mkdocs, deployed_versions, export_site, make_server, mike_deploy,
)
from report.site_cache import BuildReport
from report.source import Source, SourceError, load_draft, load_release


def site_url(config: Path) -> str:
    """The site's root address from mkdocs.yml, ending in '/'."""
    try:
        return configured_site_url(config)
    except SiteUrlError as error:
        raise UsageError(str(error)) from None


def run_suite(results_dir: Path, run_id: str) -> str:
    """The suite a run measured ('' when its run.json does not say or is missing)."""
    root = layout.run_dir(results_dir, run_id)
    info = layout.read_run_info(root) if layout.is_run(root) else {}
    return str((info.get("request") or {}).get("suite") or info.get("suite") or "")


def publish_site_url(config: Path, given: str, local: bool) -> str:
    """The address a new release records: --site-url, else mkdocs.yml's site_url; '' for a
    local release. Refuses the placeholder, and an address for a local release."""
    if local and given:
        raise UsageError(f"--site-url {given} and --local disagree: a local release has no "
                         "published address; pass one of them")
    try:
        url = site_root(given, "--site-url") if given else site_url(config)
    except SiteUrlError as error:
        raise UsageError(str(error)) from None
    if url == PLACEHOLDER_SITE_URL and not local:
        where = "--site-url" if given else f"{config}: site_url"
        raise UsageError(f"{where} is still the placeholder {url}; pass --site-url URL (the "
                         "address the site is published at) or --local (a release served on "
                         "this machine only, labelled local)")
    return "" if local else url


def publish_labels(args: argparse.Namespace, runs: list[str]) -> dict[str, bool]:
    """The labels of a new release; refuses a quick-suite run unless --preview."""
    quick = [r for r in runs if run_suite(Path(args.results_dir), r) == "quick"]
    if quick and not args.preview:
        raise UsageError(f"run {quick[0]} measured the quick suite, a preview that is not "
                         "citable; publish a standard or full run, or pass --preview to "
                         "publish it labelled not citable")
    return {"local": bool(args.local), "preview": bool(args.preview)}


def resolve_runs(results_dir: Path, runs: list[str]) -> list[str]:
    """Run IDs as given, with 'latest' meaning the newest run under results/runs."""
    known = run_ids(results_dir)
    return [known[-1] if run == LATEST and known else run for run in runs]


def pick_source(results_dir: Path, release: str | None, runs: list[str]) -> Source:
    """The release asked for, a draft of the runs asked for, or else the newest release/run."""
    try:
        if release:
            return load_release(results_dir, release)
        if runs:
            return load_draft(results_dir, resolve_runs(results_dir, runs))
        if releases := release_names(results_dir):
            return load_release(results_dir, releases[-1])
        if known_runs := run_ids(results_dir):
            return load_draft(results_dir, known_runs[-1:])
    except SourceError as error:
        raise UsageError(str(error)) from None
    raise UsageError(f"nothing to build: no release in {results_dir}/releases and no run in "
                     f"{results_dir}/runs; run `dlbench run` first")


def _describe(report: BuildReport, out: Path, source: Source) -> None:
    how = ("nothing changed since the cached build" if report.cached else
           f"{report.svgs_rendered} charts rendered, {report.svgs_reused} reused")
    print(f"built {source.name} into {out}/: {len(report.written)} written, "
          f"{len(report.unchanged)} unchanged, {len(report.removed)} removed ({how})")


def build_command(args: argparse.Namespace) -> int:
    """`dlbench build`: render a release or draft into site_src/."""
    source = pick_source(Path(args.results_dir), args.release, args.run)
    out = Path(args.out)
    report = build_site(source, out, Path(args.templates), site_url(Path(args.config)),
                        Path(args.results_dir), Path(args.cache_dir))
    _describe(report, out, source)
    return 0


def _deploy(args: argparse.Namespace, name: str) -> None:
    source = pick_source(Path(args.results_dir), name, [])
    out = Path(args.out)
    configured = site_url(Path(args.config))
    _describe(build_site(source, out, Path(args.templates), configured,
                         Path(args.results_dir), Path(args.cache_dir)), out, source)
    recorded = release_citation(source.root, name, source.date, configured).site_url
    try:
        mike_deploy(Path(args.config), Path(args.pages_repo), name, f"{name} ({source.date})",
                    recorded)
    except PublishError as error:
        raise UsageError(str(error)) from None
    print(f"deployed {name} as a site version in {args.pages_repo} (alias latest)")


def read_notes(path: str) -> str:
    """The release notes file's Markdown; UsageError if it cannot be read or is empty."""
    try:
        notes = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise UsageError(f"cannot read --notes {path!r}: {reason}; expected a UTF-8 Markdown "
                         "file") from None
    if not notes:
        raise UsageError(f"--notes {path!r} is empty; expected what changed since the "
                         "previous release, in Markdown")
    return notes


def publish_command(args: argparse.Namespace) -> int:
    """`dlbench publish RELEASE --run ID...`: freeze the runs, then deploy the release."""
    date = args.date or datetime.datetime.now(datetime.UTC).date().isoformat()
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        raise UsageError(f"invalid --date {date!r}; expected YYYY-MM-DD") from None
    results_dir = Path(args.results_dir)
    runs = resolve_runs(results_dir, args.run)
    url = publish_site_url(Path(args.config), args.site_url, args.local)
    labels = publish_labels(args, runs)
    notes = read_notes(args.notes) if args.notes else ""
    cff = Citation(args.release, date, url or site_url(Path(args.config)), **labels).cff()
    try:
        path = freeze_release(results_dir, args.release, runs, date,
                              args.title or f"dlbench release {args.release}", cff, labels,
                              notes, site_url=url)
    except ReleaseError as error:
        raise UsageError(str(error)) from None
    print(f"froze {len(runs)} run(s) into {path}")
    try:
        _deploy(args, args.release)
    except UsageError as error:
        raise UsageError(f"{error}; the release is frozen: deploy it again with "
                         f"`dlbench deploy {args.release}`") from None
    return 0


def deploy_command(args: argparse.Namespace) -> int:
    """`dlbench deploy [RELEASE...]`: (re)build and deploy frozen releases, oldest first."""
    names = args.releases or release_names(Path(args.results_dir))
    if not names:
        raise UsageError(f"no release in {args.results_dir}/releases: `dlbench publish` one")
    for name in names:
        _deploy(args, name)
    return 0


def erratum_command(args: argparse.Namespace) -> int:
    """`dlbench erratum RELEASE --title ... --wrong ... --correction ...`: append one erratum."""
    date = args.date or datetime.datetime.now(datetime.UTC).date().isoformat()
    erratum = Erratum(date, args.title.strip(), args.wrong.strip(), args.correction.strip(),
                      args.superseded_by.strip())
    try:
        path = append_erratum(Path(args.results_dir), args.release, erratum)
    except ErrataError as error:
        raise UsageError(str(error)) from None
    print(f"appended an erratum to {path}; rebuild and deploy the release "
          f"(`dlbench deploy {args.release}`) to show it, and commit the file")
    return 0


def export_command(args: argparse.Namespace) -> int:
    """`dlbench export DIR`: the whole versioned site as plain files."""
    try:
        export_site(Path(args.pages_repo), Path(args.dir))
    except PublishError as error:
        raise UsageError(str(error)) from None
    print(f"exported the versioned site to {args.dir}/")
    return 0


def _draft_site(args: argparse.Namespace, target: Path) -> Path:
    """site_src/ (a draft: no release yet) built with mkdocs into `target`."""
    config = Path(args.config)
    docs = config.parent / str(yaml.safe_load(config.read_text()).get("docs_dir", "docs"))
    if not (docs / "index.md").is_file():
        raise UsageError(f"no release to serve and no draft in {docs}/: run `dlbench build` "
                         "(or `make`) first")
    try:
        build_mkdocs(config, target)
    except PublishError as error:
        raise UsageError(str(error)) from None
    return target


def serve_command(args: argparse.Namespace) -> int:
    """`dlbench serve`: the whole versioned site over HTTP on localhost (before the first
    release: the draft in site_src/)."""
    if args.site:
        return _serve(args, Path(args.site), f"the built site in {args.site}/")
    draft = False
    if not deployed_versions(Path(args.pages_repo)):
        draft = not release_names(Path(args.results_dir))
        if not draft:
            args.releases = []
            deploy_command(args)
    with tempfile.TemporaryDirectory(prefix="dlbench-site-") as tmp:
        root = (_draft_site(args, Path(tmp)) if draft
                else export_site(Path(args.pages_repo), Path(tmp)))
        return _serve(args, root, "the draft site (no release yet)" if draft
                      else "the versioned site")


def _serve(args: argparse.Namespace, root: Path, what: str) -> int:
    """Serve `root` until interrupted; unknown paths get the site's own 404 page."""
    if not root.is_dir():
        raise UsageError(f"no site in {root}/: run `make site` (or `mkdocs build`) first")
    try:
        server = make_server(root, args.port, args.host)
    except OSError as error:
        raise UsageError(f"cannot serve on {args.host}:{args.port} ({error.strerror}); "
                         "pass a free --port") from None
    host, port = server.server_address[:2]
    print(f"serving {what} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
