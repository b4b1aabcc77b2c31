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
    "OPTIONAL_KEYS",
    "STRICT_KEYWORDS",
    "TEXT_PATTERN",
    "internal_schema",
    "published_schema",
    "strict_schema",
]

MAX_QUESTIONS: Final = 6
MAX_OPTIONS: Final = 10
MAX_ID_LENGTH: Final = 64
MAX_HEADER_LENGTH: Final = 40
MAX_QUESTION_LENGTH: Final = 500
MAX_LABEL_LENGTH: Final = 80
MAX_DESCRIPTION_LENGTH: Final = 300
MAX_PREVIEW_LENGTH: Final = 2000

# What no text may hold: the C0 and C1 controls (newline, tab, ESC and CSI, which starts every
# terminal escape sequence, are all among them), the line and paragraph separators, and the
# bidirectional embeddings, overrides and isolates of "Trojan Source". Controls are written as
# \xHH, which the three engines read alike; the others as the characters themselves, since
# each engine spells a \u escape differently.
_CONTROLS = r"\x00-\x1F\x7F-\x9F"
_SEPARATORS_AND_BIDI = "\u2028-\u202e\u2066-\u2069"
# What no text may start with besides: white space. \s differs between the engines, so these
# are the characters Python's str.isspace() names, the controls among them already excluded:
# the space, U+00A0 (written \xA0, next to the C1 range), U+1680, U+2000-U+200A, U+202F,
# U+205F and U+3000 (U+2028 and U+2029 are separators).
LEADING_SPACES: Final = " \xa0\u1680\u2000-\u200a\u202f\u205f\u3000"
TEXT_PATTERN: Final = (
    "^[^ \\x00-\\x1F\\x7F-\\xA0\u1680\u2000-\u200a\u2028-\u202f\u205f\u2066-\u2069\u3000]"
    f"[^{_CONTROLS}{_SEPARATORS_AND_BIDI}]*$"
)
ID_PATTERN: Final = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"


def _text(description: str, max_length: int) -> dict[str, Any]:
    return {
        "type": "string",
        "description": description,
        "maxLength": max_length,
        "pattern": TEXT_PATTERN,
    }


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
            "items": {
                "type": "object",
                "required": ["id", "question"],
                "additionalProperties": False,
                "properties": {
                    "id": {
                        "type": "string",
                        "description": "Echoed; unique in the call.",
                        "maxLength": MAX_ID_LENGTH,
                        "pattern": ID_PATTERN,
                    },
                    "question": _text("1-2 sentences.", MAX_QUESTION_LENGTH),
                    "header": _text("Short tag.", MAX_HEADER_LENGTH),
                    "options": {
                        "type": "array",
                        "description": 'None for free text, else 2 or more. Never "Other".',
                        "maxItems": MAX_OPTIONS,
                        "items": {
                            "type": "object",
                            "required": ["label"],
                            "additionalProperties": False,
                            "properties": {
                                "label": _text(
                                    "Unique in the question, ignoring case.", MAX_LABEL_LENGTH
                                ),
                                "description": _text("What it means.", MAX_DESCRIPTION_LENGTH),
                                # Markdown, several lines: no text pattern (the size budget);
                                # its characters are checked in code (``_tool_arguments``).
                                "preview": {
                                    "type": "string",
                                    "description": "Markdown shown on focus.",
                                    "maxLength": MAX_PREVIEW_LENGTH,
                                },
                                "recommended": {
                                    "type": "boolean",
                                    "description": "At most one per single-select.",
                                },
                            },
                        },
                    },
                    "multi_select": {
                        "type": "boolean",
                        "description": "Pick several.",
                    },
                    # What it means is in the tool's description (the shapes' size budget).
                    "secret": {"type": "boolean"},
                    # false: the options only, no "Other" (the tool's description names "Other").
                    "allow_other": {"type": "boolean"},
                },
            },
        }
    },
}

OPTIONAL_KEYS: Final = frozenset(
    {
        "header",
        "options",
        "multi_select",
        "secret",
        "allow_other",
        "description",
        "preview",
        "recommended",
    }
)
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
