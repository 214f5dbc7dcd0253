"""A release holding runs of two devices: a CPU run (the golden training run) and a run made
on cuda by scripts/gpu_run.py and brought in with `dlbench import-run`. The pages show both
devices side by side and the claims page gives each claim a verdict per device.

This machine has no GPU, so the cuda run's cells are honestly recorded as skipped (PyTorch
sees no CUDA device); its device, cells and environment are the real ones of a cuda run."""

from __future__ import annotations

import re
import subprocess
import sys

from dlbench.report.site.build import build_site
from dlbench.report.inputs.source import load_release
from tests.site_fixtures import RUN_A, SITE_URL, TEMPLATES, freeze, golden_results
from tests.test_gpu_run import ROOT, tiny_gpu_run


def test_a_release_of_a_cpu_and_a_cuda_run_shows_both_devices(tmp_path):
    archive = tiny_gpu_run(tmp_path, {"experiments": ["training"], "workloads": ["mlp-digits"],
                                      "frameworks": ["pytorch"]})
    results = golden_results(tmp_path)
    imported = subprocess.run([sys.executable, "-m", "dlbench.cli", "import-run", str(archive),
                               "--results-dir", str(results)], cwd=ROOT, capture_output=True,
                              text=True)
    assert imported.returncode == 0, imported.stderr
    cuda_run = archive.name.removesuffix(".tar.gz")
    freeze(results, "2027.01", [RUN_A, cuda_run], "2027-01-05")
    source = load_release(results, "2027.01")
    assert {run.info["device"] for run in source.runs} == {"cpu", "cuda"}
    docs = tmp_path / "site_src"
    build_site(source, docs, TEMPLATES, SITE_URL, results)

    training = (docs / "experiments" / "training.md").read_text()
    assert "machine: cpu: Fixture CPU, 2 cores, AVX2 only" in training  # the CPU results
    cuda_row = re.search(r"^\| cuda: [^|]+ \| MLP, 8x8 digits[^|]* \| PyTorch \| .*\| skipped "
                         r"\| PyTorch sees 0 CUDA devices", training, re.MULTILINE)
    assert cuda_row, "the cuda cell is listed beside the CPU results with why it has none"
    environment = (docs / "environment.md").read_text()
    assert f"## Run {RUN_A}" in environment and f"## Run {cuda_run}" in environment

    claims = (docs / "claims.md").read_text()
    verdicts = re.findall(r"^On \*\*(.+?)\*\* \((cpu|cuda)\): \*\*([\w ]+)\*\*", claims,
                          re.MULTILINE)
    devices = [device for _, device, _ in verdicts]
    assert devices.count("cpu") == devices.count("cuda") > 0  # every claim on both devices
    cuda_verdicts = {verdict for _, device, verdict in verdicts if device == "cuda"}
    assert "supported" not in cuda_verdicts  # no cuda measurement supports anything
