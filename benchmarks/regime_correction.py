"""Issue 50's corrected regime of a release's real-size cells, from its stored tables: each
cell's achieved GFLOP/s, its published fraction (over the recorded probe) and its corrected
fraction (over the largest of the CPU's theoretical FMA peak, the probe and every rate
achieved in the run). Computed from the tables, nothing measured; the release stays frozen.

    .venv/bin/python benchmarks/regime_correction.py --release 2027.03

A run recorded before its clock was (2027.03 and earlier) needs one: --clock-ghz, by default
4.1 GHz, the highest boost clock of any AVX2-only AMD EPYC (Zen 2/Zen 3, e.g. the 72F3), so
the theoretical figure stays an upper bound for 2027.03's "AMD EPYC" without AVX-512.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.core.achieved import cell_rates, run_peaks
from dlbench.core.fma_peak import Clock, theoretical_peak
from dlbench.core.judging import regime_of
from dlbench.report.inputs.source import Source, load_release
from dlbench.report.pages.home import source_verdicts

ROOT = Path(__file__).resolve().parent.parent
REAL_SIZE = ("resnet50-synthetic", "bert-base-tokens")
ASSUMED_CLOCK_GHZ = 4.1


def recorded_flags(cpu: dict) -> set[str]:
    """The CPU flags a run's cpu record implies (every x86-64 server CPU has AVX2 and FMA)."""
    flags = {"avx", "avx2", "fma"} if str(cpu.get("arch", "")).upper() in ("X86_64", "AMD64") \
        else set()
    return flags | {name for name in ("avx512f", "avx512_bf16", "amx") if cpu.get(name)}


def corrected_environment(environment: dict, clock_ghz: float) -> dict:
    """The run's environment with a theoretical peak beside its probe, as a new run records
    it (the largest of the two), for the corrected reading."""
    cpu = environment.get("cpu") or {}
    theory = theoretical_peak(recorded_flags(cpu), int(cpu.get("usable_cores") or 1),
                              Clock(clock_ghz, "assumed: not recorded by this run", True))
    probe = (environment.get("compute_peak") or {}).get("fp32_flops") or 0.0
    basis = "theoretical FMA peak" if theory["fp32_flops"] >= probe else "probe"
    return environment | {"compute_peak": {"fp32_flops": max(theory["fp32_flops"], probe),
                                           "fp32_flops_basis": basis, "theoretical": theory}}


def table_lines(source: Source, clock_ghz: float) -> list[str]:
    """One Markdown table of the release's real-size cells, published and corrected."""
    published = {run.run_id: run.environment for run in source.runs}
    corrected = {r: corrected_environment(e, clock_ghz) for r, e in published.items()}
    rates = cell_rates(source.observations, source.cells)
    peaks = run_peaks(rates, corrected)
    lines = []
    for (run_id, key), peak in sorted(peaks.items()):
        theory = corrected[run_id]["compute_peak"]["theoretical"]
        lines.append(f"- run {run_id}, {key}: peak {peak.flops / 1e9:.1f} GFLOP/s ({peak.basis}); "
                     f"theoretical {theory['fp32_flops'] / 1e9:.1f} = {theory['cores']} cores x "
                     f"{theory['clock_ghz']} GHz x {theory['fp32_flop_per_cycle']} FLOP/cycle "
                     f"({theory['fp32_unit']}); probe "
                     f"{published[run_id]['compute_peak']['fp32_flops'] / 1e9:.1f} GFLOP/s")
    lines += ["", "| cell | achieved GFLOP/s | published fraction | corrected fraction |",
              "|---|---|---|---|"]
    cells = source.cells.drop_duplicates(["run_id", "cell_id"])
    real = cells[cells["workload"].isin(REAL_SIZE)].sort_values("cell_id")
    for cell in real.itertuples():
        rate = rates.get((str(cell.run_id), str(cell.cell_id)))
        if rate is None:
            continue
        probe = published[str(cell.run_id)]["compute_peak"].get(rate.peak_key)
        peak = peaks.get((str(cell.run_id), rate.peak_key))
        old = f"{rate.flops_per_second / probe:.0%}" if probe else "-"
        new = f"{rate.flops_per_second / peak.flops:.0%}" if peak else "-"
        lines.append(f"| {cell.cell_id} | {rate.flops_per_second / 1e9:.1f} | {old} | {new} |")
    return lines


def answer_lines(source: Source, clock_ghz: float) -> list[str]:
    """Every answer with a regime: published (over the probe), on the release's pages today
    (over the probe raised to the run's best rate) and over the theoretical upper bound."""
    published = {run.run_id: run.environment for run in source.runs}
    corrected = {r: corrected_environment(e, clock_ghz) for r, e in published.items()}
    rates = cell_rates(source.observations, source.cells)
    readings = {"page": run_peaks(rates, published), "bound": run_peaks(rates, corrected)}
    lines = ["", "| answer | group | published | pages now | over the theoretical bound |",
             "|---|---|---|---|---|"]
    for verdict in source_verdicts(source):
        keys = [(verdict.run_id, s.cell_id) for s in verdict.standings]
        known = [rates[k] for k in keys if k in rates]
        if not known or len(known) < len(keys):
            continue
        best = max(r.flops_per_second for r in known)
        key = known[0].peak_key
        probe = published[verdict.run_id]["compute_peak"].get(key)
        texts = [_regime_text(best / probe if probe else None)]
        for name in ("page", "bound"):
            peak = readings[name].get((verdict.run_id, key))
            texts.append(_regime_text(best / peak.flops if peak else None))
        group = ", ".join(f"{k} {v}" for k, v in verdict.group)
        lines.append(f"| {verdict.question} | {group} | " + " | ".join(texts) + " |")
    return lines


def _regime_text(fraction: float | None) -> str:
    if fraction is None:
        return "not recorded"
    return f"{regime_of(fraction).value} ({fraction:.1%})"


def main() -> None:
    """Print the corrected regime table of one release."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", required=True)
    parser.add_argument("--clock-ghz", type=float, default=ASSUMED_CLOCK_GHZ)
    parser.add_argument("--results-dir", default=str(ROOT / "results"))
    args = parser.parse_args()
    source = load_release(Path(args.results_dir), args.release)
    print("\n".join(table_lines(source, args.clock_ghz) + answer_lines(source, args.clock_ghz)))


if __name__ == "__main__":
    main()
