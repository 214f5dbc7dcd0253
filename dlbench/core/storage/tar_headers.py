"""The headers of a tar stream read raw, with bounds, before tarfile reads them whole.

tarfile reads a GNU long name or a pax header into memory whatever size it declares, and
keeps one TarInfo per member: an archive of a few hundred kB could ask for gigabytes. This
walks the 512-byte headers itself, as tarfile would, and refuses before reading much: an
extended header (pax, GNU long name) over MAX_EXTENDED_HEADER_BYTES, a name over
MAX_NAME_BYTES, more members or bytes than the caller allows, and the kinds a run never
holds (global pax headers, sparse files), and chains of extended headers (tarfile reads
them by recursion). Where a header is not a tar header it stops and
leaves the verdict to tarfile, which stops there too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO

from dlbench.core.text.errors import ResultsFileError
from dlbench.core.text.visible import shown_name

BLOCK = 512
#: One pax or GNU long-name header: a run's names are short, its pax records few.
MAX_EXTENDED_HEADER_BYTES = 16 << 10
#: One member's name (a run's longest is about 120 bytes).
MAX_NAME_BYTES = 1024
#: Extended headers before one member: tarfile reads each next header by recursion, so a
#: chain of thousands ends in RecursionError; tarfile writes a pax header or a GNU long name
#: and long link name, never more.
MAX_CHAINED = 3
SKIP_CHUNK = 1 << 20
#: Types whose data blocks tarfile skips (regular files; unknown types too).
_DATA_TYPES = (b"0", b"\0", b"7")
_KNOWN_TYPES = (b"0", b"\0", b"7", b"1", b"2", b"3", b"4", b"5", b"6", b"L", b"K", b"S",
                b"x", b"g", b"X")
_RECORD = re.compile(rb"(\d+) ")


@dataclass(frozen=True)
class Limits:
    """What one archive may declare."""

    members: int
    member_bytes: int
    total_bytes: int


def _number(field: bytes) -> int | None:
    """A header's numeric field (octal, or GNU base-256); None when it is not one."""
    if field[:1] in (b"\x80", b"\xff"):
        value = int.from_bytes(field[1:], "big")
        return value - (256 ** (len(field) - 1)) if field[:1] == b"\xff" else value
    text = field.split(b"\0", 1)[0].strip()
    try:
        return int(text or b"0", 8)
    except ValueError:
        return None


def _is_header(block: bytes) -> bool:
    stored = _number(block[148:156])
    unsigned = 256 + sum(block[:148]) + sum(block[156:])
    if stored == unsigned:
        return True
    return stored == 256 + sum(b - 256 if b > 127 else b for b in block[:148] + block[156:])


def _read(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    return data if len(data) == size else b""


def _skip(stream: BinaryIO, size: int) -> None:
    while size > 0:
        chunk = stream.read(min(size, SKIP_CHUNK))
        if not chunk:
            return
        size -= len(chunk)


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _pax_size(data: bytes, origin: str) -> int | None:
    """The size a pax header sets for the next member (None if it sets none)."""
    size, position = None, 0
    while position < len(data) and (match := _RECORD.match(data, position)):
        length = int(match.group(1))
        if length <= 0:
            break
        key, _, value = data[match.end():position + length - 1].partition(b"=")
        if key.startswith(b"GNU.sparse"):
            raise ResultsFileError(f"{origin}: a sparse member (pax {key.decode()!r}); a run's "
                                   "files are plain files")
        if key == b"size":
            size = int(value) if value.isdigit() else None
        position += length
    return size


def check_headers(stream: BinaryIO, origin: str, limits: Limits) -> None:
    """Walk the tar headers of `stream` within `limits`; ResultsFileError for the first
    header over them, named (cut short) in one line."""
    members, total, next_size, next_name, chained = 0, 0, None, b"", 0
    while (block := _read(stream, BLOCK)) and block.strip(b"\0") and _is_header(block):
        kind, size = block[156:157], _number(block[124:136])
        if size is None or size < 0:
            return  # tarfile refuses it, in its words
        if kind in (b"x", b"X", b"L", b"K"):
            what = "pax" if kind in (b"x", b"X") else "GNU long-name"
            chained += 1
            if chained > MAX_CHAINED:
                raise ResultsFileError(f"{origin}: more than {MAX_CHAINED} extended (pax or "
                                       "GNU long-name) headers before one member; a run's "
                                       "members have at most one of each")
            if size > MAX_EXTENDED_HEADER_BYTES:
                raise ResultsFileError(f"{origin}: a {what} header of {size} bytes, over the "
                                       f"limit of {MAX_EXTENDED_HEADER_BYTES} (a run's "
                                       "member names are short)")
            data = _read(stream, _padded(size))[:size]
            if kind in (b"x", b"X"):
                next_size = _pax_size(data, origin)
                found = re.search(rb"\d+ path=([^\n]*)\n", data)
                next_name = found.group(1) if found else next_name
            elif kind == b"L":
                next_name = data.rstrip(b"\0")
            continue
        if kind in (b"g", b"S"):
            raise ResultsFileError(f"{origin}: a {'global pax' if kind == b'g' else 'sparse'} "
                                   "member; a run's archive holds plain files and folders")
        name = next_name or (block[345:500].split(b"\0", 1)[0] + b"/" if block[345] else b"") \
            + block[:100].split(b"\0", 1)[0]
        size = size if next_size is None else next_size
        members, total = members + 1, total + size
        _check_member(name.decode("utf-8", "replace"), size, members, total, origin, limits)
        next_size, next_name, chained = None, b"", 0
        if kind in _DATA_TYPES or kind not in _KNOWN_TYPES:
            _skip(stream, _padded(size))


def _check_member(name: str, size: int, count: int, total: int, origin: str,
                  limits: Limits) -> None:
    if len(name.encode()) > MAX_NAME_BYTES:
        raise ResultsFileError(f"{origin}: member {shown_name(name)} has a name of "
                               f"{len(name.encode())} bytes, over the limit of {MAX_NAME_BYTES}")
    if count > limits.members:
        raise ResultsFileError(f"{origin}: more than {limits.members} members, more than a run "
                               "holds")
    if size > limits.member_bytes:
        raise ResultsFileError(f"{origin}: member {shown_name(name)} declares {size} bytes, "
                               f"over the limit of {limits.member_bytes} for one file of a run")
    if total > limits.total_bytes:
        raise ResultsFileError(f"{origin}: its members declare at least {total} bytes in all, "
                               f"over the limit of {limits.total_bytes} for a run")
