"""An ordinary package: dlbench finds its code and data files through its own installation
(no folder appended to its __path__, no path relative to the checkout or the working folder),
so a wheel installed outside the checkout builds a release's site from any folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RELEASE = "2027.03"
#: What a wheel is not built from: the checkout's results, builds and environments.
NOT_SOURCE = (".git", ".venv", "results", "build", "site", "site_src", "wheels", "node_modules",
              ".pytest_cache")
#: Runs `dlbench ARGS...` with an audit hook that records every file or folder under the
#: checkout (argv[1]) the process opens or lists, outside the allowed prefixes (argv[2], a
#: JSON list), and every file it opens under the installed package (argv[3]); the record
#: goes to argv[4] as JSON.
DRIVER = """
import json, os, sys
checkout, allowed, package, record = sys.argv[1], tuple(json.loads(sys.argv[2])), *sys.argv[3:5]
seen = {"checkout": set(), "package": set()}
def watch(event, args):
    if event not in ("open", "os.listdir", "os.scandir") or not args:
        return
    if not isinstance(args[0], (str, bytes, os.PathLike)):
        return
    path = os.path.abspath(os.fsdecode(args[0]))
    if path.startswith(checkout + os.sep) and not path.startswith(allowed):
        seen["checkout"].add(path)
    elif path.startswith(package + os.sep):
        seen["package"].add(path)
sys.addaudithook(watch)
from dlbench.cli import main
try:
    code = main(sys.argv[5:])
finally:
    with open(record, "w") as out:
        json.dump({key: sorted(value) for key, value in seen.items()}, out)
sys.exit(code)
"""


def package_folders() -> dict[str, str]:
    """{checkout folder: its path inside an installed dlbench} for every package folder."""
    mapped = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"]
    return {"dlbench": "dlbench", **{folder: name.replace(".", "/")
                                     for name, folder in mapped.items()}}


def not_source(folder: str, names: list[str]) -> set[str]:
    """The names copytree leaves out of `folder`: caches anywhere, NOT_SOURCE at the top."""
    top = Path(folder) == ROOT
    return {name for name in names if name == "__pycache__" or name.endswith(".egg-info")
            or (top and name in NOT_SOURCE)}


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{command[:4]}: {done.stdout[-2000:]}{done.stderr[-3000:]}"
    return done


def test_dlbench_is_an_ordinary_package_whose_data_files_are_its_resources():
    """Nothing extends dlbench's __path__; runner/, report/ and the data folders are reached
    through the install (the editable one here), which maps them to this checkout."""
    import dlbench
    import dlbench.report
    import dlbench.runner
    from dlbench.core.storage.project_files import listings_dir, mkdocs_config, templates_dir

    assert "__path__" not in (ROOT / "dlbench" / "__init__.py").read_text()
    assert len(dlbench.__path__) == 1
    here = f"the tests run against an install of another checkout than {ROOT}: pip install -e ."
    assert Path(dlbench.runner.__file__).resolve() == ROOT / "runner" / "__init__.py", here
    assert Path(dlbench.report.__file__).resolve() == ROOT / "report" / "__init__.py", here
    assert templates_dir().resolve() == ROOT / "templates", here
    assert mkdocs_config() == ROOT / "mkdocs.yml"  # the real file: its relative paths hold
    assert (listings_dir() / "pytorch.py").is_file()


@pytest.mark.slow
def test_a_wheel_installed_outside_the_checkout_builds_a_release_from_another_folder(tmp_path):
    """`pip wheel` of the checkout holds every file of its package folders; installed with
    --no-deps in a fresh virtual environment (which sees this one's packages through a .pth
    file), its `dlbench build --release 2027.03` run from another folder writes the release's
    pages and reads nothing of the checkout (results copied out of it)."""
    source, wheels, venv, elsewhere = (tmp_path / name for name in
                                      ("source", "wheels", "venv", "elsewhere"))
    shutil.copytree(ROOT, source, ignore=not_source)
    run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
         "--no-index", "--quiet", "--wheel-dir", str(wheels)])
    (wheel,) = wheels.glob("dlbench-*.whl")
    in_wheel = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"{installed}/{path.relative_to(source / folder).as_posix()}"
                for folder, installed in package_folders().items()
                for path in (source / folder).rglob("*") if path.is_file()}
    assert expected - in_wheel == set()
    assert "dlbench/report/site/build.py" in in_wheel  # nested folders named like NOT_SOURCE
    assert {"dlbench/templates/mkdocs.yml", "dlbench/runner/__init__.py",
            "dlbench/report/claims/claims.yaml"} <= in_wheel

    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    purelib = run([str(python), "-c", where], env={"PATH": os.environ["PATH"]}).stdout.strip()
    shared = {entry for entry in sys.path
              if Path(entry).name in ("site-packages", "dist-packages")}
    Path(purelib, "shared-environment.pth").write_text("\n".join(sorted(shared)) + "\n")
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONSAFEPATH")}
    run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed",
         "--quiet", str(wheel)], env=environment, cwd=tmp_path)

    results = tmp_path / "results" / "releases"
    shutil.copytree(ROOT / "results" / "releases", results)
    elsewhere.mkdir()
    out, record = tmp_path / "out", tmp_path / "opened.json"
    package = Path(purelib, "dlbench")
    allowed = sorted({sys.prefix, *shared})  # this environment's packages, seen through .pth
    run([str(python), "-c", DRIVER, str(ROOT), json.dumps(allowed), str(package), str(record),
         "build", "--release", RELEASE, "--results-dir", str(results.parent), "--out",
         str(out)], env=environment, cwd=elsewhere, timeout=1200)

    opened = json.loads(record.read_text())
    assert opened["checkout"] == []
    assert str(package / "templates" / "index.md.j2") in opened["package"]
    assert str(package / "templates" / "mkdocs.yml") in opened["package"]
    assert RELEASE in (out / ".release.yml").read_text()
    assert all((out / page).is_file() for page in ("index.md", "methodology.md", "claims.md",
                                                   "environment.md", "cite.md"))
    assert list((out / "experiments").glob("*.md"))
    assert (out / "assets" / "javascripts" / "charts.js").is_file()
