"""Text a person typed that reaches a page (release notes, errata, reasons, titles, run IDs,
a run's recorded environment): shown as text, or as Markdown sanitised by nh3.

Plain text is HTML-escaped and every character Python-Markdown reads as syntax (links,
emphasis, attribute lists, headings) is backslash-escaped, so it stays text. Release notes
are Markdown: rendered to HTML, then cleaned by nh3 (Ammonia), which drops scripts, frames,
event handlers and links of any scheme but http, https and mailto.
"""

from __future__ import annotations

import html

import markdown
import nh3

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
