"""The home page: a summary chart, then each question's verdicts (report/verdicts/answers.py) per
machine, with their evidence; the words are in templates/index.md.j2."""

from __future__ import annotations

import json
import math

from collections.abc import Mapping

import pandas as pd

from dlbench.core.machine.fma_peak import ABOVE_BOUND_WORDS
from dlbench.core.judging.outcomes import ANSWER, Outcome
from dlbench.core.judging.decisions import PRACTICAL_THRESHOLD
from dlbench.core.judging.regime import Regime
from dlbench.core.declarations.metrics import Direction, is_timing_unit, reader_label
from dlbench.core.judging.verdict_engine import busy_processes
from dlbench.core.text.words import counts, plural
from dlbench.report.pages.experiment import experiment_title, result_anchor
from dlbench.report.verdicts.first_published import first_published, rules_changed
from dlbench.report.pages.registry import Page, PageInputs, page
from dlbench.report.render.jinja import chart_block, render
from dlbench.report.render.paragraphs import identifiers_as_code, short_paragraphs
from dlbench.report.render.labels import contender_label
from dlbench.report.inputs.source import Source, source_designs, source_processes
from dlbench.report.inputs.labelled import (BatchIndex, batch_index, format_number,
                                            Machine, hardware_words, machine_labels,
                                            value_batch)
from dlbench.report.pages.answer_tables import (answer_counts, answer_outcomes, answer_tables,
                                                group_label)
from dlbench.report.pages.answer_values import centres_of
from dlbench.report.pages.cite import example_row, result_citation
from dlbench.report.pages.defaults_accuracy import defaults_blocks
from dlbench.report.pages.precision_accuracy import precision_blocks
from dlbench.report.pages.founding import (founding_answers, run_kinds, framework_versions,
                                           machine_dependence, machine_kinds, notes_summary,
                                           summary_frame)
from dlbench.report.render.charts import ratio_chart
from dlbench.report.render.user_text import plain_text
from dlbench.report.pages.machine_columns import machine_names, machine_tables
from dlbench.report.verdicts.verdict_table import controls_summary, result_ids
from dlbench.report.verdicts.stored import judged_apart, stored_verdicts
from dlbench.core.judging.verdict_engine import QUESTIONS, Pairing
from dlbench.report.verdicts.answers import Verdict, Verdicts, judge_page


def source_judgement(source: Source) -> Verdicts:
    """The home page's verdicts of a release and its A/A controls, each run judged at the
    looks of its own design."""
    return judge_page(source.observations, source.cells,
                      environments={run.run_id: run.environment for run in source.runs},
                      processes=source_processes(source), designs=source_designs(source))


def source_verdicts(source: Source) -> list[Verdict]:
    """The home page's verdicts of a release."""
    return source_judgement(source).answers


def _evidence(verdict: Verdict, experiment: str, ids: dict[tuple, str],
              variants: dict[tuple, str]) -> str:
    unit = "" if verdict.unit == "fraction" else f" {verdict.unit}"
    parts = []
    question = next((q for q in QUESTIONS if q.key == verdict.question), None)
    for standing in verdict.standings:
        s = standing.summary
        # a joined experiment's cell is read at its own metric, on its own page
        metric = question.metric_of(standing.cell_id) if question else verdict.metric
        page = standing.cell_id.split(":", 1)[0] if question and question.joins \
            else experiment
        variant = variants.get((verdict.run_id, standing.cell_id, metric), "")
        # the value the standings are ranked by, and no other: the geometric mean
        text = (f"{_named(verdict.question, standing.contender)}"
                + (f" ({variant})" if variant else "")
                + f": {format_number(standing.geometric_mean)}{unit} (geometric mean of "
                f"{plural(s.n, 'process')})")
        result_id = ids.get((verdict.run_id, standing.cell_id, metric))
        if result_id:
            text += f" [{result_id}](experiments/{page}.md#{result_anchor(result_id)})"
        parts.append(text)
    return "<br>".join(parts) or "—"


def _better_word(verdict: Verdict) -> str:
    if is_timing_unit(verdict.unit):
        return "faster"
    words = reader_label(verdict.metric).split(" (")[0]
    return f"{'lower' if verdict.direction is Direction.LOWER else 'higher'} {words}"


def _percent(fraction: float) -> str:
    """0.003 -> '0.3%', 0.25 -> '25%'; empty when not recorded."""
    if math.isnan(fraction):
        return ""
    return f"{fraction:.1%}" if fraction < 0.01 else f"{fraction:.0%}"


def _times(value: float) -> str:
    """A ratio as a reader reads it: 2.3x, 1.07x, 153x."""
    return "n/a" if math.isnan(value) else f"{format_number(value)}x"


def _processes(pairing: Pairing) -> str:
    """'3 processes each', or '3 and 6 processes' when the sides differ."""
    n_a, n_b = pairing.judgement.test.n_a, pairing.judgement.test.n_b
    return f"{plural(n_a, 'process')} each" if n_a == n_b else counts([n_a, n_b], "process")


def _pair_words(pairing: Pairing, contest: str = "system") -> dict:
    """One pairing's ratio, adjusted interval, coverage and processes, in words."""
    low, high = pairing.advantage_interval()
    return {"other": contender_label(contest, pairing.other), "ratio": _times(pairing.advantage),
            "low": _times(low), "high": _times(high),
            "confidence": f"{pairing.judgement.confidence:.1%}".replace(".0%", "%"),
            "processes": _processes(pairing), "look": pairing.judgement.look}


def _answer(verdict: Verdict) -> dict:
    """What the template needs to say the verdict in one sentence: the closest pairing
    decides a winner; the first undecided one is why an answer is inconclusive."""
    closest = min(verdict.pairings, key=lambda p: p.advantage, default=None)
    undecided = next((p for p in verdict.pairings
                      if p.judgement.decision in (Outcome.UNDECIDED, Outcome.INCONCLUSIVE)),
                     None)
    shown = undecided if verdict.outcome is Outcome.INCONCLUSIVE else closest
    return {
        "outcome": verdict.outcome.value,
        "winner": _named(verdict.question, verdict.winner) if verdict.winner else "",
        "best": _named(verdict.question, verdict.standings[0].contender)
        if verdict.standings else "",
        "leaders": ", ".join(_named(verdict.question, c) for c in verdict.leaders),
        "better": _better_word(verdict),
        "pair": _pair_words(shown, _contest(verdict.question)) if shown else None,
        "others": len(verdict.pairings) - 1,
        "untestable": bool(shown and shown.judgement.test.note),
        "threshold": f"{verdict.threshold:.0%}",
        "needed": verdict.needed,
        "reason": verdict.reason, "regime": verdict.regime.value,
        "overhead": verdict.regime is Regime.OVERHEAD_BOUND,
        "peak_pct": _percent(verdict.peak_fraction),
        "above_bound": ABOVE_BOUND_WORDS if verdict.peak_fraction > 1 else "",
    }


def _row(verdict: Verdict, labels: Mapping[Machine, str], experiment: str,
         ids: dict[tuple, str], variants: dict[tuple, str], batches: BatchIndex) -> dict:
    return {
        "machine": labels[(verdict.run_id, verdict.device)],
        "group": group_label(json.dumps(dict(verdict.group)), verdict.device,
                             _contest(verdict.question), value_batch(
                                 batches, verdict.run_id,
                                 verdict.standings[0].cell_id if verdict.standings else "",
                                 verdict.metric)),
        "answer": _answer(verdict),
        "evidence": _evidence(verdict, experiment, ids, variants),
    }


def _contest(question: str) -> str:
    return next((q.contest for q in QUESTIONS if q.key == question), "system")


def _named(question: str, contender: str) -> str:
    """A contender of a question in words (a system, a runtime, a path, a mode)."""
    return contender_label(_contest(question), contender)


def threshold_words(found: list[Verdict]) -> str:
    """The practical thresholds the page's families used, e.g. '5%, 7.2% where the A/A
    noise floor was larger'."""
    used = sorted({round(v.threshold, 3) for v in found if v.pairings})
    if not used:
        return "5%"
    larger = [f"{t:.1%}" for t in used if t > PRACTICAL_THRESHOLD + 1e-9]
    return "5%" + (f"; {', '.join(larger)} where the A/A noise floor was larger"
                   if larger else "")


def busy_left_out(source: Source) -> int:
    """How many processes stayed flagged busy and are left out of the answers."""
    return len(busy_processes(source_processes(source)))


#: What a question's contest compares, in a reader's word.
CONTEST_WORDS = {"system": "system", "precision": "precision", "mode": "mode",
                 "workers": "worker count"}


def one_sided(verdict: Verdict) -> bool:
    """Whether a verdict's group measured one contender only (nothing to compare)."""
    return verdict.outcome is Outcome.INSUFFICIENT_DATA and len(verdict.standings) == 1


def one_sided_groups(found: list[Verdict], batches: BatchIndex | None = None) -> dict | None:
    """The question groups that measured one contender only, counted in one line below the
    answers (they answer nothing); None when there are none."""
    lonely = [v for v in found if one_sided(v)]
    if not lonely:
        return None
    contests = {q.key: q.contest for q in QUESTIONS}
    used = {contests.get(v.question, "") for v in lonely}
    kinds = [word for contest, word in CONTEST_WORDS.items() if contest in used] or ["contender"]
    return {"line": f"{plural(len(lonely), 'question group')} measured one "
                    f"{' or '.join(kinds)} only",
            "rows": [{"title": v.title, "group": group_label(
                json.dumps(dict(v.group)), v.device, _contest(v.question),
                value_batch(batches or {}, v.run_id, v.standings[0].cell_id, v.metric)),
                      "only": _named(v.question, v.standings[0].contender)}
                     for v in lonely]}


def question_blocks(source: Source, summary: pd.DataFrame,
                    found: list[Verdict] | None = None) -> list[dict]:
    """One block per question that has answers in the release, one row per verdict; groups
    that measured one contender only are left to one_sided_groups."""
    ids = result_ids(summary)
    variants = {(r, c, m): v for r, c, m, v in zip(summary["run_id"], summary["cell_id"],
                                                   summary["metric"], summary["variant"],
                                                   strict=True)} \
        if "variant" in summary else {}
    found = source_verdicts(source) if found is None else found
    batches, labels = batch_index(source.cells), machine_labels(source)
    blocks = []
    for question in QUESTIONS:
        mine = [v for v in found if v.question == question.key and not one_sided(v)]
        if mine:
            blocks.append({
                "title": question.title, "metric_label": reader_label(question.metric),
                "experiment": experiment_title(question.experiment),
                "page": f"experiments/{question.experiment}.md",
                "key": question.key,
                "rows": [_row(v, labels, question.experiment, ids, variants, batches)
                         for v in mine],
            })
    return blocks


def tally(found: list[Verdict]) -> dict | None:
    """How the tested answers came out (a derived metric's repeat of another answer's test is
    not counted twice), and the processes per cell behind them ("3", or "2-5" when cells
    differ); None when no answer compares any."""
    compared = [v for v in found if v.tested]
    if not compared:
        return None
    count = {o: sum(v.outcome is o for v in compared) for o in ANSWER}
    processes = sorted({s.summary.n for v in compared for s in v.standings})
    return {"total": len(compared), "winner": count[Outcome.WINNER],
            "tied": count[Outcome.NO_MEANINGFUL_DIFFERENCE],
            "inconclusive": count[Outcome.INCONCLUSIVE],
            "processes": (plural(processes[0], "process") if len(processes) == 1
                          else f"{processes[0]}-{processes[-1]} processes")}


def _group_key(group: dict | tuple, with_mode_class: bool) -> tuple:
    items = group.items() if isinstance(group, dict) else group
    return tuple(sorted((k, str(v)) for k, v in items if with_mode_class or k != "mode_class"))


def changed_answers(release: str, found: list[Verdict]) -> list[dict] | None:
    """Answers that differ from the release's first published ones; None without a record.
    A record from before mode classes (2026.12) is matched without them."""
    record = first_published(release)
    if record is None:
        return None
    by_mode = any("mode_class" in q["group"] for q in record["questions"])
    original = {(q["question"], q["run_id"], q["device"], _group_key(q["group"], by_mode)): q
                for q in record["questions"]}
    changes = []
    for verdict in found:
        key = (verdict.question, verdict.run_id, verdict.device,
               _group_key(verdict.group, by_mode))
        old = original.get(key)
        if old is None:
            continue
        before = old["winner"] or old["outcome"].replace("significant", "meaningful")
        after = verdict.winner or verdict.outcome.value
        before, after = (_named(verdict.question, w) if w == old["winner"] or w == verdict.winner
                         else w for w in (before, after))  # a mode by its words, not its key
        if before != after:
            changes.append({"title": verdict.title,
                            "group": group_label(json.dumps(dict(verdict.group)),
                                                 verdict.device, _contest(verdict.question)),
                            "before": before, "after": after})
    return changes


def sentence_case(text: str) -> str:
    """`text` with its first letter upper case (a recorded clause shown as its own paragraph)."""
    return text[:1].upper() + text[1:]


def experiment_links(summary: pd.DataFrame, questions: dict[str, dict]) -> list[dict]:
    """Every experiment of the release with its question and page."""
    return [{"title": experiment_title(e), "page": f"experiments/{e}.md",
             "question": (questions.get(e) or {}).get("question", "")}
            for e in sorted(set(summary["experiment"]))]


def machine_hardware(frame: pd.DataFrame, source: Source) -> dict[tuple[str, str], str]:
    """(run, device) -> the machine's hardware in words (not yet made inert or unique), for
    each machine of the verdicts `frame`, in the source's run order."""
    pairs = set(zip(frame["run_id"].astype(str), frame["device"].astype(str), strict=True))
    return {(run.run_id, device): hardware_words(run.environment, device)
            for run in source.runs for device in ("cpu", "cuda") if (run.run_id, device) in pairs}


def machines(frame: pd.DataFrame, source: Source) -> dict[tuple[str, str], str]:
    """(run, device) -> the machine in words, in the release's run order, when the verdicts
    come from more than one machine; empty for one."""
    hardware = machine_hardware(frame, source)
    return machine_names({machine: short_kind(words) for machine, words in hardware.items()}) \
        if len(hardware) >= 2 else {}


def short_kind(words: str) -> str:
    """A machine kind in a table's few words, its family and first kernel-deciding feature
    ('Intel Xeon (AMX)'); the page's caption names each kind in full once."""
    family, *rest = words.split(", ")
    features = [part for part in rest if not part.endswith(("core", "cores"))]
    return f"{family} ({features[0]})" if features else family


def page_verdicts(inputs: PageInputs) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None]:
    """The verdicts the site shows (the release's stored ones when it has them, else this
    build's), this build's, and the stored ones (None for a draft or a release without)."""
    stored = stored_verdicts(inputs.source)
    return (inputs.verdicts if stored is None else stored), inputs.verdicts, stored


def with_new_questions(frame: pd.DataFrame, today: pd.DataFrame,
                       stored: pd.DataFrame | None) -> tuple[pd.DataFrame, frozenset[str]]:
    """The verdicts a page shows, and the questions judged at this build because the
    release's stored verdicts do not ask them (a question added after it was published):
    their rows come from today's rule, each such table says so, and the published count
    leaves them out."""
    if stored is None:
        return frame, frozenset()
    asked = set(stored["question"].astype(str))
    new = today[(today["row"] != "control") & ~today["question"].astype(str).isin(asked)]
    if new.empty:
        return frame, frozenset()
    return pd.concat([frame, new], ignore_index=True), frozenset(new["question"].astype(str))


def _beside_release(inputs: PageInputs) -> str:
    """The release a draft's machine is placed beside (your-machine.md), or ''."""
    return inputs.beside_release.name if inputs.beside_release else ""


@page("index.md")
def home_page(inputs: PageInputs) -> Page:
    """The home page: one table per question, from the release's stored verdicts when it
    has them (today's rule's different judgements beside them), else from this build's."""
    source, found = inputs.source, inputs.judged.answers
    frame, today, stored = page_verdicts(inputs)
    apart = judged_apart(stored, today) if stored is not None else {}
    shown, added = with_new_questions(frame, today, stored)
    names = machines(frame, source)
    tables = answer_tables(shown, names, apart, batch_index(source.cells),
                           centres_of(source.observations), added)
    kinds = {machine: plain_text(short_kind(words))
             for machine, words in machine_hardware(frame, source).items()}
    per_machine = {table["key"]: table for table in machine_tables(frame, names, kinds)} \
        if names else {}
    evidence = {block["key"]: block
                for block in question_blocks(source, inputs.summary, found)}
    defaults = defaults_blocks(source)
    precision_accuracy = precision_blocks(source)
    leads = summary_frame(tables)
    chart = chart_block("home-summary", ratio_chart(
        leads, "How many times better each decided best is than the closest other system, "
        "for the first row of each question above, on each machine")) if len(leads) else None
    example = example_row(inputs.summary, source.cells) if not source.draft else None
    text = render(inputs.env, "index.md.j2", tables=tables, evidence=evidence,
                  per_machine=per_machine, beside=_beside_release(inputs),
                  defaults=defaults, precision_accuracy_blocks=precision_accuracy,
                  kinds=machine_kinds(list(source.runs)),
                  versions=framework_versions(list(source.runs)),
                  founding=founding_answers(tables, per_machine, defaults, source.cells,
                                            source.name, inputs.results_dir,
                                            links=not source.draft,
                                            precision_accuracy=precision_accuracy,
                                            kinds=run_kinds(list(source.runs))),
                  dependence=machine_dependence(per_machine), summary_chart=chart,
                  example=None if example is None else result_citation(example, inputs.cite),
                  stored=stored is not None, apart=len(apart),
                  notes=identifiers_as_code(notes_summary(source.notes or "")),
                  counts=answer_counts(frame),
                  experiments=experiment_links(inputs.summary, inputs.questions),
                  one_sided=one_sided_groups(found, batch_index(source.cells)),
                  tally=None if (found_tally := tally(found)) is None
                  else found_tally | answer_outcomes(frame),
                  thresholds=threshold_words(found),
                  risk=inputs.calibration.risk, controls=controls_summary(inputs.judged.controls),
                  busy_left_out=busy_left_out(source), multiple_machines=len(source.runs) > 1,
                  changes=changed_answers(source.name, found),
                  rules_changed=short_paragraphs(sentence_case(rules_changed(source.name))),
                  **inputs.common)
    return Page(text, (chart,) if chart else ())
