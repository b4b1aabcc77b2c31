"""Model-written text the suite asks with, and how it tells inert text from live text.

A live escape sequence is consumed by the human's terminal, so its printable tail (``[31m``)
goes missing from the screen; live markup loses its tags; a live control or bidi character
reaches the screen as itself. Inert text keeps every printable word and shows no control.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from ..payloads import AskUserQuestionItem, AskUserQuestionOption

__all__ = ["BIDI", "ESCAPES", "MARKUP", "live_characters", "missing_words"]

# Bidirectional embeddings, overrides, isolates and marks: they reorder what the human reads.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]+")

ESCAPES = AskUserQuestionItem(
    id="escapes",
    header="Hdr\x1b[7mINV",
    question="Escapes check \x1b[2J\x1b[31mred\x1b[0m\x07 Safe\rEvil?",
    # No backslash ends a line: markdown would rightly read it as a line break.
    detail="Detail \x1b]0;pwned\x07 then \x1b]8;;https://example.invalid/\x1b\\link"
    "\x1b]8;;\x1b\\ end\nback\x08\x08\x08\x08over \x9b2Jcsi",
    options=(
        AskUserQuestionOption("yes\x1b[1Aup", description="desc\x1b[8mhidden"),
        AskUserQuestionOption("no"),
    ),
)
"""Terminal escapes (CSI, OSC, C1), BEL, backspace and carriage return in every text field."""

BIDI = AskUserQuestionItem(
    id="bidi",
    header="\u202dhdr",
    question="Bidi check \u202eresu\u202c ok?",
    detail="run \u2067evil\u2069 \u200fthen\u200e \u202btxt.exe",
    options=(AskUserQuestionOption("\u2066lab\u2069el", description="\u061cdesc"),),
)
"""Bidirectional overrides, isolates and marks in every text field."""

MARKUP = AskUserQuestionItem(
    id="markup",
    header="<i>hdr</i>",
    question="Markup check <b>bold</b>?",
    detail="<script>alert(1)</script>\n\n<img src=x onerror=alert(2)>",
    options=(
        AskUserQuestionOption("<u>pick</u>", description="<a href=javascript:alert(3)>desc</a>"),
    ),
)
"""HTML tags and script in every text field (markdown in the detail may still be rendered)."""


def _texts(question: AskUserQuestionItem) -> Iterable[str]:
    yield question.question
    if question.header is not None:
        yield question.header
    if question.detail is not None:
        yield question.detail
    for option in question.options:
        yield option.label
        if option.description is not None:
            yield option.description


def _words(text: str) -> Iterable[str]:
    for chunk in _CONTROLS.split(text):
        yield from "".join(" " if char in _BIDI else char for char in chunk).split()


def missing_words(question: AskUserQuestionItem, screen: str) -> list[str]:
    """The printable words of the question's texts that the screen does not show."""
    words = {word for text in _texts(question) for word in _words(text)}
    return sorted(word for word in words if word not in screen)


def live_characters(screen: str) -> list[str]:
    """Control and bidi characters on the screen (newline and tab aside), as ``U+XXXX``."""
    found = {
        char
        for char in screen
        if char not in "\n\t" and (unicodedata.category(char) == "Cc" or char in _BIDI)
    }
    return sorted(f"U+{ord(char):04X}" for char in found)
