"""Versioned publication with mike: deploy releases and export the whole site (served by
report/site/static_server.py)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

from dlbench.core.storage.atomic import free_space, save_error, saving, staged_dir
from dlbench.core.text.errors import SaveError
from dlbench.report.site.cache import swap_in
from dlbench.report.site.outputs import check_output, mark_output

BRANCH = "gh-pages"
LATEST = "latest"
#: A fixed identity for the commits mike makes, so a machine without one can publish.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "dlbench", "GIT_AUTHOR_EMAIL": "dlbench@localhost",
    "GIT_COMMITTER_NAME": "dlbench", "GIT_COMMITTER_EMAIL": "dlbench@localhost",
}


#: Below this much free space a failed git or mkdocs is taken to have run out of it.
LOW_SPACE_BYTES = 16 << 20


class PublishError(RuntimeError):
    """mike or git failed; the message carries the last line of their output."""


def _run(command: list[str], cwd: Path) -> str:
    # mike runs `mkdocs` from PATH: put this interpreter's scripts first, so an environment
    # that was never activated (make, CI) still finds its own mkdocs.
    scripts = str(Path(sys.executable).parent)
    env = os.environ | GIT_IDENTITY | {"NO_MKDOCS_2_WARNING": "1",
                                       "PATH": scripts + os.pathsep + os.environ.get("PATH", "")}
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as child:
        try:  # its own session: a stop reaches us, and we end it and what it started
            stdout, stderr = child.communicate()
        except BaseException:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
    done = subprocess.CompletedProcess(command, child.returncode, stdout, stderr)
    if done.returncode != 0:
        raise PublishError(f"{' '.join(command[:3])} failed: "
                           f"{_reason(done.stderr or done.stdout)}{_low_space(cwd)}")
    return done.stdout


def _low_space(folder: Path) -> str:
    """'; no space left ...' when the disk of `folder` is (nearly) full: git then blames
    'disk corruption'."""
    try:
        full = shutil.disk_usage(folder).free < LOW_SPACE_BYTES
    except OSError:
        return ""
    return f"; the disk is full ({free_space(folder)} free in {folder})" if full else ""


def _reason(output: str) -> str:
    """The line of a tool's output that says why it failed: its last error, fatal or
    warning line, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()] or ["no output"]
    flagged = [line for line in lines
               if line.lower().startswith(("error", "fatal", "warning"))]
    return (flagged or lines)[-1]


def ensure_repo(pages_repo: Path) -> None:
    """Create the git repository the versioned site is committed to, if missing."""
    if not (pages_repo / ".git").exists():
        try:
            pages_repo.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise PublishError(f"cannot make the pages repository {pages_repo} "
                               f"({error.strerror or error})") from None
        try:
            _run(["git", "init", "--quiet", "--initial-branch=main"], pages_repo)
            _run(["git", "commit", "--quiet", "--allow-empty", "-m",
                  "dlbench versioned site: one version per release, on branch " + BRANCH],
                 pages_repo)
        except PublishError:
            shutil.rmtree(pages_repo / ".git", ignore_errors=True)  # no half a repository
            raise


def mike_deploy(config: Path, pages_repo: Path, release: str, title: str,
                site_url: str = "", docs: Path | None = None, latest: bool = True) -> None:
    """Commit the built tree `docs` (default: the config's docs_dir) as version `release` and,
    when it is the newest release (`latest`), point `latest` and the site's root at it: an
    older release redeployed (to show a new erratum) keeps its place. `site_url` (the address
    the release recorded) replaces the config's in its canonical links. mkdocs builds into a
    temporary folder, never the config's site_dir (the reader's own `make site`)."""
    ensure_repo(pages_repo)
    mike = [sys.executable, "-c", "import sys; from mike.driver import main; sys.exit(main())"]
    aliases = ["--update-aliases", release, LATEST] if latest else [release]
    with config_at(config, site_url, docs) as used, _mike_leftovers_removed(used.parent):
        common = ["--config-file", str(used.resolve()), "--branch", BRANCH]
        _run(mike + ["deploy", *common, "--title", title, *aliases], pages_repo)
        if latest:
            _run(mike + ["set-default", *common, LATEST], pages_repo)


@contextlib.contextmanager
def _mike_leftovers_removed(folder: Path) -> Iterator[None]:
    """Remove the temporary configs (mike-mkdocs*.yml) that mike writes beside the config
    and leaves there when it is stopped; those that were there before stay."""
    before = set(folder.glob("mike-mkdocs*.yml"))
    try:
        yield
    finally:
        for left in set(folder.glob("mike-mkdocs*.yml")) - before:
            left.unlink(missing_ok=True)


@contextlib.contextmanager
def config_at(config: Path, site_url: str = "", docs: Path | None = None) -> Iterator[Path]:
    """A copy of `config` beside it (its relative paths still resolve), removed afterwards,
    that builds `docs` (default: its docs_dir) into a new temporary folder, with `site_url`
    (default: its own)."""
    settings = yaml.safe_load(config.read_text()) or {}
    with tempfile.TemporaryDirectory(prefix="dlbench-mkdocs-") as site_dir:
        changes = {"site_dir": site_dir} | ({"site_url": site_url} if site_url else {}) | (
            {"docs_dir": str(docs.resolve())} if docs is not None else {})
        copy = config.with_name(f".{config.stem}-{os.getpid()}{config.suffix}")
        copy.write_text(yaml.safe_dump(settings | changes, sort_keys=False))
        try:
            yield copy
        finally:
            copy.unlink(missing_ok=True)


def build_mkdocs(config: Path, target: Path) -> None:
    """Build the config's docs (strict, as configured) into `target`, unversioned."""
    _run([sys.executable, "-m", "mkdocs", "build", "--config-file", str(config.resolve()),
          "--site-dir", str(target.resolve())], config.resolve().parent)


def deployed_versions(pages_repo: Path) -> list[dict]:
    """The versions the site lists (mike's versions.json), newest first."""
    if not (pages_repo / ".git").exists():
        return []
    try:
        text = _run(["git", "show", f"{BRANCH}:versions.json"], pages_repo)
    except PublishError:
        return []
    return json.loads(text)


def export_site(pages_repo: Path, target: Path) -> Path:
    """Write the whole versioned site as plain files under `target`, for any static host;
    aliases such as `latest` become copies of their version. The tree is staged beside
    `target` and swapped in whole: a failure leaves `target` as it was and nothing else."""
    check_output(target, "", "export")
    if not deployed_versions(pages_repo):
        raise PublishError(f"nothing deployed in {pages_repo}: run `dlbench deploy` first")
    archive = subprocess.run(["git", "archive", "--format=tar", BRANCH], cwd=pages_repo,
                             capture_output=True, check=True).stdout
    try:
        with staged_dir(target.parent, f".{target.name}.new-") as staging:
            with saving("the exported site", f"{target} is left as it was"):
                _unpack(archive, staging)
                mark_output(staging, "export")
            swap_in(target, staging)
    except SaveError as error:
        raise error.at(target) from None
    return target


def _unpack(archive: bytes, staging: Path) -> None:
    """Extract the site's tar into `staging`, its alias links (a version's folder) replaced
    by copies; PublishError for a link that is not an alias of a version."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(staging, filter="data")
        for alias in [p for p in staging.iterdir() if p.is_symlink()]:
            version = alias.resolve()
            if not (version.is_dir() and version.parent == staging.resolve()):
                raise PublishError(f"branch {BRANCH} holds a link {alias.name} that is not "
                                   "an alias of a version; nothing was exported")
            alias.unlink()
            shutil.copytree(version, alias)  # a plain copy: not every static host follows links
    except (tarfile.TarError, RuntimeError) as error:  # a link leading out, a loop
        raise PublishError(f"branch {BRANCH} holds what a site never does ({error}); "
                           "nothing was exported") from None
    except OSError as error:
        raise save_error(staging, error) from None
