"""The home page's answer to "are the frameworks running the same model?": per workload, the
parity cells' pairs (dlbench.core.judging.parity: every system from the same weights, its outputs
and one optimizer step's weight changes against every other system's and a float64
reference), over every run of the release. No table of the home page holds them (a parity
result is no verdict), so the answer links to the parity experiment's page."""

from __future__ import annotations

import pandas as pd

from dlbench.core.judging.parity import pair_results
from dlbench.core.storage.schema import system_label
from dlbench.report.render.labels import workload_label
from dlbench.report.render.user_text import plain_text

EXPERIMENT = "parity"
#: The page the answer links to (the parity experiment's cells, each pair's values).
PAGE = f"experiments/{EXPERIMENT}.md"
#: Differing pairs one answer names; the page lists every pair.
NAMED = 3


def _words(pairs: pd.DataFrame) -> str:
    """One workload's pairs in words: the same model everywhere, or which pairs differ."""
    systems = len({*pairs["framework_a"], *pairs["framework_b"]})
    worst = float(pairs[["forward_max_rel", "step_max_rel"]].max().max())
    runs = pairs["run_id"].nunique()
    where = f" on each of {runs} runs" if runs > 1 else ""
    differ = pairs[~pairs["passed"].astype(bool)]
    if differ.empty:
        return (f"the same model in all {systems} systems{where}: outputs and one step's "
                f"weight changes agree within tolerance (largest relative difference "
                f"{worst:.1g}, tolerance {float(pairs['tolerance'].max()):g})")
    named = dict.fromkeys(f"{system_label(r.framework_a)} and {system_label(r.framework_b)}"
                          for r in differ.itertuples())
    more = len(named) - NAMED
    return (f"{len(differ)} of {len(pairs)} pairs of {systems} systems differ beyond "
            f"tolerance ({'; '.join(list(named)[:NAMED])}"
            f"{f'; {more} more' if more > 0 else ''}; largest relative difference "
            f"{worst:.1g})")


def parity_lines(cells: pd.DataFrame) -> list[dict]:
    """Each workload whose parity cells ran, with its answer in words and the page it links
    to ([] where cells lack what parity reads: no parity cell finished)."""
    if not {"experiment", "status", "details_json", "run_id", "workload", "device"} <= set(
            cells.columns):
        return []
    pairs = pair_results(cells)
    return [{"label": workload_label(str(workload), str(group["device"].iloc[0])),
             "answer": plain_text(_words(group)), "anchor": "", "href": PAGE,
             "link": "every pair"}
            for workload, group in pairs.groupby("workload", sort=True)]
