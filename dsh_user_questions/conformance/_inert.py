"""Model-written text the suite asks with, and how it judges that a screen shows it inert.

The one definition of inert is `dsh_user_questions.rules.inert_text`: every surface shows model
text through it, so the suite expects on the screen exactly the words ``inert_text`` makes of
each text (``<U+001B>[31mred`` for a colour escape, ``n<U+0440>m`` for a look-alike of "npm"),
and no character that ``inert_text`` would replace. A live escape sequence is consumed by the
human's terminal, so its stand-in (and its printable tail) goes missing from the screen; live
markup loses its tags; a live control or bidi character reaches the screen as itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._payloads import AskUserQuestionItem, AskUserQuestionOption
from ..rules import inert_text

__all__ = ["BIDI", "ESCAPES", "LOOKALIKES", "MARKUP", "live_characters", "missing_words"]

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


LOOKALIKES = AskUserQuestionItem(
    id="lookalikes",
    header="zero\u200bwidth",
    question="Lookalike check: install n\u0440m or npm\u200b?",
    detail="p\u0430ckage from r\u0435gistry\u2060 then \ufeffdone",
    # No two labels look alike (`rules.check_request` refuses such a pair): each is suspect alone.
    options=(
        AskUserQuestionOption("pnpm"),
        AskUserQuestionOption("n\u0440m", description="a Cyrillic letter inside"),
        AskUserQuestionOption("yarn\u200b", description="a zero-width space after"),
    ),
)
"""Look-alike letters of another script inside ASCII words, zero-width and format characters."""


def _words(text: str) -> Iterable[str]:
    yield from inert_text(text, multiline=True).split()


def missing_words(question: AskUserQuestionItem, screen: str) -> list[str]:
    """The words `inert_text` makes of the question's texts that the screen does not show."""
    words = {word for text in _texts(question) for word in _words(text)}
    return sorted(word for word in words if word not in screen)


def live_characters(screen: str) -> list[str]:
    """Characters on the screen that `inert_text` would replace (newline and tab aside)."""
    found = {char for char in set(screen) if char not in "\n\t" and inert_text(char) != char}
    return sorted(f"U+{ord(char):04X}" for char in found)
