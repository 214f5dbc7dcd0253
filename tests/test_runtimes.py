"""One declaration per runtime (dlbench/core/declarations/runtimes.py): the export plan, the
real-size estimate, the pages' labels and the machine record all read it, so a runtime declared
outside the tree is planned, estimated, labelled and recorded with no other edit."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from dlbench.core.declarations.runtimes import RUNTIMES, export_seconds, runtime_labels
from dlbench.core.declarations.systems import SYSTEMS, format_words

ROOT = Path(__file__).resolve().parent.parent

NEW_RUNTIME = textwrap.dedent("""
    import json
    from dlbench.core.declarations import runtimes
    runtimes.RUNTIMES = (*runtimes.RUNTIMES, runtimes.Runtime(
        "tvm", "Apache TVM", "apache-tvm", {"onnx-tvm": 123.0}, labelled=("onnx-tvm",),
        real_size=(runtimes.RealSizePath("pytorch", "onnx-tvm", "standard"),)))

    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.driver.plan.real_size_estimate import real_size_process_s
    from dlbench.runner.driver.machine.environment import FRAMEWORK_PACKAGES
    from dlbench.report.render.labels import contender_label
    request = RunRequest(suite="standard", experiments=["export"],
                         workloads=["resnet50-synthetic"], frameworks=["pytorch"],
                         device="cpu", repeats=None, threads=1, timeout_s=None, data_dir="")
    cells = [c for c in plan_cells(request, "cpu") if c.export_format == "onnx-tvm"]
    ours = [c for c in plan_cells(request, "cpu") if c.export_format == "onnx-dynamo"]
    print(json.dumps({
        "planned": [c.workload for c in cells],
        "extra_s": real_size_process_s(cells[0], 0) - real_size_process_s(ours[0], 0),
        "label": contender_label("export_format", "onnx-tvm"),
        "recorded": "apache-tvm" in FRAMEWORK_PACKAGES}))
""")


def test_a_runtime_declared_outside_the_tree_is_planned_estimated_labelled_and_recorded():
    done = subprocess.run([sys.executable, "-c", NEW_RUNTIME], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts["planned"] == ["resnet50-synthetic"]
    assert facts["extra_s"] == 123.0 - 60.0  # its declared seconds against ONNX Runtime's
    assert facts["label"] == "Apache TVM" and facts["recorded"]


def test_every_format_a_system_offers_has_one_runtime_with_seconds():
    offered = {fmt for system in SYSTEMS for fmt in system.export.every}
    served = [fmt for runtime in RUNTIMES for fmt in runtime.export_s]
    assert len(served) == len(set(served))  # no format served by two runtimes
    assert offered == set(export_seconds())
    for runtime in RUNTIMES:
        assert set(runtime.labelled) <= set(runtime.export_s)
        for path in runtime.real_size:
            assert path.export_format in runtime.export_s
            assert path.export_format in next(
                s for s in SYSTEMS if s.name == path.system).export.every


def test_a_runtime_contest_names_each_system_s_paths_apart():
    labels = runtime_labels()
    for system in SYSTEMS:
        named = [labels.get(fmt) or format_words().get(fmt, fmt) for fmt in system.export.every]
        assert len(named) == len(set(named)), system.name
