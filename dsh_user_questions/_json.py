"""Reading untrusted JSON: the one wording of every problem, ``<path>: <what is wrong>``.

The payloads' ``from_dict`` readers and the tool's argument check both report through these
helpers, so a model, a provider and a web page read the same sentences: ``questions[0].id:
must be a string, not a number``, ``questions[1].question: is required``, ``model: unknown
property; allowed: questions``. A problem of the value as a whole has no path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "REQUIRED",
    "Key",
    "at",
    "json_type",
    "kind",
    "must_be",
    "path",
    "unknown_property",
]

Key = str | int
"""One step of a path: a property name or an array index."""

REQUIRED = "is required"

_ARTICLES = {"object": "an object", "array": "an array", "integer": "an integer", "null": "null"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def json_type(value: object) -> str:
    """The JSON type name of a parsed value (``"number"`` for int and float alike)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return f"Python {type(value).__name__}"


def kind(type_name: str) -> str:
    """A JSON type name with its article: ``an object``, ``a string``, ``null``."""
    return _ARTICLES.get(type_name, f"a {type_name}")


def must_be(expected: str, value: object) -> str:
    """``must be <expected>, not <what value is>``, e.g. ``must be a string, not null``."""
    return f"must be {kind(expected)}, not {kind(json_type(value))}"


def unknown_property(name: object, allowed: Iterable[str]) -> str:
    """The problem of a property the shape does not have, with a hint for near misses."""
    names = list(allowed)
    hint = ""
    if isinstance(name, str):
        folded = _fold(name)
        for candidate in names:
            if _fold(candidate) == folded:
                hint = f" (did you mean {candidate}?)"
                break
    return f"unknown property{hint}; allowed: {', '.join(names)}"


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").casefold()


def path(keys: Sequence[object]) -> str:
    """The keys as a path, ``questions[0].options[1].label`` (empty for the root).

    A name that is not a plain identifier (one a model made up) is JSON-quoted in ASCII and cut
    short, so no control character or megabyte of text reaches a screen through a message.
    """
    parts: list[str] = []
    for key in keys:
        if isinstance(key, int) and not isinstance(key, bool):
            parts.append(f"[{key}]")
        elif isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
            parts.append(f".{key}" if parts else key)
        else:
            text = key if isinstance(key, str) else repr(key)
            if len(text) > 40:
                text = text[:40] + "..."
            parts.append(f"[{json.dumps(text)}]")
    return "".join(parts)


def at(keys: Sequence[object], problem: str) -> str:
    """``<path>: <problem>``, or the problem alone for the value as a whole."""
    where = path(keys)
    return f"{where}: {problem}" if where else problem
