"""Output paths are never destroyed: build, publish, deploy, export and serve write only into
a new or empty folder, or one an earlier run of the same command wrote (its marker says so);
publish and deploy deploy exactly the tree they built; nothing writes the reader's site/."""

from __future__ import annotations

import errno
import os
import re
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.report.site.outputs import MARKER
from tests.site_fixtures import ROOT, RUN_A, freeze, golden_results, site_config

STALE = "A stale draft that must not be published"


def _build(results: Path, out: Path, tmp: Path) -> list[str]:
    return ["build", "--run", RUN_A, "--results-dir", str(results), "--out", str(out),
            "--config", str(ROOT / "mkdocs.yml"), "--templates", str(ROOT / "templates"),
            "--cache-dir", str(tmp / "cache")]


def _one_line_naming(error: str, path: Path) -> None:
    assert error.count("\n") == 1 and str(path) in error, error


def test_build_refuses_a_foreign_folder_a_file_a_link_and_the_current_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    results = golden_results(tmp_path)
    mine = tmp_path / "d"
    mine.mkdir()
    (mine / "mine.txt").write_text("x")
    assert main(_build(results, mine, tmp_path)) == 2
    _one_line_naming(capsys.readouterr().err, mine)
    assert (mine / "mine.txt").read_text() == "x" and sorted(p.name for p in mine.iterdir()) \
        == ["mine.txt"]
    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n")
    assert main(_build(results, a_file, tmp_path)) == 2
    error = capsys.readouterr().err
    _one_line_naming(error, a_file)
    assert "is a file" in error and a_file.read_text() == "root:x:0:0\n"
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "empty", target_is_directory=True)
    (tmp_path / "empty").mkdir()
    assert main(_build(results, link, tmp_path)) == 2
    assert "symbolic link" in capsys.readouterr().err and link.is_symlink()
    (mine / MARKER).write_text("export\n")  # another command's folder is not build's
    assert main(_build(results, mine, tmp_path)) == 2
    assert "did not write there" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert main(_build(results, Path("."), tmp_path)) == 2
    assert "current folder" in capsys.readouterr().err
    assert not list(tmp_path.glob(".*new-*")) and not list(tmp_path.glob(".*old-*"))


def test_build_writes_a_new_folder_and_again_the_folder_it_wrote(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    out = tmp_path / "empty"
    out.mkdir()
    assert main(_build(results, out, tmp_path)) == 0
    assert (out / MARKER).read_text() == "build\n" and (out / "index.md").is_file()
    assert main(_build(results, out, tmp_path)) == 0
    assert (out / MARKER).is_file()


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release published with --out elsewhere than the config's docs_dir, which holds a
    stale draft, while the config's site_dir holds the reader's own build."""
    tmp = tmp_path_factory.mktemp("published")
    results = golden_results(tmp)
    (tmp / "site_src").mkdir()
    (tmp / "site_src" / "index.md").write_text(f"# {STALE}\n")
    (tmp / "site").mkdir()
    (tmp / "site" / "mine.html").write_text("the reader's own build")
    config = site_config(tmp, tmp / "site_src")
    argv = ["publish", "2026.12", "--run", RUN_A, "--local", "--results-dir", str(results),
            "--config", str(config), "--out", str(tmp / "o"), "--pages-repo",
            str(tmp / "pages"), "--cache-dir", str(tmp / "cache")]
    assert main(argv) == 0
    return tmp


def test_publish_out_deploys_the_tree_it_built_and_leaves_site_alone(published: Path) -> None:
    page = subprocess.run(["git", "show", "gh-pages:2026.12/index.html"],
                          cwd=published / "pages", capture_output=True, text=True,
                          check=True).stdout
    assert STALE not in page and "2026.12" in page
    assert (published / "o" / "index.md").is_file()
    assert (published / "site_src" / "index.md").read_text() == f"# {STALE}\n"
    assert [p.name for p in (published / "site").iterdir()] == ["mine.html"]


def test_export_refuses_a_file_and_a_foreign_folder_and_rewrites_its_own(
        published: Path, capsys: pytest.CaptureFixture) -> None:
    pages = ["--pages-repo", str(published / "pages")]
    a_file = published / "file.txt"
    a_file.write_text("keep me")
    assert main(["export", str(a_file), *pages]) == 2
    _one_line_naming(capsys.readouterr().err, a_file)
    assert a_file.read_text() == "keep me"
    assert main(["export", str(published / "site_src"), *pages]) == 2
    assert "did not write there" in capsys.readouterr().err
    target = published / "exported"
    assert main(["export", str(target), *pages]) == 0
    assert main(["export", str(target), *pages]) == 0
    assert (target / "2026.12" / "index.html").is_file() and (target / MARKER).is_file()


def test_export_onto_a_full_disk_leaves_no_partial_tree(
        published: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(self: tarfile.TarFile, path: Path, *args: object, **kwargs: object) -> None:
        (Path(path) / "half.html").write_text("half")  # a partial tree, then no space
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tarfile.TarFile, "extractall", full_disk)
    target = published / "full"
    assert main(["export", str(target), "--pages-repo", str(published / "pages")]) == 2
    error = capsys.readouterr().err
    assert "No space left on device" in error and error.count("\n") == 1
    assert f"the exported site to {target}:" in error
    assert not target.exists() and not list(published.glob(".full.*"))


def test_redeploying_an_older_release_leaves_latest_on_the_newest(tmp_path: Path,
                                                                   capsys) -> None:
    """`dlbench erratum` asks for the release to be deployed again: an older release's
    redeploy must not move `latest` (and the site's root) back to it."""
    from dlbench.report.site.publish import deployed_versions
    from tests.site_fixtures import RUN_B

    results = golden_results(tmp_path)
    common = ["--results-dir", str(results), "--config",
              str(site_config(tmp_path, tmp_path / "site_src")), "--out", str(tmp_path / "o"),
              "--pages-repo", str(tmp_path / "pages"), "--cache-dir", str(tmp_path / "cache")]
    for name, run, date in (("2026.12", RUN_A, "2026-12-01"), ("2027.01", RUN_B, "2026-12-02")):
        assert main(["publish", name, "--run", run, "--date", date, "--local", *common]) == 0
    assert main(["deploy", "2026.12", *common]) == 0
    assert "latest stays on 2027.01" in capsys.readouterr().out
    aliases = {v["version"]: v["aliases"] for v in deployed_versions(tmp_path / "pages")}
    assert aliases == {"2027.01": ["latest"], "2026.12": []}


def test_deploy_refuses_a_pages_repo_that_is_a_foreign_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "mine.txt").write_text("x")
    results = golden_results(tmp_path)
    assert main(["deploy", "--results-dir", str(results), "--pages-repo", str(pages)]) == 2
    _one_line_naming(capsys.readouterr().err, pages)
    assert sorted(p.name for p in pages.iterdir()) == ["mine.txt"]


def test_serve_deploys_without_writing_the_draft_or_site(tmp_path: Path) -> None:
    results = golden_results(tmp_path)
    freeze(results, "2026.12", [RUN_A], "2026-12-01")
    for folder, name in (("site_src", "index.md"), ("site", "mine.html")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("the reader's own")
    command = [sys.executable, "-m", "dlbench.cli", "serve", "--port", "0",
               "--results-dir", str(results), "--pages-repo", str(tmp_path / "pages"),
               "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "site_src"),
               "--templates", str(ROOT / "templates"),
               "--config", str(site_config(tmp_path, tmp_path / "site_src"))]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=tmp_path,
                              env=os.environ | {"PYTHONPATH": str(ROOT)})
    try:
        line = next(text for text in server.stdout if "serving" in text or not text)
        assert re.search(r"serving the versioned site at http://127\.0\.0\.1:\d+/", line), line
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stdout.close()
    for folder in ("site_src", "site"):
        files = [p.name for p in (tmp_path / folder).iterdir()]
        assert len(files) == 1 and (tmp_path / folder / files[0]).read_text() == \
            "the reader's own"


def test_serve_never_serves_a_file_outside_its_folder(tmp_path: Path) -> None:
    import threading
    import urllib.error
    import urllib.request

    from dlbench.report.site.static_server import make_server

    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside")
    (site / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (site / "dir").symlink_to(tmp_path, target_is_directory=True)
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with urllib.request.urlopen(url + "index.html", timeout=10) as response:
            assert response.read() == b"inside"
        for path in ("leak.txt", "dir/secret.txt", "../secret.txt", "%2e%2e/secret.txt"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url + path, timeout=10)
            assert refused.value.code == 404 and b"outside" not in refused.value.read()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("flags, expected", [
    (["--port", "-1"], "--port -1 is out of range; expected 0 to 65535"),
    (["--port", "70000"], "--port 70000 is out of range"),
    (["--host", ""], "--host is empty"),
    (["--site", ""], "--site is empty"),
])
def test_serve_refuses_bad_flags_in_one_line(flags: list[str], expected: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    assert main(["serve", *flags, "--pages-repo", str(tmp_path / "p")]) == 2
    error = capsys.readouterr().err
    assert expected in error and error.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_publish_refuses_a_foreign_out_before_freezing_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = golden_results(tmp_path)
    mine = tmp_path / "d"
    mine.mkdir()
    (mine / "mine.txt").write_text("x")
    argv = ["publish", "2026.12", "--run", RUN_A, "--local", "--results-dir", str(results),
            "--out", str(mine), "--config", str(ROOT / "mkdocs.yml"), "--pages-repo",
            str(tmp_path / "pages")]
    assert main(argv) == 2
    _one_line_naming(capsys.readouterr().err, mine)
    assert not (results / "releases").exists() and not (tmp_path / "pages").exists()
    assert [p.name for p in mine.iterdir()] == ["mine.txt"]


def _get(port: int, path: str) -> tuple[int, bytes]:
    """Status and body of a raw GET of `path` (sent as it is, NUL bytes included)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(b"GET " + path.encode("latin-1") + b" HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    assert data, f"{path!r}: the connection was dropped without an answer"
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.fixture
def served(tmp_path: Path):
    """A site folder served on loopback, with an outside folder beside it."""
    import threading

    from dlbench.report.site.static_server import make_server

    site, outside = tmp_path / "site", tmp_path / "outside"
    site.mkdir()
    outside.mkdir()
    (site / "index.html").write_text("inside")
    (outside / "secret.txt").write_text("outside secret")
    (outside / "404.html").write_text("outside 404")
    server = make_server(site, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield site, outside, server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_serve_reads_no_404_page_through_a_link(served) -> None:
    site, outside, port = served
    (site / "404.html").symlink_to(outside / "secret.txt")
    (site / "v").symlink_to(outside, target_is_directory=True)
    for path in ("/nope", "/v/nope", "/v/404.html", "/v/secret.txt"):
        status, body = _get(port, path)
        assert status == 404 and b"outside" not in body, (path, body[:80])
    (site / "404.html").unlink()
    (site / "404.html").write_text("own 404")
    assert _get(port, "/nope") == (404, b"own 404")


@pytest.mark.parametrize("path", ["/%00", "/%2e%2e%00", "/index.html%00.txt", "/a\x00b",
                                  "/" + "a" * 256, "/%2e%2e/" + "%61" * 300, "/%ff%fe",
                                  "/x/" + "b" * 5000])
def test_serve_answers_a_malformed_path_with_400(served, path: str) -> None:
    assert _get(served[2], path)[0] == 400


def test_serve_sends_regular_files_only(served) -> None:
    site, outside, port = served
    os.mkfifo(site / "fifo")
    (site / "zero").symlink_to("/dev/zero")
    try:
        os.mknod(site / "device", 0o644 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero
    except PermissionError:
        pass  # not root: the FIFO and the link stand for it
    (site / "folder").mkdir()
    (site / "folder" / "index.html").write_text("folder index")
    for path in ("/fifo", "/zero", "/device"):
        assert _get(port, path)[0] == 404, path
    assert _get(port, "/folder") == (301, b"")
    assert _get(port, "/folder/") == (200, b"folder index")
    assert _get(port, "/") == (200, b"inside")


def test_serve_sends_the_file_it_checked_while_it_is_swapped_for_a_link(served) -> None:
    import threading

    site, outside, port = served
    (site / "page.txt").write_text("inside page")
    (site / "link.txt").symlink_to(outside / "secret.txt")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():  # the page and the link trade places, again and again
            os.rename(site / "page.txt", site / "tmp.txt")
            os.rename(site / "link.txt", site / "page.txt")
            os.rename(site / "page.txt", site / "link.txt")
            os.rename(site / "tmp.txt", site / "page.txt")

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        bodies = [_get(port, "/page.txt")[1] for _ in range(400)]
    finally:
        stop.set()
        swapper.join()
    assert not [body for body in bodies if b"outside" in body]
