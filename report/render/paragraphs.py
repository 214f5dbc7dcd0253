"""Recorded Markdown (a release's notes) in paragraphs a reader can take in: a paragraph or
list item longer than a limit is split at sentence ends (then at semicolons) into several,
a list item's rest as paragraphs of the same item. The words are not changed."""

from __future__ import annotations

import re

#: The longest paragraph a page shows (issue 53: 1,678 characters was one list item).
PARAGRAPH_LIMIT = 500
#: Where a sentence ends and the next begins.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(`])")
#: A list item's first line.
ITEM = re.compile(r"^([-*]|\d+\.) ")


def split_outside_parentheses(text: str, marks: str, before: str = "") -> list[str]:
    """`text` split after each of `marks` followed by a space (and, when `before` is given,
    by one of its characters), never inside parentheses; each part keeps its mark, the space
    after it is dropped, none is empty."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if (depth == 0 and char in marks and text[i + 1:i + 2] == " "
                and (not before or text[i + 2:i + 3] in before)):
            parts.append(text[start:i + 1])
            start = i + 2
    parts.append(text[start:])
    return [p for p in parts if p]


def packed(parts: list[str], limit: int) -> list[str]:
    """`parts` in order, each joined to the one before it (with a space) while the two fit
    in `limit` characters."""
    chunks: list[str] = []
    for part in parts:
        if chunks and len(chunks[-1]) + 1 + len(part) <= limit:
            chunks[-1] += " " + part
        else:
            chunks.append(part)
    return chunks


def _pieces(text: str, limit: int) -> list[str]:
    """`text` as pieces of at most `limit` characters where it can be split."""
    sentences = []
    for sentence in SENTENCE_END.split(text):
        parts = sentence.split("; ") if len(sentence) > limit else [sentence]
        sentences += [p + (";" if i < len(parts) - 1 else "") for i, p in enumerate(parts)]
    return packed(sentences, limit)


def _block(lines: list[str], limit: int) -> str:
    """One block (a paragraph, or a list of items) with its long parts split."""
    items: list[list[str]] = []
    for line in lines:
        if ITEM.match(line) or not items:
            items.append([line])
        else:
            items[-1].append(line)
    out, split = [], False
    for item in items:
        text = " ".join(part.strip() for part in item)
        marker = ITEM.match(item[0])
        if len(text) <= limit or "|" in text:  # short, or a table row: as written
            out.append("\n".join(item))
            continue
        head = marker.group(0) if marker else ""
        chunks = _pieces(text[len(head):], limit)
        joiner = "\n\n    " if marker else "\n\n"
        out.append(head + joiner.join(chunks))
        split = True
    return ("\n\n" if split else "\n").join(out)  # a list with paragraphs is a loose one


def short_paragraphs(markdown_text: str, limit: int = PARAGRAPH_LIMIT) -> str:
    """`markdown_text` with no paragraph or list item longer than `limit` characters where a
    sentence end or semicolon allows (fenced code left as it is)."""
    if "```" in markdown_text:
        return markdown_text
    blocks = re.split(r"\n\s*\n", markdown_text.strip("\n"))
    return "\n\n".join(_block(block.split("\n"), limit) for block in blocks)


#: A bare snake_case identifier in prose (`jit_compile`), outside code and links.
SNAKE_NAME = re.compile(r"(?<![`\w./#=-])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![`\w/(=-])")


def identifiers_as_code(markdown_text: str) -> str:
    """Recorded Markdown with its bare snake_case identifiers as code, the way the site shows
    a name a framework documents (fenced code left as it is)."""
    if "```" in markdown_text:
        return markdown_text
    return SNAKE_NAME.sub(lambda m: f"`{m.group(1)}`", markdown_text)
