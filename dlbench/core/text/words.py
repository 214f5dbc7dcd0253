"""Count words a person reads: "1 process", "3 processes", "3 and 6 processes".

The one owner of singular and plural, so that no page or message says "1 processes"."""

from __future__ import annotations

from collections.abc import Sequence

#: Plurals that adding -s or -es does not make.
IRREGULAR = {"family": "families", "query": "queries"}


def noun(count: float, singular: str) -> str:
    """`singular` when `count` is one, else its plural: noun(2, "process") -> 'processes'."""
    if count == 1:
        return singular
    if singular in IRREGULAR:
        return IRREGULAR[singular]
    return singular + ("es" if singular.endswith(("s", "x", "ch", "sh")) else "s")


def plural(count: int, singular: str) -> str:
    """The count with its noun: plural(1, "process") -> '1 process'."""
    return f"{count} {noun(count, singular)}"


def counts(numbers: Sequence[int], singular: str) -> str:
    """Several counts of one noun: '3 and 6 processes'; '1 and 1 process' reads as one each."""
    if len(numbers) == 1:
        return plural(numbers[0], singular)
    listed = ", ".join(str(n) for n in numbers[:-1]) + f" and {numbers[-1]}"
    return f"{listed} {noun(max(numbers), singular)}"
