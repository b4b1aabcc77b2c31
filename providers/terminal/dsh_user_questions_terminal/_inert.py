"""Make model-written text inert before it reaches a terminal.

A question comes from a model, and a terminal obeys what it is sent: an escape sequence can
recolour the screen, move the cursor, retitle the window or hide text; a bidirectional override
can make ``rm -rf /`` read as something else. Everything shown to the human goes through
:func:`inert_text` first, so such characters arrive as visible, harmless stand-ins.
"""

from __future__ import annotations

import unicodedata

__all__ = ["inert_text"]

# Bidirectional embeddings, overrides, isolates and marks: they reorder what the human reads.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Line and paragraph separators: some terminals break lines on them.
_SEPARATORS = frozenset("\u2028\u2029\u0085")
_TAB = "    "


def _stand_in(char: str) -> str:
    code = ord(char)
    if code < 0x20:
        # The Unicode "control pictures" block shows C0 controls as visible glyphs (ESC -> ␛).
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"<U+{code:04X}>"


def _needs_stand_in(char: str) -> bool:
    category = unicodedata.category(char)
    return category == "Cc" or char in _BIDI


def inert_text(text: str, *, multiline: bool = False) -> str:
    """Return ``text`` with every character a terminal would act on made visible and harmless.

    - C0 controls (ESC included) and DEL become their control pictures (``␛``, ``␇``, ...);
    - C1 controls and bidirectional controls become ``<U+XXXX>``;
    - lone surrogates (which no terminal encoding can carry) become U+FFFD;
    - a tab becomes four spaces;
    - line breaks (``\\r\\n``, ``\\r``, ``\\n``, U+0085, U+2028, U+2029) become ``\\n`` when
      ``multiline`` is true, else a single space.

    Printable text passes through unchanged, and ``inert_text(inert_text(s)) == inert_text(s)``.
    """
    out: list[str] = []
    newline = "\n" if multiline else " "
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        index += 1
        if char == "\r":
            if index < length and text[index] == "\n":
                index += 1
            out.append(newline)
        elif char == "\n" or char in _SEPARATORS:
            out.append(newline)
        elif char == "\t":
            out.append(_TAB)
        elif "\ud800" <= char <= "\udfff":
            out.append("\ufffd")
        elif _needs_stand_in(char):
            out.append(_stand_in(char))
        else:
            out.append(char)
    return "".join(out)
