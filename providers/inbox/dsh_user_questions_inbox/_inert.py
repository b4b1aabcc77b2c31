"""Model-written text shown inert in a terminal: no control sequence survives."""

from __future__ import annotations

import unicodedata

__all__ = ["inert"]

# Control and format characters (escapes, bidi overrides, zero-width joiners), line and
# paragraph separators: each is shown as its \\uXXXX escape instead of acting on the terminal.
_ACTIVE = frozenset({"Cc", "Cf", "Zl", "Zp"})


def inert(text: str) -> str:
    """``text`` with every active character replaced by its visible escape."""
    if text.isprintable():
        return text
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in _ACTIVE else ch for ch in text
    )
