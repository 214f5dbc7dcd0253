"""The errata page: each erratum of a release (report/site/errata.py, recorded as free text)
as short structured parts a reader can scan: which answers it concerns (each question in
words, with its metric and the machine), what was published, why that was wrong, and what
is corrected, each one sentence a line.

The entries are the release's own record and are never edited: this renderer only splits
their sentences (a sentence over LINE_CHARS at its clauses), names answer keys, systems,
workloads, metrics and modes in words, and shows the files, commands and commits a reader
can look up as code (the data's own names: in code, never as words)."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from dlbench.core.declarations.metrics import reader_label
from dlbench.core.judging.verdict_engine import QUESTIONS
from dlbench.report.render.labels import ids_in_words, mode_ids_in_words
from dlbench.report.render.paragraphs import packed, split_outside_parentheses
from dlbench.report.inputs.source import Source
from dlbench.report.inputs.labelled import hardware_words
from dlbench.report.render.user_text import INLINE_SYNTAX
from dlbench.report.site.errata import Erratum

#: The most characters of one line of the page; a longer sentence is cut at its clauses.
LINE_CHARS = 480
#: What a reader looks up rather than reads: the project's files and the commands that run
#: them, file names, commits, and the verdicts table's answer keys (with the families their
#: keys share: 'serve-resnet50' for its latency and throughput answers).
_FAMILIES = {q.key.rsplit("-", 1)[0] for q in QUESTIONS if "-" in q.key.rsplit("-", 1)[0]}
_KEYS = sorted({q.key for q in QUESTIONS if "-" in q.key} | _FAMILIES, key=len, reverse=True)
CODE = re.compile(
    r"(?<![\w/.`-])(?:"
    r"(?:dlbench|report|runner|tests|benchmarks|scripts|templates|results|listings)/"
    r"[\w./-]*\w(?: --[\w-]+(?: [\w.]+)?)*"                # a project path and its options
    r"|[\w-]+\.(?:csv|ya?ml|json|py|sh|parquet|tar)"       # a file name
    r"|(?<=commit )[0-9a-f]{7,40}"                         # a commit
    r"|" + "|".join(map(re.escape, _KEYS)) +               # an answer key of verdicts.csv
    r")(?![\w/-])")
#: A raw key left after the words (snake_case or dotted: 'compute_peak.fp32_flops').
SNAKE = re.compile(r"(?<![\w./`-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:\.[a-z0-9_]+)*(?![\w/-])")
#: What would start a block (a heading, a nested list, a quote) at the start of a list item.
BLOCK_START = frozenset("#+-!>=")
#: Words that mark a sentence of 'wrong' as saying what was published.
PUBLISHED = re.compile(r"\bpublish|\bread as\b|\bsaid\b|\bcounted\b|\bshown\b", re.I)


def _escaped(text: str) -> str:
    """Text as inert Markdown inside a line (spaces kept)."""
    return html.escape("".join(f"\\{c}" if c in INLINE_SYNTAX else c for c in text),
                       quote=False)


def inline(text: str) -> str:
    """One sentence as safe Markdown: identifiers in words, what a reader looks up as code."""
    parts, last = [], 0
    for match in CODE.finditer(text):
        parts += [("text", text[last:match.start()]), ("code", match.group(0))]
        last = match.end()
    parts.append(("text", text[last:]))
    out = []
    for kind, part in parts:
        if kind == "code":
            out.append(f"`{part}`")
            continue
        words = mode_ids_in_words(ids_in_words(part))
        pieces, start = [], 0
        for key in SNAKE.finditer(words):
            pieces += [_escaped(words[start:key.start()]), f"`{key.group(0)}`"]
            start = key.end()
        out.append("".join(pieces) + _escaped(words[start:]))
    line = " ".join("".join(out).split())
    return f"\\{line}" if line[:1] in BLOCK_START else line


#: What starts a new sentence after '. ': a capital, a digit, a quote or a parenthesis.
SENTENCE_START = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'\"("


def sentences(text: str) -> list[str]:
    """The sentences of `text` (never cut inside parentheses or after an abbreviation)."""
    found: list[str] = []
    for part in split_outside_parentheses(" ".join(text.split()), ".?!", SENTENCE_START):
        if found and re.search(r"\b(e\.g|i\.e|vs|cf)\.$", found[-1]):
            found[-1] += " " + part  # an abbreviation, not a sentence's end
        else:
            found.append(part)
    return found


def lines(found: Sequence[str], limit: int = LINE_CHARS) -> list[str]:
    """Sentences as safe Markdown lines, one over `limit` characters cut after its clauses
    ('; ', then ': ', then ', '), never inside parentheses."""
    return [inline(line) for sentence in found for line in _clauses(sentence, limit)]


def _clauses(sentence: str, limit: int) -> list[str]:
    if len(sentence) <= limit:
        return [sentence]
    for marks in (";", ":", ","):
        parts = split_outside_parentheses(sentence, marks)
        if len(parts) > 1:
            return [line for part in packed(parts, limit) for line in _clauses(part, limit)]
    return [sentence]


#: Answers whose key is a plain word, named in an erratum by these words instead.
NAMED_IN_WORDS = {"accuracy": re.compile(r"\baccuracy answers?\b", re.I)}


def answers_concerned(erratum: Erratum) -> list[str]:
    """Each answer an erratum names (by its key, or in words), as its question in words with
    its metric."""
    text = " ".join((erratum.title, erratum.wrong, erratum.correction))
    named = set(CODE.findall(text)) & set(_KEYS)
    named |= {key for key, words in NAMED_IN_WORDS.items() if words.search(text)}
    keys = [q for q in QUESTIONS if q.key in named or q.key.rsplit("-", 1)[0] in named]
    return [f"{q.title} — {reader_label(q.metric)}" for q in keys]


def erratum_block(erratum: Erratum, machines: Sequence[str]) -> dict:
    """One erratum's parts for templates/errata.md.j2, each a list of safe Markdown lines."""
    wrong = sentences(erratum.wrong)
    published = [s for s in wrong if PUBLISHED.search(s)] or wrong[:1]
    return {"title": inline(erratum.title[:1].upper() + erratum.title[1:]),
            "date": _escaped(erratum.date),
            "answers": [_escaped(a) for a in answers_concerned(erratum)],
            "machines": [_escaped(m) for m in machines],
            "published": lines(published),
            "why": lines([s for s in wrong if s not in published]),
            "corrected": lines(sentences(erratum.correction)),
            "superseded_by": _escaped(erratum.superseded_by)}


def release_machines(source: Source) -> list[str]:
    """The machines a release's runs measured on, in words, each once."""
    cells = source.cells
    return list(dict.fromkeys(
        hardware_words(run.environment, device) for run in source.runs
        for device in sorted(set(cells.loc[cells["run_id"] == run.run_id, "device"]
                                 .astype(str))) or ["cpu"]))


def errata_blocks(errata: Sequence[Erratum], source: Source) -> list[dict]:
    """Every erratum of a release, oldest first, with the machines it measured on."""
    machines = release_machines(source)
    return [erratum_block(erratum, machines) for erratum in errata]
