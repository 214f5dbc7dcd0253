"""What a person types that is written into something append-only or frozen (an erratum, a
release's title and date), checked first: a date is an ISO calendar date, written
YYYY-MM-DD (Python also reads '20261201' as one, which sorts wrongly beside the others),
and text is text that UTF-8 can write (a terminal's undecodable bytes arrive as lone
surrogates, which no later build could write out)."""

from __future__ import annotations

import datetime
import re

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_iso_date(text: str) -> bool:
    """Whether `text` is a calendar date written YYYY-MM-DD."""
    if not _ISO_DATE.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_iso_time(text: str) -> bool:
    """Whether `text` is a time as a run records one: YYYY-MM-DD, 'T' and a clock time."""
    if not is_iso_date(text[:10]) or text[10:11] != "T":
        return False
    try:
        datetime.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def encodes(text: str) -> bool:
    """Whether UTF-8 can write `text` (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
