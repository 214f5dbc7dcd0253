"""The regime's peak: theoretical FMA figures per instruction set, the recorded peak as the
largest of theory and probes, and a report-side peak no achieved rate can exceed."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dlbench.core.achieved import cell_fractions, cell_rates, run_peaks
from dlbench.core.fma_peak import WINOGRAD_WORDS, Clock, theoretical_peak
from dlbench.runner.driver.machine.peak import combined_peak, nominal_clock

CLOCK = Clock(3.0, "test", True)
AVX2 = {"fma", "avx", "avx2"}
AVX512 = AVX2 | {"avx512f"}
AVX512_BF16 = AVX512 | {"avx512_bf16"}
AMX = AVX512_BF16 | {"amx_bf16", "amx_tile"}


@pytest.mark.parametrize(("flags", "fp32", "bf16", "bf16_unit"), [
    (AVX2, 32, 32, "none (AVX2 FMA on fp32)"),
    (AVX512, 64, 64, "none (AVX-512 FMA on fp32)"),
    (AVX512_BF16, 64, 128, "AVX-512 BF16 dot products"),
    (AMX, 64, 1024, "AMX tiles"),
])
def test_theoretical_peak_per_instruction_set_records_its_assumptions(flags, fp32, bf16,
                                                                      bf16_unit):
    record = theoretical_peak(flags, 2, CLOCK)
    assert record["fp32_flop_per_cycle"] == fp32 and record["bf16_flop_per_cycle"] == bf16
    assert record["bf16_unit"] == bf16_unit
    assert record["fp32_flops"] == pytest.approx(2 * 3.0e9 * fp32)
    assert record["bf16_flops"] == pytest.approx(2 * 3.0e9 * bf16)
    for key in ("cores_assumption", "fp32_unit_assumption", "bf16_unit_assumption",
                "clock_assumption", "clock_source"):
        assert record[key], key
    assert "maximum" in record["clock_assumption"]


def test_a_nominal_or_missing_clock_says_so():
    nominal = theoretical_peak(AVX2, 2, Clock(2.6, "cpu MHz", False))
    assert "only a nominal clock is known" in nominal["clock_assumption"]
    unknown = theoretical_peak(AVX2, 2, None)
    assert unknown["fp32_flops"] is None and "no clock known" in unknown["clock_assumption"]


def test_nominal_clock_reads_the_brand_string_before_the_kernels_mhz():
    brand = "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\ncpu MHz\t\t: 1000.0\n"
    assert nominal_clock(brand) == Clock(2.4, "the brand string's nominal clock", False)
    bare = "model name\t: Intel(R) Xeon(R) Processor\ncpu MHz\t\t: 2600.000\n"
    assert nominal_clock(bare).ghz == 2.6 and not nominal_clock(bare).is_maximum
    assert nominal_clock("model name\t: AMD EPYC\n") is None


def test_recorded_peak_is_the_largest_of_theory_and_probes_and_names_it():
    theory = theoretical_peak(AVX2, 2, CLOCK)  # 192 GFLOP/s fp32 and bf16
    probed = combined_peak(theory, {"numpy_fp32_flops": 1.5e11, "torch_fp32_flops": 2.5e11,
                                    "torch_bf16_flops": 1e10})
    assert probed["fp32_flops"] == 2.5e11 and probed["fp32_flops_basis"] == "probe torch_fp32"
    assert probed["bf16_flops"] == pytest.approx(1.92e11)
    assert probed["bf16_flops_basis"].startswith("theoretical FMA peak")
    no_clock = combined_peak(theoretical_peak(AVX2, 2, None), {"numpy_fp32_flops": 1e11})
    assert no_clock["fp32_flops"] == 1e11 and no_clock["bf16_flops"] is None


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


def test_a_rate_above_the_probe_raises_the_peak_so_no_fraction_exceeds_one():
    observations, cells, environments = _run({"fast": 1.53e11, "slow": 1e10},
                                             {"fp32_flops": 1e11, "probe": "NumPy 512 matmul"})
    fractions = cell_fractions(observations, cells, environments)
    assert fractions[("r", "fast")] == pytest.approx(1.0)
    assert fractions[("r", "slow")] == pytest.approx(1e10 / 1.53e11)
    assert max(fractions.values()) <= 1.0
    peak = run_peaks(cell_rates(observations, cells), environments)[("r", "fp32_flops")]
    assert peak.flops == pytest.approx(1.53e11)
    assert "rate achieved by cell fast, above the recorded peak" in peak.basis


def test_a_rate_below_the_recorded_peak_keeps_it_and_its_basis():
    observations, cells, environments = _run(
        {"slow": 1e10}, {"fp32_flops": 1e11, "fp32_flops_basis": "theoretical FMA peak"})
    assert cell_fractions(observations, cells, environments)[("r", "slow")] == pytest.approx(0.1)
    peak = run_peaks(cell_rates(observations, cells), environments)[("r", "fp32_flops")]
    assert peak.basis == "theoretical FMA peak"


def test_a_convolutional_cell_that_sets_the_peak_is_not_credited_with_its_winograd_savings():
    observations, cells, environments = _run({"conv": 2e11}, {"fp32_flops": 1e11},
                                             workload="resnet50-synthetic")
    rates = cell_rates(observations, cells)
    assert rates[("r", "conv")].note == WINOGRAD_WORDS
    assert WINOGRAD_WORDS in run_peaks(rates, environments)[("r", "fp32_flops")].basis


def test_a_precision_without_a_recorded_peak_has_no_fraction():
    observations, cells, environments = _run({"half": 1e10}, {"fp32_flops": 1e11,
                                                              "bf16_flops": None},
                                             precision="bf16")
    assert cell_fractions(observations, cells, environments) == {}


def test_2027_03_real_size_cells_read_at_most_100_percent_of_the_corrected_peak():
    from pathlib import Path

    from benchmarks.regime_correction import table_lines
    from dlbench.report.inputs.source import load_release

    source = load_release(Path(__file__).parents[1] / "results", "2027.03")
    rows = [line.split(" | ") for line in table_lines(source, 4.1) if line.startswith("| ")
            and "%" in line]
    published = [float(r[2].rstrip("%")) for r in rows]
    corrected = [float(r[3].rstrip("% |")) for r in rows]
    assert len(rows) >= 16 and sum(p > 100 for p in published) == 9
    assert max(corrected) <= 100 and max(corrected) == 67


def test_machines_are_told_apart_by_their_measured_probe_not_their_theoretical_peak():
    from dlbench.core.fma_peak import measured_fp32_flops

    recorded = combined_peak(theoretical_peak(AVX2, 2, CLOCK),
                             {"numpy_fp32_flops": 1.1e11, "torch_fp32_flops": 1.2e11})
    assert recorded["fp32_flops"] == pytest.approx(1.92e11)  # the theoretical peak
    assert measured_fp32_flops(recorded) == 1.2e11
    assert measured_fp32_flops({"fp32_flops": 1.156e11, "probe": "NumPy 512"}) == 1.156e11
    assert measured_fp32_flops(None) is None
