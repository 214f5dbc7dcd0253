"""Issue 50's corrected regime of a release's real-size cells, from its stored tables: each
cell's achieved GFLOP/s, its published fraction (over the recorded peak) and its fraction of
the machine's bound (dlbench.core.machine.fma_peak: cores x clock x the core's FMA FLOP per cycle; a
run that measured no clock is bounded by its core's highest documented clock). Computed from
the tables, nothing measured; the release stays frozen.

    .venv/bin/python benchmarks/regime_correction.py --release 2027.03
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.core.machine.achieved import cell_rates, run_bounds
from dlbench.core.judging.regime import regime_of
from dlbench.report.inputs.source import Source, load_release
from dlbench.report.pages.home import source_verdicts

ROOT = Path(__file__).resolve().parent.parent
REAL_SIZE = ("resnet50-synthetic", "bert-base-tokens")


def table_lines(source: Source) -> list[str]:
    """One Markdown table of the release's real-size cells, published and over the bound."""
    published = {run.run_id: run.environment for run in source.runs}
    rates = cell_rates(source.observations, source.cells)
    peaks = run_bounds(rates, published)
    lines = [f"- run {run_id}, {key}: bound {peak.flops / 1e9:.1f} GFLOP/s = {peak.derivation}; "
             f"recorded peak {published[run_id]['compute_peak'][key] / 1e9:.1f} GFLOP/s"
             for (run_id, key), peak in sorted(peaks.items())]
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


def answer_lines(source: Source) -> list[str]:
    """Every answer with a regime: published (over the recorded peak) and over the bound."""
    published = {run.run_id: run.environment for run in source.runs}
    rates = cell_rates(source.observations, source.cells)
    bounds = run_bounds(rates, published)
    lines = ["", "| answer | group | published | over the machine's bound |",
             "|---|---|---|---|"]
    for verdict in source_verdicts(source):
        keys = [(verdict.run_id, s.cell_id) for s in verdict.standings]
        known = [rates[k] for k in keys if k in rates]
        if not known or len(known) < len(keys):
            continue
        best = max(r.flops_per_second for r in known)
        key = known[0].peak_key
        probe = published[verdict.run_id]["compute_peak"].get(key)
        bound = bounds.get((verdict.run_id, key))
        texts = [_regime_text(best / probe if probe else None),
                 _regime_text(best / bound.flops if bound else None)]
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
    parser.add_argument("--results-dir", default=str(ROOT / "results"))
    args = parser.parse_args()
    source = load_release(Path(args.results_dir), args.release)
    print("\n".join(table_lines(source) + answer_lines(source)))


if __name__ == "__main__":
    main()
