"""The claims-checked page: each common claim's verdict per machine and device in one
sentence, a chart of its ratios, and the details folded away (verdicts: report/claims/check.py)."""

from __future__ import annotations

import math

import pandas as pd

from dlbench.core.judging.regime import Regime
from dlbench.report.render.charts import ratio_chart
from dlbench.report.claims.check import (ClaimVerdict, check_source_claims, load_claims,
                                         load_listings)
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.vocabulary import Expect
from dlbench.report.pages.experiment import result_anchor
from dlbench.report.pages.home import page_verdicts, with_new_questions
from dlbench.report.verdicts.first_published import first_published, rules_changed
from dlbench.report.pages.registry import Page, PageInputs, page
from dlbench.report.render.jinja import ChartBlock, chart_block, render
from dlbench.report.render.labels import ids_in_words, short_sentences
from dlbench.report.render.paragraphs import packed, split_outside_parentheses
from dlbench.report.inputs.source import Source

MAX_LINKS = 12  # evidence links per verdict; the rest are counted


def _evidence(verdict: ClaimVerdict, metrics: set[str], summary: pd.DataFrame) -> str:
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


def _regime_words(regimes: tuple[Regime, ...]) -> str:
    if not regimes:
        return ""
    if Regime.OVERHEAD_BOUND in regimes:
        return ("overhead-bound: these timings measure per-call overhead, not arithmetic"
                + ("" if len(set(regimes)) == 1 else " (in part)"))
    return " / ".join(dict.fromkeys(r.value.removeprefix("regime ") for r in regimes))


#: The practical threshold the ratio chart's grey band draws (a ratio within 5% of 1).
THRESHOLD = 1.05
NAMED_PAIRS = 3  # pairs a verdict's sentence names; the details list every one


def pair_words(label: str) -> str:
    """A ratio's label in fewer words: 'workload mlp-digits, batch size 32, system keras-jax:
    bf16/fp32' -> 'mlp-digits, batch 32, keras-jax: bf16/fp32'."""
    return label.replace("workload ", "").replace("batch size", "batch") \
        .replace("system ", "").replace(" vs default mode", "").replace(" vs fastest mode", "")


def interval_words(low: float, high: float,
                   claimed: tuple[float, float] | None = None) -> str:
    """Where a ratio's 95% interval lies against the 5% threshold, or against the ratio the
    claim states (`claimed`: 'half the memory' is 0.4-0.6x), in words."""
    if claimed:
        least, most = claimed
        span = f"the claimed {least:g}–{most:g}x"
        if high < least or low > most:
            return f"wholly outside {span}"
        if least <= low and high <= most:
            return f"wholly inside {span}"
        return f"reaches across {span}, so it cannot decide"
    if low > THRESHOLD or high < 1 / THRESHOLD:
        return "beyond 5%"
    if low >= 1 / THRESHOLD and high <= THRESHOLD:
        return "within 5%"
    return "reaches across 5%, so it cannot decide"


def _deciding(verdict: ClaimVerdict) -> list[tuple[str, float, float, float]]:
    """The pairs that decide the verdict first: beyond or within 5% for a decided claim,
    those whose interval reaches across it for an undecided one."""
    usable = [r for r in verdict.ratios if all(v > 0 and not math.isnan(v) for v in r[1:])]
    undecided = [r for r in usable if interval_words(r[2], r[3]).startswith("reaches")]
    decided = [r for r in usable if r not in undecided]
    return undecided + decided if verdict.verdict.value == "inconclusive" else decided + undecided


#: The most characters of one paragraph or list item of the claims page; a longer line is
#: cut at a word with a pointer to the details, which keep every number.
LINE_CHARS = 480
NAMED_REASONS = 3  # reasons a verdict's lines name; the details list every one


def within(text: str, limit: int = LINE_CHARS) -> str:
    """`text`, or its first words up to `limit` characters and a pointer to the details."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "… (see Details)"


def paragraphs(text: str, limit: int = LINE_CHARS) -> list[str]:
    """`text` as paragraphs of at most about `limit` characters, broken after a '; ' or '. '
    outside parentheses (a clause is never cut)."""
    return packed(split_outside_parentheses(text, ";."), limit)


def reason_lines(verdict: ClaimVerdict, claimed: tuple[float, float] | None = None
                 ) -> list[str]:
    """Why a verdict is what it is, one short sentence per line: each deciding pair with its
    ratio, 95% interval and where the interval lies against the 5% threshold, then why the
    undecided pairs could not decide; without pairs, the explanation one part a line."""
    pairs = _deciding(verdict)
    named = [f"{pair_words(label)}: {ratio:.3g}x, 95% interval {low:.3g}–{high:.3g}x, "
             f"{interval_words(low, high, claimed)}." for label, ratio, low, high in pairs[:NAMED_PAIRS]]
    more = len(pairs) - NAMED_PAIRS
    named += [f"And {more} more pairs (Details)."] if more > 0 else []
    # a claim of a stated ratio is judged against that ratio, not the home page's 5%
    why = [] if claimed and verdict.verdict.value != "inconclusive" else \
        [w for w in verdict.why if not (w == "differences within 5%" and any(
        interval_words(r[2], r[3]) != "within 5%" for r in pairs))]
    if why:
        lead = "Undecided" if verdict.verdict.value == "inconclusive" else "Pairs left undecided"
        extra = len(why) - NAMED_REASONS
        named.append(f"{lead} because: {'; '.join(why[:NAMED_REASONS])}"
                     + (f"; and {extra} more reasons (Details)." if extra > 0 else "."))
    return [within(ids_in_words(line)) for line in named] or \
        [within(line) for line in short_sentences(verdict.explanation)]


def _chart(claim: str, claim_id: str, verdict: ClaimVerdict) -> ChartBlock | None:
    rows = [{"label": ids_in_words(pair_words(label)), "ratio": r, "low": low, "high": high}
            for label, r, low, high in verdict.ratios
            if all(v > 0 and not math.isnan(v) for v in (r, low, high))]
    if not rows:
        return None
    title = f"{claim} ({verdict.device})"  # wrapped whole by the chart, never cut short
    return chart_block(f"claim-{claim_id}-{verdict.machine}-{verdict.device}",
                       ratio_chart(pd.DataFrame(rows), title))


def _original(release: str) -> dict[tuple[str, str, str], str] | None:
    record = first_published(release)
    if record is None:
        return None
    return {(c["claim"], c["machine"], c["device"]): c["outcome"] for c in record["claims"]}


def claim_blocks(source: Source, summary: pd.DataFrame, answers: pd.DataFrame | None = None
                 ) -> tuple[list[dict], list[ChartBlock]]:
    """One block per claim (one row per machine and device), and the charts they embed;
    `answers` is the home page's verdicts table, whose pair decisions the claims take."""
    claims = load_claims()
    verdicts = check_source_claims(source, claims, answers)
    original = _original(source.name)
    listings = load_listings()
    blocks, charts = [], []
    for claim in claims:
        metrics = {rule.metric for rule in claim.evidence if rule.metric}
        claimed = next((rule.ratio_range for rule in claim.evidence
                        if rule.expect is Expect.WITHIN and rule.ratio_range), None)
        rows = []
        for v in (v for v in verdicts if v.claim_id == claim.id):
            chart = _chart(claim.claim, claim.id, v)
            charts += [chart] if chart else []
            before = (original or {}).get((claim.id, v.machine, v.device))
            rows.append({
                "machine": v.machine, "device": v.device, "verdict": v.verdict.value,
                "explanation": [within(line) for line in short_sentences(v.explanation)],
                "regime": _regime_words(v.regimes), "reason": reason_lines(v, claimed),
                "why": [within(ids_in_words(w)) for w in v.why],
                "evidence": _evidence(v, metrics, summary), "chart": chart,
                "before": before if before and before != v.verdict.value else "",
            })
        shown = [dict(rule.listings) for rule in claim.evidence if rule.listings]
        blocks.append({"id": claim.id, "claim": claim.claim, "source": claim.source,
                       "decides": paragraphs(claim.decides), "rows": rows,
                       "holds": claim_holds(rows),
                       "listings": [{"framework": f, "path": p, "code": listings.get(p, "")}
                                    for paths in shown for f, p in paths.items()]})
    return blocks, charts


#: Claim verdicts that answer nothing on a machine: they neither hold nor fail there.
NOT_ANSWERED = (Outcome.NOT_MEASURABLE.value, Outcome.NOT_MEASURED.value)


def claim_holds(rows: list[dict]) -> str:
    """Where a claim's verdict holds across the machine kinds of a release (each row is one
    kind: report/claims/check.py machines_of), in words: '' for one kind; 'supported on both
    machine kinds'; else each verdict with the kinds it has."""
    machines = {(r["machine"], r["device"]) for r in rows}
    answered = [r for r in rows if r["verdict"] not in NOT_ANSWERED]
    if len(machines) < 2 or not answered:
        return ""
    by_verdict: dict[str, list[str]] = {}
    for row in answered:
        by_verdict.setdefault(row["verdict"], []).append(row["machine"])
    unmeasured = [r["machine"] for r in rows if r["verdict"] in NOT_ANSWERED]
    rest = f"; not measured on {', '.join(unmeasured)}" if unmeasured else ""
    if len(by_verdict) == 1:
        verdict, names = next(iter(by_verdict.items()))
        where = (("both machine kinds" if len(names) == 2 else
                  f"all {len(names)} machine kinds") if not unmeasured else ", ".join(names))
        return f"{verdict} on {where}{rest}"
    return "depends on the machine kind: " + "; ".join(
        f"{verdict} on {', '.join(names)}" for verdict, names in by_verdict.items()) + rest


def changed_claims(blocks: list[dict], release: str) -> list[dict] | None:
    """Claim verdicts that differ from those first published; None without that record."""
    if _original(release) is None:
        return None
    return [{"id": b["id"], "claim": b["claim"], "machine": r["machine"], "device": r["device"],
             "before": r["before"], "after": r["verdict"]}
            for b in blocks for r in b["rows"] if r["before"]]


@page("claims.md")
def claims_page(inputs: PageInputs) -> Page:
    """The claims-checked page, and its charts."""
    # the home page's decisions, a question added after publication's as judged today
    shown, _ = with_new_questions(*page_verdicts(inputs))
    claims, charts = claim_blocks(inputs.source, inputs.summary, shown)
    text = render(inputs.env, "claims.md.j2", claims=claims,
                  changes=changed_claims(claims, inputs.source.name),
                  rules_changed=paragraphs(rules_changed(inputs.source.name) or ""),
                  **inputs.common)
    return Page(text, tuple(charts))
