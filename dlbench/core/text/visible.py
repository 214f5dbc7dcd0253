"""Control characters made visible: the one owner of how text from a run, an archive or a
person shows its ESC, bidi overrides, zero-width marks and other C0/C1 characters, on a
terminal and on a page alike (as `\\x1b`, `\\u202e`), so none of them acts."""

from __future__ import annotations

import re
import unicodedata

#: Longest name an error line shows whole; a longer one is cut, saying how much was cut.
MAX_SHOWN = 120
_INVISIBLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                        r"\u2060-\u206f\ufeff\ufff9-\ufffb]")


def _code(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else \
        f"\\U{code:08x}"


def visible_controls(text: str) -> str:
    """`text` with every control, format (bidi, zero-width) and separator character written
    as its escape; tabs and line breaks kept."""
    text = _INVISIBLE.sub(_code, text)
    if text.isascii():
        return text
    return "".join(_code(re.match(".", c, re.S)) if c not in "\t\n" and
                   unicodedata.category(c) in ("Cc", "Cf") else c for c in text)


def shown_name(name: str, limit: int = MAX_SHOWN) -> str:
    """A name from someone else's file for an error line: quoted, controls visible, and cut
    to `limit` characters, saying how many more it had."""
    cut = name[:limit]
    more = f"... ({len(name) - limit} more characters)" if len(name) > limit else ""
    return repr(cut) + more  # repr writes controls and bidi marks as escapes
