"""`dlbench results facts RELEASE [--check]`: the factual figures a release's notes state,
computed from its data; with --check, the notes' figures the data contradict (exit 1)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.core.text.visible import visible_controls
from dlbench.core.text.errors import UsageError
from dlbench.report.inputs.source import SourceError, load_release
from dlbench.report.notes.check import check_notes
from dlbench.report.notes.facts import run_facts, slowdowns


def facts_lines(source) -> list[str]:
    """The release's facts, one run per paragraph, then the slowdowns between its machines."""
    facts = run_facts(source)
    lines = []
    for f in facts:
        steal = f", CPU steal up to {f.largest_steal:.1%}" if f.largest_steal else ""
        share = (f"{f.best_real_share:.1%} ({f.best_real_cell})" if f.best_real_share
                 is not None else "no real-size fp32 cell with a known rate")
        bound = f"{f.bound_flops / 1e9:,.1f} GFLOP/s = {f.bound_derivation}" \
            if f.bound_flops else f.bound_derivation
        lines += [f"run {f.run_id} ({f.machine})",
                  f"  re-measured as busy: {f.remeasured} processes, {f.remeasures} "
                  f"re-measurements{steal}",
                  f"  testable timing answers decided: {f.decided} of {f.testable}; A/A "
                  f"controls naming a winner: {f.controls_named} of {f.controls}",
                  f"  fp32 bound: {bound}",
                  f"  best real-size fp32 cell's share of it: {share}"]
    for slower in facts:
        for faster in (f for f in facts if f.machine != slower.machine):
            ratios = slowdowns(source, slower.run_id, faster.run_id)
            if ratios and max(ratios.values()) >= 1:  # each pair once, as the slower's
                lines.append(f"process time, {slower.run_id} over {faster.run_id} (median over "
                             "cells, by experiment): " + ", ".join(
                                 f"{k} {v:.2f}x" for k, v in sorted(ratios.items())))
    return lines


def facts_command(args: argparse.Namespace) -> int:
    """Print the release's facts; with --check, also what its notes state against them, and
    exit 1 where the data contradict a figure."""
    if not Path(args.results_dir).is_dir():
        raise UsageError(f"--results-dir {args.results_dir}: no such folder; pass the folder "
                         "that holds releases/ (default: results)")
    try:
        source = load_release(Path(args.results_dir), args.release)
    except SourceError as error:
        raise UsageError(str(error)) from None
    print("\n".join(visible_controls(line) for line in facts_lines(source)))
    if not args.check:
        return 0
    checked, findings = check_notes(source)
    print(f"notes: {checked} figures checked against the data, {len(findings)} contradicted")
    for finding in findings:
        print(visible_controls(f"  run {finding.run_id}: the notes say '{finding.claim}'; the data "
                            f"give {finding.data}"))
    return 1 if findings else 0
