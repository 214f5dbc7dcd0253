"""scripts/gpu_run.py, the GPU machine's entry point: its plan step runs where TensorFlow and
the site's packages cannot be imported, and a whole (tiny) run is packed into one archive that
`dlbench import-run` accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gpu_run.py"
#: What the GPU machine lacks or the run must not load.
FORBIDDEN = ("tensorflow", "jinja2", "altair", "mkdocs", "dlbench.report")
#: The site's packages alone: what even a run on this machine (with TensorFlow) must not load.
SITE = ("jinja2", "altair", "mkdocs", "dlbench.report")
#: argv: script, forbidden top-level modules, modules to import first, then the script's own.
BLOCKER = """
import importlib.abc, runpy, sys
FORBIDDEN = set(sys.argv[2].split(","))
class Forbidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN):
            raise ImportError(f"forbidden on the GPU machine: {name}")
        return None
sys.meta_path.insert(0, Forbidden())
for module in sys.argv[3].split(","):
    __import__(module)
sys.argv = [sys.argv[1], *sys.argv[4:]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
#: Modules of the run path that must import without the forbidden ones.
RUN_PATH = "dlbench.cli,dlbench.runner.driver.commands.run,dlbench.runner.driver.launch.execute,dlbench.runner.worker.entry,dlbench.core.storage.run_archive"


def blocked(*args: str, forbidden: tuple[str, ...] = FORBIDDEN,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """scripts/gpu_run.py run with every `forbidden` import failing."""
    return subprocess.run([sys.executable, "-c", BLOCKER, str(SCRIPT), ",".join(forbidden),
                           RUN_PATH, *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=(env or os.environ) | {"PYTHONPATH": ""})


def test_the_plan_step_runs_without_tensorflow_or_the_site():
    done = blocked("--plan")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any("training:resnet-synthetic:pytorch:" in line and ":cuda" in line for line in lines)
    assert any("precision:transformer-tokens:keras-jax:bf16-mixed" in line for line in lines)
    assert "not measured: data-parallel: not measurable with one GPU" in done.stdout
    assert lines[-1].startswith("expected duration: ") and lines[-1].endswith("of 480 s")


def test_the_blocker_blocks():
    done = subprocess.run([sys.executable, "-c", BLOCKER, str(SCRIPT), "jinja2", "jinja2",
                           "--plan"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "forbidden on the GPU machine: jinja2" in done.stderr


def tiny_gpu_run(tmp_path: Path, step: dict, *options: str, status: int = 0) -> Path:
    """The archive scripts/gpu_run.py writes for a one-step plan on cuda (the site's packages
    forbidden); on this CPU machine PyTorch refuses the cuda cells, recorded as skipped."""
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({
        "device": "cuda", "budget_s": 60, "fixed_s": 5,
        "steps": [{"suite": "quick", "repeats": 1, "seconds_per_process": {"pytorch": 10}}
                  | step],
        "not_measured": [{"experiment": "data-parallel", "reason": "one GPU"}]}))
    out = tmp_path / "out"
    env = os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")}
    done = blocked("--plan-file", str(plan), "--out", str(out), "--results-dir",
                   str(tmp_path / "measured"), "--wheels", str(tmp_path / "no-wheels"),
                   "--commit", "0123abc", *options, forbidden=SITE, env=env)
    assert done.returncode == status, done.stdout + done.stderr
    (archive,) = out.iterdir()
    return archive


def test_a_tiny_plan_is_measured_packed_and_imported(tmp_path):
    """The whole script on this CPU machine: the run is packed as one directory, imported,
    and says what it did not measure and why its cell did not run."""
    archive = tiny_gpu_run(tmp_path, {"experiments": ["parity"], "workloads": ["mlp-digits"],
                                      "frameworks": ["pytorch"]})
    with tarfile.open(archive) as tar:
        assert {Path(name).parts[0] for name in tar.getnames()} == {archive.name[:-7]}
    imported = tmp_path / "results"
    assert subprocess.run([sys.executable, "-m", "dlbench.cli", "import-run", str(archive),
                           "--results-dir", str(imported)], cwd=ROOT).returncode == 0
    (run_root,) = (imported / "runs").iterdir()
    info = json.loads((run_root / "run.json").read_text())
    assert info["device"] == "cuda" and info["not_measured"][0]["reason"] == "one GPU"
    records = [json.loads(p.read_text()) for p in (run_root / "processes").glob("*.json")]
    assert len(records) == 1
    assert records[0]["outcome"]["status"] == "skipped"
    assert "CUDA devices" in records[0]["outcome"]["reason"]


def test_a_tree_copied_without_git_records_the_commit_it_was_given(tmp_path):
    import importlib.util
    import shutil

    from tests.site_fixtures import GOLDEN, RUN_A

    spec = importlib.util.spec_from_file_location("gpu_run", SCRIPT)
    gpu_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_run)
    root = tmp_path / RUN_A
    shutil.copytree(GOLDEN / "runs" / RUN_A, root)
    environment = json.loads((root / "environment.json").read_text())
    (root / "environment.json").write_text(json.dumps(
        environment | {"git": {"commit": "unknown", "dirty": None}}))
    gpu_run.record_commit(root, "0123abc")
    git = json.loads((root / "environment.json").read_text())["git"]
    assert git["commit"] == "0123abc" and "no .git" in git["source"]
    gpu_run.record_commit(root, "fedcba9")  # a commit git recorded is never replaced
    assert json.loads((root / "environment.json").read_text())["git"]["commit"] == "0123abc"


def test_a_run_past_its_deadline_is_stopped_and_what_finished_is_packed(tmp_path):
    """Three worker processes (each a framework import) cannot finish in 10 s: the run is
    stopped as by SIGTERM, marked interrupted, and still packed."""
    archive = tiny_gpu_run(tmp_path, {"experiments": ["parity"], "workloads": ["mlp-digits"],
                                      "frameworks": ["pytorch", "keras-torch", "keras-jax"],
                                      "seconds_per_process": {"pytorch": 5, "keras-torch": 5,
                                                              "keras-jax": 5}},
                           "--deadline", "10", status=130)
    with tarfile.open(archive) as tar:
        info = json.load(tar.extractfile(f"{archive.name[:-7]}/run.json"))
    assert info["status"] == "interrupted" and info["not_measured"]
    assert len(info["planned_cells"]) == 3
