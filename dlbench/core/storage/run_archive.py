"""A run packed as one archive, to carry it from another machine (a GPU run) and back.

The archive is a gzipped tar holding one directory, `<run_id>/`, with the run's files as
regular files only: its code record is its `code.tar` (dlbench/core/storage/code_archive.py), or,
in a run measured by older code, its `code/` and `code-objects/` folders, which
`dlbench import-run` turns into the archive (a hard-linked code view packs as a copy; a
released run's code.tar.sha256 packs as the code.tar it names).
Reading one accepts nothing else: no links, devices, absolute paths, `..`, or a second top
directory, so extracting it can only write inside the directory it is extracted into.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from dlbench.core.storage.atomic import save_error
from dlbench.core.storage.code_archive import ARCHIVE, POINTER, archive_bytes
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.tar_headers import Limits, check_headers
from dlbench.core.text.visible import shown_name

ARCHIVE_SUFFIX = ".tar.gz"
#: A run ID as the runner makes one: its UTC start, then a name (device, "reproduce", ...).
RUN_ID_FORM = re.compile(r"\d{8}T\d{6}Z-[a-z0-9]+(?:-[a-z0-9]+)*")
#: Limits far above a full suite's run (its largest file, its whole size, its file count);
#: an archive declaring more is refused before anything is written.
MAX_MEMBER_BYTES = 64 << 20
MAX_TOTAL_BYTES = 1 << 30
MAX_MEMBERS = 200_000
#: The files a run holds, by their path inside its directory (dlbench/runner/driver/store writes
#: them; a user's model run adds model.json and model/): an archive holding anything else
#: is refused, naming it.
RUN_FILES = re.compile(r"(run|environment|model)\.json|(cells|observations|processes)\."
                       r"(parquet|csv)|(processes|superseded|cells)/[^/]+\.json|"
                       r"code\.tar|code/[^/].*|code-objects/[0-9a-f]{64}|model/[^/].*")
RUN_FOLDERS = frozenset({"processes", "superseded", "cells", "code", "code-objects", "model"})
CHUNK_BYTES = 1 << 20


def pack_run(run_root: Path, out_dir: Path) -> Path:
    """Write `out_dir/<run_id>.tar.gz` holding the run directory `run_root`; return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    archive = out_dir / f"{run_root.name}{ARCHIVE_SUFFIX}"
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for path in sorted(run_root.rglob("*")):
            name = f"{run_root.name}/{path.relative_to(run_root).as_posix()}"
            if path.name == POINTER and path.parent == run_root:  # a released run's archive
                data = archive_bytes(run_root) or b""
                info = tarfile.TarInfo(f"{run_root.name}/{ARCHIVE}")
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
            elif path.is_file() and not path.is_symlink():
                info = tar.gettarinfo(str(path), arcname=name)
                info.type, info.linkname = tarfile.REGTYPE, ""  # a hard link becomes a copy
                info.size = path.stat().st_size
                with path.open("rb") as data:
                    tar.addfile(info, data)
    partial.replace(archive)
    return archive


def _member_path(member: tarfile.TarInfo, origin: str) -> PurePosixPath:
    """The member's relative path, or ResultsFileError for a link, device or escaping name."""
    if not (member.isfile() or member.isdir()):
        raise ResultsFileError(f"{origin}: member {shown_name(member.name)} is not a regular "
                               "file or directory (links and devices are refused)")
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in member.name:
        raise ResultsFileError(f"{origin}: member {shown_name(member.name)} escapes the archive "
                               "(absolute or '..' paths are refused)")
    return path


def extract_run(archive: Path, target: Path) -> Path:
    """Extract the one run directory of `archive` into the empty directory `target`; return
    the extracted run directory. ResultsFileError names what is wrong with the archive;
    SaveError says where the filesystem refused a write (no space, read-only)."""
    origin = str(archive)
    try:
        with gzip.open(archive, "rb") as stream:  # bounded, before tarfile reads them whole
            check_headers(stream, origin, Limits(MAX_MEMBERS, MAX_MEMBER_BYTES, MAX_TOTAL_BYTES))
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            # the sizes and the count were bounded from the raw headers (check_headers)
            paths = [_member_path(member, origin) for member in members]
            top = _run_directory(paths, origin)
            _check_layout(members, paths, origin)
            for member, path in zip(members, paths):
                _extract_member(tar, member, target.joinpath(*path.parts), origin)
    except (tarfile.TarError, EOFError, zlib.error) as error:
        raise ResultsFileError(f"{origin}: not a readable {ARCHIVE_SUFFIX} archive "
                               f"({error})") from None
    except OSError as error:
        if isinstance(error, FileNotFoundError) and not archive.exists():
            raise ResultsFileError(f"{origin}: file not found") from None
        raise ResultsFileError(f"{origin}: not a readable {ARCHIVE_SUFFIX} archive "
                               f"({error})") from None
    return target / top


def _run_directory(paths: list[PurePosixPath], origin: str) -> str:
    """The one top directory of the archive, a run ID of the runner's own form."""
    tops = {path.parts[0] for path in paths}
    if len(tops) != 1:
        found = ", ".join(map(shown_name, sorted(tops)[:5])) or "nothing"
        raise ResultsFileError(f"{origin}: expected one run directory at the top, "
                               f"found {found}")
    top = tops.pop()
    if not RUN_ID_FORM.fullmatch(top):
        raise ResultsFileError(f"{origin}: its run directory {shown_name(top)} is not a run "
                               "ID of the runner's form YYYYMMDDTHHMMSSZ-name (e.g. "
                               "20261201T100000Z-cuda)")
    return top


def _check_layout(members: list[tarfile.TarInfo], paths: list[PurePosixPath],
                  origin: str) -> None:
    """Refuse a member that is not one of a run's files or folders, by its name."""
    for member, path in zip(members, paths):
        inside = "/".join(path.parts[1:])
        if not inside or (RUN_FILES.fullmatch(inside) if member.isfile() else
                          inside in RUN_FOLDERS or inside.startswith(("code/", "model/"))):
            continue
        raise ResultsFileError(f"{origin}: member {shown_name(member.name)} is not a file a run "
                               "holds (run.json, environment.json, the cells, observations and "
                               "processes tables, processes/, superseded/, code.tar (or the "
                               "older code/ and code-objects/), a user model's model.json and "
                               "model/)")


def _extract_member(tar: tarfile.TarFile, member: tarfile.TarInfo, destination: Path,
                    origin: str) -> None:
    """Write one member, streamed in chunks, never more bytes than it declared; SaveError
    where the filesystem refuses the write."""
    try:
        destination.mkdir(parents=True, exist_ok=True) if member.isdir() else \
            destination.parent.mkdir(parents=True, exist_ok=True)
        out = None if member.isdir() else destination.open("xb", buffering=0)
    except FileExistsError:
        raise ResultsFileError(f"{origin}: member {shown_name(member.name)} appears "
                               "twice") from None
    except OSError as error:
        raise save_error(destination, error).about("the imported run") from None
    if out is None:
        return
    source = tar.extractfile(member)
    assert source is not None  # a regular file always has data
    with out:
        written = 0
        while chunk := source.read(CHUNK_BYTES):  # a bad archive raises here
            written += len(chunk)
            if written > member.size:
                raise ResultsFileError(f"{origin}: member {shown_name(member.name)} holds more "
                                       f"than the {member.size} bytes it declares")
            _write(out, chunk, destination)


def _write(out: BinaryIO, chunk: bytes, destination: Path) -> None:
    """Write all of `chunk` unbuffered (so a full disk fails here, named, and never at close,
    blamed on the archive); SaveError where the disk refuses."""
    view = memoryview(chunk)
    try:
        while view:
            view = view[out.write(view) or 0:]
    except OSError as error:
        raise save_error(destination, error).about("the imported run") from None
