"""The build cache (build/cache/): a site version reused whole when none of its inputs changed,
and static SVGs reused by the hash of their spec; writing only the files whose bytes changed,
into a new tree swapped in whole.

    build/cache/site/<key>/index.json   the relative paths of one build's files, written last
    build/cache/site/<key>/files/...    those files
    build/cache/svg/<key>.svg           one chart's static SVG
    build/cache/assets/<key>.js         the Vega script bundle

Where DLBENCH_SHARED_BLOBS names a folder (a test session: many builds of the same charts
within minutes; tests/conftest.py sets it), the SVGs and bundles are also kept and found
there, for every build: they are keyed by everything that makes them, so a build that finds
one there has the bytes it would have made.

A site key hashes everything a build reads: the source's files (a release's whole directory,
or a draft's run directories), the page templates, the other releases (their manifests, for
the comparison page), the site's address, the code of report/ and dlbench/, and the versions
of the libraries that render. Nothing else goes in, so a key never meets stale pages.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import dlbench
from dlbench import report
from dlbench.core.storage.atomic import atomic_write_bytes, save_error, saving, staged_dir
from dlbench.core.text.errors import SaveError

#: Found from the packages, not this module, so they hold wherever the module lives.
CODE_DIRS = (Path(report.__file__).parent, Path(dlbench.__file__).parent)
LIBRARIES = ("altair", "vl-convert-python", "pandas", "numpy", "scipy", "jinja2", "pyarrow",
             "pyyaml")
#: The folder of SVGs and bundles shared by every build (see the module's docstring).
SHARED_BLOBS = "DLBENCH_SHARED_BLOBS"
KEEP_SITES = 4  # site versions kept in the cache; older ones are removed
#: Files of out_dir that are not the site's and stay: git keeps the empty folder with the
#: first; the second says dlbench build wrote the folder (dlbench.report.site.outputs).
KEEP_FILES = (".gitkeep", ".dlbench-output")


@dataclass(frozen=True)
class BuildReport:
    """What a build wrote: files changed, files left as they were, files removed; whether the
    whole site came from the cache, and how many SVGs were rendered or reused."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]
    cached: bool = False
    svgs_rendered: int = 0
    svgs_reused: int = 0


def write_tree(out_dir: Path, files: dict[str, bytes]) -> BuildReport:
    """Make `out_dir` hold exactly `files`. Nothing changed: nothing is touched. Else the new
    tree is written beside it (unchanged files hard-linked, keeping their times) and swapped
    in whole, so mkdocs never meets half a site; SaveError when the filesystem refuses."""
    same = {r for r, data in files.items() if _same(out_dir / r, data)}
    written = sorted(r for r in files if r not in same)
    unchanged = sorted(same)
    old = {p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()} \
        if out_dir.is_dir() else set()
    removed = sorted(r for r in old if r not in files and r not in KEEP_FILES)
    if written or removed:
        with saving("the site", f"{out_dir}/ is left as it was"):
            _check_writable(out_dir)
            try:
                with staged_dir(out_dir.parent, f".{out_dir.name}.new-") as staging:
                    _fill(staging, out_dir, files, written, unchanged + [
                        keep for keep in KEEP_FILES if keep in old])
                    swap_in(out_dir, staging)
            except SaveError as error:  # the staging folder itself: named as the site's
                raise (error.at(out_dir) if Path(str(error.path)) == out_dir.parent
                       else error) from None
    return BuildReport(tuple(written), tuple(unchanged), tuple(removed))


def _same(path: Path, data: bytes) -> bool:
    return path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data


def _check_writable(out_dir: Path) -> None:
    """SaveError when `out_dir` exists but its old tree could not be retired."""
    if out_dir.exists() and not os.access(out_dir, os.W_OK):
        raise save_error(out_dir, PermissionError(errno.EACCES, os.strerror(errno.EACCES)))


def _fill(staging: Path, out_dir: Path, files: dict[str, bytes], written: list[str],
          linked: list[str]) -> None:
    """Write `written` from `files` into `staging` and hard-link `linked` from `out_dir`
    (a copy where a link cannot be made)."""
    for relative in written:
        _write_staged(staging, out_dir, relative, files[relative])
    for relative in linked:
        try:
            (staging / relative).parent.mkdir(parents=True, exist_ok=True)
            os.link(out_dir / relative, staging / relative)
        except OSError:
            _write_staged(staging, out_dir, relative, (out_dir / relative).read_bytes())


def _write_staged(staging: Path, out_dir: Path, relative: str, data: bytes) -> None:
    """Write one file of the staged tree; a SaveError names it by its place in `out_dir`."""
    try:
        atomic_write_bytes(staging / relative, data)
    except SaveError as error:
        raise error.at(out_dir / relative) from None


def swap_in(out_dir: Path, staging: Path) -> None:
    """Put `staging` where `out_dir` is, the old tree going away whole."""
    retired = out_dir.with_name(f".{out_dir.name}.old-{staging.name.rsplit('-', 1)[1]}")
    try:
        if out_dir.exists():
            os.rename(out_dir, retired)
        os.rename(staging, out_dir)
    except OSError as error:
        if retired.exists() and not out_dir.exists():
            os.rename(retired, out_dir)
        shutil.rmtree(staging, ignore_errors=True)
        raise save_error(out_dir, error) from None
    shutil.rmtree(retired, ignore_errors=True)


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _add_tree(digest: hashlib._Hash, root: Path, label: str) -> None:
    for path in _files(root):
        digest.update(f"\0{label}/{path.relative_to(root).as_posix()}\0".encode())
        digest.update(path.read_bytes())


def _version(library: str) -> str:
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return "absent"


def site_key(source_dirs: Iterable[Path], templates_dir: Path, site_url: str,
             results_dir: Path | None) -> str:
    """The hash of every input of a build (see the module's docstring)."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"site_url": site_url, "libraries": [_version(n) for n in
                                                                   LIBRARIES]}).encode())
    for number, root in enumerate(source_dirs):
        _add_tree(digest, root, f"source{number}")
    _add_tree(digest, templates_dir, "templates")
    for code in CODE_DIRS:
        _add_tree(digest, code, code.name)
    releases = results_dir / "releases" if results_dir else None
    if releases and releases.is_dir():
        for release in sorted(p for p in releases.iterdir() if p.is_dir()):
            for name in ("release.json", "MANIFEST.json"):
                if (release / name).is_file():
                    digest.update(f"\0releases/{release.name}/{name}\0".encode())
                    digest.update((release / name).read_bytes())
    return digest.hexdigest()[:32]


class SiteCache:
    """Whole site versions by site key, and static SVGs by the hash of their spec."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.shared = Path(os.environ[SHARED_BLOBS]) if os.environ.get(SHARED_BLOBS) else None
        self.rendered = 0
        self.reused = 0
        self._lock = threading.Lock()

    def load(self, key: str) -> dict[str, bytes] | None:
        """The files of the build with this key, or None when it is not cached."""
        if self.root is None or not (self.root / "site" / key / "index.json").is_file():
            return None
        entry = self.root / "site" / key
        paths = json.loads((entry / "index.json").read_text())
        return {path: (entry / "files" / path).read_bytes() for path in paths}

    def store(self, key: str, files: dict[str, bytes]) -> None:
        """Keep the files of a build under its key; the oldest entries beyond KEEP_SITES go."""
        if self.root is None:
            return
        entry = self.root / "site" / key
        shutil.rmtree(entry, ignore_errors=True)
        try:
            with saving("the build cache", "the site is built; free space or pass "
                        "another --cache-dir"):
                for path, data in files.items():
                    atomic_write_bytes(entry / "files" / path, data)
                atomic_write_bytes(entry / "index.json", json.dumps(sorted(files)).encode())
        except SaveError:
            shutil.rmtree(entry, ignore_errors=True)  # no half entry takes space
            raise
        entries = sorted((p for p in entry.parent.iterdir() if p.is_dir()),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP_SITES:]:
            shutil.rmtree(old, ignore_errors=True)

    def has(self, kind: str, key_text: str, suffix: str = "") -> bool:
        """Whether `blob` would reuse the bytes of an earlier build for `key_text`."""
        return any(path.is_file() for path in self._paths(kind, key_text, suffix))

    def _paths(self, kind: str, key_text: str, suffix: str) -> list[Path]:
        """Where a blob is kept: this cache's folder, then the shared one (where named)."""
        name = hashlib.sha256(key_text.encode()).hexdigest()[:32] + suffix
        return [folder / kind / name for folder in (self.root, self.shared) if folder]

    def blob(self, kind: str, key_text: str, produce: Callable[[], bytes],
             suffix: str = "") -> tuple[bytes, bool]:
        """The bytes `produce` makes for `key_text`, reused from an earlier build when cached;
        and whether they were reused. Kept wherever they were missing."""
        paths = self._paths(kind, key_text, suffix)
        found = next((path for path in paths if path.is_file()), None)
        data = found.read_bytes() if found else produce()
        for path in paths:
            if not path.is_file():
                with saving("the build cache", self._remedy(path)):
                    atomic_write_bytes(path, data)
        return data, found is not None

    def _remedy(self, path: Path) -> str:
        """What to do when a blob cannot be kept at `path`: the shared folder is named by
        its environment variable, the build's own by --cache-dir."""
        if self.shared is not None and path.is_relative_to(self.shared):
            return f"free space or set {SHARED_BLOBS} to another folder"
        return "free space or pass another --cache-dir"

    def svg(self, spec: dict, render: Callable[[dict], bytes], version: str) -> bytes:
        """The static SVG of `spec`, rendered only when no earlier build rendered it."""
        text = json.dumps(spec, sort_keys=True, separators=(",", ":")) + version
        data, reused = self.blob("svg", text, lambda: render(spec), ".svg")
        with self._lock:
            if reused:
                self.reused += 1
            else:
                self.rendered += 1
        return data
