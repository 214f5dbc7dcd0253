"""The regime's bound: the FMA FLOP per cycle of each core by its microarchitecture, the
clock measured under load (or the core's highest documented one), and fractions of the bound
that are shown as they are, never clipped."""

from __future__ import annotations

import json
from dataclasses import replace

import markdown
import pandas as pd
import pytest

from dlbench.core.machine.achieved import cell_fractions, cell_rates, probe_fractions, run_bounds
from dlbench.core.machine.fma_peak import (ABOVE_BOUND_WORDS, WINOGRAD_WORDS, ZEN4, bound_of,
                                           core_of, environment_bound)
from dlbench.runner.driver.machine.clock import clock_record, sustained_clock
from dlbench.runner.driver.machine.peak import peak_record

GENOA = {"vendor": "AMD", "model": "AMD EPYC", "arch": "X86_64", "family": 25,
         "model_number": 17, "avx2": True, "avx512f": True, "avx512_bf16": True,
         "avx_vnni": False, "usable_cores": 2}
SAPPHIRE_RAPIDS = {"vendor": "Intel", "model": "Intel(R) Xeon(R) Processor", "arch": "X86_64",
                   "avx2": True, "avx512f": True, "avx512_bf16": True, "amx_bf16": True,
                   "amx_fp16": False, "usable_cores": 2}
MEASURED = {"ghz": 3.5, "method": "test chain"}


@pytest.mark.parametrize(("cpu", "fp32", "bf16", "name"), [
    (GENOA, 32, 64, "Zen 4"),  # AVX-512 in two 256-bit halves: not 64, what its flags suggest
    (GENOA | {"family": None, "model_number": None}, 32, 64, "Zen 4"),  # older record
    (GENOA | {"family": 26}, 64, 128, "Zen 5"),
    (GENOA | {"avx512f": False, "avx512_bf16": False, "family": 25, "model_number": 1}, 32, 32,
     "Zen 2/Zen 3"),
    (GENOA | {"avx512f": False, "family": 23, "model_number": 1}, 16, 16, "Zen/Zen+"),
    (SAPPHIRE_RAPIDS, 64, 1024, "Sapphire"),
    ({"model": "Intel(R) Xeon(R) Processor", "arch": "X86_64", "avx512f": True, "amx": True},
     64, 1024, "Sapphire"),  # a record before 2027.04: no avx2 or amx_bf16 key
    (SAPPHIRE_RAPIDS | {"amx_bf16": False}, 64, 128, "AVX-512 BF16"),
])
def test_a_core_s_fma_flop_per_cycle_is_its_microarchitecture_s(cpu, fp32, bf16, name):
    core = core_of(cpu)
    assert (core.fp32_flop_per_cycle, core.bf16_flop_per_cycle) == (fp32, bf16)
    assert name in core.name


def test_the_bound_is_cores_times_the_measured_clock_times_the_core_s_flop_per_cycle():
    bound = bound_of(GENOA, MEASURED, "fp32_flops")
    assert bound.flops == pytest.approx(2 * 3.5e9 * 32)
    assert "3.50 GHz measured under load (test chain)" in bound.derivation
    assert "two 256-bit halves" in bound.derivation
    assert bound_of(SAPPHIRE_RAPIDS, MEASURED, "bf16_flops").flops == pytest.approx(2 * 3.5e9
                                                                                    * 1024)


def test_without_a_measured_clock_the_core_s_highest_documented_clock_keeps_it_a_bound():
    failed = bound_of(GENOA, {"ghz": None, "why": "chains disagree"}, "fp32_flops")
    assert failed.flops == pytest.approx(2 * ZEN4.documented_ghz * 1e9 * 32)
    assert "highest clock documented" in failed.derivation and "chains disagree" in failed.derivation
    assert bound_of(GENOA, None, "fp32_flops").flops == failed.flops
    unknown = {"vendor": "Intel", "arch": "X86_64", "avx2": True, "usable_cores": 2}
    assert bound_of(unknown, None, "fp32_flops") is None  # no clock known at all: no bound
    assert bound_of(unknown, MEASURED, "fp32_flops").flops == pytest.approx(2 * 3.5e9 * 32)
    assert environment_bound({"gpus": [{"model": "H100"}], "cpu": GENOA}, "fp32_flops") is None


def test_the_clock_is_measured_on_this_machine_or_says_why_not():
    clock = sustained_clock()
    if clock["ghz"] is None:
        assert clock["why"]
    else:
        assert 0.5 < clock["ghz"] < 7 and len(clock["per_core_ghz"]) >= 1 and clock["method"]


def test_two_chains_that_disagree_give_no_clock_and_the_reason():
    assert clock_record({0: [3.5, 3.45], 1: [3.6, 3.58]})["ghz"] == 3.6
    disagree = clock_record({0: [3.5, 1.2]})
    assert disagree["ghz"] is None and "disagree" in disagree["why"]


def test_the_recorded_peak_is_the_bound_and_the_probes_stay_beside_it():
    record = peak_record(GENOA, MEASURED, {"numpy_fp32_flops": 1.5e11,
                                           "torch_fp32_flops": 2.5e11})
    assert record["fp32_flops"] == pytest.approx(2.24e11)  # the probe above it does not raise it
    assert "measured under load" in record["fp32_flops_basis"]
    assert record["probes"]["torch_fp32_flops"] == 2.5e11 and record["clock"] == MEASURED


def _run(rates: dict[str, float], peak: dict, workload: str = "mlp-digits",
         precision: str = "fp32") -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Inference cells of 1 FLOP per sample whose throughput is their FLOP/s."""
    cells = pd.DataFrame([{"run_id": "r", "cell_id": name, "workload": workload,
                           "precision": precision, "batch_size": 1,
                           "details_json": json.dumps({"flops_per_sample": 1})}
                          for name in rates])
    observations = pd.DataFrame([{"run_id": "r", "cell_id": name, "step": None, "repeat": k,
                                  "metric": "inference_throughput", "value": rate}
                                 for name, rate in rates.items() for k in range(3)])
    return observations, cells, {"r": {"compute_peak": peak}}


def _bound_environment(ghz: float) -> dict:
    """A 2-core Zen 4 whose measured clock makes its fp32 bound 64 x `ghz` GFLOP/s."""
    return {"cpu": GENOA, "gpus": [], "compute_peak": {
        "clock": {"ghz": ghz, "method": "test"},
        "probes": {"torch_fp32_flops": 1.2e11, "torch_bf16_flops": 1e10}}}


def test_a_rate_above_the_bound_is_shown_as_it_is_not_clipped():
    observations, cells, _ = _run({"fast": 1.53e11, "slow": 1e10}, {})
    environments = {"r": _bound_environment(1.0)}  # bound 64 GFLOP/s
    fractions = cell_fractions(observations, cells, environments)
    assert fractions[("r", "fast")] == pytest.approx(1.53e11 / 6.4e10)  # 239%, kept
    assert fractions[("r", "slow")] == pytest.approx(1e10 / 6.4e10)
    bound = run_bounds(cell_rates(observations, cells), environments)[("r", "fp32_flops")]
    assert bound.flops == pytest.approx(6.4e10) and "rate achieved" not in bound.derivation
    assert probe_fractions(environments["r"])["torch_fp32"] == pytest.approx((1.2e11, 1.875))


def test_a_convolutional_cell_says_its_rate_does_not_credit_winograd():
    observations, cells, _ = _run({"conv": 2e11}, {}, workload="resnet50-synthetic")
    assert cell_rates(observations, cells)[("r", "conv")].note == WINOGRAD_WORDS


def test_a_run_without_a_known_clock_or_core_has_no_fraction():
    observations, cells, _ = _run({"half": 1e10}, {})
    bare = {"cpu": {"arch": "aarch64", "usable_cores": 2}, "compute_peak": {"fp32_flops": 1e11}}
    assert cell_fractions(observations, cells, {"r": bare}) == {}


def test_the_environment_page_flags_cells_and_probes_above_their_machine_s_bound():
    from dlbench.report.inputs.source import load_release
    from dlbench.report.pages.info import environment_runs
    from dlbench.report.render.jinja import environment, render
    from tests.site_fixtures import ROOT

    source = load_release(ROOT / "results", "2027.03")
    run = source.runs[0]
    slow_clock = replace(run, environment=run.environment | {"compute_peak": {
        **run.environment["compute_peak"], "clock": {"ghz": 0.5, "method": "test"}}})
    source = replace(source, runs=(slow_clock,))  # bound 2 x 0.5 GHz x 32 = 32 GFLOP/s
    page = markdown.markdown(render(environment(ROOT / "templates"), "environment.md.j2",
                                    source=source, runs=environment_runs(source)),
                             extensions=["tables", "attr_list"])
    assert "32.0 = 2 cores x 0.50 GHz measured under load (test)" in page
    assert "553.3% of the bound, " + ABOVE_BOUND_WORDS in page  # 177.1 GFLOP/s, not clipped
    assert "115.55 GFLOP/s, 361.1% of the bound, " + ABOVE_BOUND_WORDS in page  # its probe
    assert "100.0% of the bound" not in page


def test_2027_03_real_size_cells_read_at_most_100_percent_of_the_corrected_peak():
    from pathlib import Path

    from benchmarks.regime_correction import table_lines
    from dlbench.report.inputs.source import load_release

    source = load_release(Path(__file__).parents[1] / "results", "2027.03")
    rows = [line.split(" | ") for line in table_lines(source) if line.startswith("| ")
            and "%" in line]
    published = [float(r[2].rstrip("%")) for r in rows]
    corrected = [float(r[3].rstrip("% |")) for r in rows]
    assert len(rows) >= 16 and sum(p > 100 for p in published) == 9
    assert max(corrected) <= 100 and max(corrected) == 67


def test_machines_are_told_apart_by_their_measured_probe_not_their_bound():
    from dlbench.core.machine.fma_peak import measured_fp32_flops

    recorded = peak_record(GENOA, MEASURED, {"numpy_fp32_flops": 1.1e11,
                                             "torch_fp32_flops": 1.2e11})
    assert measured_fp32_flops(recorded) == 1.2e11
    assert measured_fp32_flops({"fp32_flops": 1.156e11, "probe": "NumPy 512"}) == 1.156e11
    assert measured_fp32_flops(None) is None


#: A GPU run's environment as runner/driver/machine/environment.py records it: NVML's device
#: name, and the torch matmul probes as its compute_peak.
H100_SXM = {"cpu": GENOA, "gpus": [{"index": 0, "model": "NVIDIA H100 80GB HBM3"}],
            "compute_peak": {"fp32_flops": 5.1e13, "bf16_flops": 7.2e14, "probe": "torch"}}


@pytest.mark.parametrize(("model", "fp32", "tensor"), [
    ("NVIDIA H100 80GB HBM3", 67.0, 989.5), ("NVIDIA H100 PCIe", 51.0, 756.5),
    ("NVIDIA H100 NVL", 60.0, 835.5), ("NVIDIA H200", 67.0, 989.5),
    ("NVIDIA H200 NVL", 60.0, 835.5), ("NVIDIA A100-SXM4-80GB", 19.5, 312.0),
    ("NVIDIA A100-PCIE-40GB", 19.5, 312.0), ("NVIDIA A100 80GB PCIe", 19.5, 312.0),
])
def test_a_declared_gpu_s_bound_is_its_datasheet_peak(model, fp32, tensor):
    environment = H100_SXM | {"gpus": [{"model": model}]}
    assert environment_bound(environment, "fp32_flops", "cuda").flops == fp32 * 1e12
    bf16 = environment_bound(environment, "bf16_flops", "cuda")
    assert bf16.flops == tensor * 1e12 and "datasheet" in bf16.derivation
    assert environment_bound(environment, "fp32_flops") is None  # its CPU: not this bound


@pytest.mark.parametrize("model", ["NVIDIA GeForce RTX 4090", "NVIDIA H100", "Tesla T4", ""])
def test_a_gpu_not_in_the_table_has_no_bound_and_says_so(model):
    from dlbench.core.machine.fma_peak import bound_words

    environment = H100_SXM | {"gpus": [{"model": model}] if model else []}
    assert environment_bound(environment, "fp32_flops", "cuda") is None
    assert bound_words(environment, "fp32_flops", "cuda").startswith(
        "no bound: device not in the table")


def _gpu_run(model: str) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """A cuda run: an fp32 cell above the H100 SXM's 67 TFLOP/s (a wrong FLOP count, or TF32
    left on), one below it, and a bf16 cell at a tenth of its tensor peak."""
    observations, cells, _ = _run({"above": 8.0e13, "below": 3.35e13}, {})
    bf16_observations, bf16_cells, _ = _run({"half": 9.895e13}, {}, precision="bf16")
    cells = pd.concat([cells, bf16_cells], ignore_index=True).assign(device="cuda")
    return (pd.concat([observations, bf16_observations], ignore_index=True), cells,
            {"r": H100_SXM | {"gpus": [{"model": model}]}})


def test_a_gpu_cell_s_fraction_of_its_bound_shows_and_above_it_is_not_clipped():
    observations, cells, environments = _gpu_run("NVIDIA H100 80GB HBM3")
    fractions = cell_fractions(observations, cells, environments)
    assert fractions[("r", "above")] == pytest.approx(8.0e13 / 6.7e13)  # 119%, kept
    assert fractions[("r", "below")] == pytest.approx(0.5)
    assert fractions[("r", "half")] == pytest.approx(0.1)  # bf16 over the tensor peak
    assert probe_fractions(environments["r"], "cuda") == {
        "fp32": (5.1e13, pytest.approx(5.1e13 / 6.7e13)),
        "bf16": (7.2e14, pytest.approx(7.2e14 / 9.895e14))}
    unknown = _gpu_run("NVIDIA GeForce RTX 4090")
    assert cell_fractions(*unknown) == {}  # no bound, no fraction: nothing guessed


def test_the_environment_page_flags_a_gpu_cell_above_its_datasheet_bound():
    from dlbench.report.inputs.source import load_release
    from dlbench.report.pages.info import rate_groups
    from tests.site_fixtures import ROOT

    observations, cells, environments = _gpu_run("NVIDIA H100 80GB HBM3")
    source = load_release(ROOT / "results", "2027.03")
    source = replace(source, cells=cells, observations=observations)
    run = replace(source.runs[0], run_id="r", info={"device": "cuda"},
                  environment=environments["r"])
    rows = dict(rate_groups(source, run, {"above": "the fast cell"})[0]["rows"])
    assert rows["fp32 bound (GFLOP/s)"].startswith("67,000.0 = NVIDIA H100 SXM5: 67 TFLOP/s")
    assert rows["the fast cell"] == "80,000.00 GFLOP/s, 119.4% of the bound, " + ABOVE_BOUND_WORDS
    assert rows["matmul probe fp32"] == "51,000.00 GFLOP/s, 76.1% of the bound"
    unknown = replace(run, environment=environments["r"] | {"gpus": [{"model": "NVIDIA L4"}]})
    rows = dict(rate_groups(source, unknown, {})[0]["rows"])
    assert rows["fp32 bound"] == "no bound: device not in the table (NVIDIA L4)"
