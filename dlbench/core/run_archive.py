"""A run packed as one archive, to carry it from another machine (a GPU run) and back.

The archive is a gzipped tar holding one directory, `<run_id>/`, with the run's files as
regular files only (the run's hard-linked code views become plain copies). Reading one
accepts nothing else: no links, devices, absolute paths, `..`, or a second top directory,
so extracting it can only write inside the directory it is extracted into.
"""

from __future__ import annotations

import tarfile
from pathlib import Path, PurePosixPath

from dlbench.core.errors import ResultsFileError

ARCHIVE_SUFFIX = ".tar.gz"


def pack_run(run_root: Path, out_dir: Path) -> Path:
    """Write `out_dir/<run_id>.tar.gz` holding the run directory `run_root`; return its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    archive = out_dir / f"{run_root.name}{ARCHIVE_SUFFIX}"
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, "w:gz") as tar:
        for path in sorted(run_root.rglob("*")):
            name = f"{run_root.name}/{path.relative_to(run_root).as_posix()}"
            if path.is_file() and not path.is_symlink():
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
        raise ResultsFileError(f"{origin}: member {member.name!r} is not a regular file or "
                               "directory (links and devices are refused)")
    path = PurePosixPath(member.name)
    if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in member.name:
        raise ResultsFileError(f"{origin}: member {member.name!r} escapes the archive "
                               "(absolute or '..' paths are refused)")
    return path


def extract_run(archive: Path, target: Path) -> Path:
    """Extract the one run directory of `archive` into the empty directory `target`; return
    the extracted run directory. ResultsFileError names what is wrong with the archive."""
    origin = str(archive)
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
            paths = [_member_path(member, origin) for member in members]
            tops = {path.parts[0] for path in paths}
            if len(tops) != 1:
                found = ", ".join(sorted(tops)) or "nothing"
                raise ResultsFileError(f"{origin}: expected one run directory at the top, "
                                       f"found {found}")
            for member, path in zip(members, paths):
                destination = target.joinpath(*path.parts)
                if member.isdir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                source = tar.extractfile(member)
                assert source is not None  # a regular file always has data
                destination.write_bytes(source.read())
    except (tarfile.TarError, EOFError, OSError) as error:
        if isinstance(error, FileNotFoundError) and not archive.exists():
            raise ResultsFileError(f"{origin}: file not found") from None
        raise ResultsFileError(f"{origin}: not a readable {ARCHIVE_SUFFIX} archive "
                               f"({error})") from None
    return target / tops.pop()
