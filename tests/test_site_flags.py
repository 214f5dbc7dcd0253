"""Bad paths given to the site commands and `results history` end in one line, exit 2,
with nothing written: a release name that is a path, missing templates, a config that is
not mkdocs', a missing results folder, a full disk under the pages repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.cli import main
from tests.site_fixtures import ROOT, golden_results


def _build(tmp: Path, *flags: str) -> list[str]:
    return ["build", "--results-dir", str(golden_results(tmp)), "--out", str(tmp / "out"),
            "--cache-dir", str(tmp / "cache"), "--config", str(ROOT / "mkdocs.yml"),
            "--templates", str(ROOT / "templates"), *flags]


@pytest.mark.parametrize("flags, expected", [
    (["--release", "../releases/2027.02"], "is not a release name"),
    (["--templates", "/nonexistent"], "--templates /nonexistent: no page templates there"),
    (["--config", "{tmp}/passwd"], "is not a mkdocs config"),
    (["--config", "/nonexistent.yml"], "cannot read /nonexistent.yml: No such file"),
])
def test_build_refuses_bad_paths_in_one_line(flags: list[str], expected: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\n")
    assert main(_build(tmp_path, *[f.format(tmp=tmp_path) for f in flags])) == 2
    error = capsys.readouterr().err
    assert expected in error and error.count("\n") == 1, error
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_history_names_a_missing_results_folder(tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "nonexistent"
    argv = ["results", "history", "training:mlp-digits:pytorch:fp32-default-b32:cpu",
            "--results-dir", str(missing)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert f"--results-dir {missing}: no such folder" in error and error.count("\n") == 1


def test_git_failing_on_a_full_disk_says_the_disk_is_full(tmp_path: Path) -> None:
    from dlbench.report.site.publish import PublishError, ensure_repo
    from tests.small_disk import SmallDisk

    disk = SmallDisk(tmp_path / "disk", "1m")
    try:
        if not disk.mounted:
            pytest.skip("needs a tmpfs mount (root): git writes outside dlbench's atomic "
                        "writes, which the ENOSPC stand-in covers")
        disk.fill()
        with pytest.raises(PublishError, match="the disk is full"):
            ensure_repo(disk.root / "pages")
        assert not (disk.root / "pages" / ".git").exists()  # no half a repository left
    finally:
        disk.close()
