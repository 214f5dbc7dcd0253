"""A process record from another machine checked field by field against the frozen dataclasses
it parses into (CellRecord, CellSpec, CellOutcome and theirs): the dataclasses take any JSON
value, and a batch size of "" or a value of "x" would only fail in a later command."""

from __future__ import annotations

import types
import typing
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

from dlbench.core.text.errors import ResultsFileError
from dlbench.core.text.visible import shown_name

#: Facts of a cell's details that pages compute with, and the types they must have.
DETAIL_TYPES: dict[str, Any] = {"flops_per_sample": int | float | None, "seed": int | None,
                                "convolutions": bool}


def check_record_types(record: object, origin: str, name: str = "record") -> None:
    """ResultsFileError naming the first field of `record` (a parsed dataclass, called
    `name`) whose value is not of its declared type."""
    problem = _misfit(record, type(record), name)
    details = getattr(getattr(record, "outcome", None), "details", {})
    for key, hint in DETAIL_TYPES.items():
        if problem is None and key in details:
            problem = _misfit(details[key], hint, f"record.outcome.details.{key}")
    if problem:
        where, value, hint = problem
        shown = shown_name(value, 40) if isinstance(value, str) else repr(value)[:40]
        raise ResultsFileError(f"{origin}: {where} is {shown}; expected {_words(hint)}")


def _misfit(value: object, hint: Any, where: str) -> tuple[str, object, Any] | None:
    """(where, value, expected type) of the first value that does not fit; None if all do."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return None
    if origin in (typing.Union, types.UnionType):
        fits = any(_misfit(value, arg, where) is None for arg in args)
        return None if fits else (where, value, hint)
    if origin in (dict, list, tuple):
        if not isinstance(value, origin):
            return where, value, hint
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(value, dict):
                bad = _misfit(key, args[0], f"{where} key") if args else None
                bad = bad or (_misfit(item, args[1], f"{where}.{key}") if args else None)
            else:
                bad = _misfit(item, args[0], f"{where}[{key}]") if args else None
            if bad:
                return bad
        return None
    if is_dataclass(hint):
        if not isinstance(value, hint):
            return where, value, hint
        hints = typing.get_type_hints(hint)
        for field in fields(hint):
            bad = _misfit(getattr(value, field.name), hints[field.name], f"{where}.{field.name}")
            if bad:
                return bad
        return None
    return None if _is(value, hint) else (where, value, hint)


def _is(value: object, hint: Any) -> bool:
    if hint is type(None):
        return value is None
    if hint in (int, float):  # JSON's true is no number; a whole number is a float
        accepted = (int,) if hint is int else (int, float)
        return isinstance(value, accepted) and not isinstance(value, bool)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return isinstance(value, hint)
    return isinstance(value, hint) if isinstance(hint, type) else True


def _words(hint: Any) -> str:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return " or ".join(_words(arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return "null"
    return {int: "a whole number", float: "a number", str: "text", bool: "true or false",
            dict: "an object", list: "a list"}.get(typing.get_origin(hint) or hint,
                                                  getattr(hint, "__name__", str(hint)))


def same_json(first: object, second: object) -> bool:
    """Whether two parsed JSON values are equal, NaN equal to NaN (a record's reading may be
    NaN) and a whole number to the same float."""
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(same_json(first[k], second[k])
                                                      for k in first)
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(map(same_json, first, second))
    if isinstance(first, float) and isinstance(second, float) and first != first:
        return second != second
    return type(first) in (type(second), int, float) and first == second \
        and isinstance(first, bool) == isinstance(second, bool)
