"""The claims-checked page: each common claim's verdict per machine and device, with links to
the results it rests on (the verdicts come from report/claims.py)."""

from __future__ import annotations

import pandas as pd

from report.claims import ClaimOutcome, check_source_claims, load_claims
from report.experiment_page import result_anchor
from report.source import Source

MAX_LINKS = 12  # evidence links per verdict; the rest are counted


def _evidence(verdict, metrics: set[str], summary: pd.DataFrame) -> str:
    """Links to the result rows of the verdict's evidence cells (the claim's metrics only)."""
    links = []
    for run_id, cell_id in zip(verdict.evidence_runs, verdict.evidence, strict=True):
        rows = summary[(summary["run_id"] == run_id) & (summary["cell_id"] == cell_id)]
        if metrics:
            rows = rows[rows["metric"].isin(metrics)]
        experiment = cell_id.split(":", 1)[0]
        links += [f"[{i}](experiments/{experiment}.md#{result_anchor(i)})"
                  for i in sorted(rows["result_id"])]
    if not links:
        return "—"
    more = len(links) - MAX_LINKS
    return " ".join(links[:MAX_LINKS]) + (f" and {more} more" if more > 0 else "")


def claim_blocks(source: Source, summary: pd.DataFrame) -> list[dict]:
    """One block per claim, one row per machine and device it could be judged on."""
    claims = load_claims()
    verdicts = check_source_claims(source, claims)
    blocks = []
    for claim in claims:
        metrics = {rule.metric for rule in claim.evidence if rule.metric}
        rows = [{
            "machine": v.machine, "device": v.device,
            "verdict": f"**{v.verdict.value}**", "explanation": v.explanation,
            "evidence": _evidence(v, metrics, summary),
        } for v in verdicts if v.claim_id == claim.id]
        counts = {o: sum(v.verdict is o for v in verdicts if v.claim_id == claim.id)
                  for o in ClaimOutcome}
        blocks.append({"id": claim.id, "claim": claim.claim, "source": claim.source,
                       "decides": claim.decides, "rows": rows,
                       "tally": ", ".join(f"{n} {o.value}" for o, n in counts.items() if n)})
    return blocks
