"""The GPU run (issue 14): run the device plan on a borrowed GPU machine from the source tree,
and pack the finished run as one archive to bring back (`dlbench import-run ARCHIVE`).

The machine has Python with PyTorch (CUDA), JAX (CUDA), pandas, pyarrow, rich, onnx and
onnxruntime, no TensorFlow, and no network: nothing is installed from an index. Keras and
the small packages the runner needs travel as wheels (`--wheels`, see the README's
"GPU run"); they are installed offline into a folder of the build tree and put on the path of
this process and of every worker. TensorFlow cells are recorded as skipped ("not installed").

    python scripts/gpu_run.py --plan            # the cells and the expected duration
    python scripts/gpu_run.py --out "$OUT"      # measure, then write $OUT/<run_id>.tar.gz

Only `dlbench run` is used: no part of the site (report/, jinja2, altair, mkdocs) is imported.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAN_FILE = ROOT / "scripts" / "gpu_plan.json"
#: Modules `dlbench run` needs before it can measure anything, and where each comes from.
REQUIRED = {"numpy": "machine", "pandas": "machine", "pyarrow": "machine", "rich": "machine",
            "psutil": "wheel", "cpuinfo": "wheel (py-cpuinfo)",
            "pynvml": "wheel (nvidia-ml-py)"}
#: Modules of the systems measured there; a missing one makes its cells skipped.
FRAMEWORK_MODULES = ("torch", "jax", "keras", "onnx", "onnxruntime", "tensorflow")


def source_view(target: Path) -> Path:
    """A folder in which `import dlbench` finds this tree laid out as installed, without an
    install: dlbench/ holds links to the tree's dlbench/ entries and to each folder
    pyproject's package-dir installs under it (runner/ as dlbench/runner, ...). The links
    resolve into the tree, so the code record names the tree's files."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = target / "dlbench"
    shutil.rmtree(target, ignore_errors=True)
    package.mkdir(parents=True)
    for entry in sorted((ROOT / "dlbench").iterdir()):
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, folder in settings["package-dir"].items():
        (package / name.removeprefix("dlbench.")).symlink_to(ROOT / folder)
    return target


def use_source_tree(extra: list[Path]) -> None:
    """Import dlbench (runner/ as dlbench.runner) from this tree, and `extra` folders, here
    and in workers."""
    paths = [str(p) for p in (source_view(ROOT / "build" / "gpu-source"), *extra)]
    for path in reversed(paths):
        if path not in sys.path:
            sys.path.insert(0, path)
    inherited = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = os.pathsep.join(paths + ([inherited] if inherited else []))


def install_wheels(wheels: Path, target: Path) -> list[Path]:
    """Install every wheel in `wheels` offline into `target`; the folders to put on the path
    (the wheels themselves if pip cannot install them: pure-Python wheels import as zips)."""
    found = sorted(wheels.glob("*.whl")) if wheels.is_dir() else []
    if not found:
        return []
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                           "--no-deps", "--target", str(target), *map(str, found)],
                          capture_output=True, text=True)
    if done.returncode == 0:
        return [target]
    print(f"gpu_run: pip could not install the wheels ({done.stderr.strip()[-300:]}); "
          "importing them as zip files", file=sys.stderr)
    return found


def importable(modules: list[str] | tuple[str, ...]) -> dict[str, bool]:
    """Whether each module can be found (without importing it)."""
    def found(name: str) -> bool:
        try:
            return importlib.util.find_spec(name) is not None
        except ImportError:  # a finder that refuses it
            return False

    return {name: found(name) for name in modules}


def print_plan(plan_file: Path) -> float:
    """Print every planned cell with its estimate, and the total; return the total seconds."""
    from dlbench.runner.driver.plan.device import load_plan, step_seconds
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest

    plan = load_plan(plan_file)
    total = plan.fixed_s
    print(f"plan {plan_file.name}: device {plan.device}, budget {plan.budget_s:.0f} s")
    print(f"  {plan.fixed_s:6.0f} s  run start (environment, peak probes)")
    for step in plan.steps:
        request = RunRequest(suite="quick", experiments=[], workloads=[], frameworks=[],
                             device=plan.device, repeats=None, threads=None, timeout_s=None,
                             data_dir="", plan=[step.selection()])
        for cell in plan_cells(request, plan.device):
            seconds = cell.repeats * step.seconds_per_process[cell.framework_id.name]
            total += seconds
            print(f"  {seconds:6.0f} s  {cell.cell_id} x{cell.repeats}")
    for entry in plan.not_measured:
        print(f"  not measured: {entry['experiment']}: {entry['reason']}")
    print(f"expected duration: {total:.0f} s ({total / 60:.1f} min) of {plan.budget_s:.0f} s")
    return total


def check_machine() -> list[str]:
    """Print what is importable; return the required modules that are missing."""
    required = importable(list(REQUIRED))
    frameworks = importable(FRAMEWORK_MODULES)
    for name, found in (required | frameworks).items():
        print(f"  {'ok     ' if found else 'missing'} {name}")
    if frameworks["torch"]:
        import torch

        print(f"  torch {torch.__version__}, CUDA {torch.version.cuda}, "
              f"GPU available: {torch.cuda.is_available()}")
    return [f"{name} ({REQUIRED[name]})" for name, found in required.items() if not found]


def record_commit(root: Path, commit: str) -> None:
    """Name the source commit in environment.json where git could not (a tree copied
    without .git): the commit the tree was copied from, as given on the command line."""
    from dlbench.core.storage import layout

    environment = layout.read_environment(root)
    if commit and (environment.get("git") or {}).get("commit", "unknown") == "unknown":
        environment["git"] = {"commit": commit, "dirty": None, "measurement_code_dirty": None,
                              "source": "--commit of scripts/gpu_run.py (no .git on the "
                                        "machine)"}
        layout.write_environment(root, environment)


def stop_at(deadline: float) -> threading.Timer:
    """Stop the run (as SIGTERM does: finished processes kept, the run marked interrupted) at
    the monotonic time `deadline`, so that what finished is still packed before the machine's
    time ends."""
    timer = threading.Timer(max(0.0, deadline - time.monotonic()),
                            lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.daemon = True
    timer.start()
    return timer


def measure(plan_file: Path, results: Path, out: Path, timeout_s: float,
            commit: str = "", deadline: float = float("inf")) -> int:
    """`dlbench run --plan` on cuda into `results` (stopped at `deadline`), then the run
    packed into `out`."""
    from dlbench.core.storage import layout
    from dlbench.cli import main
    from dlbench.core.storage.run_archive import pack_run
    from dlbench.runner.driver.plan.device import load_plan

    timer = stop_at(deadline) if deadline != float("inf") else None
    try:
        status = main(["run", "--plan", str(plan_file), "--device", "cuda", "--results-dir",
                       str(results), "--busy-retries", "0", "--timeout", str(timeout_s),
                       "--no-progress"])
    finally:
        if timer is not None:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a stop too late: pack anyway
            timer.cancel()
    runs = layout.run_ids(results)
    if not runs:
        print("gpu_run: the run wrote nothing to pack", file=sys.stderr)
        return status or 1
    root = layout.run_dir(results, runs[-1])
    info = layout.read_run_info(root)
    info["not_measured"] = load_plan(plan_file).not_measured
    info["plan_file"] = str(plan_file.relative_to(ROOT)) if plan_file.is_relative_to(ROOT) \
        else str(plan_file)
    layout.write_run_info(root, info)
    record_commit(root, commit)
    archive = pack_run(root, out)
    print(f"gpu_run: run {root.name} ({info.get('status')}) packed into {archive} "
          f"({archive.stat().st_size / 2**20:.1f} MiB)")
    return status


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpu_run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--plan", action="store_true",
                        help="print the planned cells and the expected duration, then stop")
    parser.add_argument("--plan-file", type=Path, default=PLAN_FILE)
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the archive ($OUT on the device machine)")
    parser.add_argument("--wheels", type=Path, default=ROOT / "wheels",
                        help="wheels carried to the machine (keras and its small deps)")
    parser.add_argument("--results-dir", type=Path, default=ROOT / "build" / "gpu-results")
    parser.add_argument("--commit", default="",
                        help="the commit this tree was copied from (recorded where the "
                        "machine's copy has no .git)")
    parser.add_argument("--deadline", type=float, default=540.0,
                        help="seconds from the start after which the run is stopped and what "
                        "finished is packed (keep it under the machine's command limit)")
    parser.add_argument("--timeout", type=float, default=150.0,
                        help="seconds allowed per worker process")
    args = parser.parse_args(argv)
    if not args.plan and args.out is None:
        parser.error("give --out DIR (where the archive goes) or --plan")
    return args


def main(argv: list[str] | None = None) -> int:
    """Plan, or check the machine, measure and pack."""
    started = time.monotonic()
    args = parse_args(argv)
    use_source_tree([])
    if args.plan:
        print_plan(args.plan_file)
        return 0
    use_source_tree(install_wheels(args.wheels, ROOT / "build" / "gpu-wheels"))
    print("gpu_run: importable on this machine:")
    missing = check_machine()
    if missing:
        print(f"gpu_run: error: missing {', '.join(missing)}: carry their wheels in "
              f"{args.wheels} (README, 'GPU run')", file=sys.stderr)
        return 2
    print_plan(args.plan_file)
    return measure(args.plan_file, args.results_dir, args.out, args.timeout, args.commit,
                   deadline=started + args.deadline)


if __name__ == "__main__":
    sys.exit(main())
