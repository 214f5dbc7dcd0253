"""The build cache (build/cache/): a site version reused whole when none of its inputs changed,
and static SVGs reused by the hash of their spec; writing only the files whose bytes changed.

    build/cache/site/<key>/index.json   the relative paths of one build's files, written last
    build/cache/site/<key>/files/...    those files
    build/cache/svg/<key>.svg           one chart's static SVG

A site key hashes everything a build reads: the source's files (a release's whole directory,
or a draft's run directories), the page templates, the other releases (their manifests, for
the comparison page), the site's address, the code of report/ and dlbench/, and the versions
of the libraries that render. Nothing else goes in, so a key never meets stale pages.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from dlbench.atomic import atomic_write_bytes

CODE_DIRS = (Path(__file__).parent, Path(__file__).parent.parent / "dlbench")
LIBRARIES = ("altair", "vl-convert-python", "pandas", "numpy", "scipy", "jinja2", "pyarrow",
             "pyyaml")
KEEP_SITES = 4  # site versions kept in the cache; older ones are removed


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
    """Make `out_dir` hold exactly `files`, rewriting only those whose bytes changed."""
    written, unchanged = [], []
    for relative, data in sorted(files.items()):
        path = out_dir / relative
        if path.is_file() and path.stat().st_size == len(data) and path.read_bytes() == data:
            unchanged.append(relative)
            continue
        atomic_write_bytes(path, data)
        written.append(relative)
    removed = []
    for path in sorted(out_dir.rglob("*"), reverse=True):
        relative = path.relative_to(out_dir).as_posix()
        if path.is_file() and relative not in files and relative != ".gitkeep":
            path.unlink()
            removed.append(relative)
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    return BuildReport(tuple(written), tuple(unchanged), tuple(removed))


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
        for path, data in files.items():
            atomic_write_bytes(entry / "files" / path, data)
        atomic_write_bytes(entry / "index.json", json.dumps(sorted(files)).encode())
        entries = sorted((p for p in entry.parent.iterdir() if p.is_dir()),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for old in entries[KEEP_SITES:]:
            shutil.rmtree(old, ignore_errors=True)

    def has(self, kind: str, key_text: str, suffix: str = "") -> bool:
        """Whether `blob` would reuse the bytes of an earlier build for `key_text`."""
        path = self._path(kind, key_text, suffix)
        return path is not None and path.is_file()

    def _path(self, kind: str, key_text: str, suffix: str) -> Path | None:
        name = hashlib.sha256(key_text.encode()).hexdigest()[:32] + suffix
        return self.root / kind / name if self.root else None

    def blob(self, kind: str, key_text: str, produce: Callable[[], bytes],
             suffix: str = "") -> tuple[bytes, bool]:
        """The bytes `produce` makes for `key_text`, reused from an earlier build when cached;
        and whether they were reused."""
        path = self._path(kind, key_text, suffix)
        if path is not None and path.is_file():
            return path.read_bytes(), True
        data = produce()
        if path is not None:
            atomic_write_bytes(path, data)
        return data, False

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
