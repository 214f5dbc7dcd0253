"""A run's code record as one content-addressed archive, `code.tar` in the run's folder.

    manifest.json              {"format": FORMAT, "files": {project path: [sha256, ...]}}
    objects/<sha256>           each distinct file's bytes, once, sorted by hash

A path lists every version the run's processes imported, the first one seen first (2027.01
imported two versions of runner/experiments/inference/__init__.py in one run; both are kept,
the first is the one the site shows). Identical files, under any path and from any process,
are stored once. The archive is a plain POSIX (ustar) tar, uncompressed, with every header
fixed (mode 0644, owner 0, no user names, time 0): its bytes are a function of the record
alone, so a release's checksum of it is stable and an unchanged record rewrites to the same
bytes. Why this form: tar is the format the run archives already use, read through the
bounded header walk of dlbench/core/storage/tar_headers.py; uncompressed, so the runs of one
measurement code (a release of several machines) hold the same object bytes and git stores
a second run's archive as a small delta of the first (gzip would scramble them); and no
file in it is named *.py, so the project's code is never copied under results/ as source a
search or a tool would find. Zip was the other choice: random access is not needed for
about 80 small files, and a second bounded reader would be.

Runs written before this archive (releases up to 2027.03, and runs measured by the tagged
measurement code measure-2027.04) kept the same record as `code-objects/<sha256>` and a
readable `code/<path>` view; `read_code_record` reads either form, checked against the
hashes, and `convert_legacy` turns the old form into the archive (`dlbench import-run` and
the release freeze do). The four releases frozen in the older form were repacked once
(issue 51, by a one-off script git history keeps): their MANIFEST.json keeps the published
checksums of the removed files under "repacked", and `check_repacked` holds the archive to
them.

A release stores each distinct archive once, by content: `code-archives/<sha256>.tar` at its
root, and each run holds `code.tar.sha256` naming its archive in place of its own copy
(`store_by_content`; the runs of one measurement code share one). Every reader finds a run's
archive through `archive_bytes`, which checks the bytes against the name.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from dlbench.core.storage.atomic import atomic_write_bytes, save_error
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.tar_headers import Limits, check_headers
from dlbench.core.text.visible import shown_name

ARCHIVE = "code.tar"
POINTER = "code.tar.sha256"  # a released run's archive, stored once by content
STORE = "code-archives"  # at a release's root: <sha256>.tar, each distinct archive once
LEGACY_VIEWS = "code"
LEGACY_OBJECTS = "code-objects"
MANIFEST = "manifest.json"
OBJECTS = "objects"
FORMAT = "dlbench code record 1"
SHA256 = re.compile(r"[0-9a-f]{64}")
#: Far above a run's record (a full suite imports about 80 files, 0.3 MB in all).
LIMITS = Limits(members=100_000, member_bytes=64 << 20, total_bytes=1 << 30)


@dataclass(frozen=True)
class CodeRecord:
    """The code files a run's processes imported: every version of each path, by hash,
    and each distinct file's bytes once."""

    files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    objects: dict[str, bytes] = field(default_factory=dict)

    def data(self, path: str, digest: str = "") -> bytes | None:
        """The bytes of `path` (its version `digest`; by default the first seen), or None."""
        versions = self.files.get(path, ())
        if digest:
            return self.objects.get(digest) if digest in versions else None
        return self.objects[versions[0]] if versions else None

    def with_file(self, path: str, data: bytes) -> CodeRecord:
        """This record with `data` as a version of `path` (itself if it holds it already)."""
        digest = hashlib.sha256(data).hexdigest()
        versions = self.files.get(path, ())
        if digest in versions:
            return self
        check_path(path, "a code file")
        return CodeRecord({**self.files, path: (*versions, digest)},
                          {**self.objects, digest: data} if digest not in self.objects
                          else self.objects)


def check_path(path: str, origin: str) -> str:
    """`path` if it is a relative project path (no '..', no backslash, no control
    character); else ResultsFileError naming it."""
    if not path or "\\" in path or not path.isprintable() or any(
            part in ("", ".", "..") for part in path.split("/")):
        raise ResultsFileError(f"{origin}: code path {shown_name(path)} is not a relative "
                               "project path (e.g. runner/worker/harness/training.py)")
    return path


def pack(record: CodeRecord) -> bytes:
    """The archive's bytes: the manifest, then each object by hash, every header fixed."""
    manifest = {"format": FORMAT, "files": {p: list(v) for p, v in sorted(record.files.items())}}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        members = [(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode() + b"\n")]
        members += [(f"{OBJECTS}/{d}", record.objects[d]) for d in sorted(record.objects)]
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def unpack(data: bytes, origin: str) -> CodeRecord:
    """The record in an archive's bytes; ResultsFileError, one line, for anything but a
    manifest and objects that match their hashes and its paths."""
    check_headers(io.BytesIO(data), origin, LIMITS)
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            members = {}
            for member in tar.getmembers():
                if not member.isfile():
                    raise ResultsFileError(f"{origin}: member {shown_name(member.name)} is not "
                                           "a regular file (a code archive holds files only)")
                if member.name in members:
                    raise ResultsFileError(f"{origin}: member {shown_name(member.name)} "
                                           "appears twice")
                source = tar.extractfile(member)
                members[member.name] = source.read() if source else b""
    except (tarfile.TarError, EOFError) as error:
        raise ResultsFileError(f"{origin}: not a readable code archive ({error})") from None
    if MANIFEST not in members:
        raise ResultsFileError(f"{origin}: no {MANIFEST} (not a dlbench code archive)")
    files = _manifest_files(members.pop(MANIFEST), origin)
    objects = {}
    for name, blob in members.items():
        digest = name.removeprefix(f"{OBJECTS}/")
        if not name.startswith(f"{OBJECTS}/") or not SHA256.fullmatch(digest):
            raise ResultsFileError(f"{origin}: member {shown_name(name)} is neither "
                                   f"{MANIFEST} nor {OBJECTS}/<sha256>")
        objects[digest] = _checked(blob, digest, f"{origin}: object {digest}")
    return _complete(CodeRecord(files, objects), origin)


def _checked(blob: bytes, digest: str, what: str) -> bytes:
    """`blob` if its SHA-256 is `digest`; else ResultsFileError."""
    actual = hashlib.sha256(blob).hexdigest()
    if actual != digest:
        raise ResultsFileError(f"{what} does not match its content's hash {actual} (changed "
                               "after the run?)")
    return blob


def _manifest_files(raw: bytes, origin: str) -> dict[str, tuple[str, ...]]:
    """The manifest's files, each path checked and each a non-empty list of distinct hashes."""
    try:
        manifest = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as error:
        raise ResultsFileError(f"{origin}: {MANIFEST} is not JSON ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or \
            not isinstance(manifest.get("files"), dict):
        raise ResultsFileError(f"{origin}: {MANIFEST} is not a code manifest of format "
                               f"{FORMAT!r} with files")
    files = {}
    for path, versions in manifest["files"].items():
        check_path(path, origin)
        if not isinstance(versions, list) or not versions or len(set(versions)) != len(
                versions) or not all(isinstance(v, str) and SHA256.fullmatch(v)
                                     for v in versions):
            raise ResultsFileError(f"{origin}: {MANIFEST} gives {shown_name(path)} no list "
                                   "of distinct SHA-256 hashes")
        files[path] = tuple(versions)
    return files


def _complete(record: CodeRecord, origin: str) -> CodeRecord:
    """`record` if every hash it names has its object and every object is named."""
    named = {digest for versions in record.files.values() for digest in versions}
    if missing := sorted(named - set(record.objects)):
        raise ResultsFileError(f"{origin}: the manifest names {missing[0]}, which it holds "
                               "no object of")
    if unnamed := sorted(set(record.objects) - named):
        raise ResultsFileError(f"{origin}: object {unnamed[0]} is named by no code path")
    return record


def read_code_record(run_root: Path, origin: str = "") -> CodeRecord:
    """The code record of the run at `run_root`, from its archive or the older form, checked
    against its hashes; empty when it kept none. ResultsFileError says what is wrong."""
    origin = origin or str(run_root)
    archive = archive_bytes(run_root, origin)
    legacy = [name for name in (LEGACY_VIEWS, LEGACY_OBJECTS) if (run_root / name).exists()]
    if archive is not None and legacy:
        raise ResultsFileError(f"{origin}: holds its code record twice ({ARCHIVE} and "
                               f"{legacy[0]}/); a run keeps one")
    if archive is not None:
        return unpack(archive, f"{origin}: {ARCHIVE}")
    return read_legacy(run_root, origin) if legacy else CodeRecord()


def archive_bytes(run_root: Path, origin: str = "") -> bytes | None:
    """The bytes of the run's code archive: its own code.tar, or the one its code.tar.sha256
    names in its release's store, checked against that hash; None when it has neither."""
    origin = origin or str(run_root)
    if (run_root / ARCHIVE).exists() or not (run_root / POINTER).exists():
        return (run_root / ARCHIVE).read_bytes() if (run_root / ARCHIVE).exists() else None
    digest = (run_root / POINTER).read_text(errors="replace").strip()
    if not SHA256.fullmatch(digest):
        raise ResultsFileError(f"{origin}: {POINTER} holds no SHA-256 (64 hex digits)")
    stored = run_root.parent.parent / STORE / f"{digest}.tar"
    try:
        data = stored.read_bytes()
    except FileNotFoundError:
        raise ResultsFileError(f"{origin}: {POINTER} names {digest}, which its release's "
                               f"{STORE}/ does not hold") from None
    return _checked(data, digest, f"{origin}: {STORE}/{digest}.tar")


def own_archive(run_root: Path, source: Path) -> None:
    """Give a run copied from the released run `source` its own code.tar again, from the
    archive `source`'s code.tar.sha256 names (a new release then stores it by content)."""
    if (run_root / POINTER).exists() and not (run_root / ARCHIVE).exists():
        atomic_write_bytes(run_root / ARCHIVE, archive_bytes(source) or b"")
        (run_root / POINTER).unlink()


def store_by_content(release_root: Path, run_root: Path) -> None:
    """Move the code.tar of a run copied into a release into the release's store, once per
    content, and leave its code.tar.sha256 in its place."""
    data = (run_root / ARCHIVE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    stored = release_root / STORE / f"{digest}.tar"
    if not stored.exists():
        atomic_write_bytes(stored, data)
    atomic_write_bytes(run_root / POINTER, f"{digest}\n".encode())
    (run_root / ARCHIVE).unlink()


def read_legacy(run_root: Path, origin: str) -> CodeRecord:
    """The record kept as code-objects/<sha256> and code/<path>: every view matches an object
    (where objects were kept) and every object is named by a view or a process record."""
    objects = {}
    folder = run_root / LEGACY_OBJECTS
    for blob in sorted(folder.iterdir()) if folder.is_dir() else []:
        if not blob.is_file() or not SHA256.fullmatch(blob.name):
            raise ResultsFileError(f"{origin}: {LEGACY_OBJECTS}/{shown_name(blob.name)} is not "
                                   "a file named by a SHA-256")
        objects[blob.name] = _checked(blob.read_bytes(), blob.name,
                                      f"{origin}: code object {blob.name}")
    record = CodeRecord()
    views = run_root / LEGACY_VIEWS
    for view in sorted(views.rglob("*")) if views.is_dir() else []:
        if view.is_dir():
            continue
        if view.is_symlink() or not view.is_file():
            raise ResultsFileError(f"{origin}: code file {view.relative_to(run_root)} is not a "
                                   "regular file (a link or a device)")
        path, data = view.relative_to(views).as_posix(), view.read_bytes()
        if objects and hashlib.sha256(data).hexdigest() not in objects:
            raise ResultsFileError(f"{origin}: code file {view.relative_to(run_root)} matches "
                                   "no code object (edited after the run?)")
        record = record.with_file(check_path(path, origin), data)
    recorded = _recorded_paths(run_root)
    for digest in sorted(set(objects) - set(record.objects)):
        paths = sorted(recorded.get(digest, ()))
        if not paths:
            raise ResultsFileError(f"{origin}: code object {digest} is named by no code file "
                                   "and no process record")
        for path in paths:
            record = record.with_file(check_path(path, origin), objects[digest])
    return record


def _recorded_paths(run_root: Path) -> dict[str, set[str]]:
    """{sha256: the paths the run's process records (current and superseded) give it}."""
    paths: dict[str, set[str]] = {}
    records = [*sorted((run_root / "processes").glob("*.json")),
               *sorted((run_root / "superseded").glob("*.json"))]
    for record_path in records:
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError):
            continue  # the run store's own check names an unreadable record
        record = record.get("record", record) if isinstance(record, dict) else {}
        for files in _code_files(record if isinstance(record, dict) else {}):
            for path, digest in files.items():
                paths.setdefault(str(digest), set()).add(str(path))
    return paths


def _code_files(record: dict) -> list[dict]:
    """Where a process record keeps its code files: in its outcome, or (records up to
    2027.02, runner/driver/store/record.py) beside the outcome and in its details."""
    outcome = record.get("outcome") if isinstance(record.get("outcome"), dict) else {}
    details = outcome.get("details") if isinstance(outcome.get("details"), dict) else {}
    found = [outcome.get("code_files"), record.get("code_files"), details.get("code_files")]
    return [files for files in found if isinstance(files, dict)]


def write_code_record(run_root: Path, record: CodeRecord) -> None:
    """Write `record` as the run's archive, atomically."""
    atomic_write_bytes(run_root / ARCHIVE, pack(record))


def convert_legacy(run_root: Path, origin: str = "") -> bool:
    """Turn the older form (code/, code-objects/) of the run at `run_root` into its archive,
    checked against the hashes first; False when there was nothing to convert."""
    if not any((run_root / name).exists() for name in (LEGACY_VIEWS, LEGACY_OBJECTS)):
        return False
    record = read_code_record(run_root, origin)  # refuses a run holding both forms
    write_code_record(run_root, record)
    for folder in (run_root / LEGACY_VIEWS, run_root / LEGACY_OBJECTS):
        try:
            if folder.exists():
                shutil.rmtree(folder)
        except OSError as error:
            raise save_error(folder, error).about("the converted code record") from None
    return True


def check_repacked(record: CodeRecord, published: dict[str, str], origin: str) -> None:
    """ResultsFileError unless `record` holds exactly the older form `published` lists (its
    code/<path> and code-objects/<sha256> checksums, relative to the run): the same paths,
    each view's hash the path's first version, the same objects."""
    views, objects = {}, set()
    for entry, digest in sorted(published.items()):
        folder, _, rest = entry.partition("/")
        if folder == LEGACY_VIEWS and rest:
            views[rest] = digest
        elif folder == LEGACY_OBJECTS and rest == digest and SHA256.fullmatch(digest):
            objects.add(digest)
        else:
            raise ResultsFileError(f"{origin}: repacked entry {shown_name(entry)} is neither "
                                   f"{LEGACY_VIEWS}/<path> nor {LEGACY_OBJECTS}/<its sha256>")
    if paths := sorted(set(views) ^ set(record.files)):
        raise ResultsFileError(f"{origin}: {ARCHIVE} and the repacked checksums disagree on "
                               f"which code files it holds ({shown_name(paths[0])})")
    if changed := sorted(p for p in views if views[p] != record.files[p][0]):
        raise ResultsFileError(f"{origin}: {ARCHIVE} holds {shown_name(changed[0])} with "
                               f"another hash than the published {views[changed[0]]}")
    named = objects or set(views.values())
    if digests := sorted(named ^ set(record.objects)):
        raise ResultsFileError(f"{origin}: {ARCHIVE} and the repacked checksums disagree on "
                               f"code object {digests[0]}")
