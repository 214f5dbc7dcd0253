"""The local server of `dlbench serve`: regular files of its folder only, opened the way
they are checked.

Every path is opened one segment at a time from the folder, each relative to the one before
(`dir_fd`) and none through a link (O_NOFOLLOW), so the file sent is the file checked: a
link, or a file swapped for a link between requests, is a 404, never what it leads to. Only
regular files are sent (a FIFO, device or socket is a 404, and opening one cannot block); the
site's own 404 page is found the same way. A path that cannot name a file (a NUL byte,
undecodable escapes, a segment over 255 bytes, over 4096 bytes in all) is a 400.
"""

from __future__ import annotations

import email.utils
import functools
import http.server
import os
import stat
import sys
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO

LATEST = "latest"
#: The longest name of one segment and of a whole path that a filesystem takes (Linux).
MAX_SEGMENT_BYTES = 255
MAX_PATH_BYTES = 4096
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | \
    getattr(os, "O_CLOEXEC", 0)


class BadPath(ValueError):
    """A request path that cannot name a file of the site."""


def url_segments(url_path: str) -> list[str]:
    """The path segments a request names ('.', '..' and empty ones dropped, as
    http.server does); BadPath for a path that cannot name a file."""
    path = url_path.split("?", 1)[0].split("#", 1)[0]
    if len(path.encode("utf-8", "surrogatepass")) > 3 * MAX_PATH_BYTES:
        raise BadPath(f"path longer than {MAX_PATH_BYTES} bytes")
    try:
        decoded = urllib.parse.unquote(path, errors="strict")
    except UnicodeDecodeError:
        raise BadPath("path escapes that are not UTF-8") from None
    if "\x00" in decoded:
        raise BadPath("a NUL byte in the path")
    if len(decoded.encode()) > MAX_PATH_BYTES:
        raise BadPath(f"path longer than {MAX_PATH_BYTES} bytes")
    segments = [s for s in decoded.split("/") if s not in ("", ".", "..")]
    if any(len(s.encode()) > MAX_SEGMENT_BYTES for s in segments):
        raise BadPath(f"a path segment longer than {MAX_SEGMENT_BYTES} bytes")
    return segments


def _open_at(directory: int, name: str, flags: int) -> int | None:
    try:
        return os.open(name, flags, dir_fd=directory)
    except OSError:  # missing, a link (ELOOP), not a directory, no permission
        return None


def open_inside(root: Path, segments: Sequence[str]) -> tuple[int, os.stat_result] | None:
    """An open descriptor and its stat for `segments` under `root`, followed through no link;
    None when any segment is missing or a link. The caller closes the descriptor."""
    try:
        current = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    for index, name in enumerate(segments):
        last = index == len(segments) - 1
        flags = _FILE_FLAGS | (0 if last else getattr(os, "O_DIRECTORY", 0))
        opened = _open_at(current, name, flags)
        os.close(current)
        if opened is None:
            return None
        current = opened
    return current, os.fstat(current)


def open_regular(root: Path, segments: Sequence[str]) -> tuple[BinaryIO, os.stat_result] | None:
    """The regular file `segments` names under `root` (a folder's index.html for a folder),
    opened through no link; None for anything else."""
    opened = open_inside(root, segments)
    if opened is not None and stat.S_ISDIR(opened[1].st_mode):
        os.close(opened[0])
        opened = open_inside(root, [*segments, "index.html"])
    if opened is None:
        return None
    descriptor, status = opened
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        return None
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb"), status


def is_folder(root: Path, segments: Sequence[str]) -> bool:
    """Whether `segments` name a folder under `root`, through no link."""
    opened = open_inside(root, segments)
    if opened is None:
        return False
    os.close(opened[0])
    return stat.S_ISDIR(opened[1].st_mode)


def not_found_page(root: Path, url_path: str) -> bytes | None:
    """The site's own 404 page for a missing `url_path`: its version's, else the root's,
    else the default version's (None when the site has none); read through no link."""
    try:
        segments = url_segments(url_path)
    except BadPath:
        segments = []
    candidates = ([[segments[0], "404.html"]] if segments else []) + [
        ["404.html"], [LATEST, "404.html"]]
    for candidate in candidates:
        opened = open_regular(root, candidate)
        if opened is not None:
            with opened[0] as page:
                return page.read()
    return None


class SiteServer(http.server.ThreadingHTTPServer):
    """One thread per connection, a listen queue that holds a page's and many readers'
    connections at once (the default of 5 made the kernel drop connects, which browsers
    retry only after a second), and a reader who goes away mid-reply is no error."""

    request_queue_size = 1024
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet for a reader that reset or closed its connection; the traceback otherwise."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def make_server(root: Path, port: int, host: str = "127.0.0.1") -> http.server.HTTPServer:
    """An HTTP server for the exported site (port 0 picks a free one)."""
    handler = functools.partial(SiteHandler, directory=str(root))
    return SiteServer((host, port), handler)


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Regular files of its folder only, opened through no link; an unknown path gets the
    site's own 404 page, a malformed one a 400."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".bib": "text/plain; charset=utf-8", ".cff": "text/plain; charset=utf-8"}

    def send_head(self) -> BinaryIO | None:
        """Headers of the file the request names, and the open file; None once an error or
        redirect is sent."""
        try:
            segments = url_segments(self.path)
        except BadPath as error:
            self.send_error(400, f"Bad request path: {error}")
            return None
        root = Path(str(self.directory))
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        folder = not segments or is_folder(root, segments)
        if segments and folder and not path.endswith("/"):
            self.send_response(301)
            self.send_header("Location", path + "/")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        opened = open_regular(root, segments)
        if opened is None:
            self.send_error(404, "File not found")
            return None
        file, status = opened
        name = "index.html" if folder else segments[-1]
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(name))
        self.send_header("Content-Length", str(status.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(status.st_mtime, usegmt=True))
        self.end_headers()
        return file

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The site's own 404 page for a 404, the standard page otherwise."""
        page = not_found_page(Path(str(self.directory)), self.path) if code == 404 else None
        if page is None:
            super().send_error(code, message, explain)
            return
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(page)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Quiet: the terminal shows only where the site is served."""
