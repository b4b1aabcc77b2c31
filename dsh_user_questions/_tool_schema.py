"""The one JSON Schema of ``ask_user_question``'s arguments, and what is derived from it.

Every published ``pattern`` means the same in Python ``re``, RE2 (Gemini's schema handling) and
ECMA-262 (``new RegExp(p, "u")``): no lookaround, no ``\\u`` or ``\\p`` escapes, no ``\\s`` (its
meaning differs between the three), only ``\\xHH`` escapes and the characters themselves, and a
plain ``$``. Python's ``$`` also matches before a final newline, so the validators in this
package compile the same patterns with ``\\Z`` instead (`internal_schema`); the two mean the
same on every string.

What no pattern can say is checked in code right after the schema (see ``_tool_arguments``)
and stated in prose: unique ids and labels, no unpaired surrogates (RE2 and ECMA-262 never see
one), no "Other" option, 0 or at least 2 options (at least 2 for ``multi_select``), at most
one ``recommended`` option on a single-select, and a ``secret`` question without options.
An option's ``preview`` is markdown of several lines, so it carries no text pattern (which
allows one line only; its pattern would also not fit the shapes' size budget): its characters
(tab and newline, but no other control, separator or bidi override) are checked in code.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from . import _fields
from ._payloads import AskUserQuestionItem
from ._tool_limits import (
    ID_PATTERN,
    LEADING_SPACES,
    MAX_DESCRIPTION_LENGTH,
    MAX_HEADER_LENGTH,
    MAX_ID_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_OPTIONS,
    MAX_PREVIEW_LENGTH,
    MAX_QUESTION_LENGTH,
    MAX_QUESTIONS,
    TEXT_PATTERN,
)

__all__ = [
    "ID_PATTERN",
    "LEADING_SPACES",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_HEADER_LENGTH",
    "MAX_ID_LENGTH",
    "MAX_LABEL_LENGTH",
    "MAX_OPTIONS",
    "MAX_PREVIEW_LENGTH",
    "MAX_QUESTIONS",
    "MAX_QUESTION_LENGTH",
    "MAX_SHAPE_CHARS",
    "OPTIONAL_KEYS",
    "STRICT_KEYWORDS",
    "TEXT_PATTERN",
    "internal_schema",
    "object_schema",
    "published_schema",
    "strict_schema",
]

MAX_SHAPE_CHARS: Final = 3600
"""The size budget of each tool shape: its compact JSON (ASCII escapes) has at most this many
characters, the description (at most 1,024, OpenAI's limit) included."""


def object_schema(cls: type, node: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema of the fields of payload ``cls`` a model may write (`_fields.Wire`), derived
    from their declarations; ``node`` holds the keywords that come first (a description)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for attribute, wire in _fields.wire_fields(cls):
        if not wire.for_model:
            continue
        assert wire.schema is not None
        child = copy.deepcopy(dict(wire.schema))
        if wire.nested is not None and wire.kind == "payloads":
            child["items"] = object_schema(wire.nested())
        elif wire.nested is not None:
            child = object_schema(wire.nested(), child)
        properties[wire.name] = child
        if _fields.required(attribute):
            required.append(wire.name)
    out: dict[str, Any] = {"type": "object"} if node is None else dict(node)
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    out["properties"] = properties
    return out


# Keyword order matters for the report: a node's own rules come before its children's.
_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "required": ["questions"],
    "additionalProperties": False,
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_QUESTIONS,
            "items": object_schema(AskUserQuestionItem),
        }
    },
}


def _optional_keys(cls: type) -> set[str]:
    keys: set[str] = set()
    for attribute, wire in _fields.wire_fields(cls):
        if wire.for_model:
            if not _fields.required(attribute):
                keys.add(wire.name)
            if wire.nested is not None:
                keys |= _optional_keys(wire.nested())
    return keys


OPTIONAL_KEYS: Final = frozenset(_optional_keys(AskUserQuestionItem))
"""The properties a call may leave out; a ``null`` for one of them means "left out"."""

STRICT_KEYWORDS: Final = frozenset(
    {
        # https://platform.openai.com/docs/guides/structured-outputs#supported-schemas
        "type",
        "description",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
"""The keywords OpenAI's strict mode accepts (string lengths are not among them)."""


def published_schema() -> dict[str, Any]:
    """The schema every shape publishes (a fresh copy)."""
    return copy.deepcopy(_SCHEMA)


def strict_schema() -> dict[str, Any]:
    """The schema for OpenAI strict mode: every property required, optional ones nullable.

    Keywords strict mode does not support (``maxLength``) are left out; `run` still enforces
    them, so an over-long text comes back as ``invalid arguments`` with its path.
    """
    return _strict(_SCHEMA)


def _strict(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for keyword, value in node.items():
        if keyword not in STRICT_KEYWORDS:
            continue
        if keyword == "properties":
            required = set(node.get("required", ()))
            out[keyword] = {
                name: _strict(child) if name in required else _nullable(_strict(child))
                for name, child in value.items()
            }
        elif keyword == "items":
            out[keyword] = _strict(value)
        elif keyword == "required":
            out[keyword] = list(node["properties"])
        else:
            out[keyword] = copy.deepcopy(value)
    return out


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    return {**node, "type": [node["type"], "null"]}


def internal_schema() -> dict[str, Any]:
    """The published schema with each final ``$`` read as ``\\Z``, for Python's validators."""
    schema = copy.deepcopy(_SCHEMA)
    _anchor_end(schema)
    return schema


def _anchor_end(node: object) -> None:
    if isinstance(node, dict):
        for keyword, value in node.items():
            if keyword == "pattern" and isinstance(value, str) and value.endswith("$"):
                node[keyword] = value[:-1] + r"\Z"
            else:
                _anchor_end(value)
    elif isinstance(node, list):
        for value in node:
            _anchor_end(value)
