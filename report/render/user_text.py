"""Text a person typed that reaches a page (release notes, errata, reasons, titles, run IDs,
a run's recorded environment): shown as text, or as Markdown sanitised by nh3.

Plain text is HTML-escaped and every character Python-Markdown reads as syntax (links,
emphasis, attribute lists, headings) is backslash-escaped, so it stays text. Release notes
are Markdown: rendered to HTML, then cleaned by nh3 (Ammonia), which drops scripts, frames,
event handlers and links of any scheme but http, https and mailto.
"""

from __future__ import annotations

import html
import json
import re

import markdown
import nh3
import pandas as pd

from dlbench.core.text.visible import visible_controls

#: What Python-Markdown reads as syntax anywhere in a line (code, emphasis, links, attribute
#: lists, escapes) and '|', which ends a table cell; '<', '>' and '&' are HTML-escaped.
INLINE_SYNTAX = frozenset("\\`*_{}[]|")
#: What it reads as syntax at the start of a line (headings, lists, quotes), from the library.
LINE_START_SYNTAX = frozenset(markdown.Markdown().ESCAPED_CHARS) - {">"}
#: The only link schemes a sanitised page keeps.
URL_SCHEMES = frozenset({"http", "https", "mailto"})


def plain_text(value: object) -> str:
    """`value` as inert text on one line of a Markdown page (also inside a table cell)."""
    line = " ".join(str(value).split())
    text = "".join(f"\\{char}" if char in INLINE_SYNTAX or (index == 0 and char in
                                                              LINE_START_SYNTAX) else char
                   for index, char in enumerate(line))
    return html.escape(text, quote=False)


def safe_markdown(text: str) -> str:
    """Markdown as a block of sanitised HTML, which the page's Markdown leaves as it is."""
    rendered = markdown.markdown(text, extensions=["tables"])
    clean = nh3.clean(rendered, url_schemes=set(URL_SCHEMES), link_rel="noopener noreferrer")
    return f'<div class="user-markdown">\n{clean}\n</div>'


#: What makes text live somewhere on a page (an HTML tag, entity or attribute's end, a
#: Markdown link, autolink, attribute list, code span or table cell's end), each replaced by
#: the character that looks like it, so a run's text is inert wherever a page puts it: in a
#: heading, a table, a link's title, a data- attribute, a code span or a chart's labels.
LOOK_ALIKES = str.maketrans({"<": "‹", ">": "›", "&": "＆", '"': "”", "'": "’", "`": "ˋ",
                             "[": "［", "]": "］", "{": "｛", "}": "｝", "|": "¦"})
#: The columns of a run's tables that hold JSON: their strings are made inert one by one.
JSON_COLUMNS = ("config_json", "fairness_json", "details_json")
_LIVE = re.compile("[<>&\"'`\\[\\]{}|\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f"
                   "\u2028-\u202e\u2060-\u206f\ufeff]")

_BREAKS = re.compile("[\t\n]")


def inert_text(value: str) -> str:
    """Text from a run (a machine's model, a reason, a workload's words) as it may reach any
    part of a page: on one line (a line break could start a heading), controls visible,
    markup characters replaced by their look-alikes."""
    if not _LIVE.search(value):
        return value
    return visible_controls(_BREAKS.sub(" ", value)).translate(LOOK_ALIKES)


def inert_record(value: object) -> object:
    """A run's JSON (run.json, environment.json, a table's JSON cell) with every string in it,
    keys included, made inert by inert_text."""
    if isinstance(value, str):
        return inert_text(value)
    if isinstance(value, dict):
        return {inert_text(str(key)): inert_record(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [inert_record(item) for item in value]
    return value


def inert_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A run's table with every string made inert (JSON columns string by string)."""
    changed = {}
    for column in frame.columns:
        values = frame[column]
        if values.dtype.kind not in "OUS" and str(values.dtype) != "string":
            continue
        live = values.astype("string").str.contains(_LIVE, na=False)
        if not live.any():
            continue
        fix = _inert_json if column in JSON_COLUMNS else inert_text
        changed[column] = values.where(~live, values[live].map(fix))
    return frame.assign(**changed) if changed else frame


def _inert_json(text: str) -> str:
    try:
        value = json.loads(text)
        inert = inert_record(value)
    except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
        return inert_text(text)
    return text if inert == value else json.dumps(inert, sort_keys=True, ensure_ascii=False)
