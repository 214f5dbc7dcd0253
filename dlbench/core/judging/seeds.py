"""Whether each process of a cell ran a seed of its own.

It decides what identical values across a cell's processes mean. Processes that share one
seed and score the same are a deterministic rerun: they carry no uncertainty to test.
Processes that each ran another seed and still score the same show that the seed does not
move the value: the value is exact for the seeds measured, and a pair of such cells can be
judged (dlbench.core.judging.decisions.pair_test).

Since release 2027.02, process k of every framework starts from seed k (the workload's seed
plus k: dlbench.runner.workloads.catalog.process_seed). Each worker now reports the seed it
ran, and the cell's details list them ("processes": {"seeds": [...]}). Cells measured before
workers reported it say it in their training protocol's notes (PER_PROCESS_SEEDS), as 2027.02
and 2027.03 do; releases before 2027.02 reran one seed and say neither.
"""

from __future__ import annotations

import json

import pandas as pd

#: The training protocol's words for per-process seeds (its notes carry them since 2027.02).
PER_PROCESS_SEEDS = ("process k of every framework starts from the same initial weights k "
                     "and trains in the same epoch order k (seed k)")


def cells_with_own_seeds(cells: pd.DataFrame) -> set[str]:
    """The IDs of the cells whose processes each ran a seed of their own."""
    if "cell_id" not in cells or not len(cells):
        return set()
    details = cells["details_json"] if "details_json" in cells else [None] * len(cells)
    fairness = cells["fairness_json"] if "fairness_json" in cells else [None] * len(cells)
    return {str(cell_id) for cell_id, detail, manifest
            in zip(cells["cell_id"], details, fairness, strict=True)
            if own_seeds(_json(detail), _json(manifest))}


def own_seeds(details: dict, fairness: dict) -> bool:
    """Whether a cell's details (its recorded seeds) or, lacking them, its fairness manifest
    (the protocol's words) say every process ran a seed of its own."""
    seeds = (details.get("processes") or {}).get("seeds")
    if seeds is not None:
        return (len(seeds) >= 2 and None not in seeds
                and len(set(seeds)) == len(seeds))
    return PER_PROCESS_SEEDS in str(fairness.get("notes") or "")


def _json(text: object) -> dict:
    """A JSON object column's value as a dict ({} when empty or missing)."""
    if not isinstance(text, str) or not text:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {}
