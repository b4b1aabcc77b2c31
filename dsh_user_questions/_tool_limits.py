"""The tool's limits and text patterns: the leaf both the payloads' field declarations and the
tool's schema read (see `_tool_schema` for what the patterns may use)."""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "ID_PATTERN",
    "LEADING_SPACES",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_HEADER_LENGTH",
    "MAX_ID_LENGTH",
    "MAX_LABEL_LENGTH",
    "MAX_OPTIONS",
    "MAX_PATTERN_LENGTH",
    "MAX_PREVIEW_LENGTH",
    "MAX_QUESTIONS",
    "MAX_QUESTION_LENGTH",
    "MAX_UNIT_LENGTH",
    "TEXT_PATTERN",
    "text_schema",
]

MAX_QUESTIONS: Final = 6
MAX_OPTIONS: Final = 10
MAX_ID_LENGTH: Final = 64
MAX_HEADER_LENGTH: Final = 40
MAX_QUESTION_LENGTH: Final = 500
MAX_LABEL_LENGTH: Final = 80
MAX_DESCRIPTION_LENGTH: Final = 300
MAX_PREVIEW_LENGTH: Final = 2000
MAX_UNIT_LENGTH: Final = 20
MAX_PATTERN_LENGTH: Final = 200

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


def text_schema(description: str, max_length: int) -> dict[str, Any]:
    """The schema node of one line of model-written text."""
    return {
        "type": "string",
        "description": description,
        "maxLength": max_length,
        "pattern": TEXT_PATTERN,
    }
