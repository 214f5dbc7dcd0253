"""The site's subcommands: parse-free functions the CLI and the tests both call."""

from __future__ import annotations

import datetime
import os
import stat
import tempfile
from dataclasses import replace
from pathlib import Path

import yaml

from dlbench.core.storage import layout
from dlbench.core.text.errors import SaveError, UsageError
from dlbench.core.storage.layout import LATEST, release_dir, release_names
from dlbench.core.storage.releases import RELEASE_NAME, ReleaseError, freeze_release
from dlbench.core.text.typed_text import encodes, is_iso_date
from dlbench.core.text.visible import shown_name
from dlbench.report.site.build import build_site
from dlbench.report.pages.cite import (
    PLACEHOLDER_SITE_URL, Citation, SiteUrlError, configured_site_url, release_citation,
    site_root,
)
from dlbench.report.site.outputs import check_output, check_pages_repo, mark_output
from dlbench.report.site.errata import Erratum, ErrataError, append_erratum
from dlbench.report.site.publish_verdicts import store_staged_verdicts
from dlbench.report.verdicts.stored import STORED
from dlbench.report.site.publish import (
    PublishError, build_mkdocs, deployed_versions, export_site, mike_deploy,
)
from dlbench.report.site.cache import BuildReport
from dlbench.report.site.static_server import make_server
from dlbench.report.site.requests import (BuildRequest, DeployRequest, ErratumRequest,
                                          ExportRequest, PublishRequest, ServeRequest, SitePaths)
from dlbench.report.inputs.source import Source, SourceError, load_draft, load_release


def site_url(config: Path) -> str:
    """The site's root address from mkdocs.yml, ending in '/'."""
    try:
        return configured_site_url(config)
    except SiteUrlError as error:
        raise UsageError(str(error)) from None


def run_suite(results_dir: Path, run_id: str) -> str:
    """The suite a run measured ('' when its run.json does not say or is missing)."""
    root = layout.find_run(results_dir, run_id)
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


def publish_labels(request: PublishRequest, runs: list[str]) -> dict[str, bool]:
    """The labels of a new release; refuses a quick-suite run unless --preview."""
    quick = [r for r in runs if run_suite(request.paths.results_dir, r) == "quick"]
    if quick and not request.preview:
        raise UsageError(f"run {quick[0]} measured the quick suite, a preview that is not "
                         "citable; publish a standard or full run, or pass --preview to "
                         "publish it labelled not citable")
    return {"local": request.local, "preview": request.preview}


def resolve_runs(results_dir: Path, runs: list[str]) -> list[str]:
    """Run IDs as given, with 'latest' meaning what the layout says (layout.latest_run_id)."""
    latest = layout.latest_run_id(results_dir)
    return [latest if run == LATEST and latest else run for run in runs]


def pick_source(results_dir: Path, release: str | None, runs: list[str]) -> Source:
    """The release asked for, a draft of the runs asked for, or else the newest release/run."""
    if release and not RELEASE_NAME.match(release):
        raise UsageError(f"--release {release!r} is not a release name (letters, digits, '.', "
                         f"'_', '-'); releases: {', '.join(release_names(results_dir)) or 'none'}")
    try:
        if release:
            return load_release(results_dir, release)
        if runs:
            return load_draft(results_dir, resolve_runs(results_dir, runs))
        if releases := release_names(results_dir):
            return load_release(results_dir, releases[-1])
        if latest := layout.latest_run_id(results_dir):
            return load_draft(results_dir, [latest])
    except SourceError as error:
        raise UsageError(str(error)) from None
    raise UsageError(f"nothing to build: no release in {results_dir}/releases and no run in "
                     f"{results_dir}/runs; run `dlbench run` first")


def _describe(report: BuildReport, out: Path, source: Source) -> None:
    how = ("nothing changed since the cached build" if report.cached else
           f"{report.svgs_rendered} charts rendered, {report.svgs_reused} reused")
    print(f"built {source.name} into {out}/: {len(report.written)} written, "
          f"{len(report.unchanged)} unchanged, {len(report.removed)} removed ({how})")


def build_command(request: BuildRequest) -> int:
    """`dlbench build`: render a release or draft into site_src/."""
    paths = request.paths
    _build(paths, pick_source(paths.results_dir, request.release, list(request.runs)))
    return 0


def _build(paths: SitePaths, source: Source) -> str:
    """Render the site of `source`; the site address it was built with."""
    configured = site_url(paths.config)
    if not (paths.templates / "index.md.j2").is_file():
        raise UsageError(f"--templates {paths.templates}: no page templates there (no "
                         "index.md.j2); pass the project's templates/ folder")
    check_output(paths.out, "--out", "build")
    try:  # first: the tree swapped in keeps it, so a stop at any moment leaves a folder a
        mark_output(paths.out, "build")  # later build or deploy takes as its own
    except SaveError as error:
        raise error.at(paths.out).about("the site", f"{paths.out}/ is left as it was") from None
    _describe(build_site(source, paths.out, paths.templates, configured,
                         paths.results_dir, paths.cache_dir), paths.out, source)
    return configured


def _deploy(paths: SitePaths, name: str) -> None:
    """Build release `name` into paths.out and deploy exactly that tree."""
    check_pages_repo(paths.pages_repo)
    source = pick_source(paths.results_dir, name, [])
    configured = _build(paths, source)
    recorded = release_citation(source.root, name, source.date, configured).site_url
    newest = release_names(paths.results_dir)[-1]
    try:
        mike_deploy(paths.config, paths.pages_repo, name, f"{name} ({source.date})", recorded,
                    paths.out, latest=name == newest)
    except PublishError as error:
        raise UsageError(str(error)) from None
    where = "alias latest" if name == newest else f"latest stays on {newest}"
    print(f"deployed {name} as a site version in {paths.pages_repo} ({where})")


#: Release notes say what changed since the previous release: a page, not a book.
MAX_NOTES_BYTES = 256 << 10


def read_notes(path: Path) -> str:
    """The release notes file's Markdown; UsageError if it cannot be read, is not a regular
    file, is over MAX_NOTES_BYTES or is empty."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO does not block
        with os.fdopen(descriptor, "rb") as handle:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise UsageError(f"--notes {str(path)!r} is not a regular file; expected a "
                                 "UTF-8 Markdown file")
            os.set_blocking(descriptor, True)
            data = handle.read(MAX_NOTES_BYTES + 1)
        notes = data.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise UsageError(f"cannot read --notes {str(path)!r}: {reason}; expected a UTF-8 "
                         "Markdown file") from None
    if len(data) > MAX_NOTES_BYTES:
        raise UsageError(f"--notes {str(path)!r} is over {MAX_NOTES_BYTES} bytes; release "
                         "notes say what changed since the previous release, in a page")
    if not notes:
        raise UsageError(f"--notes {str(path)!r} is empty; expected what changed since the "
                         "previous release, in Markdown")
    return notes


def publish_command(request: PublishRequest) -> int:
    """`dlbench publish RELEASE --run ID...`: freeze the runs, then deploy the release."""
    date = request.date or _today()
    if not is_iso_date(date):
        raise UsageError(f"invalid --date {shown_name(date)}; expected YYYY-MM-DD")
    if not encodes(request.title):
        raise UsageError(f"--title {shown_name(request.title, 40)} holds bytes that are not "
                         "text; expected UTF-8 text")
    paths, release = request.paths, request.release
    check_output(paths.out, "--out", "build")
    check_pages_repo(paths.pages_repo)
    runs = resolve_runs(paths.results_dir, list(request.runs))
    url = publish_site_url(paths.config, request.site_url, request.local)
    labels = publish_labels(request, runs)
    notes = read_notes(request.notes) if request.notes else ""
    cff = Citation(release, date, url or site_url(paths.config), **labels).cff()
    try:
        path = freeze_release(paths.results_dir, release, runs, date,
                              request.title or f"dlbench release {release}", cff, labels,
                              notes, site_url=url, finish=lambda staging: store_staged_verdicts(
                                  paths.results_dir, staging, release))
    except ReleaseError as error:
        raise UsageError(str(error)) from None
    except KeyboardInterrupt:
        raise _interrupted(paths.results_dir, release) from None
    print(f"froze {len(runs)} run(s) into {path}")
    print(f"stored its verdicts in {path / STORED}")
    try:
        _deploy(paths, release)
    except UsageError as error:
        raise UsageError(f"{error}; the release is frozen: deploy it again with "
                         f"`dlbench deploy {release}`") from None
    except KeyboardInterrupt:
        raise _interrupted(paths.results_dir, release) from None
    return 0


def _interrupted(results_dir: Path, release: str) -> KeyboardInterrupt:
    """What an interrupted publish left, and what to run next."""
    if release_dir(results_dir, release).is_dir():
        return KeyboardInterrupt(f"release {release} is frozen, whole, with its verdicts; "
                                 f"deploy it with `dlbench deploy {release}`")
    return KeyboardInterrupt(f"release {release} was not frozen and nothing of it was "
                             "written; run the same `dlbench publish` again")


def _today() -> str:
    return datetime.datetime.now(datetime.UTC).date().isoformat()


def deploy_command(request: DeployRequest) -> int:
    """`dlbench deploy [RELEASE...]`: (re)build and deploy frozen releases, oldest first."""
    results_dir = request.paths.results_dir
    check_pages_repo(request.paths.pages_repo)
    check_output(request.paths.out, "--out", "build")
    names = list(request.releases) or release_names(results_dir)
    if not names:
        raise UsageError(f"no release in {results_dir}/releases: `dlbench publish` one")
    for name in names:
        _deploy(request.paths, name)
    return 0


def erratum_command(request: ErratumRequest) -> int:
    """`dlbench erratum RELEASE --title ... --wrong ... --correction ...`: append one erratum."""
    erratum = Erratum(request.date or _today(), request.title.strip(), request.wrong.strip(),
                      request.correction.strip(), request.superseded_by.strip())
    try:
        path = append_erratum(request.results_dir, request.release, erratum)
    except ErrataError as error:
        raise UsageError(str(error)) from None
    print(f"appended an erratum to {path}; rebuild and deploy the release "
          f"(`dlbench deploy {request.release}`) to show it, and commit the file")
    return 0


def export_command(request: ExportRequest) -> int:
    """`dlbench export DIR`: the whole versioned site as plain files."""
    check_pages_repo(request.pages_repo)
    try:
        export_site(request.pages_repo, request.target)
    except PublishError as error:
        raise UsageError(str(error)) from None
    print(f"exported the versioned site to {request.target}/")
    return 0


def _draft_site(config: Path, target: Path) -> Path:
    """site_src/ (a draft: no release yet) built with mkdocs into `target`."""
    docs = config.parent / str(yaml.safe_load(config.read_text()).get("docs_dir", "docs"))
    if not (docs / "index.md").is_file():
        raise UsageError(f"no release to serve and no draft in {docs}/: run `dlbench build` "
                         "(or `make`) first")
    try:
        build_mkdocs(config, target)
    except PublishError as error:
        raise UsageError(str(error)) from None
    return target


def serve_command(request: ServeRequest) -> int:
    """`dlbench serve`: the whole versioned site over HTTP on localhost (before the first
    release: the draft in site_src/). Releases not yet deployed are built in a temporary
    folder and deployed to the pages repository: the draft in site_src/ and the reader's
    site/ are only read."""
    if request.site is not None:
        return _serve(request, request.site, f"the built site in {request.site}/")
    paths = request.paths
    check_pages_repo(paths.pages_repo)
    try:
        holder = tempfile.TemporaryDirectory(prefix="dlbench-site-")
    except OSError as error:
        raise UsageError(f"cannot make a folder in {tempfile.gettempdir()}: "
                         f"{error.strerror or error}; free space there or set TMPDIR to "
                         "another folder") from None
    with holder as tmp:
        return _serve_versions(request, Path(tmp))


def _serve_versions(request: ServeRequest, tmp: Path) -> int:
    """Deploy what is not yet deployed (built under `tmp`), then serve the versioned site, or
    the draft when there is no release."""
    paths = request.paths
    draft = False
    if not deployed_versions(paths.pages_repo):
        draft = not release_names(paths.results_dir)
        if not draft:
            deploy_command(DeployRequest(paths=replace(paths, out=tmp / "docs")))
    root = (_draft_site(paths.config, tmp / "site") if draft
            else export_site(paths.pages_repo, tmp / "site"))
    return _serve(request, root, "the draft site (no release yet)" if draft
                  else "the versioned site")


def _serve(request: ServeRequest, root: Path, what: str) -> int:
    """Serve `root` until interrupted; unknown paths get the site's own 404 page."""
    if not root.is_dir():
        raise UsageError(f"no site in {root}/: run `make site` (or `mkdocs build`) first")
    try:
        server = make_server(root, request.port, request.host)
    except OSError as error:
        raise UsageError(f"cannot serve on {request.host}:{request.port} ({error.strerror}); "
                         "pass a free --port") from None
    host, port = server.server_address[:2]
    print(f"serving {what} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0
